//! No child outlives its run: dropping a runtime stops every kind of child
//! (language server, kernel and what the cell started, debug adapter and
//! debuggee, worker), and when the tether process itself is SIGKILLed —
//! nothing of it runs to stop them — the next run on the same working
//! directory finds them by their run id and kills them at start.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::common::Harness;
use serde_json::json;
use tether::Runtime;
use tether_actors::process::{is_running, run_tag};
use tether_actors::workers::command::CommandBackend;

const PROG: &str = "import time\n\ndef wait():\n    time.sleep(300)\n\nwait()\n";
const APP: &str = "def area(w: int, h: int) -> int:\n    return w * h\n\nprint(area(2, 3))\n";
const VIBE: &str = "[vibe]\nfast = \"sleep 300\"\n";
const SLEEPER: &str = "import subprocess\nsleeper = subprocess.Popen(['sleep', '300'])\nsleeper.pid";

/// A working directory with a Python project, a debuggee that sleeps at a
/// breakpoint, and a worker command that sleeps.
fn project(dir: &Path) {
    for (path, text) in [("requirements.txt", ""), ("app.py", APP), ("prog.py", PROG), ("tether.toml", VIBE)]
    {
        std::fs::write(dir.join(path), text).unwrap();
    }
}

/// The calls that start one child of every kind.
fn every_kind_of_child() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("lsp", json!({"action": "hover", "file": "app.py", "line": 1, "symbol": "area"})),
        ("eval", json!({"code": SLEEPER, "description": "start a sleeping child process"})),
        ("debug", json!({"op": "breakpoints", "file": "prog.py", "lines": [4]})),
        ("debug", json!({"op": "launch", "program": "prog.py"})),
        ("vibe_spawn", json!({"brief": "sleep", "label": "sleeper"})),
    ]
}

/// Live processes (zombies excluded) started for a run in `root`, with
/// their run id and command line, read from /proc as `ps` does.
fn tagged_under(root: &Path) -> Vec<(i32, String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let Some((run, started_in)) = run_tag(pid) else { continue };
        if Path::new(&started_in).starts_with(root) && is_running(pid) {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            found.push((pid, run, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    found
}

/// `ps`' view of `pids`: those it lists as live (not zombies).
fn alive_per_ps(pids: &[i32]) -> Vec<String> {
    let out = Command::new("ps").args(["-eo", "pid=,stat=,args="]).output().expect("ps runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| {
            let mut fields = line.split_whitespace();
            let pid: i32 = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            let stat = fields.next().unwrap_or("Z");
            pids.contains(&pid) && !stat.starts_with('Z')
        })
        .map(str::to_string)
        .collect()
}

/// Waits (bounded by `common::GONE_WITHIN`) until `ps` lists none of
/// `pids` alive: a killed process whose memory the kernel is still tearing
/// down (a language server's large heap) is listed a moment longer, as
/// `[node]` in state R, after its environment is already gone.
async fn gone_per_ps(pids: &[i32]) -> Vec<String> {
    let deadline = std::time::Instant::now() + common::GONE_WITHIN;
    loop {
        let alive = alive_per_ps(pids);
        if alive.is_empty() || std::time::Instant::now() >= deadline {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (bounded) until no tagged process under `root` is left; returns what is.
async fn settle(root: &Path) -> Vec<(i32, String, String)> {
    for _ in 0..50 {
        if tagged_under(root).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tagged_under(root)
}

fn kinds(found: &[(i32, String, String)]) -> String {
    found.iter().map(|(pid, _, cmd)| format!("{pid} {cmd}")).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_runtime_stops_every_kind_of_child() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .connect_all()
        .vibe(Arc::new(CommandBackend::load(dir.path())))
        .start()
        .unwrap();
    let root = rt.workdir().to_path_buf();
    let h = Harness { dir, rt };
    for (tool, args) in every_kind_of_child() {
        h.ok(tool, args).await;
    }
    let running = tagged_under(&root);
    let all = kinds(&running);
    for needle in ["pyright", "sleep 300", "debugpy", "prog.py"] {
        assert!(all.contains(needle), "a `{needle}` process runs before the drop:\n{all}");
    }
    assert!(running.iter().all(|(_, run, _)| run == tether_actors::process::run_id()), "{all}");
    let pids: Vec<i32> = running.iter().map(|(pid, _, _)| *pid).collect();

    let Harness { dir, rt } = h;
    drop(rt);
    let left = settle(&root).await;
    assert!(left.is_empty(), "children outlived their runtime:\n{}", kinds(&left));
    assert_eq!(gone_per_ps(&pids).await, Vec::<String>::new(), "ps shows none of {pids:?}");
    println!("fault: runtime dropped with {} children of every kind running: 0 left", pids.len());
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_reaps_the_orphans_of_a_killed_one() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut tether = common::Batch::start(&root, &["--vibe", "--questions", "none"]);
    for (tool, args) in every_kind_of_child() {
        let answer = tether.ask(json!({"tool": tool, "args": args}));
        assert_eq!(answer["is_error"], false, "{tool}: {answer}");
    }

    // SIGKILL: the runtime gets no chance to stop anything.
    let dead_run = format!("{}-", tether.pid());
    tether.kill();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let orphans = tagged_under(&root);
    assert!(
        orphans.iter().any(|(_, run, _)| run.starts_with(&dead_run)),
        "the killed run left children behind (else there is nothing to prove):\n{}",
        kinds(&orphans)
    );
    let pids: Vec<i32> = orphans.iter().map(|(pid, _, _)| *pid).collect();

    // Another directory's run leaves them alone …
    let elsewhere = tempfile::tempdir().unwrap();
    let other = Runtime::builder().trust(tether::Trust::Trusted).workdir(elsewhere.path()).start().unwrap();
    assert!(other.reaped_orphans().is_empty(), "{:?}", other.reaped_orphans());
    assert_eq!(tagged_under(&root).len(), orphans.len(), "still there");

    // … the next run on the same directory reaps them at start.
    let rt = Runtime::builder().trust(tether::Trust::Trusted).workdir(&root).start().unwrap();
    let reaped: Vec<i32> = rt.reaped_orphans().iter().map(|o| o.pid as i32).collect();
    for pid in &pids {
        assert!(reaped.contains(pid), "orphan {pid} reaped: {:?}", rt.reaped_orphans());
    }
    let left = settle(&root).await;
    assert!(left.is_empty(), "orphans survived the next run's start:\n{}", kinds(&left));
    assert_eq!(gone_per_ps(&pids).await, Vec::<String>::new(), "ps shows none of {pids:?}");
    let tree = rt.tree().await.json();
    assert_eq!(tree["detail"]["reaped_orphans"], reaped.len(), "{tree}");
    println!(
        "fault: tether SIGKILLed with {} children running ({}): {} reaped by the next run, 0 left (ps)",
        pids.len(),
        orphans
            .iter()
            .map(|(_, _, c)| c.split_whitespace().next().unwrap_or("?"))
            .collect::<Vec<_>>()
            .join(", "),
        reaped.len()
    );
}
