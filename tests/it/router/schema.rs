//! The tools' schemas read back from their `input_schema`: the fields,
//! types, ranges and enums the fuzzer builds cases from.

use super::*;

// --- the tools' schemas, read back from their input_schema ------------------

#[derive(Debug, Clone)]
pub(super) enum Shape {
    Str,
    Int { min: i128, max: i128 },
    Bool,
    Enum(Vec<String>),
    Array(Box<Field>),
    Object(Obj),
}

#[derive(Debug, Clone, Default)]
pub(super) struct Field {
    pub(super) shapes: Vec<Shape>,
    pub(super) nullable: bool,
}

impl Field {
    pub(super) fn has(&self, test: impl Fn(&Shape) -> bool) -> bool {
        self.shapes.iter().any(test)
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct Obj {
    pub(super) props: Vec<(String, Field)>,
    pub(super) required: BTreeSet<String>,
    pub(super) closed: bool,
    /// A map's values (`additionalProperties` given as a schema): any key
    /// is allowed, each value must fit.
    pub(super) values: Option<Box<Field>>,
}

pub(super) fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unsupported $ref {r}"));
            &root["$defs"][name]
        }
        None => schema,
    }
}

pub(super) fn field_of(root: &Value, schema: &Value) -> Field {
    let schema = resolve(root, schema);
    let mut field = Field::default();
    if let Some(alts) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        let consts: Vec<String> =
            alts.iter().filter_map(|a| a.get("const")?.as_str().map(str::to_string)).collect();
        if consts.len() == alts.len() {
            field.shapes.push(Shape::Enum(consts));
            return field;
        }
        for alt in alts {
            let sub = field_of(root, alt);
            field.nullable |= sub.nullable;
            field.shapes.extend(sub.shapes);
        }
        return field;
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        field
            .shapes
            .push(Shape::Enum(values.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()));
        return field;
    }
    if let Some(c) = schema.get("const").and_then(Value::as_str) {
        field.shapes.push(Shape::Enum(vec![c.to_string()]));
        return field;
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => panic!("unsupported schema (no type): {schema}"),
    };
    for t in types {
        match t {
            "null" => field.nullable = true,
            "string" => field.shapes.push(Shape::Str),
            "boolean" => field.shapes.push(Shape::Bool),
            "integer" => {
                let (min, max) = int_range(schema);
                field.shapes.push(Shape::Int { min, max });
            }
            "array" => field.shapes.push(Shape::Array(Box::new(field_of(root, &schema["items"])))),
            "object" => field.shapes.push(Shape::Object(obj_of(root, schema))),
            other => panic!("unsupported schema type {other}: {schema}"),
        }
    }
    field
}

/// An integer's range from its portable bounds: `minimum`/`maximum` as
/// given; an unsigned one (minimum 0) without a maximum is 64-bit, a signed
/// one without bounds is `i64`.
pub(super) fn int_range(schema: &Value) -> (i128, i128) {
    assert!(schema.get("format").is_none(), "formats are not portable: {schema}");
    let min = schema["minimum"].as_f64().map_or(i64::MIN as i128, |m| m as i128);
    let max = match schema["maximum"].as_f64() {
        Some(m) => m as i128,
        None if min >= 0 => u64::MAX as i128,
        None => i64::MAX as i128,
    };
    (min, max)
}

pub(super) fn obj_of(root: &Value, schema: &Value) -> Obj {
    let required: BTreeSet<String> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    // An optional member may be `null`: tether reads it as left out.
    let props = schema["properties"]
        .as_object()
        .map(|p| {
            p.iter()
                .map(|(k, s)| {
                    let mut field = field_of(root, s);
                    field.nullable |= !required.contains(k);
                    (k.clone(), field)
                })
                .collect()
        })
        .unwrap_or_default();
    let values = schema["additionalProperties"]
        .is_object()
        .then(|| Box::new(field_of(root, &schema["additionalProperties"])));
    Obj { props, required, closed: schema["additionalProperties"] == json!(false), values }
}

/// A registered tool as the fuzzer sees it.
pub(super) struct Tool {
    pub(super) name: String,
    pub(super) level: Level,
    pub(super) obj: Obj,
    /// Every property name, nested ones included.
    pub(super) names: BTreeSet<String>,
}

pub(super) fn names_in(obj: &Obj, out: &mut BTreeSet<String>) {
    fn in_field(field: &Field, out: &mut BTreeSet<String>) {
        for shape in &field.shapes {
            match shape {
                Shape::Object(o) => names_in(o, out),
                Shape::Array(item) => in_field(item, out),
                _ => {}
            }
        }
    }
    for (name, field) in &obj.props {
        out.insert(name.clone());
        in_field(field, out);
    }
}

pub(super) fn model(rt: &Runtime) -> Vec<Tool> {
    rt.tools(Surface::Full)
        .into_iter()
        .map(|spec| {
            let field = field_of(&spec.input_schema, &spec.input_schema);
            let obj = match field.shapes.as_slice() {
                [Shape::Object(obj)] if !field.nullable => obj.clone(),
                _ => panic!("{}: the input schema is not an object: {}", spec.name, spec.input_schema),
            };
            assert!(
                obj.closed,
                "{}: unknown fields must be refused (additionalProperties: false)",
                spec.name
            );
            let mut names = BTreeSet::new();
            names_in(&obj, &mut names);
            Tool { name: spec.name, level: spec.level, obj, names }
        })
        .collect()
}
