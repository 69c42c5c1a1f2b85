//! Property and fuzz tests over the router's argument handling — steps 1–4
//! of every call (registered, on the surface, approved, arguments parse),
//! through [`Runtime::check`], which drops the work unpolled — for every
//! registered tool, and path confinement for every path argument.
//!
//! Deterministic: a hand-written splitmix64 seeded from [`DEFAULT_SEED`]
//! (`TETHER_FUZZ_SEED=N` picks another); every failure names the seed and
//! the case. Run with `--nocapture` for the figures BENCHMARKS.md quotes.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{Harness, Rng};
use serde_json::{Map, Value, json};
use tether::{Level, Runtime, Surface, ToolResult};
use tether_actors::question::port::ChannelPort;
use tether_actors::workers::Tier;
use tether_actors::workers::command::CommandBackend;

const DEFAULT_SEED: u64 = 0x7e7e_f022_5eed_0001;
/// Random cases of the main loop; the deep, huge and path passes add theirs.
const RANDOM_CASES: usize = 100_000;
/// Checks in flight at once.
const CHUNK: usize = 256;
/// Nesting of the deep cases.
const DEEP: usize = 10_000;
/// Length of the huge strings.
const HUGE: usize = 1 << 20;
/// What a refused path says.
const OUTSIDE: &str = "outside the working directory";
/// How a path through a dangling symlink is refused (its target, inside
/// or out, cannot be checked).
const DANGLING: &str = "whose target does not exist";
/// How a path holding a NUL byte is refused (before it can be resolved).
const NUL: &str = "the path holds a NUL byte";

/// Whether `text` is a confinement refusal: outside, through a dangling
/// link, or a path no file can have.
fn confinement_refusal(text: &str) -> bool {
    text.contains(OUTSIDE) || text.contains(DANGLING) || text.contains(NUL)
}

fn seed() -> u64 {
    std::env::var("TETHER_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEED)
}

// --- the tools' schemas, read back from their input_schema ------------------

#[derive(Debug, Clone)]
enum Shape {
    Str,
    Int { min: i128, max: i128 },
    Bool,
    Enum(Vec<String>),
    Array(Box<Field>),
    Object(Obj),
}

#[derive(Debug, Clone, Default)]
struct Field {
    shapes: Vec<Shape>,
    nullable: bool,
}

impl Field {
    fn has(&self, test: impl Fn(&Shape) -> bool) -> bool {
        self.shapes.iter().any(test)
    }
}

#[derive(Debug, Clone, Default)]
struct Obj {
    props: Vec<(String, Field)>,
    required: BTreeSet<String>,
    closed: bool,
    /// A map's values (`additionalProperties` given as a schema): any key
    /// is allowed, each value must fit.
    values: Option<Box<Field>>,
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unsupported $ref {r}"));
            &root["$defs"][name]
        }
        None => schema,
    }
}

fn field_of(root: &Value, schema: &Value) -> Field {
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
fn int_range(schema: &Value) -> (i128, i128) {
    assert!(schema.get("format").is_none(), "formats are not portable: {schema}");
    let min = schema["minimum"].as_f64().map_or(i64::MIN as i128, |m| m as i128);
    let max = match schema["maximum"].as_f64() {
        Some(m) => m as i128,
        None if min >= 0 => u64::MAX as i128,
        None => i64::MAX as i128,
    };
    (min, max)
}

fn obj_of(root: &Value, schema: &Value) -> Obj {
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
struct Tool {
    name: String,
    level: Level,
    obj: Obj,
    /// Every property name, nested ones included.
    names: BTreeSet<String>,
}

fn names_in(obj: &Obj, out: &mut BTreeSet<String>) {
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

fn model(rt: &Runtime) -> Vec<Tool> {
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

// --- values ------------------------------------------------------------------

/// Pieces of hostile and odd text: NUL, lone combining marks, replacement
/// characters, direction overrides, escaped bytes and surrogates as text
/// (a Rust string cannot hold a real one), serde's own words, paths.
const PIECES: &[&str] = &[
    "",
    "a",
    "hello world",
    "   ",
    "\t\n",
    "\r\n",
    "\0",
    "a\0b",
    "\u{FFFD}",
    "\u{0301}",
    "e\u{0301}",
    "\u{202E}",
    "\u{200B}",
    "\u{FEFF}",
    "\u{10FFFF}",
    "\u{E000}",
    "\u{1F600}",
    "日本語",
    "\\ud800",
    "\\udfff",
    "%FF%FE",
    "%2e%2e%2f",
    "\\xff\\xfe",
    "..",
    "../",
    "/etc/passwd",
    "a/../../b",
    "$A",
    "$$$ARGS",
    "`",
    "``",
    "\"",
    "'",
    " at line 1 column 2",
    "expected u64",
    "invalid type: ",
    "unknown field",
    "{}",
    "[]",
    "null",
    "NaN",
    "-1",
    "18446744073709551616",
];

fn random_char(rng: &mut Rng) -> char {
    match rng.below(4) {
        0 => (b' ' + rng.below(95) as u8) as char,
        1 => char::from_u32(rng.below(0x800) as u32).unwrap_or('?'),
        _ => loop {
            if let Some(c) = char::from_u32(rng.below(0x11_0000) as u32) {
                break c;
            }
        },
    }
}

fn fuzz_string(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => (0..1 + rng.below(40)).map(|_| random_char(rng)).collect(),
        1 => {
            let mut s = String::new();
            while s.len() < 2_000 + rng.below(8_000) {
                let piece = rng.pick::<&str>(PIECES);
                s.push_str(piece);
                s.push(random_char(rng));
            }
            s
        }
        _ => (0..1 + rng.below(3)).map(|_| *rng.pick(PIECES)).collect(),
    }
}

/// A realistic value for a field of this name, so that right-shaped cases
/// also pass the tools' own checks now and then.
fn realistic(rng: &mut Rng, name: &str) -> Option<String> {
    let pool: &[&str] = match name {
        "path" => &["a.py", "src", "src/lib.rs", ".", "sub/inner.py", "missing.py", ""],
        "file" => &["a.py", "src/lib.rs", "*", "missing.py", "sub"],
        "program" => &["a.py", "missing.py"],
        "language" => &["python", "rust", "dart", "tsx", "go", "cobol", "Python"],
        "pattern" => &["print($A)", "$X", "old($A)", "$$$ARGS", "(("],
        "rewrite" => &["new($A)", "$X", "", "$NOPE"],
        "description" => &["run a small cell for the test", "one", "a b c d e f g h i j k l"],
        "code" => &["1 + 1", "print('x')", ""],
        "tier" => &["fast", "good", "slow"],
        "worker_id" => &["w1", "w999", ""],
        "brief" | "message" | "label" => &["do the thing", " ", ""],
        "question" => &["Which store should the cache use?", "", "   "],
        "context" => &["the migration depends on it", ""],
        "edit_id" => &["edit_1", "edit_999"],
        "new_name" => &["renamed", "has space", ""],
        "symbol" | "query" | "expression" => &["old", "x", ""],
        "content" | "old_string" | "new_string" => &["old", "new", ""],
        "patch" => return Some(patch_text(rng)),
        _ => return None,
    };
    Some(rng.pick(pool).to_string())
}

/// Patch-shaped text: headers, hunk headers with odd counts, bodies.
fn patch_text(rng: &mut Rng) -> String {
    const LINES: &[&str] = &[
        "--- a/a.py",
        "+++ b/a.py",
        "--- /dev/null",
        "+++ /dev/null",
        "+++ b/new.txt",
        "--- a/../x",
        "+++ b/\"quoted\"",
        "@@ -1 +1 @@",
        "@@ -1,2 +1,3 @@",
        "@@ -0,0 +1 @@",
        "@@ -1 +0,0 @@",
        "@@ -99999999999999999999,1 +1 @@",
        "@@ -1,18446744073709551615 +1 @@",
        "@@ -18446744073709551615,0 +1 @@",
        "@@ garbage",
        "-x = 1",
        "+x = 2",
        " context",
        "",
        "\\ No newline at end of file",
        "diff --git a/a.py b/b.py",
        "rename from a.py",
        "rename to b.py",
        "old mode 100644",
        "Binary files a/x and b/x differ",
    ];
    if rng.one_in(3) {
        return "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n".to_string();
    }
    let mut text = String::new();
    for _ in 0..rng.below(12) {
        let line = rng.pick::<&str>(LINES);
        text.push_str(line);
        text.push(if rng.one_in(8) { '\r' } else { '\n' });
        if rng.one_in(10) {
            text.push_str(&fuzz_string(rng));
        }
    }
    text
}

fn int_value(v: i128) -> Value {
    if v >= 0 { Value::from(v as u64) } else { Value::from(v as i64) }
}

fn int_in(rng: &mut Rng, min: i128, max: i128) -> Value {
    let v = match rng.below(6) {
        0 => min,
        1 => max,
        2 => (1 + rng.below(30) as i128).clamp(min, max),
        _ => min + (rng.next() as i128).rem_euclid(max - min + 1),
    };
    int_value(v)
}

fn any_number(rng: &mut Rng) -> Value {
    match rng.below(14) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(i64::MIN),
        3 => json!(i64::MAX),
        4 => json!(u64::MAX),
        5 => json!(u32::MAX as u64 + 1),
        6 => json!(65_536),
        7 => json!(1.5),
        8 => json!(-0.0),
        9 => json!(1e300),
        10 => json!(-1e300),
        11 => json!(f64::MIN_POSITIVE),
        12 => json!(rng.next() as i64),
        _ => json!(rng.next()),
    }
}

/// Any value but `null`: an unknown key given `null` counts as left out,
/// like every `null` member, so it is no mistake to refuse.
fn any_present_value(rng: &mut Rng, depth: usize) -> Value {
    loop {
        let value = any_value(rng, depth);
        if !value.is_null() {
            return value;
        }
    }
}

fn any_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.one_in(2)),
        2 => any_number(rng),
        3 => Value::String(fuzz_string(rng)),
        4 => Value::Array((0..rng.below(4)).map(|_| any_value(rng, depth - 1)).collect()),
        _ => {
            Value::Object((0..rng.below(4)).map(|_| (fuzz_string(rng), any_value(rng, depth - 1))).collect())
        }
    }
}

