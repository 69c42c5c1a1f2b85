//! The command-line contract: exit codes, `--json` shapes, and `batch` as
//! a conversation held over one run.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::Batch;
use serde_json::{Value, json};

fn tether(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .arg("--workdir")
        .arg(dir)
        .output()
        .expect("tether runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "old(1)\nold(2)\n").unwrap();
    dir
}

#[test]
fn call_prints_text_and_exits_by_outcome() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["call", "ast_grep", r#"{"pattern": "old($A)"}"#]);
    assert_eq!(code, 0);
    assert!(out.contains("a.py:1:1: old(1)") && out.contains("a.py:2:1: old(2)"), "{out}");

    let (code, out, _) = tether(dir.path(), &["call", "ast_grep", r#"{"pattern": "old(("}"#]);
    assert_eq!(code, 1, "a tool error exits 1: {out}");
    assert!(out.contains("not parseable"), "{out}");

    let (code, _, err) = tether(dir.path(), &["call", "ast_grep", "{not json"]);
    assert_eq!(code, 2, "bad usage exits 2");
    assert!(err.contains("not valid JSON"), "{err}");

    let (code, _, _) = tether(dir.path(), &["call", "--surface", "sideways", "ast_grep", "{}"]);
    assert_eq!(code, 2);
}

#[test]
fn call_json_is_the_result_object() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["call", "--json", "ast_grep", r#"{"pattern": "old($A)"}"#]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["tool"], "ast_grep");
    assert_eq!(v["is_error"], false);
    assert!(v["text"].as_str().unwrap().contains("2 matches"));
    assert_eq!(v["data"]["total"], 2);
    assert_eq!(v["images"], json!([]));
}

#[test]
fn tools_lists_the_surface_schema() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["tools", "--surface", "read-only", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ast_grep", "lsp", "read", "resources"]);
    assert_eq!(v[0]["input_schema"]["properties"]["pattern"]["type"], "string");
    assert_eq!(v[0]["level"], "read");

    let (_, out, _) = tether(dir.path(), &["tools", "--without", "parsers"]);
    assert!(!out.contains("ast_grep") && out.contains("read"), "{out}");
}

#[test]
fn tree_and_status_describe_the_run() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["tree"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("router default [ready]") && out.contains("ast tree-sitter"), "{out}");
    let (code, out, _) = tether(dir.path(), &["status"]);
    assert_eq!(code, 0);
    assert!(out.contains("parsers: connected"), "{out}");
    assert!(out.contains("python      ok") && out.contains("1 file here"), "{out}");
    let (_, out, _) = tether(dir.path(), &["status", "--without", "parsers"]);
    assert!(out.contains("parsers: not connected"), "{out}");
}

#[test]
fn batch_holds_a_conversation_with_state_across_lines() {
    let dir = workdir();
    let mut batch = Batch::start(dir.path(), &[]);
    let staged = batch.ask(json!({"tool": "ast_edit", "args": {"pattern": "old($A)", "rewrite": "new($A)"}}));
    assert_eq!(staged["is_error"], false, "{staged}");
    assert!(staged["text"].as_str().unwrap().contains("edit_1"));
    let tree = batch.ask(json!({"op": "tree"}));
    assert_eq!(tree["op"], "tree");
    assert_eq!(tree["data"]["children"][1]["detail"]["staged"], 1);
    let resolved = batch.ask(json!({"tool": "resolve", "args": {"edit_id": "edit_1", "action": "accept"}}));
    assert_eq!(resolved["is_error"], false, "{resolved}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.py")).unwrap(), "new(1)\nnew(2)\n");
    let tools = batch.ask(json!({"op": "tools"}));
    assert!(tools["text"].as_str().unwrap().contains("ast_grep"));
    let bad = batch.ask(json!({"nonsense": true}));
    assert_eq!(bad["is_error"], true);
    assert!(bad["text"].as_str().unwrap().starts_with("batch line 5"), "{bad}");
    let shaped = batch.ask(json!({"tool": "read", "args": {"path": "a.py"}}));
    for key in ["tool", "is_error", "text", "data", "images"] {
        assert!(shaped.get(key).is_some(), "{key} missing from {shaped}");
    }
}

#[test]
fn batch_reads_to_the_end_of_input() {
    let dir = workdir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["batch", "--workdir"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input =
        "{\"tool\": \"ast_grep\", \"args\": {\"pattern\": \"old($A)\"}}\nnot json\n\n{\"op\": \"tools\"}\n";
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "blank lines are skipped, every other line answered");
    assert_eq!(lines[0]["data"]["total"], 2);
    assert_eq!(lines[1]["is_error"], true);
    assert_eq!(lines[2]["op"], "tools");
}
