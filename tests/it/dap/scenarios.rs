//! The `debug` tool driven the way a model drives it, against real
//! debugpy, lldb-dap and delve: each scenario counts its calls and checks
//! the lines and the values of the locals the answers hold, not only that
//! an answer came. The Python scenarios go through `tether batch` (one
//! process, one line per call, as a shell user or a host's script would),
//! the Go and C ones through the Rust API, and one through the MCP server.
//! The JavaScript and TypeScript ones (js-debug) are in
//! `debug_scenarios/javascript.rs`, the Ruby ones (rdbg) in
//! `debug_scenarios/ruby.rs`.

use crate::common;
mod javascript;
mod node_tests;
mod ruby;

use std::path::Path;

use crate::common::{Harness, debugpy, require};
use serde_json::{Value, json};

/// Runs `calls` (debug args) through one `tether batch` in `dir`; the answers.
fn batch(dir: &Path, calls: &[Value]) -> Vec<Value> {
    let requests: Vec<Value> = calls.iter().map(|args| json!({"tool": "debug", "args": args})).collect();
    let (answers, _) = common::batch(dir, &[], &requests);
    answers
}

fn text(answer: &Value) -> &str {
    answer["text"].as_str().unwrap_or_default()
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, content) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

const LOOP_PY: &str = r#"def running_totals(values):
    totals = []
    total = 0
    for i, v in enumerate(values):
        total += v * i
        totals.append(total)
    return totals


print(running_totals([5, 7, 9, 11, 13]))
"#;

#[test]
fn stop_on_the_third_pass_of_a_loop_and_read_the_locals_in_one_call() {
    debugpy();
    let dir = project(&[("requirements.txt", ""), ("loop.py", LOOP_PY)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "loop.py", "file": "loop.py", "breakpoints": [{"line": 6, "condition": "i == 2"}]}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(stop.starts_with("launched; stopped (breakpoint) at loop.py:6 in running_totals"), "{stop}");
    // The third pass: i = 2, v = 9, total = 0*5 + 1*7 + 2*9.
    for local in ["  i = 2 (int)", "  v = 9 (int)", "  total = 25 (int)", "  totals = [0, 7] (list)"] {
        assert!(stop.contains(local), "`{local}` in the snapshot:\n{stop}");
    }
    assert!(stop.contains(">   6 |         totals.append(total)"), "{stop}");
    assert!(stop.contains("breakpoints: 1 bound where asked"), "{stop}");
    let locals = &answers[0]["data"]["locals"];
    assert_eq!(locals.as_array().map(Vec::len), Some(5), "i, total, totals, v and values: {locals}");
}

const CRASH_PY: &str = r#"def lookup(table, key):
    return table[key]


def price(item):
    prices = {"apple": 3, "pear": 4}
    return lookup(prices, item)


def total(items):
    return sum(price(i) for i in items)


print(total(["apple", "kiwi"]))
"#;

#[test]
fn an_uncaught_exception_three_calls_deep_is_one_launch() {
    debugpy();
    let dir = project(&[("requirements.txt", ""), ("crash.py", CRASH_PY)]);
    let answers =
        batch(dir.path(), &[json!({"op": "launch", "program": "crash.py"}), json!({"op": "terminate"})]);
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with("launched; stopped (exception KeyError: 'kiwi') at crash.py:2 in lookup"),
        "{stop}"
    );
    assert!(stop.contains("  key = 'kiwi' (str)"), "{stop}");
    assert!(stop.contains("  table = {'apple': 3, 'pear': 4} (dict)"), "{stop}");
    for caller in ["price at crash.py:7", "total at crash.py:11", "<module> at crash.py:14"] {
        assert!(stop.contains(caller), "`{caller}` in the chain:\n{stop}");
    }
    assert_eq!(answers[0]["data"]["exception_filters"], json!(["uncaught"]));
}

const TEST_CALC_PY: &str = r#"def add(a, b):
    return a - b


def test_add():
    result = add(2, 3)
    assert result == 5
"#;

