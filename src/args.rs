//! Turning a call's JSON arguments into a typed request, with errors that
//! name the field, say what was expected, and what to do.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::handler::ToolError;

/// Parses `args` into `T`. `null` counts as `{}`; anything but an object is
/// refused. Errors name the tool and the field.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        Value::Object(map) => Value::Object(map),
        other => {
            return Err(ToolError::new(format!(
                "{tool}: the arguments must be a JSON object, got {}; pass them as {{\"name\": value, …}} (see the tool's input schema)",
                kind_of(&other)
            )));
        }
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
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

/// serde's wording, in the words a model reads best.
fn humanise(message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    message
        .replace("expected usize", "expected a non-negative integer")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected a boolean", "expected true or false")
        .replace("invalid type: ", "wrong type: got ")
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
    tether_actors::fs::confine(root, value).map_err(|e| ToolError::new(format!("argument `{field}`: {e}")))
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
}