fn deep_array(depth: usize) -> Value {
    let mut v = Value::Array(Vec::new());
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

fn deep_object(depth: usize) -> Value {
    let mut v = Value::Object(Map::new());
    for _ in 0..depth {
        let mut m = Map::new();
        m.insert("a".into(), v);
        v = Value::Object(m);
    }
    v
}

fn huge_string(rng: &mut Rng) -> String {
    let unit = match rng.below(3) {
        0 => "x",
        1 => "e\u{0301}\u{FFFD}\0日本\u{1F600} \u{202E}%FF",
        _ => "a/",
    };
    unit.repeat(HUGE / unit.len() + 1)
}

fn valid(rng: &mut Rng, field: &Field, name: &str) -> Value {
    if field.nullable && rng.one_in(6) {
        return Value::Null;
    }
    match rng.pick(&field.shapes).clone() {
        Shape::Str => {
            let realistic = if rng.below(5) < 3 { realistic(rng, name) } else { None };
            Value::String(realistic.unwrap_or_else(|| fuzz_string(rng)))
        }
        Shape::Int { min, max } => int_in(rng, min, max),
        Shape::Bool => Value::Bool(rng.one_in(2)),
        Shape::Enum(values) => Value::String(rng.pick(&values).clone()),
        Shape::Array(item) => Value::Array((0..rng.below(4)).map(|_| valid(rng, &item, name)).collect()),
        Shape::Object(obj) => Value::Object(valid_object(rng, &obj)),
    }
}

fn valid_object(rng: &mut Rng, obj: &Obj) -> Map<String, Value> {
    let mut map = Map::new();
    for (name, field) in &obj.props {
        if obj.required.contains(name) || rng.one_in(2) {
            map.insert(name.clone(), valid(rng, field, name));
        }
    }
    if let Some(values) = &obj.values {
        for _ in 0..rng.below(3) {
            let key = format!("K{}", rng.below(1000));
            map.insert(key, valid(rng, values, ""));
        }
    }
    map
}

/// A key no tool knows.
fn unknown_key(rng: &mut Rng, obj: &Obj) -> String {
    loop {
        let key = if obj.props.is_empty() || rng.one_in(2) {
            fuzz_string(rng)
        } else {
            format!("{}_x", rng.pick(&obj.props).0)
        };
        if !obj.props.iter().any(|(name, _)| *name == key) {
            return key;
        }
    }
}

/// A value `field` refuses: another JSON type, an integer out of its
/// range or a float, a string outside its enum, an array with one bad
/// item, an object with a bad member.
fn wrong(rng: &mut Rng, field: &Field) -> Value {
    loop {
        match rng.below(11) {
            0 if !field.nullable => return Value::Null,
            1 if !field.has(|s| matches!(s, Shape::Bool)) => return Value::Bool(rng.one_in(2)),
            2 if !field.has(|s| matches!(s, Shape::Int { .. })) => return any_number(rng),
            3 => {
                return rng.pick(&[json!(1.5), json!(-0.5), json!(2.0), json!(1e300), json!(-1e300)]).clone();
            }
            4 => {
                let ranges: Vec<(i128, i128)> = field
                    .shapes
                    .iter()
                    .filter_map(|s| match s {
                        Shape::Int { min, max } => Some((*min, *max)),
                        _ => None,
                    })
                    .collect();
                let Some(&(min, max)) = ranges.first() else { continue };
                let mut out = Vec::new();
                if min > i64::MIN as i128 {
                    out.extend([min - 1, i64::MIN as i128]);
                }
                if max < u64::MAX as i128 {
                    out.extend([max + 1, u64::MAX as i128]);
                }
                if out.is_empty() {
                    continue;
                }
                return int_value(*rng.pick(&out));
            }
            5 if !field.has(|s| matches!(s, Shape::Str | Shape::Enum(_))) => {
                return Value::String(fuzz_string(rng));
            }
            6 if !field.has(|s| matches!(s, Shape::Str)) => {
                let Some(values) = field.shapes.iter().find_map(|s| match s {
                    Shape::Enum(v) => Some(v.clone()),
                    _ => None,
                }) else {
                    continue;
                };
                let base = rng.pick(&values).clone();
                let candidate = match rng.below(5) {
                    0 => base.to_uppercase(),
                    1 => format!("{base} "),
                    2 => format!("{base}\0"),
                    3 => format!("\u{200B}{base}"),
                    _ => fuzz_string(rng),
                };
                if !values.contains(&candidate) {
                    return Value::String(candidate);
                }
            }
            7 if !field.has(|s| matches!(s, Shape::Array(_))) => {
                return Value::Array((0..rng.below(4)).map(|_| any_value(rng, 2)).collect());
            }
            8 if !field.has(|s| matches!(s, Shape::Object(_))) => {
                return Value::Object(
                    (0..rng.below(4)).map(|_| (fuzz_string(rng), any_value(rng, 2))).collect(),
                );
            }
            9 => {
                let Some(item) = field.shapes.iter().find_map(|s| match s {
                    Shape::Array(item) => Some(item.clone()),
                    _ => None,
                }) else {
                    continue;
                };
                let mut items: Vec<Value> = (0..rng.below(3)).map(|_| valid(rng, &item, "")).collect();
                let at = rng.below(items.len() + 1);
                items.insert(at, wrong(rng, &item));
                return Value::Array(items);
            }
            10 => {
                let Some(obj) = field.shapes.iter().find_map(|s| match s {
                    Shape::Object(o) => Some(o.clone()),
                    _ => None,
                }) else {
                    continue;
                };
                let mut map = valid_object(rng, &obj);
                match rng.below(3) {
                    0 if !obj.required.is_empty() => {
                        let gone: Vec<&String> = obj.required.iter().collect();
                        map.remove(*rng.pick(&gone));
                    }
                    // A map takes any key; one of its values is wrong instead.
                    _ if obj.props.is_empty() => {
                        let Some(values) = &obj.values else { continue };
                        let bad = wrong(rng, values);
                        if bad.is_null() {
                            continue;
                        }
                        map.insert("KEY".into(), bad);
                    }
                    1 => {
                        map.insert(unknown_key(rng, &obj), any_present_value(rng, 1));
                    }
                    _ => {
                        let (name, f) = rng.pick(&obj.props).clone();
                        map.insert(name, wrong(rng, &f));
                    }
                }
                return Value::Object(map);
            }
            _ => {}
        }
    }
}

// --- cases -------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// Every field of the right JSON type, contents random.
    Shaped,
    /// One field of a wrong type, out of range, or not in its enum.
    WrongType,
    /// One required field left out.
    Missing,
    /// One field no tool knows.
    Unknown,
    /// Not an object at the top.
    NotObject,
    /// `null` at the top (counts as `{}`).
    Null,
    /// Several mutations at once.
    Multi,
    /// A random object.
    Junk,
    /// A write/exec tool called from the read-only surface.
    Surface,
    /// A name no tool has.
    Unregistered,
    /// A 1 MiB string somewhere.
    Huge,
    /// 10,000 levels of arrays or objects somewhere.
    Deep,
}