#[test]
fn a_failing_pytest_test_stops_where_it_fails() {
    debugpy();
    require("python3", &["-c", "import pytest"], "python3 -m pip install pytest");
    let dir = project(&[("requirements.txt", ""), ("test_calc.py", TEST_CALC_PY)]);
    let answers = batch(
        dir.path(),
        &[
            // pytest catches the failure, so it is no uncaught exception:
            // stop where it leaves the user's code instead.
            json!({"op": "exceptions", "filters": ["userUnhandled"]}),
            json!({"op": "launch", "module": "pytest", "args": ["-q", "-p", "no:cacheprovider", "test_calc.py"]}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[1]);
    assert!(
        stop.starts_with("launched; stopped (exception AssertionError: assert -1 == 5) at test_calc.py:7 in test_add, thread 1"),
        "{stop}"
    );
    assert!(stop.contains("  result = -1 (int)"), "{stop}");
    assert!(stop.contains("call chain (innermost first): test_add at test_calc.py:7"), "{stop}");
    assert!(!stop.contains("_pytest"), "no frame of pytest's own is listed: {stop}");
}

const COMMENTS_PY: &str = "import sys\n\n# a comment\n\nx = 1\ny = 2\nprint(x + y)\n";

#[test]
fn breakpoints_on_lines_without_code_are_reported_where_they_bound() {
    debugpy();
    let dir = project(&[("requirements.txt", ""), ("c.py", COMMENTS_PY)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "breakpoints", "file": "c.py", "lines": [3, 6]}),
            json!({"op": "launch", "program": "c.py"}),
            json!({"op": "breakpoints", "file": "c.py", "lines": [4, 6]}),
            json!({"op": "terminate"}),
        ],
    );
    let launched = text(&answers[1]);
    let moved = answers[1]["data"]["breakpoints"].as_array().unwrap();
    let comment = &moved[0];
    assert_eq!(comment["line"], 3);
    assert_ne!(comment["bound_line"], 3, "debugpy moves a comment-line breakpoint: {launched}");
    let bound = comment["bound_line"].as_u64().unwrap();
    assert!(
        launched.contains(&format!("c.py: line 3 bound at line {bound}, not at the line asked for")),
        "{launched}"
    );
    // While the session runs: a blank line, reported the same way.
    let set = text(&answers[2]);
    assert!(set.contains("c.py: line 6 bound"), "{set}");
    assert!(set.contains("c.py: line 4 bound at line"), "{set}");
}

const LOOP_GO: &str = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tsum := 0\n\tfor i := 0; i < 5; i++ {\n\t\tsum += i * i\n\t}\n\tfmt.Println(sum)\n}\n";

