//! Turning a call's JSON arguments into a typed request, with errors that
//! name the field, say what was expected, and what to do.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::handler::ToolError;

/// `value` with every object member that is `null` left out: models fill
/// optional parameters with `null` as often as they leave them out, and the
/// schemas (portable ones have no nullable types) say only "optional". A
/// required field given `null` is then reported missing, by name; an
/// unknown key given `null` asks for nothing and is dropped with it.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// Parses `args` into `T`. `null` counts as `{}`, a `null` member as left
/// out; anything but an object is refused. Errors name the tool and the
/// field.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(map) => Value::Object(map),
        other => {
            let kind = kind_of(&other);
            dismantle(other);
            return Err(ToolError::new(format!(
                "{tool}: the arguments must be a JSON object, got {kind}; pass them as {{\"name\": value, …}} (see the tool's input schema)"
            )));
        }
    };
    if let Some((key, depth)) = too_deep(&args) {
        let message = format!(
            "{tool}: argument `{key}` nests {depth} levels deep; arguments nest at most {MAX_DEPTH} levels. Fix it and call again (see the tool's input schema)"
        );
        dismantle(args);
        return Err(ToolError::new(message));
    }
    serde_path_to_error::deserialize(without_nulls(args)).map_err(|e| {
        let path = e.path().to_string();
        let inner = humanise(&e.inner().to_string());
        let message = if path == "." {
            format!("{tool}: {inner}. Fix the arguments and call again (see the tool's input schema)")
        } else {
            format!("{tool}: argument `{path}`: {inner}. Fix it and call again (see the tool's input schema)")
        };
        ToolError::new(message)
    })
}

/// serde's wording, in the words a model reads best. Only serde's own
/// words are rewritten — the prefix, the `expected …` suffix and a trailing
/// position — never the caller's text quoted in between (an unknown
/// field's name, a string value).
fn humanise(message: &str) -> String {
    let message = match message.rsplit_once(" at line ") {
        Some((head, position)) if is_position(position) => head,
        _ => message,
    };
    let mut message = match message.strip_prefix("invalid type: ") {
        Some(rest) => format!("wrong type: got {rest}"),
        None => message.to_string(),
    };
    for (serde_words, ours) in [
        ("expected usize", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected a boolean", "expected true or false"),
    ] {
        if let Some(head) = message.strip_suffix(serde_words) {
            message = format!("{head}{ours}");
            break;
        }
    }
    message
}

/// `12 column 5`: the position serde_json appends to errors in JSON text.
fn is_position(text: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    text.split_once(" column ").is_some_and(|(line, column)| digits(line) && digits(column))
}

/// Deepest nesting an argument may have: what serde_json allows in JSON
/// text. Only a host handing over a built `Value` can go deeper.
pub const MAX_DEPTH: usize = 128;

/// Longest path argument, in bytes (the OS's `PATH_MAX`): nothing longer
/// can be opened, and resolving it component by component would hold the
/// router for seconds.
pub const MAX_PATH_BYTES: usize = 4096;

/// Refuses arguments nested deeper than [`MAX_DEPTH`] before anything
/// walks them recursively (the router's refusals drop them; a permission
/// card serialises them): takes them out of `args`, tears them down without
/// recursion, and returns the error naming the field.
pub fn take_too_deep(tool: &str, args: &mut Value) -> Option<ToolError> {
    let message = match &*args {
        Value::Object(_) => {
            let (key, depth) = too_deep(args)?;
            format!(
                "{tool}: argument `{key}` nests {depth} levels deep; arguments nest at most {MAX_DEPTH} levels. Fix it and call again (see the tool's input schema)"
            )
        }
        other if depth_of(other) > MAX_DEPTH => format!(
            "{tool}: the arguments must be a JSON object, got {} nested {} levels deep; pass them as {{\"name\": value, …}} (see the tool's input schema)",
            kind_of(other),
            depth_of(other)
        ),
        _ => return None,
    };
    dismantle(std::mem::take(args));
    Some(ToolError::new(message))
}

/// The first field of `args` nested deeper than [`MAX_DEPTH`] (counting
/// the arguments object itself), and how deep. Measured without recursion.
fn too_deep(args: &Value) -> Option<(String, usize)> {
    let map = args.as_object()?;
    map.iter().find_map(|(key, value)| {
        let depth = 1 + depth_of(value);
        (depth > MAX_DEPTH).then(|| (key.clone(), depth))
    })
}

/// How many levels of arrays and objects `value` has (a scalar or an
/// empty container: 0 below it), without recursion.
fn depth_of(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Most bytes a call's arguments may hold, whatever the host (over HTTP a
/// body has room for more, `serve::http::MAX_REQUEST_BYTES`, so that this
/// refusal, naming the field, is what a client sees). A larger
/// argument (a 5 MiB file's content) is no edit a language server answers
/// in time, and over stdio it was taken and then served for minutes.
pub const MAX_ARGUMENT_BYTES: usize = 4 * 1024 * 1024;

/// Refuses arguments holding more than [`MAX_ARGUMENT_BYTES`] (their
/// strings, keys and numbers), naming the largest field and its size.
pub fn too_large(tool: &str, args: &Value) -> Option<ToolError> {
    let total = size_of(args);
    if total <= MAX_ARGUMENT_BYTES {
        return None;
    }
    let (field, size) = args
        .as_object()?
        .iter()
        .map(|(key, value)| (key.as_str(), size_of(value)))
        .max_by_key(|(_, size)| *size)?;
    let mib = |bytes: usize| format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0));
    Some(ToolError::new(format!(
        "{tool}: argument `{field}` holds {} (the arguments {}); a call's arguments hold at most {} (on every host). Send the change in parts (`edit`, `apply_patch`), or have a program write the file",
        mib(size),
        mib(total),
        mib(MAX_ARGUMENT_BYTES)
    )))
}

