//! Embedding: a host already inside an actix system shares it; a host
//! outside gets a system of its own. Either way calls and the router's
//! address work.

use serde_json::json;
use tether::router::Call;
use tether::{Runtime, Surface};

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
    dir
}

#[actix::test]
async fn a_host_inside_an_actix_system_shares_it() {
    let dir = workdir();
    let rt =
        Runtime::builder().trust(tether::Trust::Trusted).workdir(dir.path()).connect_all().start().unwrap();
    assert!(!rt.owns_actor_system(), "the actors joined the host's system");
    let r = rt.call("ast_grep", json!({"pattern": "print($A)"})).await;
    assert!(!r.is_error && r.text.contains("a.py:1:1"), "{}", r.text);
    let call = Call::new("read", json!({"path": "a.py"}), Surface::ReadOnly);
    let r = rt.router().send(call).await.unwrap();
    assert_eq!(r.text, "print(1)\n");
}

#[tokio::test]
async fn a_host_outside_actix_gets_its_own_system() {
    let dir = workdir();
    let rt =
        Runtime::builder().trust(tether::Trust::Trusted).workdir(dir.path()).connect_all().start().unwrap();
    assert!(rt.owns_actor_system());
    let r = rt.call("ast_grep", json!({"pattern": "print($A)"})).await;
    assert!(!r.is_error, "{}", r.text);
    // With language servers connected, a file no server can serve says so
    // rather than passing for clean.
    let before = rt.before_write(vec![dir.path().join("a.py")]).await;
    let said = rt.after_write(vec![dir.path().join("a.py")], before).await.expect("a report");
    assert!(said.contains("diagnostics unavailable for `a.py`"), "{said}");
    let bare = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .connect(tether::Resource::Parsers)
        .start()
        .unwrap();
    assert_eq!(bare.after_write(vec![dir.path().join("a.py")], None).await, None, "no hook configured");
}

#[test]
fn a_missing_working_directory_is_a_start_error() {
    let err = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir("/no/such/dir")
        .start()
        .err()
        .expect("refused");
    assert!(err.to_string().contains("/no/such/dir"), "{err}");
}

/// Every process tagged with this run that lives under `root`'s run.
fn pids_in(tree: &serde_json::Value, out: &mut Vec<u32>) {
    if let Some(pid) = tree["pid"].as_u64() {
        out.push(pid as u32);
    }
    for child in tree["children"].as_array().into_iter().flatten() {
        pids_in(child, out);
    }
}

fn alive(pid: u32) -> bool {
    // A zombie is gone: nothing reaps in this sandbox.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

#[actix::test]
async fn shutdown_inside_a_host_system_stops_every_child_now() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("pyproject.toml", ""),
        ("requirements.txt", ""),
        ("app.py", "def f():\n    return 1\n\nf()\n"),
        ("prog.py", "import time\nx = 1\ntime.sleep(300)\n"),
        ("tether.toml", "[vibe]\nfast = [\"sh\", \"-c\", \"sleep 300\"]\n"),
    ];
    for (path, text) in files {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .connect_all()
        .vibe(std::sync::Arc::new(tether_actors::workers::command::CommandBackend::load(dir.path())))
        .start()
        .unwrap();
    assert!(!rt.owns_actor_system());
    let ok = |r: tether::ToolResult| {
        assert!(!r.is_error, "{}", r.text);
        r
    };
    ok(rt.call("lsp", json!({"action": "hover", "file": "app.py", "line": 1, "symbol": "f"})).await);
    ok(rt
        .call(
            "eval",
            json!({"code": "import os\nos.getpid()", "description": "start a python kernel for the test"}),
        )
        .await);
    ok(rt.call("debug", json!({"op": "breakpoints", "file": "prog.py", "lines": [2]})).await);
    ok(rt.call("debug", json!({"op": "launch", "program": "prog.py"})).await);
    ok(rt.call("vibe_spawn", json!({"brief": "wait", "label": "sleeper", "tier": "fast"})).await);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut pids = Vec::new();
    pids_in(&rt.tree().await.json(), &mut pids);
    // The debuggee is a node of its own; the worker's shell too.
    assert!(pids.len() >= 4, "a server, a kernel, an adapter, a debuggee, a worker: {pids:?}");
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");

    rt.shutdown();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while pids.iter().any(|p| alive(*p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "still running after shutdown: {left:?}");
    let after = rt.call("read", json!({"path": "app.py"})).await;
    assert!(after.is_error && after.text.contains("shut down"), "{}", after.text);
}
