//! `vibe_*` through the Rust API, with shell-script workers run by the
//! built-in command backend (`[vibe]` in tether.toml).

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::Harness;
use serde_json::{Value, json};
use tether::Runtime;
use tether_actors::process::is_running;
use tether_actors::workers::command::CommandBackend;

/// `fast` echoes its brief after a moment; `good` reviews it; both read
/// the brief from stdin. `slow` starts a grandchild and waits for it.
const CONFIG: &str = r#"
[vibe]
fast = ["sh", "workers/fast.sh"]
good = "sh workers/good.sh"
"#;

const FAST: &str = "brief=$(cat)\nsleep 1\necho \"fast did: $brief\"\necho 'working…' >&2\n";
const GOOD: &str = "brief=$(cat)\nif [ \"$brief\" = fail ]; then echo 'cannot review that' >&2; exit 3; fi\nif [ \"$brief\" = slow ]; then sleep 300 & echo $! > grandchild.pid; wait; fi\necho \"good reviewed: $brief ($TETHER_WORKER_ID)\"\n";

fn vibe_run(config: &str) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workers")).unwrap();
    std::fs::write(dir.path().join("tether.toml"), config).unwrap();
    std::fs::write(dir.path().join("workers/fast.sh"), FAST).unwrap();
    std::fs::write(dir.path().join("workers/good.sh"), GOOD).unwrap();
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .conversation("test")
        .vibe(Arc::new(CommandBackend::load(dir.path())))
        .start()
        .expect("runtime starts");
    Harness { dir, rt }
}

async fn spawn(h: &Harness, brief: &str, label: &str, tier: &str) -> String {
    let r = h.ok("vibe_spawn", json!({"brief": brief, "label": label, "tier": tier})).await;
    r.data.as_ref().unwrap()["id"].as_str().unwrap().to_string()
}

/// The pid the `slow` brief's grandchild wrote, once it has.
async fn grandchild_pid(h: &Harness) -> i32 {
    let pid_file = h.path("grandchild.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap()
}

async fn wait(h: &Harness, id: &str, secs: u64) -> tether::ToolResult {
    h.call("vibe_wait", json!({"worker_id": id, "timeout_seconds": secs})).await
}

#[tokio::test]
async fn two_workers_run_in_the_background_and_are_waited_for() {
    let h = vibe_run(CONFIG);
    let started = Instant::now();
    let a = spawn(&h, "rename foo to bar", "rename", "fast").await;
    let b = spawn(&h, "the rename", "review", "good").await;
    assert!(started.elapsed() < Duration::from_secs(1), "spawn returns before the first worker could finish");
    assert_eq!((a.as_str(), b.as_str()), ("w1", "w2"));

    let ra = wait(&h, &a, 30).await;
    assert!(!ra.is_error, "{}", ra.text);
    assert!(
        ra.text.contains("w1 [fast] rename — done") && ra.text.contains("fast did: rename foo to bar"),
        "{}",
        ra.text
    );
    assert_eq!(ra.data.as_ref().unwrap()["worker"]["stderr_tail"], json!(["working…"]), "stderr is kept");
    let rb = wait(&h, &b, 30).await;
    assert!(rb.text.contains("good reviewed: the rename (w2)"), "{}", rb.text);

    // send: the brief grows and runs again.
    let sent = h.ok("vibe_send", json!({"worker_id": a, "message": "and update the docs"})).await;
    assert!(sent.text.contains("run 2"), "{}", sent.text);
    let ra = wait(&h, &a, 30).await;
    assert!(ra.text.contains("fast did: rename foo to bar\n\nand update the docs"), "{}", ra.text);

    let list = h.ok("vibe_list", json!({})).await;
    assert!(
        list.text.contains("w1 [fast] rename — done for") && list.text.contains("(run 2)"),
        "{}",
        list.text
    );
    assert!(list.text.contains("w2 [good] review — done"), "{}", list.text);
    let rows = list.data.as_ref().unwrap().as_array().unwrap().clone();
    assert_eq!(rows.len(), 2);
    assert!(rows[0]["elapsed_ms"].as_u64().unwrap() >= 1000, "{:?}", rows[0]);
    assert_eq!(rows[1]["tier"], "good");
}

#[tokio::test]
async fn a_wait_that_times_out_leaves_the_worker_running_and_kill_stops_its_children() {
    let h = vibe_run(CONFIG);
    let id = spawn(&h, "slow", "long job", "good").await;
    let r = wait(&h, &id, 1).await;
    assert!(!r.is_error && r.text.contains("still running after 1 s"), "{}", r.text);
    assert_eq!(r.data.as_ref().unwrap()["timed_out"], true);
    let grandchild = grandchild_pid(&h).await;
    let tree = h.rt.tree().await.json();
    let worker = &tree["children"].as_array().unwrap().iter().find(|c| c["kind"] == "worker-pool").unwrap()["children"]
        [0];
    assert_eq!(worker["state"], "running", "{worker}");
    let worker_pid = worker["pid"].as_u64().unwrap() as i32;
    assert!(is_running(worker_pid) && is_running(grandchild));

    let killed = h.ok("vibe_kill", json!({"worker_id": id})).await;
    assert!(
        killed.text.starts_with("killed w1 and every process it started; w1 [good] long job — killed"),
        "{}",
        killed.text
    );
    assert!(common::gone(worker_pid).await, "the worker process is gone");
    assert!(common::gone(grandchild).await, "and so is the process it started");
    let r = wait(&h, &id, 5).await;
    assert!(r.text.contains("— killed"), "{}", r.text);
    let again = h.ok("vibe_kill", json!({"worker_id": id})).await;
    assert!(again.text.contains("already finished"), "{}", again.text);
}

#[tokio::test]
async fn failures_are_clear_and_never_take_the_pool_down() {
    let h = vibe_run(CONFIG);
    let id = spawn(&h, "fail", "doomed", "good").await;
    let r = wait(&h, &id, 30).await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("exit status 3") && r.text.contains("cannot review that"), "{}", r.text);

    for (args, expected) in [
        (json!({"brief": "x", "label": "y", "tier": "turbo"}), "`turbo` is not a tier"),
        (json!({"brief": "  ", "label": "y"}), "argument `brief` is empty"),
        (json!({"brief": "x", "label": ""}), "argument `label`"),
    ] {
        let err = h.err("vibe_spawn", args).await;
        assert!(err.contains(expected), "{err}");
    }
    for (tool, args) in [
        ("vibe_wait", json!({"worker_id": "w99"})),
        ("vibe_kill", json!({"worker_id": "w99"})),
        ("vibe_send", json!({"worker_id": "w99", "message": "m"})),
    ] {
        let err = h.err(tool, args).await;
        assert!(err.contains("no worker `w99`") && err.contains("w1"), "{tool}: {err}");
    }
    let err = h.err("vibe_wait", json!({"worker_id": "w1", "timeout_seconds": 0})).await;
    assert!(err.contains("timeout_seconds"), "{err}");

    // The pool still works.
    let ok = spawn(&h, "after the failure", "fine", "fast").await;
    assert!(wait(&h, &ok, 30).await.text.contains("fast did: after the failure"));
    let tree = h.rt.tree().await.text();
    assert!(tree.contains("worker-pool commands (fast, good)") && tree.contains("failed_runs=1"), "{tree}");
}

