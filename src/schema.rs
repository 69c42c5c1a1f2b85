//! Tool input schemas every client can take.
//!
//! `schemars` writes good JSON Schema, but not the subset that function
//! calling accepts everywhere: strict validators (Ajv in strict mode, what
//! most Node MCP clients use) refuse unknown `format`s such as `uint32` or
//! `int64`, and the parameter schemas model providers document leave out
//! `$ref`, `oneOf`, `anyOf`, `const` and `["T", "null"]` type lists.
//! [`portable`] rewrites a schema into that subset without losing what it
//! says: references are inlined, an enum of documented constants becomes
//! an `enum` whose values' meanings join the description, an optional
//! field is a plain type left out of `required`, and an integer's format
//! becomes its `minimum`/`maximum`.
//!
//! [`SUBSET`] is the subset, written down; `tests/it/hosts/schemas.rs` holds every
//! tool's schema to it and compiles each under Ajv's strict mode.

use serde_json::{Map, Value};

/// The keywords a portable parameter schema may use: the common ground of
/// OpenAI's, Anthropic's and Google's documented function-calling schemas
/// (single `type`s; `properties`/`required`/`additionalProperties` for
/// objects; `items` and length bounds for arrays; `enum`; numeric bounds;
/// `description` and `default` anywhere).
pub const SUBSET: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "minimum",
    "maximum",
    "default",
];

/// The single types a portable schema may name.
pub const TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

/// `schema` rewritten into [`SUBSET`].
pub fn portable(schema: Value) -> Value {
    let defs = schema.get("$defs").or_else(|| schema.get("definitions")).cloned().unwrap_or(Value::Null);
    let mut out = rewrite(schema, &defs, 0);
    if let Some(map) = out.as_object_mut() {
        map.remove("$defs");
        map.remove("definitions");
        map.remove("$schema");
        map.remove("title");
    }
    out
}

/// References deeper than this are left unresolved (a recursive type).
const MAX_DEPTH: usize = 32;