enum Expect {
    /// Ok, or an error naming one of the tool's fields.
    Shaped,
    /// An error whose path starts with this field.
    Field(String),
    /// An error saying this field is missing.
    Missing(Vec<String>),
    /// An error quoting this unknown field.
    Unknown(String),
    /// An error saying an object is expected.
    NotObject,
    /// An error naming one of these.
    AnyOf(Vec<String>),
    /// Ok, or an error naming one of these.
    OkOrAnyOf(Vec<String>),
    /// Refused by the surface.
    Surface,
    /// Refused as an unknown tool.
    Unregistered,
}

struct Case {
    tool: String,
    class: Class,
    surface: Surface,
    args: Value,
    expect: Expect,
}

fn case(tool: &Tool, class: Class, args: Value, expect: Expect) -> Case {
    Case { tool: tool.name.clone(), class, surface: Surface::Full, args, expect }
}

fn random_case(rng: &mut Rng, tools: &[Tool]) -> Case {
    let tool = rng.pick(tools);
    let obj = &tool.obj;
    let mut base = valid_object(rng, obj);
    match rng.below(100) {
        0..30 => case(tool, Class::Shaped, Value::Object(base), Expect::Shaped),
        30..55 if !obj.props.is_empty() => {
            let (name, field) = rng.pick(&obj.props).clone();
            base.insert(name.clone(), wrong(rng, &field));
            case(tool, Class::WrongType, Value::Object(base), Expect::Field(name))
        }
        55..63 if !obj.required.is_empty() => {
            let required: Vec<&String> = obj.required.iter().collect();
            let gone = rng.pick(&required).to_string();
            base.remove(&gone);
            case(tool, Class::Missing, Value::Object(base), Expect::Missing(vec![gone]))
        }
        63..73 => {
            let key = unknown_key(rng, obj);
            base.insert(key.clone(), any_present_value(rng, 2));
            case(tool, Class::Unknown, Value::Object(base), Expect::Unknown(key))
        }
        73..80 => {
            let top = match rng.below(5) {
                0 => Value::Bool(rng.one_in(2)),
                1 => any_number(rng),
                2 => Value::String(fuzz_string(rng)),
                3 => Value::Array((0..rng.below(4)).map(|_| any_value(rng, 2)).collect()),
                _ => Value::Array(vec![Value::Object(base)]),
            };
            case(tool, Class::NotObject, top, Expect::NotObject)
        }
        80..82 => {
            let expect = if obj.required.is_empty() {
                Expect::Shaped
            } else {
                Expect::Missing(obj.required.iter().cloned().collect())
            };
            case(tool, Class::Null, Value::Null, expect)
        }
        82..92 if !obj.props.is_empty() => {
            let mut named = Vec::new();
            for _ in 0..2 + rng.below(3) {
                match rng.below(3) {
                    0 => {
                        let (name, field) = rng.pick(&obj.props).clone();
                        base.insert(name.clone(), wrong(rng, &field));
                        named.push(name);
                    }
                    1 if !obj.required.is_empty() => {
                        let required: Vec<&String> = obj.required.iter().collect();
                        let gone = rng.pick(&required).to_string();
                        base.remove(&gone);
                        named.push(gone);
                    }
                    _ => {
                        let key = unknown_key(rng, obj);
                        base.insert(key.clone(), any_present_value(rng, 1));
                        named.push(key);
                    }
                }
            }
            case(tool, Class::Multi, Value::Object(base), Expect::AnyOf(named))
        }
        92..96 => {
            let junk: Map<String, Value> =
                (0..rng.below(6)).map(|_| (fuzz_string(rng), any_value(rng, 3))).collect();
            let mut named: Vec<String> = junk.keys().cloned().collect();
            named.extend(tool.names.iter().cloned());
            case(tool, Class::Junk, Value::Object(junk), Expect::OkOrAnyOf(named))
        }
        96..99 => {
            let writers: Vec<&Tool> = tools.iter().filter(|t| t.level != Level::Read).collect();
            let tool = rng.pick(&writers);
            let args =
                if rng.one_in(2) { Value::Object(valid_object(rng, &tool.obj)) } else { any_value(rng, 3) };
            Case { surface: Surface::ReadOnly, ..case(tool, Class::Surface, args, Expect::Surface) }
        }
        _ => {
            let mut name = fuzz_string(rng);
            if tools.iter().any(|t| t.name == name) {
                name.push('!');
            }
            Case {
                tool: name,
                class: Class::Unregistered,
                surface: Surface::Full,
                args: any_value(rng, 2),
                expect: Expect::Unregistered,
            }
        }
    }
}