#[tokio::test]
async fn a_missing_command_or_tier_is_named_at_spawn() {
    let h = vibe_run("[vibe]\nfast = [\"no-such-worker-binary\", \"--go\"]\n");
    let err = h.err("vibe_spawn", json!({"brief": "x", "label": "y"})).await;
    assert!(err.contains("the `fast` tier's command `no-such-worker-binary` was not found"), "{err}");
    assert!(err.contains("[vibe] fast") && err.contains("tether.toml"), "{err}");
    let err = h.err("vibe_spawn", json!({"brief": "x", "label": "y", "tier": "good"})).await;
    assert!(err.contains("the `good` tier has no worker command"), "{err}");
    let list = h.ok("vibe_list", json!({})).await;
    assert!(list.text.contains("no workers"), "a worker that never started is not kept: {}", list.text);
}

#[tokio::test]
async fn vibe_tools_exist_only_in_vibe_mode_and_the_run_end_stops_workers() {
    let plain = Harness::new(&[]);
    let names: Vec<String> = plain.rt.tools(tether::Surface::Full).into_iter().map(|s| s.name).collect();
    assert!(!names.iter().any(|n| n.starts_with("vibe_")), "{names:?}");
    let err = plain.err("vibe_list", json!({})).await;
    assert!(err.contains("needs vibe mode"), "{err}");

    let h = vibe_run(CONFIG);
    let names: Vec<String> = h.rt.tools(tether::Surface::ReadOnly).into_iter().map(|s| s.name).collect();
    for tool in ["vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"] {
        assert!(names.contains(&tool.to_string()), "{tool} is read level: {names:?}");
    }
    spawn(&h, "slow", "outlives nobody", "good").await;
    let grandchild = grandchild_pid(&h).await;
    let Harness { dir, rt } = h;
    let keep: Value = json!(dir.path().display().to_string());
    drop(rt);
    assert!(common::gone(grandchild).await, "the run's end stopped the worker's processes ({keep})");
}