/// About how many bytes `value` holds as JSON: its strings, keys and
/// scalars, counted without recursion.
fn size_of(value: &Value) -> usize {
    let mut total = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        total += match value {
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len()
            }
            Value::Object(map) => {
                stack.extend(map.values());
                2 + map.keys().map(|k| k.len() + 4).sum::<usize>()
            }
            other => other.to_string().len(),
        };
    }
    total
}

/// Drops `value` without recursion: dropping a deeply nested `Value`
/// the ordinary way recurses once per level and can overflow the stack.
pub fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Confines the path argument `field` to the working directory.
pub fn confined(root: &Path, field: &str, value: &str) -> Result<PathBuf, ToolError> {
    if value.contains('\0') {
        return Err(ToolError::new(format!(
            "argument `{field}`: the path holds a NUL byte, which no file name can; pass the path without it"
        )));
    }
    if value.len() > MAX_PATH_BYTES {
        return Err(ToolError::new(format!(
            "argument `{field}`: the path is {} bytes long; a path has at most {MAX_PATH_BYTES} bytes",
            value.len()
        )));
    }
    let path = tether_actors::fs::confine(root, value)
        .map_err(|e| ToolError::new(format!("argument `{field}`: {e}")))?;
    // A symlink may resolve to a name that is not UTF-8; answers and the
    // servers' protocols could not name it.
    if path.to_str().is_none() {
        return Err(ToolError::new(format!(
            "argument `{field}`: `{value}` resolves to {}, whose name is not valid UTF-8; rename it or pass another path",
            path.display()
        )));
    }
    Ok(path)
}