/// Deep values in every place of every tool: at the top, as each field,
/// inside an array field, under an unknown key; plus some at 100,000 levels.
fn deep_cases(rng: &mut Rng, tools: &[Tool]) -> Vec<Case> {
    let mut out = Vec::new();
    for tool in tools {
        out.push(case(tool, Class::Deep, deep_array(DEEP), Expect::NotObject));
        for (name, _) in &tool.obj.props {
            for value in [deep_array(DEEP), deep_object(DEEP)] {
                let mut args = valid_object(rng, &tool.obj);
                args.insert(name.clone(), value);
                out.push(case(tool, Class::Deep, Value::Object(args), Expect::Field(name.clone())));
            }
        }
        let key = unknown_key(rng, &tool.obj);
        let mut args = valid_object(rng, &tool.obj);
        args.insert(key.clone(), deep_object(DEEP));
        out.push(case(tool, Class::Deep, Value::Object(args), Expect::AnyOf(vec![key])));
        let mut args = Map::new();
        args.insert("a".into(), deep_object(DEEP * 10));
        out.push(case(tool, Class::Deep, Value::Object(args), Expect::AnyOf(vec!["a".into()])));
    }
    out
}

/// A 1 MiB string in every string field of every tool, as an unknown
/// key, and as the whole arguments.
fn huge_cases(rng: &mut Rng, tools: &[Tool]) -> Vec<Case> {
    let mut out = Vec::new();
    for tool in tools {
        for (name, field) in &tool.obj.props {
            if !field.has(|s| matches!(s, Shape::Str)) {
                continue;
            }
            for _ in 0..3 {
                let mut args = valid_object(rng, &tool.obj);
                args.insert(name.clone(), Value::String(huge_string(rng)));
                out.push(case(tool, Class::Huge, Value::Object(args), Expect::Shaped));
            }
        }
        let key = huge_string(rng);
        let mut args = valid_object(rng, &tool.obj);
        args.insert(key.clone(), json!(1));
        out.push(case(tool, Class::Huge, Value::Object(args), Expect::Unknown(key)));
        out.push(case(tool, Class::Huge, Value::String(huge_string(rng)), Expect::NotObject));
    }
    out
}

fn mentions_field(text: &str, field: &str) -> bool {
    // A required field given `null` reads as left out (null is absent).
    ["`", "[", "."].iter().any(|end| text.contains(&format!("argument `{field}{end}")))
        || text.contains(&format!("missing field `{field}`"))
}

/// `Ok` if `result` is what `expect` allows; otherwise why not.
fn verify(
    expect: &Expect,
    tool: &str,
    names: Option<&BTreeSet<String>>,
    result: &Result<(), ToolResult>,
) -> Result<(), String> {
    let err = match (result, expect) {
        (Ok(()), Expect::Shaped | Expect::OkOrAnyOf(_)) => return Ok(()),
        (Ok(()), _) => return Err("accepted, but it should have been refused".into()),
        (Err(e), _) => e,
    };
    if !err.is_error {
        return Err("refused with a result that is not an error".into());
    }
    let text = err.text.as_str();
    let ok = match expect {
        Expect::Shaped => names.is_some_and(|names| names.iter().any(|n| text.contains(&format!("`{n}")))),
        Expect::Field(f) => mentions_field(text, f),
        Expect::Missing(fields) => fields.iter().any(|f| text.contains(&format!("missing field `{f}`"))),
        Expect::Unknown(k) => text.contains(&format!("unknown field `{k}`")),
        Expect::NotObject => text.contains("must be a JSON object"),
        Expect::AnyOf(names) | Expect::OkOrAnyOf(names) => {
            names.iter().any(|n| text.contains(&format!("`{n}")))
        }
        Expect::Surface => text.contains("read-only surface") && text.contains(&format!("`{tool}`")),
        Expect::Unregistered => text.contains("unknown tool"),
    };
    if ok { Ok(()) } else { Err("the error does not name what is wrong".into()) }
}

