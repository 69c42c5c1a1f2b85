//! `tether serve` driven by a real external MCP client: the official
//! Python SDK (PyPI `mcp`), running `tests/mcp/client.py`. One scenario per
//! test; the script asserts and exits non-zero with the reason.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::copy_dir;

/// Runs one scenario against a copy of the Python LSP fixture.
fn scenario(name: &str) {
    crate::common::mcp_sdk();
    crate::common::require_on_path("pyright-langserver", "npm install -g pyright");
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/python");
    copy_dir(&src, dir.path());
    // A worker command for vibe mode: it ignores its brief and sleeps.
    std::fs::write(dir.path().join("tether.toml"), "[vibe]\nfast = \"sleep 300\"\n").unwrap();
    common::mcp_scenario(name, dir.path());
}

#[test]
fn tools_list_is_the_surface() {
    scenario("tools_on_surfaces");
}

#[test]
fn the_whole_tool_list_fits_its_budget_and_help_holds_the_rest() {
    scenario("tool_list_budget");
}

#[test]
fn calls_return_text_images_and_structured_content() {
    scenario("calls_and_content");
}

#[test]
fn cancelling_interrupts_the_cell_and_long_calls_report_progress() {
    scenario("cancel_and_progress");
}

#[test]
fn ask_user_through_elicitation() {
    scenario("ask_user_flows");
}

#[test]
fn permission_cards_allow_and_deny() {
    scenario("permission_prompts");
}

#[test]
fn closing_stdin_stops_every_child() {
    scenario("stdin_close_stops_children");
}

/// `tether serve` spoken to line by line, as a client that sends what the
/// SDKs never would.
struct Raw {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    fn start(dir: &Path) -> Raw {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["serve", "--trusted", "--workdir"])
            .arg(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("tether starts");
        let lines = common::lines_of(child.stdout.take().unwrap());
        Raw { child, lines }
    }

    fn send(&mut self, message: serde_json::Value) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id` (notifications in between are skipped),
    /// within 10 s.
    fn answer(&mut self, id: u64) -> serde_json::Value {
        self.answer_where(|v| v["id"] == id)
    }

    /// The first message `wanted` picks (others are skipped), within 10 s.
    fn answer_where(&mut self, wanted: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| panic!("no such answer within 10 s"));
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if wanted(&v) {
                return v;
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn malformed_tool_calls_are_invalid_params_naming_the_field() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let mut raw = Raw::start(dir.path());
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}));
    assert!(raw.answer(1)["result"]["serverInfo"]["name"] == "tether");
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let cases = [
        (json!({"arguments": {}}), "tools/call: `name` is missing"),
        (json!({"name": 5}), "tools/call: `name` must be a string"),
        (json!({"name": "ast_grep", "arguments": "print($A)"}), "tools/call: `arguments` must be an object"),
    ];
    for (n, (params, says)) in cases.into_iter().enumerate() {
        let id = 10 + n as u64;
        raw.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        let answer = raw.answer(id);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().starts_with(says), "{answer}");
    }
    // A method tether does not serve is still "not found"; a good call still works.
    raw.send(json!({"jsonrpc": "2.0", "id": 20, "method": "frobnicate/now", "params": {}}));
    assert_eq!(raw.answer(20)["error"]["code"], -32601);
    raw.send(json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "ast_grep", "arguments": {"pattern": "print($A)"}}}));
    assert_eq!(raw.answer(21)["result"]["isError"], false);
    // A client that cannot elicit is not offered ask_user: no error names it.
    raw.send(json!({"jsonrpc": "2.0", "id": 24, "method": "tools/call", "params": {"name": "frobnicate", "arguments": {}}}));
    let unknown = raw.answer(24)["result"]["content"][0]["text"].as_str().unwrap().to_string();
    assert!(unknown.starts_with("unknown tool `frobnicate`; the tools available here are: "), "{unknown}");
    assert!(unknown.contains("ast_grep") && !unknown.contains("ask_user"), "{unknown}");
    // A line that is not JSON gets JSON-RPC's parse error, with a null id;
    // the session goes on.
    {
        use std::io::Write;
        let stdin = raw.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{{\"jsonrpc\": \"2.0\", \"id\": 22, \"method\": ").unwrap();
        stdin.flush().unwrap();
    }
    let error = raw.answer_where(|v| v["error"]["code"] == -32700);
    assert_eq!(error["id"], serde_json::Value::Null, "{error}");
    raw.send(json!({"jsonrpc": "2.0", "id": 23, "method": "ping"}));
    assert!(raw.answer(23).get("result").is_some());
}