/// Checks an integer argument against its range.
pub fn in_range(field: &str, value: usize, min: usize, max: usize) -> Result<usize, ToolError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(ToolError::new(format!(
            "argument `{field}`: {value} is out of range; use a number from {min} to {max}"
        )))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn arguments_past_the_limit_are_refused_naming_the_largest_field() {
        let big = "x".repeat(super::MAX_ARGUMENT_BYTES + 10);
        let args = serde_json::json!({"path": "a.py", "content": big});
        let e = super::too_large("write", &args).expect("refused").0;
        assert!(e.starts_with("write: argument `content` holds 4.0 MiB"), "{e}");
        assert!(e.contains("at most 4.0 MiB"), "{e}");
        assert!(super::too_large("write", &serde_json::json!({"content": "small"})).is_none());
    }

    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Probe {
        pattern: String,
        max_results: Option<usize>,
    }

    #[test]
    fn a_path_that_resolves_to_a_name_that_is_not_utf8_is_refused() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let odd = root.join(std::ffi::OsStr::from_bytes(b"odd\xff.py"));
        std::fs::write(&odd, "x = 1\n").unwrap();
        std::os::unix::fs::symlink(&odd, root.join("link.py")).unwrap();
        let err = confined(&root, "file", "link.py").unwrap_err().to_string();
        assert!(err.contains("argument `file`") && err.contains("not valid UTF-8"), "{err}");
        let err = confined(&root, "path", "a\0b.py").unwrap_err().to_string();
        assert!(err.contains("argument `path`") && err.contains("NUL byte"), "{err}");
    }

    #[test]
    fn errors_name_the_field_and_the_expected_type() {
        let err = parse::<Probe>("ast_grep", serde_json::json!({"pattern": "x", "max_results": "ten"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`max_results`"), "{err}");
        assert!(err.contains("non-negative integer"), "{err}");
        let err = parse::<Probe>("ast_grep", serde_json::json!({})).unwrap_err().to_string();
        assert!(err.contains("missing field `pattern`"), "{err}");
        let err = parse::<Probe>("ast_grep", serde_json::json!({"pattern": "x", "colour": 1}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `colour`") && err.contains("`pattern`"), "{err}");
        let err = parse::<Probe>("ast_grep", serde_json::json!([1])).unwrap_err().to_string();
        assert!(err.contains("must be a JSON object"), "{err}");
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Defaulted {
        #[serde(default)]
        limit: u32,
        #[serde(default)]
        inner: Vec<Probe>,
    }

    #[test]
    fn a_null_member_counts_as_left_out() {
        let got: Defaulted = parse(
            "lsp",
            serde_json::json!({"limit": null, "inner": [{"pattern": "x", "max_results": null}]}),
        )
        .unwrap();
        assert_eq!(got.limit, 0);
        assert_eq!(got.inner[0].max_results, None);
        let err = parse::<Probe>("ast_grep", serde_json::json!({"pattern": null})).unwrap_err().to_string();
        assert!(err.contains("missing field `pattern`"), "{err}");
        // An unknown key that asks for nothing is dropped with its null;
        // one with a value is still refused.
        assert!(parse::<Probe>("ast_grep", serde_json::json!({"pattern": "x", "colour": null})).is_ok());
        assert!(parse::<Probe>("ast_grep", serde_json::json!({"pattern": "x", "colour": 1})).is_err());
    }

    #[test]
    fn a_field_name_is_quoted_as_given_even_when_it_reads_like_serde() {
        for key in ["x at line 1 column 2", "expected u64", "invalid type: z"] {
            let err = parse::<Probe>("ast_grep", serde_json::json!({"pattern": "x", key: 1}))
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("unknown field `{key}`")), "{err}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_by_name_without_recursion() {
        let mut deep = Value::Object(Default::default());
        for _ in 0..100_000 {
            let mut map = serde_json::Map::new();
            map.insert("a".into(), deep);
            deep = Value::Object(map);
        }
        let mut args = serde_json::Map::new();
        args.insert("pattern".into(), Value::String("x".into()));
        args.insert("max_results".into(), deep);
        let err = parse::<Probe>("ast_grep", Value::Object(args)).unwrap_err().to_string();
        assert!(err.contains("argument `max_results` nests 100001 levels deep"), "{err}");
    }

    #[test]
    fn over_long_paths_are_refused_at_once() {
        let long = "a/".repeat(500_000);
        let err = confined(Path::new("/"), "path", &long).unwrap_err().to_string();
        assert!(err.contains("argument `path`") && err.contains("at most 4096 bytes"), "{err}");
    }
}