#[tokio::test]
async fn a_go_loop_with_a_conditional_breakpoint_in_two_calls() {
    require("go", &["version"], "apt-get install golang-go");
    require("dlv", &["version"], "apt-get install delve");
    let h = Harness::new(&[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", LOOP_GO)]);
    h.ok(
        "debug",
        json!({"op": "breakpoints", "file": "main.go", "breakpoints": [{"line": 8, "condition": "i == 3"}]}),
    )
    .await;
    let stop = h.ok("debug", json!({"op": "launch", "program": "main.go"})).await.text;
    assert!(stop.starts_with("launched; stopped (breakpoint) at main.go:8 in main.main"), "{stop}");
    // 0 + 1 + 4 before the fourth pass.
    assert!(stop.contains("  i = 3 (int)") && stop.contains("  sum = 5 (int)"), "{stop}");
    assert!(stop.contains("library frame"), "the Go runtime's frames are folded: {stop}");
    h.ok("debug", json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn delve_says_why_a_line_without_code_does_not_bind_and_a_run_where_nothing_bound() {
    require("dlv", &["version"], "apt-get install delve");
    let h = Harness::new(&[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", LOOP_GO)]);
    h.ok("debug", json!({"op": "breakpoints", "file": "main.go", "lines": [2]})).await;
    let ran = h.ok("debug", json!({"op": "launch", "program": "main.go"})).await.text;
    assert!(ran.contains("none of your 1 breakpoint bound: main.go: line 2 not bound: "), "{ran}");
    h.ok("debug", json!({"op": "terminate"})).await;
}

const NIL_MAP_GO: &str = "package main\n\nimport \"fmt\"\n\nfunc store(m map[string]int, key string) {\n\tm[key] = len(key)\n}\n\nfunc main() {\n\tvar counts map[string]int\n\tstore(counts, \"answer\")\n\tfmt.Println(counts)\n}\n";

#[tokio::test]
async fn a_go_panic_in_the_runtime_shows_and_evaluates_in_the_users_frame() {
    require("dlv", &["version"], "apt-get install delve");
    let h = Harness::new(&[("go.mod", "module demo\n\ngo 1.19\n"), ("main.go", NIL_MAP_GO)]);
    let stop = h.ok("debug", json!({"op": "launch", "program": "main.go"})).await.text;
    assert!(stop.contains("at main.go:6 in main.store"), "{stop}");
    // The top frame is the runtime's; evaluate, like scopes, defaults to the
    // frame the stop showed.
    let key = h.ok("debug", json!({"op": "evaluate", "expression": "key"})).await.text;
    assert!(key.contains("\"answer\""), "{key}");
    h.ok("debug", json!({"op": "terminate"})).await;
}

const SEGV_C: &str = r#"#include <stdio.h>
#include <string.h>

struct item { const char *name; };

static size_t name_length(const struct item *it) {
    return strlen(it->name);
}

int main(void) {
    struct item *missing = NULL;
    printf("%zu\n", name_length(missing));
    return 0;
}
"#;

#[tokio::test]
async fn a_c_segfault_stops_on_the_signal_with_the_null_pointer_in_view() {
    require("gcc", &["--version"], "apt-get install gcc");
    let h = Harness::new(&[("CMakeLists.txt", "project(demo C)\n"), ("crash.c", SEGV_C)]);
    let built = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o", "crash", "crash.c"])
        .current_dir(h.root())
        .status()
        .unwrap();
    assert!(built.success());
    let stop = h.ok("debug", json!({"op": "launch", "program": "crash"})).await.text;
    assert!(stop.starts_with("launched; stopped (signal SIGSEGV: "), "{stop}");
    assert!(stop.contains("(fault address: 0x0)) at crash.c:7 in name_length"), "{stop}");
    assert!(stop.contains(">   7 |     return strlen(it->name);"), "{stop}");
    assert!(stop.contains("  it = 0x0000000000000000"), "the null pointer: {stop}");
    assert!(stop.contains("main at crash.c:12"), "{stop}");
    // evaluate defaults to the frame the stop showed.
    let it = h.ok("debug", json!({"op": "evaluate", "expression": "it"})).await.text;
    assert!(it.contains("0x0000000000000000"), "{it}");
    h.ok("debug", json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn run_to_a_line_that_holds_a_logpoint_still_stops_there() {
    debugpy();
    let h = Harness::new(&[("requirements.txt", ""), ("loop.py", LOOP_PY)]);
    let both = json!({"op": "breakpoints", "file": "loop.py", "breakpoints": [{"line": 2}, {"line": 5, "log_message": "total is {total}"}]});
    h.ok("debug", both).await;
    let first = h.ok("debug", json!({"op": "launch", "program": "loop.py"})).await.text;
    assert!(first.contains("loop.py:2 in running_totals"), "{first}");
    let there = h.ok("debug", json!({"op": "run_to", "file": "loop.py", "line": 5})).await.text;
    assert!(there.starts_with("stopped (breakpoint) at loop.py:5 in running_totals"), "{there}");
    h.ok("debug", json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn run_to_and_scopes_default_to_the_stop() {
    debugpy();
    let h = Harness::new(&[("requirements.txt", ""), ("loop.py", LOOP_PY)]);
    h.ok("debug", json!({"op": "breakpoints", "file": "loop.py", "lines": [2]})).await;
    let first = h.ok("debug", json!({"op": "launch", "program": "loop.py"})).await.text;
    assert!(first.contains("loop.py:2 in running_totals"), "{first}");
    let there = h.ok("debug", json!({"op": "run_to", "file": "loop.py", "line": 7})).await.text;
    assert!(there.starts_with("stopped (breakpoint) at loop.py:7 in running_totals"), "{there}");
    assert!(there.contains("  totals = [0, 7, 25, 58, 110] (list)"), "{there}");
    let scopes = h.ok("debug", json!({"op": "scopes"})).await.text;
    assert!(scopes.contains("Locals reference="), "{scopes}");
    // The temporary breakpoint is gone; only the file's own is left.
    let done = h.ok("debug", json!({"op": "continue"})).await.text;
    assert!(done.contains("exited with code 0"), "{done}");
    let filters = h.ok("debug", json!({"op": "exceptions"})).await.text;
    assert!(
        filters.contains("uncaught exceptions stop the program") || filters.contains("[on] `uncaught`"),
        "{filters}"
    );
}

#[tokio::test]
async fn unsupported_and_unknown_settings_are_refused_naming_the_adapter() {
    debugpy();
    let h = Harness::new(&[("requirements.txt", ""), ("loop.py", LOOP_PY)]);
    h.ok("debug", json!({"op": "breakpoints", "file": "loop.py", "lines": [2]})).await;
    h.ok("debug", json!({"op": "launch", "program": "loop.py"})).await;
    let listed = h.ok("debug", json!({"op": "exceptions"})).await.text;
    assert!(listed.contains("[on] `uncaught`") && listed.contains("[off] `raised`"), "{listed}");
    let err = h.err("debug", json!({"op": "exceptions", "filters": ["everything"]})).await;
    assert!(err.contains("unknown exception filter") && err.contains("`userUnhandled`"), "{err}");
    let log = h
        .ok("debug", json!({"op": "breakpoints", "file": "loop.py", "breakpoints": [{"line": 6, "log_message": "i={i}"}]}))
        .await
        .text;
    assert!(log.contains("loop.py: line 6 logging \"i={i}\" bound"), "{log}");
    h.ok("debug", json!({"op": "terminate"})).await;
}

/// A program started outside tether, killed when the test ends.
struct Outside(std::process::Child);

impl Outside {
    fn start(dir: &Path, program: &str, args: &[&str]) -> Self {
        use std::os::unix::process::CommandExt;
        // Its own process group, so that what it starts (dlv's debuggee)
        // goes with it.
        let child = std::process::Command::new(program)
            .args(args)
            .process_group(0)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} did not start: {e}"));
        std::thread::sleep(std::time::Duration::from_millis(500));
        Self(child)
    }

    /// Whether it runs on, neither gone nor stopped by a tracer, within a
    /// bounded wait (a detach takes a moment to resume it).
    async fn runs_on(&self, pid: u32) -> bool {
        for _ in 0..50 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state =
                stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()).unwrap_or("X");
            if matches!(state, "R" | "S") {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        false
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        tether_actors::process::kill_group(self.0.id());
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const SPIN_C: &str = "#include <unistd.h>\n\nint main(void) {\n    int ticks = 0;\n    for (;;) {\n        ticks++;\n        usleep(100000);\n    }\n}\n";

const SPIN_GO: &str = "package main\n\nimport \"time\"\n\nfunc main() {\n\tticks := 0\n\tfor {\n\t\tticks++\n\t\ttime.Sleep(100 * time.Millisecond)\n\t}\n}\n";

/// Attaches with `attach` after a breakpoint on `file:line`: the stop's
/// snapshot, then a detach that leaves the program running.
async fn attach_stops_and_detaches(h: &Harness, outside: &Outside, file: &str, line: u32, attach: Value) {
    h.ok("debug", json!({"op": "breakpoints", "file": file, "lines": [line]})).await;
    let stop = h.ok("debug", attach).await.text;
    assert!(
        stop.starts_with("attached to ")
            && stop.contains(&format!("stopped (breakpoint) at {file}:{line} in ")),
        "{stop}"
    );
    assert!(stop.contains("  ticks = "), "the loop's local: {stop}");
    let done = h.ok("debug", json!({"op": "terminate"})).await.text;
    assert!(done.starts_with("detached from the program, which keeps running"), "{done}");
    assert!(outside.runs_on(outside.0.id()).await, "the program runs on after the detach");
}

#[tokio::test]
async fn lldb_attaches_to_a_native_process_by_pid() {
    require("gcc", &["--version"], "apt-get install gcc");
    let h = Harness::new(&[("spin.c", SPIN_C)]);
    let built = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o", "spin", "spin.c"])
        .current_dir(h.root())
        .status()
        .unwrap();
    assert!(built.success());
    let spin = Outside::start(&h.root(), "./spin", &[]);
    attach_stops_and_detaches(&h, &spin, "spin.c", 6, json!({"op": "attach", "pid": spin.0.id()})).await;
}

/// `spin`, built from [`SPIN_GO`] without optimisations (as `dlv debug` would).
fn go_spin() -> Harness {
    require("go", &["version"], "apt-get install golang-go");
    require("dlv", &["version"], "apt-get install delve");
    let h = Harness::new(&[("go.mod", "module spin\n\ngo 1.19\n"), ("main.go", SPIN_GO)]);
    let built = std::process::Command::new("go")
        .args(["build", "-gcflags=all=-N -l", "-o", "spin", "."])
        .current_dir(h.root())
        .status()
        .unwrap();
    assert!(built.success());
    h
}

#[tokio::test]
async fn delve_attaches_by_pid_and_to_a_headless_server() {
    let h = go_spin();
    let spin = Outside::start(&h.root(), "./spin", &[]);
    let pid = json!({"op": "attach", "pid": spin.0.id(), "adapter": "delve"});
    attach_stops_and_detaches(&h, &spin, "main.go", 8, pid).await;
    drop(spin);

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let server = Outside::start(
        &h.root(),
        "dlv",
        &["exec", "./spin", "--headless", "--listen", &listen, "--accept-multiclient", "--continue"],
    );
    h.ok("debug", json!({"op": "breakpoints", "file": "main.go", "lines": [8]})).await;
    let stop = h.ok("debug", json!({"op": "attach", "port": port, "adapter": "delve"})).await.text;
    assert!(
        stop.starts_with(&format!(
            "attached to the delve server on port {port}; stopped (breakpoint) at main.go:8"
        )),
        "{stop}"
    );
    let done = h.ok("debug", json!({"op": "terminate"})).await.text;
    assert!(done.starts_with("detached"), "{done}");
    drop(server);
}

#[test]
fn the_mcp_server_answers_a_crash_with_one_call() {
    debugpy();
    let dir = project(&[("requirements.txt", ""), ("crash.py", CRASH_PY)]);
    let out = common::mcp_scenario("debug_crash", dir.path());
    assert!(out.contains("KeyError: 'kiwi'"), "{out}");
}
