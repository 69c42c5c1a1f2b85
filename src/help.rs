//! A tool's full reference: what the tool list leaves out.
//!
//! The tool list a model carries every turn holds each description's first
//! paragraph and a compact schema ([`crate::schema::compact`]). Everything
//! else a tool's doc comments say — the later paragraphs, what each op
//! means, bounds and defaults — is rendered here as plain text, which a
//! tool's `help` op (`lsp`, `debug`) and the MCP resource
//! `tether://tools/NAME` answer with.

use serde_json::Value;

use crate::spec::ToolSpec;

/// A `help` op's answer: the reference, at once.
pub fn answer(spec: &ToolSpec) -> crate::handler::ToolFuture {
    let text = reference(spec);
    Box::pin(async move { crate::result::ToolResult::text(text) })
}

/// The reference of `spec`: its whole description, then every argument
/// with its type, whether it is required, its bounds and default, and all
/// its description says (nested objects indented under their field).
pub fn reference(spec: &ToolSpec) -> String {
    let mut out =
        format!("{} ({}-level tool)\n\n{}\n", spec.name, spec.level.as_str(), spec.description.trim());
    let props = spec.input_schema.get("properties").and_then(Value::as_object);
    if props.is_some_and(|p| !p.is_empty()) {
        out.push_str("\nArguments:\n");
        arguments(&spec.input_schema, 1, &mut out);
    } else {
        out.push_str("\nIt takes no arguments.\n");
    }
    out
}

fn arguments(schema: &Value, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let mut facts = vec![kind(prop)];
        if required.contains(&name.as_str()) {
            facts.push("required".into());
        }
        if let Some(values) = prop.get("enum").and_then(Value::as_array) {
            let names: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            facts.push(format!("one of {}", names.join(", ")));
        }
        let bounds = prop.get("items").filter(|_| prop["type"] == "array").unwrap_or(prop);
        if let Some(range) = range(bounds) {
            facts.push(range);
        }
        if let Some(default) = prop.get("default") {
            facts.push(format!("default {default}"));
        }
        let description = prop.get("description").and_then(Value::as_str).unwrap_or("");
        let mut paragraphs = description.split("\n\n");
        let first = paragraphs.next().unwrap_or("");
        let said = if first.is_empty() { String::new() } else { format!(": {first}") };
        out.push_str(&format!("{indent}{name} ({}){said}\n", facts.join(", ")));
        for paragraph in paragraphs {
            for line in paragraph.lines() {
                out.push_str(&format!("{indent}    {line}\n"));
            }
        }
        let nested = match prop["type"].as_str() {
            Some("array") => prop.get("items").filter(|i| i.get("properties").is_some()),
            Some("object") => prop.get("properties").map(|_| prop),
            _ => None,
        };
        if let Some(nested) = nested {
            arguments(nested, depth + 2, out);
        }
    }
}

/// `string`, `integer`, `array of integers`, `object`…
fn kind(schema: &Value) -> String {
    let t = schema["type"].as_str().unwrap_or("any");
    match t {
        "array" => format!("array of {}s", schema["items"]["type"].as_str().unwrap_or("value")),
        "object" if schema.get("properties").is_none() => {
            let values = schema["additionalProperties"]["type"].as_str().unwrap_or("value");
            format!("object of {values}s")
        }
        other => other.to_string(),
    }
}

/// An integer's bounds when they say more than its width.
fn range(schema: &Value) -> Option<String> {
    if schema["type"] != "integer" {
        return None;
    }
    let min = schema.get("minimum").and_then(Value::as_i64).filter(|m| *m != 0);
    let max = schema.get("maximum").and_then(Value::as_u64).filter(|m| *m < u32::MAX as u64);
    match (min, max) {
        (Some(a), Some(b)) => Some(format!("{a} to {b}")),
        (Some(a), None) => Some(format!("at least {a}")),
        (None, Some(b)) => Some(format!("at most {b}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Level;
    use serde_json::json;

    #[test]
    fn the_reference_says_what_the_tool_list_leaves_out() {
        let spec = ToolSpec {
            name: "t".into(),
            level: Level::Read,
            parallel_safe: true,
            description: "Does t.\n\nAnd more about t.".into(),
            input_schema: json!({"type": "object", "required": ["op"], "properties": {
                "op": {"type": "string", "enum": ["a", "b"], "description": "The op.\n\n- a: Does a.\n- b: Does b."},
                "n": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
                "xs": {"type": "array", "items": {"type": "object", "required": ["line"],
                    "properties": {"line": {"type": "integer", "minimum": 0, "description": "A line."}}}}
            }}),
            ..ToolSpec::default()
        };
        let text = reference(&spec);
        assert!(text.starts_with("t (read-level tool)\n\nDoes t.\n\nAnd more about t.\n"), "{text}");
        assert!(
            text.contains(
                "  op (string, required, one of a, b): The op.\n      - a: Does a.\n      - b: Does b.\n"
            ),
            "{text}"
        );
        assert!(text.contains("  n (integer, 1 to 9, default 3)\n"), "{text}");
        assert!(
            text.contains("  xs (array of objects)\n      line (integer, required): A line.\n"),
            "{text}"
        );
    }
}