fn rewrite(value: Value, defs: &Value, depth: usize) -> Value {
    let Value::Object(mut map) = value else { return value };
    if depth > MAX_DEPTH {
        return Value::Object(map);
    }
    // A reference: the definition, with the referring site's description.
    if let Some(target) = map.get("$ref").and_then(Value::as_str).and_then(|r| r.rsplit('/').next()) {
        let mut resolved = rewrite(defs.get(target).cloned().unwrap_or(Value::Null), defs, depth + 1);
        let Some(r) = resolved.as_object_mut() else { return resolved };
        let own = r.get("description").and_then(Value::as_str).unwrap_or("");
        // The site's words lead; the type's own words (what it is, what
        // each of its values means) are the reference's, behind the lead,
        // so a field the site does not describe has an empty lead.
        let joined = match map.remove("description") {
            Some(Value::String(site)) => match own.split_once("\n\n") {
                Some((_, rest)) => format!("{}\n\n{rest}", paragraphs(&site)),
                None => paragraphs(&site),
            },
            _ if own.is_empty() => String::new(),
            _ => format!("\n\n{own}"),
        };
        if joined.is_empty() {
            r.remove("description");
        } else {
            r.insert("description".into(), joined.into());
        }
        return resolved;
    }
    // `Option<T>` of a referenced type: `anyOf: [T, {type: null}]` is T.
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(variants)) = map.get(key) {
            let non_null: Vec<&Value> =
                variants.iter().filter(|v| v.get("type") != Some(&"null".into())).collect();
            if non_null.len() == 1 && non_null.len() < variants.len() {
                // The site's description goes to the variant, where a
                // reference weighs it against the type's own words.
                let mut variant = non_null[0].clone();
                if let (Some(v), Some(d)) = (variant.as_object_mut(), map.get("description")) {
                    v.insert("description".into(), d.clone());
                }
                return rewrite(variant, defs, depth + 1);
            }
        }
    }
    // An enum of documented constants.
    if let Some(Value::Array(variants)) = map.get("oneOf")
        && variants.iter().all(|v| v.get("const").is_some())
    {
        let values: Vec<Value> = variants.iter().filter_map(|v| v.get("const").cloned()).collect();
        let meanings: Vec<String> = variants
            .iter()
            .filter_map(|v| {
                let name = v.get("const")?.as_str()?;
                let what = v.get("description")?.as_str()?;
                Some(format!("- {name}: {}", paragraphs(what)))
            })
            .collect();
        // The type's own words, then a paragraph of what each value means:
        // the reference shows both, the tool list the first.
        let mut description = paragraphs(map.get("description").and_then(Value::as_str).unwrap_or(""));
        if !meanings.is_empty() {
            description = format!("{description}\n\n{}", meanings.join("\n")).trim().to_string();
        }
        let kind = variants.iter().find_map(|v| v.get("type").cloned()).unwrap_or_else(|| "string".into());
        let mut out = Map::new();
        out.insert("type".into(), kind);
        out.insert("enum".into(), Value::Array(values));
        if !description.is_empty() {
            out.insert("description".into(), description.into());
        }
        return Value::Object(out);
    }
    // A nullable type list: the type (the field is optional by being left
    // out of `required`).
    if let Some(Value::Array(types)) = map.get("type") {
        let concrete: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if concrete.len() == 1 {
            map.insert("type".into(), concrete[0].clone());
        }
    }
    // An integer's width as bounds.
    if let Some(format) = map.remove("format").and_then(|f| f.as_str().map(str::to_string)) {
        let (min, max): (Option<i64>, Option<u64>) = match format.as_str() {
            "uint8" => (Some(0), Some(u8::MAX as u64)),
            "uint16" => (Some(0), Some(u16::MAX as u64)),
            "uint32" => (Some(0), Some(u32::MAX as u64)),
            "uint" | "uint64" => (Some(0), None),
            "int8" => (Some(i8::MIN as i64), Some(i8::MAX as u64)),
            "int16" => (Some(i16::MIN as i64), Some(i16::MAX as u64)),
            "int32" => (Some(i32::MIN as i64), Some(i32::MAX as u64)),
            _ => (None, None),
        };
        if let Some(min) = min {
            map.entry("minimum").or_insert(min.into());
        }
        if let Some(max) = max {
            map.entry("maximum").or_insert(max.into());
        }
    }
    if let Some(Value::String(d)) = map.get_mut("description") {
        *d = paragraphs(d);
    }
    // `default: null` says nothing a missing default does not.
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    let rewritten: Map<String, Value> = map
        .into_iter()
        .map(|(k, v)| {
            let v = match k.as_str() {
                "properties" => match v {
                    Value::Object(props) => Value::Object(
                        props.into_iter().map(|(n, s)| (n, rewrite(s, defs, depth + 1))).collect(),
                    ),
                    other => other,
                },
                "items" | "additionalProperties" => rewrite(v, defs, depth + 1),
                _ => v,
            };
            (k, v)
        })
        .collect();
    Value::Object(rewritten)
}

/// A doc comment's text as one line a paragraph: the lines of a paragraph
/// joined by spaces, paragraphs apart by a blank line.
fn paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The first paragraph of a description: what the tool list carries.
pub fn lead(text: &str) -> &str {
    text.split("\n\n").next().unwrap_or("").trim()
}

/// `schema` (a [`portable`] one) as the tool list sends it: each
/// description cut to its first paragraph (the rest, and what each enum
/// value means, is the reference's), and without the keywords that only
/// restate what the tool checks anyway — the schema's own description,
/// `additionalProperties: false` (an unknown argument is refused by
/// name; a map's value schema stays), an
/// unsigned integer's `minimum: 0` and a width's `maximum`, a boolean's
/// `default: false`. Every property, type, enum and `required` stays.
pub fn compact(schema: &Value) -> Value {
    let mut out = compact_at(schema);
    if let Some(map) = out.as_object_mut() {
        map.remove("description");
    }
    out
}

/// The `maximum`s that only say an integer's width (u8, u16, u32 and up).
fn is_width(maximum: u64) -> bool {
    [u8::MAX as u64, u16::MAX as u64].contains(&maximum) || maximum >= u32::MAX as u64
}

