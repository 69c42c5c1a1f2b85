//! Values for the fuzzer: hostile text, realistic values by field name,
//! numbers at and past every range, deep and huge values, and values each
//! field refuses.

use super::*;

// --- values ------------------------------------------------------------------

/// Pieces of hostile and odd text: NUL, lone combining marks, replacement
/// characters, direction overrides, escaped bytes and surrogates as text
/// (a Rust string cannot hold a real one), serde's own words, paths.
pub(super) const PIECES: &[&str] = &[
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

pub(super) fn random_char(rng: &mut Rng) -> char {
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

pub(super) fn fuzz_string(rng: &mut Rng) -> String {
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
pub(super) fn realistic(rng: &mut Rng, name: &str) -> Option<String> {
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
pub(super) fn patch_text(rng: &mut Rng) -> String {
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

pub(super) fn int_value(v: i128) -> Value {
    if v >= 0 { Value::from(v as u64) } else { Value::from(v as i64) }
}

pub(super) fn int_in(rng: &mut Rng, min: i128, max: i128) -> Value {
    let v = match rng.below(6) {
        0 => min,
        1 => max,
        2 => (1 + rng.below(30) as i128).clamp(min, max),
        _ => min + (rng.next() as i128).rem_euclid(max - min + 1),
    };
    int_value(v)
}

pub(super) fn any_number(rng: &mut Rng) -> Value {
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
pub(super) fn any_present_value(rng: &mut Rng, depth: usize) -> Value {
    loop {
        let value = any_value(rng, depth);
        if !value.is_null() {
            return value;
        }
    }
}

pub(super) fn any_value(rng: &mut Rng, depth: usize) -> Value {
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

pub(super) fn deep_array(depth: usize) -> Value {
    let mut v = Value::Array(Vec::new());
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

pub(super) fn deep_object(depth: usize) -> Value {
    let mut v = Value::Object(Map::new());
    for _ in 0..depth {
        let mut m = Map::new();
        m.insert("a".into(), v);
        v = Value::Object(m);
    }
    v
}

pub(super) fn huge_string(rng: &mut Rng) -> String {
    let unit = match rng.below(3) {
        0 => "x",
        1 => "e\u{0301}\u{FFFD}\0日本\u{1F600} \u{202E}%FF",
        _ => "a/",
    };
    unit.repeat(HUGE / unit.len() + 1)
}

pub(super) fn valid(rng: &mut Rng, field: &Field, name: &str) -> Value {
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

pub(super) fn valid_object(rng: &mut Rng, obj: &Obj) -> Map<String, Value> {
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
pub(super) fn unknown_key(rng: &mut Rng, obj: &Obj) -> String {
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
pub(super) fn wrong(rng: &mut Rng, field: &Field) -> Value {
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
