//! Adapters that stand in where no real one can be made to misbehave on
//! demand or installed here (tests/fixtures/dap): replies that do not fit
//! the protocol, an adapter that dies at start, and a stand-in for the
//! Dart SDK's adapter that checks arguments as it does.

use serde_json::{Value, json};

use super::sessions::{dbg, ok};
use crate::common::{self, Harness};

/// A `tether.toml` whose adapter `id` is the fixture `script` (under
/// tests/fixtures/dap), rooted at `marker`.
fn fixture_adapter(id: &str, script: &str, marker: &str) -> String {
    let python = common::real_python();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dap").join(script);
    format!(
        "[[adapter]]\nid = {id:?}\ncommand = {python:?}\nargs = [{:?}]\nroot_markers = [{marker:?}]\n",
        fixture.display().to_string()
    )
}

#[tokio::test]
async fn replies_that_do_not_fit_the_protocol_are_errors_never_empty_lists() {
    let toml = fixture_adapter("debugpy", "broken_dap.py", "requirements.txt");
    let h = Harness::new(&[("requirements.txt", ""), ("tether.toml", &toml), ("prog.py", "x = 1\n")]);
    let launched = ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    assert!(launched.starts_with("launched; stopped (breakpoint) at prog.py:1 in main"), "{launched}");
    for (op, field) in [
        (json!({"op": "threads"}), "threads"),
        (json!({"op": "stack"}), "stackFrames"),
        (json!({"op": "scopes", "frame_id": 1}), "scopes"),
        (json!({"op": "variables", "reference": 7}), "variables"),
    ] {
        let name = op["op"].as_str().unwrap().to_string();
        let r = dbg(&h, op).await;
        assert!(r.is_error, "{name}: {}", r.text);
        assert!(
            r.text.starts_with(&format!("{name}: the adapter's reply does not fit DAP's `{field}` ("))
                && r.text.contains("it began: {"),
            "{}",
            r.text
        );
    }
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn an_adapter_that_dies_with_a_request_unanswered_fails_it_with_how_it_ended() {
    let toml = fixture_adapter("debugpy", "broken_dap.py", "requirements.txt");
    let h = Harness::new(&[("requirements.txt", ""), ("tether.toml", &toml), ("prog.py", "x = 1\n")]);
    ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    let r = dbg(&h, json!({"op": "evaluate", "expression": "die"})).await;
    assert!(r.is_error, "{}", r.text);
    // The exit status and its last words, not only "the pipe closed".
    assert!(r.text.contains("exit status 7"), "{}", r.text);
    assert!(r.text.contains("broken_dap: died mid-request"), "{}", r.text);
}

#[tokio::test]
async fn an_adapter_that_dies_at_start_is_reported_with_its_exit_and_stderr() {
    let toml = fixture_adapter("debugpy", "dies_at_start.py", "requirements.txt");
    let h = Harness::new(&[("requirements.txt", ""), ("tether.toml", &toml), ("prog.py", "x = 1\n")]);
    let r = dbg(&h, json!({"op": "launch", "program": "prog.py"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("exited (") && r.text.contains('3'), "the exit status: {}", r.text);
    assert!(r.text.contains("cannot load the runtime"), "its stderr: {}", r.text);
}

/// A project whose `dart` adapter is the stand-in (no Dart SDK can be
/// installed here): it checks arguments as the Dart SDK's adapter does.
fn dart_standin_project() -> Harness {
    let toml = fixture_adapter("dart", "dart_standin.py", "pubspec.yaml");
    let main = "void main() {\n  final items = [1, 2, 3];\n  final total = items.reduce((a, b) => a + b);\n  print(total);\n}\n";
    Harness::new(&[("pubspec.yaml", "name: demo\n"), ("tether.toml", &toml), ("bin/main.dart", main)])
}

/// The arguments the stand-in adapter was sent.
fn dart_request(h: &Harness) -> Value {
    serde_json::from_str(&h.read("dap_request.json")).unwrap()
}

#[tokio::test]
async fn a_dart_launch_sends_env_as_the_map_the_dart_adapter_reads() {
    let h = dart_standin_project();
    let launched = ok(
        &h,
        json!({"op": "launch", "program": "bin/main.dart", "env": {"GREETING": "hi"}, "file": "bin/main.dart", "lines": [3]}),
    )
    .await;
    assert!(launched.starts_with("launched; stopped (breakpoint) at bin/main.dart:3 in main"), "{launched}");
    assert!(launched.contains("total = 6"), "{launched}");
    let sent = dart_request(&h);
    assert_eq!(sent["command"], "launch");
    assert_eq!(sent["arguments"]["env"], json!({"GREETING": "hi"}));
    assert!(sent["arguments"]["program"].as_str().unwrap().ends_with("bin/main.dart"), "{sent}");
    let exceptions = ok(&h, json!({"op": "exceptions"})).await;
    assert!(exceptions.contains("[on] `Unhandled`") && exceptions.contains("[off] `All`"), "{exceptions}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn a_program_that_ends_with_terminated_alone_is_not_reported_running() {
    let h = dart_standin_project();
    let args = json!({"op": "launch", "program": "bin/main.dart", "args": ["--terminate-only"], "file": "bin/main.dart", "lines": [3]});
    ok(&h, args).await;
    let ended = ok(&h, json!({"op": "continue"})).await;
    assert!(ended.contains("the program terminated"), "{ended}");
    let status = ok(&h, json!({"op": "status"})).await;
    assert!(
        status.starts_with("dart session on bin/main.dart (up ")
            && status.contains("): the program terminated\n"),
        "{status}"
    );
}

#[tokio::test]
async fn when_two_threads_stop_together_the_focused_one_is_shown_and_stepped() {
    let h = dart_standin_project();
    let args = json!({"op": "launch", "program": "bin/main.dart", "args": ["--two-threads"], "file": "bin/main.dart", "lines": [3]});
    let launched = ok(&h, args).await;
    assert!(launched.contains("in main, thread 7"), "{launched}");
    // The second thread's event (preserveFocusHint) does not take the focus.
    let status = ok(&h, json!({"op": "status"})).await;
    assert!(status.contains("in main, thread 7"), "{status}");
    let stepped = ok(&h, json!({"op": "step_over"})).await;
    assert!(stepped.starts_with("stopped (step) at bin/main.dart:3 in main, thread 7"), "{stepped}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn breakpoints_the_adapter_refuses_cost_that_file_not_the_launch() {
    let h = dart_standin_project();
    h.write("tool.py", "print(1)\n");
    ok(&h, json!({"op": "breakpoints", "file": "tool.py", "lines": [1]})).await;
    let launched =
        ok(&h, json!({"op": "launch", "program": "bin/main.dart", "file": "bin/main.dart", "lines": [3]}))
            .await;
    assert!(launched.starts_with("launched; stopped (breakpoint) at bin/main.dart:3 in main"), "{launched}");
    assert!(launched.contains("the breakpoints of tool.py were not set: "), "{launched}");
    assert!(launched.contains("not a Dart source file"), "{launched}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn run_to_leaves_out_breakpoints_the_adapter_could_not_take() {
    let h = dart_standin_project();
    h.write("lib/other.dart", "void other() {}\n");
    let hits = json!({"op": "breakpoints", "file": "bin/main.dart", "breakpoints": [{"line": 2, "hit_condition": "3"}]});
    ok(&h, hits).await;
    let launched =
        ok(&h, json!({"op": "launch", "program": "bin/main.dart", "file": "lib/other.dart", "lines": [1]}))
            .await;
    assert!(launched.contains("the breakpoints of bin/main.dart were not set"), "{launched}");
    let there = ok(&h, json!({"op": "run_to", "file": "bin/main.dart", "line": 3})).await;
    assert!(!there.contains("setBreakpoints failed"), "{there}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn attach_to_a_dart_vm_service_sends_its_uri_and_stops_at_a_breakpoint() {
    let h = dart_standin_project();
    let adapters = ok(&h, json!({"op": "adapters"})).await;
    assert!(adapters.contains("attach: `vm_service_uri`"), "{adapters}");
    ok(&h, json!({"op": "breakpoints", "file": "bin/main.dart", "lines": [3]})).await;
    let uri = "http://127.0.0.1:8181/AbCd=/";
    let attached = ok(&h, json!({"op": "attach", "vm_service_uri": uri})).await;
    assert!(
        attached.starts_with(&format!(
            "attached to the Dart VM service at {uri}; stopped (breakpoint) at bin/main.dart:3 in main"
        )),
        "{attached}"
    );
    assert!(attached.contains("items = [1, 2, 3]"), "{attached}");
    let sent = dart_request(&h);
    assert_eq!(sent["command"], "attach");
    assert_eq!(sent["arguments"]["vmServiceUri"], uri);
    assert_eq!(
        sent["arguments"]["cwd"].as_str().map(std::path::Path::new),
        Some(h.root().as_path()),
        "{sent}"
    );
    let ended = ok(&h, json!({"op": "continue"})).await;
    assert!(ended.contains("exited with code 0"), "{ended}");
}