/// A bounded rendering of a value for failure messages (never recurses
/// past a few levels, so deep values are safe).
fn summary(v: &Value) -> String {
    fn go(v: &Value, depth: usize, out: &mut String) {
        if out.len() > 300 {
            return;
        }
        match v {
            Value::Array(items) if depth > 3 => out.push_str(&format!("[…{}]", items.len())),
            Value::Object(map) if depth > 3 => out.push_str(&format!("{{…{}}}", map.len())),
            Value::Array(items) => {
                out.push('[');
                for item in items.iter().take(4) {
                    go(item, depth + 1, out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (k, item) in map.iter().take(6) {
                    out.push_str(&format!("{:?}:", clip(k)));
                    go(item, depth + 1, out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::String(s) => out.push_str(&format!("{:?}", clip(s))),
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    go(v, 0, &mut out);
    out
}

fn clip(s: &str) -> String {
    let n = s.chars().count();
    if n <= 60 { s.to_string() } else { format!("{}…({n} chars)", s.chars().take(60).collect::<String>()) }
}

#[derive(Default)]
struct Stats {
    cases: usize,
    errors: usize,
    panics: usize,
    by_tool: BTreeMap<String, (usize, usize)>,
    by_class: BTreeMap<Class, (usize, usize)>,
    failures: Vec<String>,
    failed: usize,
}

impl Stats {
    fn record(
        &mut self,
        n: usize,
        c: &Case,
        tool: Option<&Tool>,
        result: &Result<(), ToolResult>,
        seed: u64,
    ) {
        self.cases += 1;
        let is_err = result.is_err();
        self.errors += is_err as usize;
        let key = if tool.is_some() { c.tool.clone() } else { "(unregistered)".into() };
        let t = self.by_tool.entry(key).or_default();
        t.0 += 1;
        t.1 += is_err as usize;
        let k = self.by_class.entry(c.class).or_default();
        k.0 += 1;
        k.1 += is_err as usize;
        if let Err(e) = result
            && e.text.contains("the runtime is not running")
        {
            self.panics += 1;
        }
        if let Err(why) = verify(&c.expect, &c.tool, tool.map(|t| &t.names), result) {
            self.failed += 1;
            if self.failures.len() < 20 {
                let text = result.as_ref().err().map(|e| clip(&e.text)).unwrap_or_default();
                self.failures.push(format!(
                    "seed {seed} case {n}: {} {:?} ({:?}): {why}\n  args: {}\n  text: {text}",
                    clip(&c.tool),
                    c.class,
                    c.surface,
                    summary(&c.args)
                ));
            }
        }
    }
}

async fn run_cases(rt: &Runtime, tools: &[Tool], cases: Vec<Case>, stats: &mut Stats, seed: u64) {
    let mut described: Vec<(usize, Case)> = Vec::with_capacity(cases.len());
    let first = stats.cases;
    let mut jobs = Vec::with_capacity(cases.len());
    for (i, mut c) in cases.into_iter().enumerate() {
        let args = std::mem::take(&mut c.args);
        jobs.push((c.surface, c.tool.clone(), args));
        described.push((first + i, c));
    }
    // The args are gone into the checks; keep a summary for failure messages.
    let results = futures::future::join_all(jobs.into_iter().map(|(surface, tool, args)| async move {
        let summary = summary(&args);
        (summary, rt.check(surface, &tool, args).await)
    }))
    .await;
    for ((n, mut c), (summary, result)) in described.into_iter().zip(results) {
        c.args = Value::String(summary);
        let tool = tools.iter().find(|t| t.name == c.tool);
        stats.record(n, &c, tool, &result, seed);
    }
}

fn fuzz_runtime() -> (Harness, tokio::sync::mpsc::Receiver<tether_actors::question::port::Asked>) {
    let (port, cards) = ChannelPort::new();
    let backend = CommandBackend::with_commands(
        &std::env::temp_dir(),
        BTreeMap::from([(Tier::Fast, vec!["true".to_string()]), (Tier::Good, vec!["true".to_string()])]),
    );
    let h = Harness::with(
        &[("a.py", "print(1)\nold(2)\n"), ("src/lib.rs", "fn main() {}\n"), ("sub/inner.py", "old(3)\n")],
        |b| b.connect_all().questions(Arc::new(port), "test").vibe(Arc::new(backend)),
    );
    (h, cards)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_parsing_fuzz_for_every_tool() {
    let seed = seed();
    let started = Instant::now();
    let (h, _cards) = fuzz_runtime();
    let tools = model(&h.rt);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "apply_patch",
        "ask_user",
        "ast_edit",
        "ast_grep",
        "debug",
        "edit",
        "eval",
        "lsp",
        "lsp_rename",
        "read",
        "resolve",
        "vibe_kill",
        "vibe_list",
        "vibe_send",
        "vibe_spawn",
        "vibe_wait",
        "write",
    ] {
        assert!(names.contains(&expected), "{expected} is registered: {names:?}");
    }
    let mut rng = Rng(seed);
    let mut stats = Stats::default();

    let mut deep = deep_cases(&mut rng, &tools);
    while !deep.is_empty() {
        let chunk: Vec<Case> = deep.drain(..deep.len().min(64)).collect();
        run_cases(&h.rt, &tools, chunk, &mut stats, seed).await;
    }
    let mut huge = huge_cases(&mut rng, &tools);
    while !huge.is_empty() {
        let chunk: Vec<Case> = huge.drain(..huge.len().min(8)).collect();
        run_cases(&h.rt, &tools, chunk, &mut stats, seed).await;
    }
    let mut left = RANDOM_CASES;
    while left > 0 {
        let n = left.min(CHUNK);
        let cases = (0..n).map(|_| random_case(&mut rng, &tools)).collect();
        run_cases(&h.rt, &tools, cases, &mut stats, seed).await;
        left -= n;
    }
    // The router still answers, and a right call still passes.
    let alive = h.rt.check(Surface::Full, "read", json!({"path": "a.py"})).await;
    assert!(alive.is_ok(), "the runtime answers after the fuzz: {alive:?}");

    let elapsed = started.elapsed();
    println!("fuzz: per tool (cases / errors):");
    for (tool, (n, e)) in &stats.by_tool {
        println!("  {tool:<16} {n:>7} / {e:>7}");
    }
    println!("fuzz: per class (cases / errors):");
    for (class, (n, e)) in &stats.by_class {
        println!("  {:<16} {n:>7} / {e:>7}", format!("{class:?}"));
    }
    let naming = if stats.failed == 0 {
        "all naming the field".to_string()
    } else {
        format!("{} NOT naming the field", stats.failed)
    };
    println!(
        "fuzz: {} cases, {} panics, {} errors {naming} ({} tools, seed {seed}, {:.1} s)",
        stats.cases,
        stats.panics,
        stats.errors,
        tools.len(),
        elapsed.as_secs_f64()
    );
    assert_eq!(stats.panics, 0, "the runtime stopped answering during the fuzz (seed {seed})");
    assert!(
        stats.failed == 0,
        "{} of {} cases broke the contract (seed {seed}); the first ones:\n{}",
        stats.failed,
        stats.cases,
        stats.failures.join("\n")
    );
    assert!(stats.cases >= 100_000, "{} cases", stats.cases);
    let shaped_ok = stats.by_class.get(&Class::Shaped).map(|(n, e)| n - e).unwrap_or(0);
    assert!(shaped_ok > 1_000, "right-shaped calls pass often enough to mean something: {shaped_ok}");
}

// --- path confinement ------------------------------------------------------

/// A sandbox: `base/l1/l2/work` is the working directory; everything else
/// under `base` is outside it, with sentinels and decoys to catch a leak.
struct Sandbox {
    base: tempfile::TempDir,
    l2: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

const SENTINEL: &str = "SENTINEL";
const DECOY: &str = "DECOY";

fn sandbox() -> Sandbox {
    use std::os::unix::fs::symlink;
    let base = tempfile::tempdir().unwrap();
    let canonical = base.path().canonicalize().unwrap();
    let l1 = canonical.join("l1");
    let l2 = l1.join("l2");
    let root = l2.join("work");
    let outside = l2.join("outside");
    let write = |p: PathBuf, text: &str| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(root.join("in.py"), "old(1)\n");
    write(root.join("sub/inner.py"), "old(2)\n");
    write(root.join("sub/deep/x.py"), "old(3)\n");
    write(outside.join("secret.txt"), &format!("{SENTINEL} outside\n"));
    write(outside.join("secret.py"), &format!("old(9)  # {SENTINEL}\n"));
    write(outside.join("dir/inner.py"), &format!("old(8)  # {SENTINEL}\n"));
    // What `link_out/../in.py` or `sub/up/../inner.py` would reach if the
    // kernel resolved them as given instead of tether folding them first.
    write(l2.join("in.py"), &format!("old(7)  # {DECOY}\n"));
    write(l1.join("inner.py"), &format!("old(6)  # {DECOY}\n"));
    write(l1.join("new.txt"), &format!("{DECOY}\n"));
    let link = |target: &Path, name: &str| symlink(target, root.join(name)).unwrap();
    link(&outside, "link_out");
    link(Path::new("../outside"), "link_out_rel");
    link(&outside.join("secret.txt"), "file_out");
    link(Path::new("chain_b"), "chain_a");
    link(Path::new("chain_c"), "chain_b");
    link(&outside, "chain_c");
    link(Path::new("etc_b"), "etc_a");
    link(Path::new("etc_c"), "etc_b");
    link(Path::new("/etc"), "etc_c");
    link(&outside.join("missing.txt"), "dangling_out");
    link(Path::new("/proc/self/root"), "proc_root");
    link(Path::new("../.."), "sub/up");
    link(Path::new("sub"), "link_in");
    link(Path::new("in_chain_b"), "in_chain_a");
    link(Path::new("sub"), "in_chain_b");
    link(Path::new("in.py"), "file_in");
    // Names that are not UTF-8 on disk: a file, and a link out.
    std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"bad\xff.py")), "old(4)\n").unwrap();
    symlink(&outside, root.join(std::ffi::OsStr::from_bytes(b"out\xfe"))).unwrap();
    Sandbox { base, l2, root, outside }
}

/// Everything under `base` except the working directory: path → file
/// content or link target.
fn snapshot(base: &Path, skip: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![base.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p == skip {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(p.clone(), std::fs::read_link(&p).unwrap().as_os_str().as_bytes().to_vec());
            } else if meta.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Names used around an escape; never `work` (the working directory's own
/// name) and never `..`, so a path that left cannot come back in.
const NAMES: &[&str] = &[
    "x",
    "secret.txt",
    "secret.py",
    "dir",
    "inner.py",
    "in.py",
    "new.txt",
    "a b",
    "%2e%2e",
    "..%2f..%2f",
    "..\\..",
    "...",
    ".. ",
    " ..",
    "\u{FFFD}",
    "\u{0301}",
    "e\u{0301}",
    "\u{202E}yp.txt",
    "a\0b",
    "~",
    "$HOME",
    "\u{200B}",
    "%00",
    "\\x2e\\x2e",
    "outside",
    "l2",
    "etc",
    "passwd",
    "sub",
];
/// Links that lead out of the working directory, at its top.
const OUT_LINKS: &[&str] = &[
    "link_out",
    "link_out_rel",
    "file_out",
    "chain_a",
    "chain_b",
    "chain_c",
    "dangling_out",
    "etc_a",
    "proc_root",
];
/// Links that lead out, excluding the ones reaching `/etc` or `/`: safe to
/// aim real writes at (a leak would land in the sandbox, and be seen).
const SANDBOXED_OUT_LINKS: &[&str] =
    &["link_out", "link_out_rel", "file_out", "chain_a", "chain_b", "chain_c", "dangling_out"];

/// A token that leaves the lexical position unchanged.
fn noise(rng: &mut Rng, out: &mut Vec<String>) {
    match rng.below(4) {
        0 => out.push(".".into()),
        1 => out.push(String::new()),
        2 => out.extend([rng.pick(NAMES).to_string(), "..".into()]),
        _ => out.extend([rng.pick(OUT_LINKS).to_string(), "..".into()]),
    }
}

/// Up to `steps` names below the current place, with `..` only above
/// where the walk started, and noise.
fn walk_down(rng: &mut Rng, out: &mut Vec<String>, steps: usize, names: &[&str]) {
    let mut depth = 0;
    for _ in 0..steps {
        match rng.below(5) {
            0 => noise(rng, out),
            1 if depth > 0 => {
                out.push("..".into());
                depth -= 1;
            }
            _ => {
                out.push(rng.pick(names).to_string());
                depth += 1;
            }
        }
    }
}

/// Where a path may stand inside the working directory before it escapes:
/// the components and how many levels below the root that is.
const PLACES: &[(&str, usize)] =
    &[("", 0), ("sub", 1), ("sub/deep", 2), ("link_in", 1), ("in_chain_a", 1), ("x", 1), ("sub/x/y", 3)];

fn place(rng: &mut Rng, out: &mut Vec<String>) -> usize {
    let (p, depth) = *rng.pick(PLACES);
    for part in p.split('/').filter(|s| !s.is_empty()) {
        if rng.one_in(3) {
            noise(rng, out);
        }
        out.push(part.to_string());
    }
    depth
}

/// Joins the parts of a relative path (an empty first part, from noise,
/// would make it absolute).
fn relative(mut parts: Vec<String>) -> String {
    if parts.first().is_some_and(|p| p.is_empty()) {
        parts[0] = ".".into();
    }
    parts.join("/")
}

/// A path that climbs out with `..`: at least one level above the root,
/// at most `max_up`.
fn climb(rng: &mut Rng, max_up: usize) -> String {
    let mut parts = Vec::new();
    let depth = place(rng, &mut parts);
    let up = 1 + rng.below(max_up);
    for _ in 0..depth + up {
        if rng.one_in(4) {
            parts.push(if rng.one_in(2) { ".".into() } else { String::new() });
        }
        parts.push("..".into());
    }
    let steps = rng.below(4);
    walk_down(rng, &mut parts, steps, NAMES);
    relative(parts)
}

/// A path through a link that leads out.
fn through_link(rng: &mut Rng, links: &[&str]) -> String {
    let mut parts = Vec::new();
    if rng.one_in(4) {
        // `up` lives in `sub` (also reached as `link_in`): it leads to the root's parent.
        parts.push(rng.pick(&["sub", "link_in", "in_chain_a", "./sub"]).to_string());
        parts.push("up".into());
    } else {
        if rng.one_in(3) {
            noise(rng, &mut parts);
        }
        parts.push(rng.pick(links).to_string());
    }
    let steps = rng.below(4);
    walk_down(rng, &mut parts, steps, NAMES);
    relative(parts)
}

/// An absolute path that is not in the working directory.
fn absolute(rng: &mut Rng, s: &Sandbox, sandboxed: bool) -> String {
    let outside = s.outside.display().to_string();
    let root = s.root.display().to_string();
    let mut parts = vec![match rng.below(if sandboxed { 4 } else { 9 }) {
        0 => outside,
        1 => format!("/proc/self/root{outside}"),
        2 => format!("{root}/.."),
        3 => s.l2.display().to_string(),
        4 => format!("/proc/self/root{root}"),
        5 => "/proc/self/cwd".into(),
        6 => rng
            .pick(&["/etc", "/", "//etc", "/root", "/tmp", "/dev", "/proc/1/root/etc", "/proc/self/fd"])
            .to_string(),
        7 => "/proc/self/root/etc".into(),
        _ => format!("/{}", rng.pick(NAMES)),
    }];
    let steps = rng.below(4);
    walk_down(rng, &mut parts, steps, NAMES);
    parts.join("/")
}

fn hostile(rng: &mut Rng, s: &Sandbox, sandboxed: bool) -> String {
    let p = match rng.below(3) {
        0 => climb(rng, if sandboxed { 3 } else { 6 }),
        1 => through_link(rng, if sandboxed { SANDBOXED_OUT_LINKS } else { OUT_LINKS }),
        _ => absolute(rng, s, sandboxed),
    };
    if p == "/dev/null" { "/dev/null/x".into() } else { p }
}

/// Names that stay inside (no link out among them).
const INSIDE_NAMES: &[&str] = &[
    "sub",
    "deep",
    "in.py",
    "x",
    "link_in",
    "in_chain_a",
    "file_in",
    "%2e%2e",
    "..%2f",
    "...",
    ".. ",
    " ..",
    "\u{FFFD}",
    "e\u{0301}",
    "\u{0301}",
    "a\0b",
    "~",
    "$HOME",
    "\\..",
    "a b",
    "new",
    "outside",
    "etc",
];

/// A path that stays inside: a walk that never climbs above the root,
/// sometimes spelled from the root's absolute path or re-entering it by
/// name from its parent.
fn benign(rng: &mut Rng, s: &Sandbox) -> String {
    let mut parts = Vec::new();
    match rng.below(4) {
        0 => parts.push(s.root.display().to_string()),
        1 => parts.extend(["..".to_string(), "work".to_string()]),
        2 => parts.push(".".into()),
        _ => {}
    }
    let steps = 1 + rng.below(5);
    walk_down(rng, &mut parts, steps, INSIDE_NAMES);
    let p = if parts.first().is_some_and(|p| p.starts_with('/')) { parts.join("/") } else { relative(parts) };
    if p.is_empty() || p.trim().is_empty() { "in.py".into() } else { p }
}

/// How each path argument is passed: (tool, the argument, builder).
type Build = fn(&str) -> Value;
const PATH_CALLS: &[(&str, &str, Build)] = &[
    ("ast_grep", "path", |p| json!({"pattern": "old($A)", "path": p})),
    ("ast_edit", "path", |p| json!({"pattern": "old($A)", "rewrite": "new($A)", "path": p})),
    ("read", "path", |p| json!({"path": p})),
    ("write", "path", |p| json!({"path": p, "content": "pwned"})),
    ("edit", "path", |p| json!({"path": p, "old_string": "old", "new_string": "new"})),
    (
        "apply_patch",
        "patch",
        |p| json!({"patch": format!("--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-old(1)\n+new(1)\n")}),
    ),
    (
        "apply_patch",
        "patch",
        |p| json!({"patch": format!("--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+pwned\n")}),
    ),
    (
        "apply_patch",
        "patch",
        |p| json!({"patch": format!("--- a/{p}\n+++ /dev/null\n@@ -1 +0,0 @@\n-old(1)\n")}),
    ),
    ("lsp", "file", |p| json!({"action": "diagnostics", "file": p})),
    ("lsp", "file", |p| json!({"action": "hover", "file": p, "line": 1, "symbol": "old"})),
    ("lsp", "file", |p| json!({"action": "symbols", "file": p})),
    ("lsp", "file", |p| json!({"action": "reload", "file": p})),
    ("lsp_rename", "file", |p| json!({"file": p, "line": 1, "symbol": "old", "new_name": "new"})),
    ("debug", "file", |p| json!({"op": "breakpoints", "file": p, "lines": [1]})),
    ("debug", "program", |p| json!({"op": "launch", "program": p})),
];

/// Whether `p` survives a patch header unchanged (tabs start a timestamp,
/// trailing blanks are trimmed, line breaks end the header, a leading
/// quote is refused).
fn patchable(p: &str) -> bool {
    !p.contains(['\t', '\n', '\r']) && p.trim_end() == p && !p.starts_with('"')
}

fn path_runtime(s: &Sandbox) -> Runtime {
    Runtime::builder().workdir(&s.root).conversation("fuzz").connect_all().start().expect("runtime starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_confinement_fuzz_for_every_path_argument() {
    let seed = seed();
    let started = Instant::now();
    let s = sandbox();
    let rt = path_runtime(&s);
    let before = snapshot(s.base.path(), &s.root);

    // Every path argument of every tool is covered here.
    let covered: BTreeSet<(&str, &str)> = PATH_CALLS.iter().map(|(t, a, _)| (*t, *a)).collect();
    for spec in rt.tools(Surface::Full) {
        for (name, prop) in spec.input_schema["properties"].as_object().into_iter().flatten() {
            let description = prop["description"].as_str().unwrap_or("");
            let is_path = ["path", "paths", "file", "files", "program", "patch"].contains(&name.as_str())
                || description.contains("relative to the working directory");
            assert!(
                !is_path || covered.contains(&(spec.name.as_str(), name.as_str())),
                "{}.{name} takes a path and is not fuzzed here",
                spec.name
            );
        }
    }

    let mut rng = Rng(seed ^ 0x5a5a_0bad_f00d_0001);
    let mut hostile_checks = 0usize;
    let mut benign_checks = 0usize;
    let mut benign_refused_otherwise = 0usize;
    let mut failures: Vec<String> = Vec::new();
    let mut fail = |why: String| {
        if failures.len() < 20 {
            failures.push(why);
        }
    };
    for round in 0..50 {
        let hostile_paths: Vec<String> = (0..100).map(|_| hostile(&mut rng, &s, false)).collect();
        let benign_paths: Vec<String> = (0..50).map(|_| benign(&mut rng, &s)).collect();
        let mut jobs = Vec::new();
        for (is_hostile, paths) in [(true, &hostile_paths), (false, &benign_paths)] {
            for p in paths.iter() {
                for (tool, _, build) in PATH_CALLS {
                    if *tool == "apply_patch" && !patchable(p) {
                        continue;
                    }
                    jobs.push((is_hostile, *tool, p.clone(), build(p)));
                }
            }
        }
        let results = futures::future::join_all(
            jobs.iter().map(|(_, tool, _, args)| rt.check(Surface::Full, tool, args.clone())),
        )
        .await;
        for ((is_hostile, tool, p, _), result) in jobs.iter().zip(results) {
            match (is_hostile, result) {
                (true, Ok(())) => {
                    fail(format!("seed {seed} round {round}: {tool} accepted the hostile path {p:?}"))
                }
                (true, Err(e)) if !e.is_error || !confinement_refusal(&e.text) => fail(format!(
                    "seed {seed} round {round}: {tool} refused {p:?} for another reason: {}",
                    clip(&e.text)
                )),
                (true, Err(_)) => hostile_checks += 1,
                (false, Err(e)) if e.text.contains(OUTSIDE) => fail(format!(
                    "seed {seed} round {round}: {tool} refused the inside path {p:?}: {}",
                    clip(&e.text)
                )),
                (false, Err(_)) => {
                    benign_checks += 1;
                    benign_refused_otherwise += 1;
                }
                (false, Ok(())) => benign_checks += 1,
            }
        }
    }

    // Paths that stay inside, existing targets: every tool takes them.
    let root = s.root.display().to_string();
    let inside_files = [
        "in.py".to_string(),
        "./in.py".into(),
        "sub/../in.py".into(),
        "link_in/inner.py".into(),
        "in_chain_a/deep/x.py".into(),
        "file_in".into(),
        format!("{root}/in.py"),
        "../work/in.py".into(),
        "link_out/../in.py".into(),
        "chain_a/../sub/inner.py".into(),
        "sub/up/../inner.py".into(),
        "sub//deep/./x.py".into(),
        "link_in/../in.py".into(),
    ];
    let mut accepted = 0usize;
    for p in &inside_files {
        for (tool, _, build) in PATH_CALLS {
            match rt.check(Surface::Full, tool, build(p)).await {
                Ok(()) => accepted += 1,
                // Deleting through a link is refused for what it is (the
                // link's target would go), inside or not.
                Err(e) if *tool == "apply_patch" && e.text.contains("is a symbolic link") => accepted += 1,
                // A patch that creates an existing file is refused when it runs, not here.
                Err(e) => fail(format!("{tool} refused the inside file {p:?}: {}", clip(&e.text))),
            }
        }
    }

    // For real: hostile paths that stay in the sandbox, through every
    // file-touching tool; nothing outside the working directory is read,
    // written, created or removed.
    let mut real_refused = 0usize;
    let real_tools: &[(&str, Build)] = &[
        ("read", |p| json!({"path": p})),
        ("write", |p| json!({"path": p, "content": "pwned"})),
        ("edit", |p| json!({"path": p, "old_string": "old", "new_string": "pwned"})),
        ("apply_patch", |p| json!({"patch": format!("--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+pwned\n")})),
        (
            "apply_patch",
            |p| json!({"patch": format!("--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-old(9)  # SENTINEL\n+pwned\n")}),
        ),
        ("ast_grep", |p| json!({"pattern": "old($A)", "path": p})),
        ("ast_edit", |p| json!({"pattern": "old($A)", "rewrite": "pwned($A)", "path": p})),
    ];
    // Parsers and host tools only: an accepted rewrite would otherwise sync
    // its files to a language server, which is not what is tested here.
    let rt = Runtime::builder()
        .workdir(&s.root)
        .conversation("fuzz")
        .connect(tether::Resource::Parsers)
        .start()
        .expect("runtime starts");
    let mut real_paths: Vec<String> = (0..80).map(|_| hostile(&mut rng, &s, true)).collect();
    real_paths.extend(
        [
            "file_out",
            "link_out/secret.py",
            "chain_a/secret.py",
            "sub/up/outside/secret.py",
            "link_out_rel/dir/inner.py",
        ]
        .map(String::from),
    );
    for p in &real_paths {
        for (tool, build) in real_tools {
            if *tool == "apply_patch" && !patchable(p) {
                continue;
            }
            let r = call(&rt, tool, build(p)).await;
            if !r.is_error || !confinement_refusal(&r.text) {
                fail(format!("{tool} {p:?} for real was not refused: {}", clip(&r.text)));
            } else if r.text.contains(SENTINEL) || r.text.contains(DECOY) {
                fail(format!("{tool} {p:?} leaked outside content: {}", clip(&r.text)));
            } else {
                real_refused += 1;
            }
        }
    }
    // Reading through /etc and / for real (reads only).
    for p in [
        "etc_a/passwd",
        "etc_a/hostname",
        "proc_root/etc/passwd",
        "/proc/self/root/etc/passwd",
        "/etc/passwd",
        "../../../../../../etc/passwd",
    ] {
        let r = call(&rt, "read", json!({"path": p})).await;
        if !r.is_error || !r.text.contains(OUTSIDE) || r.text.contains("root:") {
            fail(format!("read {p:?} was not refused: {}", clip(&r.text)));
        } else {
            real_refused += 1;
        }
    }

    // Inside paths for real: the folded path is the one used, never what
    // a link would have led to.
    for (p, want) in [
        ("link_out/../in.py", "old(1)"),
        ("sub/up/../inner.py", "old(2)"),
        ("link_in/inner.py", "old(2)"),
        ("in_chain_a/deep/x.py", "old(3)"),
        ("../work/in.py", "old(1)"),
    ] {
        let r = call(&rt, "read", json!({"path": p})).await;
        if r.is_error || !r.text.starts_with(want) || r.text.contains(DECOY) {
            fail(format!("read {p:?} should give {want}: {}", clip(&r.text)));
        }
    }
    let r = call(&rt, "write", json!({"path": "link_in/made/new.txt", "content": "inside"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(std::fs::read_to_string(s.root.join("sub/made/new.txt")).unwrap(), "inside");
    let r = call(&rt, "ast_grep", json!({"pattern": "old($A)", "path": "link_in"})).await;
    assert!(!r.is_error && r.text.contains("old(2)") && !r.text.contains(SENTINEL), "{}", r.text);
    // A whole-workspace rewrite with links out all around: only inside files change.
    let r = call(&rt, "ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)", "language": "python"}))
        .await;
    assert!(!r.is_error && !r.text.contains(SENTINEL) && !r.text.contains(DECOY), "{}", r.text);
    let id = r.data.as_ref().and_then(|d| d["staged"]["edit_id"].as_str()).expect("an edit id").to_string();
    let r = call(&rt, "resolve", json!({"edit_id": id, "action": "accept"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(std::fs::read_to_string(s.root.join("in.py")).unwrap(), "new(1)\n");
    assert_eq!(std::fs::read_to_string(s.root.join("sub/deep/x.py")).unwrap(), "new(3)\n");

    let after = snapshot(s.base.path(), &s.root);
    let changed: Vec<&PathBuf> =
        before.keys().chain(after.keys()).filter(|p| before.get(*p) != after.get(*p)).collect();
    assert!(changed.is_empty(), "outside the working directory changed: {changed:?}");
    assert!(
        failures.is_empty(),
        "seed {seed}: {} path failures; the first ones:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!(
        "paths: {hostile_checks} hostile checks refused ({} tool/argument forms), {real_refused} hostile calls refused for real, \
         {benign_checks} inside checks never refused as outside ({benign_refused_otherwise} refused for another reason, e.g. missing), \
         {accepted} inside files accepted, 0 bytes changed outside ({:.1} s, seed {seed})",
        PATH_CALLS.len(),
        started.elapsed().as_secs_f64()
    );
}

async fn call(rt: &Runtime, tool: &str, args: Value) -> ToolResult {
    tokio::time::timeout(Duration::from_secs(60), rt.call(tool, args))
        .await
        .unwrap_or_else(|_| panic!("`{tool}` did not answer within 60 s"))
}

// --- deep arguments the router refuses itself -------------------------------

/// A call the router refuses before the tool parses its arguments (steps
/// 1–3: unknown tool, not on the surface, denied; or an `ask` permission
/// card, which serialises the arguments) must not drop or serialise them
/// recursively on the actor thread: 10,000 levels would overflow its stack
/// and abort the process. Only the Rust API can hand over such a value —
/// MCP, the CLI and the eval bridge parse JSON text with serde_json's
/// 128-level limit.
async fn refused_deep(policy: tether::ApprovalPolicy, surface: Surface, tool: &str) {
    let h = Harness::with(&[("a.py", "x\n")], |b| b.connect_all().approval(policy));
    let mut args = Map::new();
    args.insert("path".into(), json!("a.py"));
    args.insert("content".into(), json!("x"));
    args.insert("junk".into(), deep_object(DEEP));
    let refused = h.rt.check(surface, tool, Value::Object(args)).await;
    assert!(refused.is_err());
    assert!(
        h.rt.check(Surface::Full, "read", json!({"path": "a.py"})).await.is_ok(),
        "the runtime still answers"
    );
}

#[tokio::test]

async fn deep_arguments_refused_by_the_surface_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::AutoApprove, Surface::ReadOnly, "write").await;
}

#[tokio::test]

async fn deep_arguments_to_an_unknown_tool_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::AutoApprove, Surface::Full, "no_such_tool").await;
}

#[tokio::test]

async fn deep_arguments_denied_by_the_policy_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::Deny, Surface::Full, "write").await;
}

#[tokio::test]

async fn deep_arguments_on_a_permission_card_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::Ask, Surface::Full, "write").await;
}
