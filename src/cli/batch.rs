//! `tether batch`: one JSON request a line on stdin, one JSON answer a line
//! on stdout, in order, each flushed as its call finishes, all in one run
//! (staged edits live for the whole batch). A reader that goes away ends
//! the batch: nobody would read the answers.

use std::io::BufRead;
use std::process::ExitCode;

use serde_json::{Value, json};

use super::output::{self, errln};
use super::{EXIT_USAGE, print_json};
use crate::result::ToolResult;
use crate::runtime::Runtime;
use crate::spec::Surface;

/// The result object of the CLI contract; `with_data: false` (`--text`)
/// leaves `data` out.
pub(super) fn result_json(tool: &str, result: &ToolResult, with_data: bool) -> Value {
    let mut answer = json!({
        "tool": tool,
        "is_error": result.is_error,
        "text": result.text,
        "data": result.data,
        "images": result.images,
    });
    if !with_data && let Some(fields) = answer.as_object_mut() {
        fields.remove("data");
    }
    answer
}

/// Answers stdin's requests until it ends (or stdout's reader goes).
pub(super) async fn run(runtime: &Runtime, surface: Surface, with_data: bool) -> ExitCode {
    let stdin = std::io::stdin();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                errln!("tether batch: cannot read stdin: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let mut answer = answer_line(runtime, surface, n + 1, &line).await;
        if !with_data && let Some(fields) = answer.as_object_mut() {
            fields.remove("data");
        }
        print_json(&answer);
        if output::reader_gone() {
            break;
        }
    }
    ExitCode::SUCCESS
}

async fn answer_line(runtime: &Runtime, surface: Surface, n: usize, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return bad_line(n, &format!("not JSON ({e})")),
    };
    if let Some(op) = request.get("op").and_then(Value::as_str) {
        return match op {
            "tree" => {
                let tree = runtime.tree().await;
                json!({"op": "tree", "text": tree.text(), "data": tree.json()})
            }
            "tools" => {
                let specs = runtime.tools(surface);
                let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                json!({"op": "tools", "text": names.join(", "), "data": specs})
            }
            other => bad_line(n, &format!("unknown op `{other}`; use \"tree\" or \"tools\"")),
        };
    }
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return bad_line(n, "expected {\"tool\": NAME, \"args\": {...}} or {\"op\": \"tree\"|\"tools\"}");
    };
    let args = request.get("args").cloned().unwrap_or_else(|| json!({}));
    let result = match request.get("conversation") {
        None | Some(Value::Null) => runtime.call(tool, args).await,
        Some(Value::String(conversation)) => runtime.call_in(conversation, tool, args).await,
        Some(other) => {
            return bad_line(n, &format!("`conversation` must be a string (a conversation id), got {other}"));
        }
    };
    result_json(tool, &result, true)
}

fn bad_line(n: usize, why: &str) -> Value {
    json!({
        "tool": null,
        "is_error": true,
        "text": format!("batch line {n}: {why}"),
        "data": null,
        "images": [],
    })
}
