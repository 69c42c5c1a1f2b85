//! The `debug` tool against real debugpy: the session rules (one per
//! conversation, hard TTL, crash clean-up), the caps, attach, cancellation
//! and the argument errors. lldb-dap and delve are in `native`; adapters
//! standing in for faults and for Dart in `fake_adapters`.

use crate::common;

use std::time::Duration;

use crate::common::{Harness, debugpy};
use serde_json::{Value, json};

pub(super) async fn dbg(h: &Harness, args: Value) -> tether::ToolResult {
    h.call("debug", args).await
}

pub(super) async fn ok(h: &Harness, args: Value) -> String {
    h.ok("debug", args).await.text
}

const PROG: &str = r#"import os

def add(a, b):
    total = a + b
    return total

with open("pid.txt", "w") as f:
    f.write(str(os.getpid()))
x = add(2, 3)
print("x is", x)
print("done", x * 2)
"#;

pub(super) fn python_project() -> Harness {
    Harness::new(&[("requirements.txt", ""), ("prog.py", PROG)])
}

#[tokio::test]
async fn debugpy_end_to_end() {
    debugpy();
    let h = python_project();
    ok(&h, json!({"op": "breakpoints", "file": "prog.py", "lines": [4]})).await;
    let launched = ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    // One answer holds where, the source, the locals and the chain.
    let mut lines = launched.lines();
    assert_eq!(
        lines.next(),
        Some("launched; stopped (breakpoint) at prog.py:4 in add, thread 1"),
        "{launched}"
    );
    assert_eq!(lines.next(), Some("    2 |"), "{launched}");
    assert_eq!(lines.next(), Some("    3 | def add(a, b):"), "{launched}");
    assert_eq!(lines.next(), Some(">   4 |     total = a + b"), "{launched}");
    assert!(launched.contains("]:\n  a = 2 (int)\n  b = 3 (int)\ncall chain"), "{launched}");
    assert!(launched.contains("call chain (innermost first): add at prog.py:4 [frame_id="), "{launched}");
    assert!(launched.contains(" ← <module> at prog.py:9 [frame_id="), "{launched}");
    // The program wrote pid.txt: named, after the answer, as changed by a
    // program outside tether.
    assert!(common::answer_only(&launched).ends_with("breakpoints: 1 bound where asked"), "{launched}");
    // status, while stopped, answers with the same snapshot.
    let status = ok(&h, json!({"op": "status"})).await;
    assert!(
        status.starts_with("debugpy session on prog.py (up ")
            && status.contains(": stopped (breakpoint) at prog.py:4 in add, thread 1\n")
            && status.contains("  a = 2 (int)\n  b = 3 (int)\n"),
        "{status}"
    );
    let stack = ok(&h, json!({"op": "stack"})).await;
    assert!(
        stack.starts_with("#0 frame_id=")
            && stack.contains(" add at prog.py:4")
            && stack.contains("<module> at prog.py:9"),
        "{stack}"
    );
    let frame: i64 = stack.split("frame_id=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let scopes = ok(&h, json!({"op": "scopes", "frame_id": frame})).await;
    let locals: i64 = scopes
        .lines()
        .find(|l| l.starts_with("Locals"))
        .unwrap()
        .rsplit('=')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let vars = ok(&h, json!({"op": "variables", "reference": locals})).await;
    assert!(vars.contains("a = 2 (int)") && vars.contains("b = 3 (int)"), "{vars}");
    assert_eq!(
        ok(&h, json!({"op": "evaluate", "expression": "a * 10 + b", "frame_id": frame})).await,
        "a * 10 + b = 23 (int)"
    );
    let step = ok(&h, json!({"op": "step_over"})).await;
    assert!(
        step.starts_with("stopped (step) at prog.py:5 in add, thread 1\n"),
        "step_over moved one line: {step}"
    );
    assert!(step.contains("  total = 5 (int)"), "the step's snapshot has the new local: {step}");
    assert_eq!(ok(&h, json!({"op": "evaluate", "expression": "total"})).await, "total = 5 (int)");
    let threads = ok(&h, json!({"op": "threads"})).await;
    assert!(threads.contains("MainThread"), "{threads}");
    let pid: i32 = h.read("pid.txt").parse().unwrap();
    assert_eq!(ok(&h, json!({"op": "continue"})).await, "the program exited with code 0");
    let output = ok(&h, json!({"op": "output"})).await;
    assert!(output.contains("x is 5\n") && output.contains("done 10\n"), "{output}");
    ok(&h, json!({"op": "terminate"})).await;
    assert!(common::gone(pid).await, "the debuggee is gone");
    let status = ok(&h, json!({"op": "status"})).await;
    assert!(
        status.starts_with("no debug session is running; the last one ended: terminated on request"),
        "{status}"
    );
}

#[tokio::test]
async fn a_second_launch_is_refused_and_terminate_kills_everything() {
    debugpy();
    let h = python_project();
    ok(&h, json!({"op": "breakpoints", "file": "prog.py", "lines": [4]})).await;
    ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    let text = dbg(&h, json!({"op": "launch", "program": "prog.py"})).await.text;
    assert!(
        text.contains("a debug session (debugpy) on prog.py is already running")
            && text.contains("terminate it first"),
        "{text}"
    );
    let pid: i32 = h.read("pid.txt").parse().unwrap();
    let adapter = common::pid_of(&h, "debug-session").await.expect("the adapter's pid") as i32;
    ok(&h, json!({"op": "terminate"})).await;
    assert!(common::gone(pid).await, "debuggee {pid} survived terminate");
    assert!(common::gone(adapter).await, "adapter {adapter} survived terminate");
}

#[tokio::test]
async fn caps_on_frames_children_and_values() {
    debugpy();
    let prog = "def deep(n):\n    if n == 0:\n        return 0\n    return deep(n - 1)\n\nbig = {f'k{i}': i for i in range(120)}\nlong = 'x' * 1000\ndeep(60)\n";
    let h = Harness::new(&[("requirements.txt", ""), ("caps.py", prog)]);
    ok(&h, json!({"op": "breakpoints", "file": "caps.py", "lines": [3]})).await;
    ok(&h, json!({"op": "launch", "program": "caps.py"})).await;
    let stack = ok(&h, json!({"op": "stack"})).await;
    assert_eq!(stack.lines().filter(|l| l.starts_with('#')).count(), 30);
    assert!(stack.contains("more frames not shown (cap 30)"), "{stack}");
    let long = ok(&h, json!({"op": "evaluate", "expression": "long"})).await;
    assert!(long.chars().count() < 520, "a value is cut at 400 characters: {}", long.len());
    assert!(
        long.ends_with("(value cut at 400 characters; evaluate a slice or a part of it to see more)"),
        "the cut is stated: {long}"
    );
    // The structured answer carries the same cut value, never the adapter's whole reply.
    let data = dbg(&h, json!({"op": "evaluate", "expression": "long"})).await.data.unwrap();
    assert_eq!(data["cut"], true, "{data}");
    assert!(data["result"].as_str().unwrap().chars().count() <= 402, "{data}");
    let top: i64 = stack.lines().last().unwrap().split("frame_id=").nth(1).map_or_else(
        || stack.split("frame_id=").last().unwrap().split(' ').next().unwrap().parse().unwrap(),
        |s| s.split(' ').next().unwrap().parse().unwrap(),
    );
    let _ = top;
    let globals_ref: i64 = {
        let frames = dbg(&h, json!({"op": "stack"})).await.data.unwrap();
        let module_frame = frames["frames"].as_array().unwrap().last().unwrap()["id"].as_i64().unwrap();
        let scopes = ok(&h, json!({"op": "scopes", "frame_id": module_frame})).await;
        scopes
            .lines()
            .find(|l| l.starts_with("Globals"))
            .unwrap()
            .rsplit('=')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let globals = ok(&h, json!({"op": "variables", "reference": globals_ref})).await;
    let big_ref: i64 = globals
        .lines()
        .find(|l| l.starts_with("big = "))
        .unwrap()
        .rsplit("reference=")
        .next()
        .unwrap()
        .trim_end_matches(']')
        .parse()
        .unwrap();
    let children = ok(&h, json!({"op": "variables", "reference": big_ref})).await;
    assert!(children.contains("more children not shown (cap 50)"), "{children}");
    assert!(globals.contains("value(s) cut at 400 characters"), "{globals}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn pause_waits_as_long_as_the_other_run_ops() {
    debugpy();
    // One long call into C (an 8 s sleep: a fixed length whatever the
    // machine's speed, where key stretching took 13 s on one day and under
    // 5 s on another): debugpy can pause the thread only when it returns
    // to Python, over 5 s after the pause is asked for.
    let prog = "import pathlib, time\npathlib.Path('started').write_text('1')\ntime.sleep(8)\nx = 0\nwhile True:\n    x += 1\n";
    let h = Harness::new(&[("requirements.txt", ""), ("slow.py", prog)]);
    // The launch is let go once the program runs (a cold adapter's start
    // on a busy machine takes longer than any fixed wait would allow).
    let cancel = tokio_util::sync::CancellationToken::new();
    let launch = h.rt.call_cancellable(
        tether::Surface::Full,
        "debug",
        json!({"op": "launch", "program": "slow.py"}),
        cancel.clone(),
    );
    let started = h.path("started");
    let canceller = async {
        let deadline = std::time::Instant::now() + common::CALL_TIMEOUT;
        while !started.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    };
    let (launched, ()) =
        tokio::time::timeout(common::CALL_TIMEOUT, async { tokio::join!(launch, canceller) })
            .await
            .expect("the launch answered once cancelled");
    assert!(started.exists(), "the program reached its long call");
    assert!(launched.text.contains("keeps running"), "{}", launched.text);
    let asked = std::time::Instant::now();
    let paused = ok(&h, json!({"op": "pause"})).await;
    assert!(paused.starts_with("stopped (pause) at slow.py:"), "pause answered at the stop: {paused}");
    assert!(
        asked.elapsed() > Duration::from_secs(5),
        "the stop came after the old 5 s wait: {:?}",
        asked.elapsed()
    );
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn the_session_expires_after_its_ttl() {
    debugpy();
    let h = Harness::with(&[("requirements.txt", ""), ("prog.py", PROG)], |b| {
        // Long enough that a slow launch on a loaded machine still sees its session.
        b.connect_all().debug_ttl(Duration::from_secs(5))
    });
    ok(&h, json!({"op": "breakpoints", "file": "prog.py", "lines": [4]})).await;
    ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    let pid: i32 = h.read("pid.txt").parse().unwrap();
    // The TTL runs from when the launch answered.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let text = dbg(&h, json!({"op": "stack"})).await.text;
    assert!(text.contains("expired after its") && text.contains("time-to-live"), "{text}");
    assert!(common::gone(pid).await, "the debuggee was killed at expiry");
}

#[tokio::test]
async fn an_adapter_killed_mid_session_is_reported_and_cleaned_up() {
    debugpy();
    let h = python_project();
    ok(&h, json!({"op": "breakpoints", "file": "prog.py", "lines": [4]})).await;
    ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    let adapter = common::pid_of(&h, "debug-session").await.expect("the adapter's pid") as i32;
    // SAFETY: SIGKILL to the adapter.
    unsafe { kill(adapter, 9) };
    tokio::time::sleep(Duration::from_millis(700)).await;
    let r = dbg(&h, json!({"op": "continue"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("killed by signal 9") || r.text.contains("closed"),
        "names the cause: {}",
        r.text
    );
    ok(&h, json!({"op": "terminate"})).await;
    let again = ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    assert!(again.starts_with("launched;"), "{again}");
    ok(&h, json!({"op": "terminate"})).await;
}

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

#[tokio::test]
async fn attach_to_a_program_listening_for_debugpy() {
    debugpy();
    let prog = "import time\nfor i in range(600):\n    counter = i\n    time.sleep(0.05)\n";
    let h = Harness::new(&[("requirements.txt", ""), ("loop.py", prog)]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    use std::os::unix::process::CommandExt;
    // In a group of its own: debugpy starts an adapter process beside it,
    // and the test must leave neither behind.
    let mut child = std::process::Command::new("python3")
        .args(["-m", "debugpy", "--listen", &format!("127.0.0.1:{port}"), "--wait-for-client", "loop.py"])
        .current_dir(h.root())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    ok(&h, json!({"op": "breakpoints", "file": "loop.py", "lines": [3]})).await;
    let attached = ok(&h, json!({"op": "attach", "port": port})).await;
    assert!(attached.contains("attached"), "{attached}");
    // The program hits the breakpoint on its next loop turn (later on a busy machine).
    let mut status = String::new();
    for _ in 0..100 {
        status = ok(&h, json!({"op": "status"})).await;
        if status.contains("stopped") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(status.contains("stopped (breakpoint) at loop.py:3"), "{status}");
    let v = ok(&h, json!({"op": "evaluate", "expression": "i >= 0"})).await;
    assert!(v.ends_with("True (bool)"), "{v}");
    let detached = ok(&h, json!({"op": "terminate"})).await;
    assert!(detached.starts_with("detached"), "a program tether did not start is left running: {detached}");
    assert!(child.try_wait().unwrap().is_none(), "still running after detach");
    // SAFETY: SIGKILL to the test's own process group.
    unsafe { kill(-group, 9) };
    let _ = child.wait();
}

#[tokio::test]
async fn a_project_venv_python_is_preferred() {
    debugpy();
    let h = python_project();
    let real = String::from_utf8(
        std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrapper = format!("#!/bin/sh\ntouch \"$(dirname \"$0\")/venv-used\"\nexec {} \"$@\"\n", real.trim());
    h.write(".venv/bin/python3", &wrapper);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(h.path(".venv/bin/python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
    ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    assert!(h.path(".venv/bin/venv-used").exists(), "the adapter ran on the project's .venv python");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn a_dart_project_without_the_sdk_says_why() {
    let h = Harness::new(&[("pubspec.yaml", "name: demo\n"), ("bin/main.dart", "void main() {}\n")]);
    let text = dbg(&h, json!({"op": "launch", "program": "bin/main.dart"})).await;
    assert!(
        text.is_error && text.text.contains("adapter unavailable: dart: `dart` not found on PATH"),
        "{}",
        text.text
    );
    let adapters = ok(&h, json!({"op": "adapters"})).await;
    assert!(adapters.contains("dart: not usable") && adapters.contains("roots at ."), "{adapters}");
}

#[tokio::test]
async fn bad_arguments_are_clear_errors() {
    let h = python_project();
    let cases = [
        (json!({"op": "jump"}), "`op`"),
        (json!({"op": "scopes"}), "no debug session is running"),
        (
            json!({"op": "breakpoints", "file": "prog.py", "lines": [4], "breakpoints": [{"line": 4}]}),
            "not both",
        ),
        (
            json!({"op": "breakpoints", "file": "prog.py", "breakpoints": [{"line": 4, "condition": " "}]}),
            "`breakpoints[].condition` is empty",
        ),
        (
            json!({"op": "breakpoints", "file": "prog.py", "breakpoints": [{"line": 4, "when": "x"}]}),
            "unknown field `when`",
        ),
        (json!({"op": "run_to", "file": "prog.py"}), "`line` is required"),
        (
            json!({"op": "launch", "program": "prog.py", "file": "prog.py"}),
            "give `lines` or `breakpoints` with it",
        ),
        (json!({"op": "launch", "program": "prog.py", "lines": [4]}), "`file` is required with `lines`"),
        (json!({"op": "launch", "program": "prog.py", "module": "pytest"}), "not both"),
        (json!({"op": "launch", "module": "py test"}), "not a Python module name"),
        (json!({"op": "launch", "program": "prog.py", "cwd": "nowhere"}), "`cwd`"),
        (json!({"op": "launch", "program": "prog.py", "env": {"A=B": "1"}}), "`env`"),
        (json!({"op": "attach"}), "`pid` (lldb, delve) or `vm_service_uri` (dart) is required"),
        (json!({"op": "attach", "port": 5678, "pid": 1}), "not several"),
        (json!({"op": "attach", "pid": 1, "vm_service_uri": "ws://127.0.0.1:8181/a=/ws"}), "not several"),
        (json!({"op": "attach", "pid": 4242, "adapter": "debugpy"}), "cannot attach that way"),
        (
            json!({"op": "attach", "vm_service_uri": "ws://127.0.0.1:8181/a=/ws", "adapter": "lldb"}),
            "dart takes",
        ),
        (json!({"op": "attach", "vm_service_uri": "ws://10.0.0.7:8181/a=/ws"}), "not on this machine"),
        (json!({"op": "attach", "vm_service_uri": "ftp://127.0.0.1:8181/"}), "not a ws:// or http://"),
        (json!({"op": "attach", "vm_service_uri": "http://localhost/a=/"}), "has no port"),
        (json!({"op": "attach", "vm_service_uri": "not a uri"}), "`vm_service_uri`"),
        (json!({"op": "attach", "port": 0}), "0 is not a port"),
        (json!({"op": "attach", "pid": 0}), "not a program to debug"),
        (json!({"op": "attach", "pid": std::process::id()}), "is tether or the process that started it"),
        (json!({"op": "evaluate", "expression": " "}), "`expression` is empty"),
        (json!({"op": "variables", "reference": 0}), "0 is not a reference"),
        (json!({"op": "step_over", "thread_id": -1}), "`thread_id`: -1 is not an id the adapter gave"),
        (json!({"op": "scopes", "frame_id": -7}), "`frame_id`: -7 is not an id the adapter gave"),
        (json!({"op": "breakpoints", "file": "../x.py", "lines": [1]}), "outside the working directory"),
        (json!({"op": "breakpoints", "file": "prog.py", "lines": [0]}), "1-based"),
        (json!({"op": "launch"}), "`program` is required"),
        (json!({"op": "launch", "program": "missing.py"}), "is not a file"),
        (json!({"op": "stack"}), "no debug session is running"),
    ];
    for (args, needle) in cases {
        let r = dbg(&h, args.clone()).await;
        assert!(r.is_error && r.text.contains(needle), "{args}: {}", r.text);
    }
}

#[test]
fn batch_drives_a_session_across_lines() {
    debugpy();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("requirements.txt"), "").unwrap();
    std::fs::write(dir.path().join("prog.py"), PROG).unwrap();
    let requests = [
        json!({"tool": "debug", "args": {"op": "breakpoints", "file": "prog.py", "lines": [4]}}),
        json!({"tool": "debug", "args": {"op": "launch", "program": "prog.py"}}),
        json!({"tool": "debug", "args": {"op": "evaluate", "expression": "a + b"}}),
        json!({"tool": "debug", "args": {"op": "terminate"}}),
    ];
    let (answers, _) = common::batch(dir.path(), &[], &requests);
    assert_eq!(answers[2]["text"], "a + b = 5 (int)", "{answers:?}");
    assert_eq!(answers[3]["is_error"], false);
}

#[tokio::test]
async fn a_cancelled_run_abandons_the_wait_and_the_program_keeps_running() {
    debugpy();
    let h = Harness::new(&[
        ("requirements.txt", ""),
        ("loop.py", "import time\nwhile True:\n    time.sleep(0.05)\n"),
    ]);
    // Long enough for the launch to reach its wait for the first stop.
    let launch = json!({"op": "launch", "program": "loop.py"});
    let (result, answered_after) = h.cancelled_after("debug", launch, Duration::from_secs(4)).await;
    // The session answers for itself: the launch happened, the program runs.
    assert!(result.is_error, "{}", result.text);
    assert!(
        result.text.starts_with(
            "launched; the call was cancelled, so tether stopped waiting; the program keeps running"
        ),
        "{}",
        result.text
    );
    // "At once" against the 30 s run wait, with room for a loaded machine.
    assert!(answered_after < Duration::from_secs(2), "the call returned at once");
    // The session's mailbox is free again: status answers without waiting
    // out the 30 s run wait, and pause stops the program that kept running.
    let started = std::time::Instant::now();
    let status = ok(&h, json!({"op": "status"})).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{status}");
    assert!(status.contains("loop.py"), "{status}");
    let paused = ok(&h, json!({"op": "pause"})).await;
    assert!(paused.contains("stopped (pause)") && paused.contains("loop.py"), "{paused}");
}

#[tokio::test]
async fn an_op_cancelled_while_it_queues_for_the_session_never_runs() {
    debugpy();
    let h = Harness::new(&[
        ("requirements.txt", ""),
        ("loop.py", "import time\nwhile True:\n    time.sleep(0.05)\n"),
    ]);
    let launch_cancel = tokio_util::sync::CancellationToken::new();
    let launch = h.rt.call_cancellable(
        tether::Surface::Full,
        "debug",
        json!({"op": "launch", "program": "loop.py"}),
        launch_cancel.clone(),
    );
    let queued = async {
        // The launch holds the session (it waits for a stop that never
        // comes); this terminate queues behind it and is cancelled there.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let (r, _) = h.cancelled_after("debug", json!({"op": "terminate"}), Duration::from_millis(500)).await;
        launch_cancel.cancel();
        r
    };
    let (launched, terminated) = tokio::join!(launch, queued);
    assert!(
        terminated.is_error && terminated.text.contains("cancelled by the caller"),
        "{}",
        terminated.text
    );
    assert!(launched.text.starts_with("launched; the call was cancelled"), "{}", launched.text);
    let status = ok(&h, json!({"op": "status"})).await;
    assert!(status.contains("loop.py") && status.contains("running"), "the terminate never ran: {status}");
    assert!(ok(&h, json!({"op": "terminate"})).await.contains("terminated"));
}

#[tokio::test]
async fn java_says_why_no_adapter_debugs_it_and_ruby_is_rdbgs() {
    let h =
        Harness::new(&[("pom.xml", "<project/>"), ("Main.java", "class Main {}\n"), ("app.rb", "puts 1\n")]);
    let adapters = ok(&h, json!({"op": "adapters"})).await;
    assert!(adapters.contains("java: not usable — no Java debug adapter is installed"), "{adapters}");
    // No Gemfile, Rakefile or .ruby-version: rdbg has no root here.
    assert!(
        adapters.contains("rdbg: not usable — no Gemfile, Rakefile, .ruby-version anywhere"),
        "{adapters}"
    );
    let java = h.err("debug", json!({"op": "launch", "program": "Main.java"})).await;
    assert!(
        java.contains("no debug adapter handles `Main.java`: no Java debug adapter is installed"),
        "{java}"
    );
    let ruby = h.err("debug", json!({"op": "launch", "program": "app.rb"})).await;
    assert!(ruby.contains("rdbg: no Gemfile, Rakefile, .ruby-version in the directory of app.rb"), "{ruby}");
}

#[tokio::test]
async fn breakpoints_a_session_keeps_from_before_are_named() {
    debugpy();
    let h = Harness::new(&[
        ("requirements.txt", ""),
        ("prog.py", PROG),
        ("other.py", "a = 1\nb = a + 1\nprint(b)\n"),
    ]);
    ok(&h, json!({"op": "breakpoints", "file": "prog.py", "lines": [4]})).await;
    ok(&h, json!({"op": "launch", "program": "prog.py"})).await;
    ok(&h, json!({"op": "terminate"})).await;
    // The next launch asks for one breakpoint in another file: the one
    // kept in prog.py is counted and named, never silently.
    let launched =
        ok(&h, json!({"op": "launch", "program": "other.py", "file": "other.py", "lines": [2]})).await;
    assert!(launched.contains("stopped (breakpoint) at other.py:2"), "{launched}");
    assert!(
        launched.contains("kept from before this session (counted above): prog.py line 4;"),
        "{launched}"
    );
    ok(&h, json!({"op": "terminate"})).await;
    // Cleared, nothing is kept.
    ok(&h, json!({"op": "breakpoints", "file": "prog.py", "lines": []})).await;
    let launched =
        ok(&h, json!({"op": "launch", "program": "other.py", "file": "other.py", "lines": [2]})).await;
    assert!(!launched.contains("kept from before"), "{launched}");
    assert!(launched.contains("breakpoints: 1 bound where asked"), "{launched}");
}

#[tokio::test]
async fn an_attach_to_a_port_where_nothing_listens_fails_fast_and_says_what_to_start() {
    let h = python_project();
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let r = dbg(&h, json!({"op": "attach", "port": port})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("nothing accepted a connection on 127.0.0.1:{port} within 2 s")),
        "{}",
        r.text
    );
    assert!(r.text.contains("--listen"), "what to start: {}", r.text);
    assert!(!r.text.contains("stderr: \n") && !r.text.trim_end().ends_with("stderr:"), "{}", r.text);
}