fn compact_at(schema: &Value) -> Value {
    let Value::Object(map) = schema else { return schema.clone() };
    let integer = map.get("type").and_then(Value::as_str) == Some("integer");
    let boolean = map.get("type").and_then(Value::as_str) == Some("boolean");
    let mut out = Map::new();
    for (key, value) in map {
        let value = match key.as_str() {
            // `false` only restates a check; a map's value schema says what its values are.
            "additionalProperties" if value.is_boolean() => continue,
            "additionalProperties" => compact_at(value),
            "minimum" if integer && value.as_u64() == Some(0) => continue,
            "maximum" if integer && value.as_u64().is_some_and(is_width) => continue,
            "default" if boolean && value == &Value::Bool(false) => continue,
            "description" => match value.as_str().map(lead) {
                Some("") => continue,
                Some(first) => first.into(),
                None => value.clone(),
            },
            "properties" => Value::Object(
                value.as_object().into_iter().flatten().map(|(k, v)| (k.clone(), compact_at(v))).collect(),
            ),
            // An item's description is its type's own words: the reference's.
            "items" => {
                let mut item = compact_at(value);
                if let Some(m) = item.as_object_mut() {
                    m.remove("description");
                }
                item
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// What in `schema` is outside [`SUBSET`], as `path: problem` lines.
pub fn outside_subset(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(schema, "$", &mut problems);
    problems
}

fn check(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        if !schema.is_boolean() {
            problems.push(format!("{at}: a schema must be an object"));
        }
        return;
    };
    for (key, value) in map {
        if !SUBSET.contains(&key.as_str()) {
            problems.push(format!("{at}: `{key}` is outside the portable subset"));
        }
        match key.as_str() {
            "type" if !value.as_str().is_some_and(|t| TYPES.contains(&t)) => {
                problems.push(format!("{at}: `type` must be one of {TYPES:?}, not {value}"));
            }
            "properties" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    check(sub, &format!("{at}.{name}"), problems);
                }
            }
            "items" => check(value, &format!("{at}[]"), problems),
            "additionalProperties" if !value.is_boolean() => check(value, &format!("{at}{{}}"), problems),
            _ => {}
        }
    }
    if map.get("type").and_then(Value::as_str) == Some("object") {
        let props = map.get("properties").and_then(Value::as_object);
        for required in map.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !props.is_some_and(|p| required.as_str().is_some_and(|r| p.contains_key(r))) {
                problems.push(format!("{at}: `required` names {required}, which is not a property"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_enums_nullables_and_formats_become_the_subset() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"Op": {"description": "The op.", "oneOf": [
                {"const": "a", "description": "Does a.", "type": "string"},
                {"const": "b", "description": "Does b.", "type": "string"}]}},
            "type": "object",
            "properties": {
                "op": {"$ref": "#/$defs/Op"},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Op"}, {"type": "null"}], "description": "Optional op."},
                "port": {"type": ["integer", "null"], "format": "uint16", "minimum": 0},
                "big": {"type": "integer", "format": "int64"},
                "lines": {"type": ["array", "null"], "items": {"type": "integer", "format": "uint32"}, "default": null}
            },
            "required": ["op"]
        });
        let out = portable(schema);
        assert_eq!(outside_subset(&out), Vec::<String>::new(), "{out:#}");
        assert_eq!(
            out["properties"]["op"],
            json!({"type": "string", "enum": ["a", "b"], "description": "\n\nThe op.\n\n- a: Does a.\n- b: Does b."})
        );
        let maybe = &out["properties"]["maybe"]["description"];
        assert_eq!(maybe, "Optional op.\n\n- a: Does a.\n- b: Does b.", "the site's words lead");
        let listed = compact(&out);
        assert_eq!(listed["properties"]["op"], json!({"type": "string", "enum": ["a", "b"]}));
        assert_eq!(listed["properties"]["maybe"]["description"], "Optional op.");
        assert_eq!(
            listed["properties"]["lines"]["items"],
            json!({"type": "integer"}),
            "a width says nothing"
        );
        assert_eq!(
            listed["properties"]["port"],
            json!({"type": "integer"}),
            "a u16's width says nothing either"
        );
        assert_eq!(listed["required"], json!(["op"]));
        assert_eq!(out["properties"]["maybe"]["enum"], json!(["a", "b"]));
        assert_eq!(out["properties"]["port"], json!({"type": "integer", "minimum": 0, "maximum": 65535}));
        assert_eq!(out["properties"]["big"], json!({"type": "integer"}));
        assert_eq!(
            out["properties"]["lines"]["items"],
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(out["required"], json!(["op"]));
    }

    #[test]
    fn what_is_outside_the_subset_is_named() {
        let bad = json!({"type": "object", "properties": {"x": {"type": ["string", "null"], "format": "uint"}}, "required": ["y"]});
        let problems = outside_subset(&bad);
        assert!(problems.iter().any(|p| p.starts_with("$.x: `format`")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("$.x: `type` must be one of")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("`required` names \"y\"")), "{problems:?}");
    }
}
