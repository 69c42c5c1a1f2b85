//! Fault injection against real programs: language servers SIGKILLed
//! mid-request, kernels killed three ways, runaway cells under a short
//! idle budget, `resolve` racing external writers, debug sessions losing
//! their adapter, their debuggee or their time-to-live, and a thousand
//! outside edits interleaved with queries.
//!
//! Every test prints one `fault:` line with its figure (for BENCHMARKS.md).
//! A missing program fails its test with the install command; none is
//! skipped. Orphans are counted by process identity (pid and start time,
//! so a recycled pid is never mistaken for a survivor) and by process
//! group; zombies count as gone — nothing reaps them in this sandbox.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::{Harness, Rng, real_python, require};
use serde_json::{Value, json};
use tether::{Resource, ToolResult};

const D: &str = "a cell for the fault injection tests";

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

fn sigkill(pid: u32) {
    assert!(pid > 1, "refusing to signal pid {pid}");
    // SAFETY: kill(2) on a pid this test read from the supervision tree.
    unsafe { kill(pid as i32, 9) };
}

// ---------------------------------------------------------------------------
// Processes: identity, liveness, process groups.

/// A process as identified by its pid and its start time (clock ticks
/// since boot), so that a recycled pid is not the same process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Proc {
    pid: u32,
    start: u64,
}

/// State letter, process group and start time of `pid`.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    // Fields after the command name start at field 3 (state); pgrp is
    // field 5, starttime field 22.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    Some((state, f.get(2)?.parse().ok()?, f.get(19)?.parse().ok()?))
}

/// The process now running as `pid`, if any (a zombie counts as gone).
fn track(pid: u32) -> Option<Proc> {
    let (state, _, start) = stat(pid)?;
    (!matches!(state, 'Z' | 'X')).then_some(Proc { pid, start })
}

/// Whether that very process still runs (not a zombie, not a recycled pid).
fn alive(p: Proc) -> bool {
    stat(p.pid).is_some_and(|(state, _, start)| start == p.start && !matches!(state, 'Z' | 'X'))
}

/// Live processes of the group `leader` led, started while it could have
/// started them (after the leader; before any new process took its pid).
fn group_survivors(leader: Proc) -> Vec<u32> {
    let reused_at = stat(leader.pid).map(|(_, _, start)| start).filter(|s| *s != leader.start);
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Some((state, pgrp, start)) = stat(pid) else { continue };
        if pgrp == leader.pid
            && !matches!(state, 'Z' | 'X')
            && start >= leader.start
            && reused_at.is_none_or(|r| start < r)
        {
            members.push(pid);
        }
    }
    members
}

/// The live members of process group `pgid` now.
fn group_now(pgid: u32) -> Vec<Proc> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Some((state, pgrp, start)) = stat(pid)
            && pgrp == pgid
            && !matches!(state, 'Z' | 'X')
        {
            members.push(Proc { pid, start });
        }
    }
    members
}

/// Every process (and group) a test saw, to be checked gone at the end.
#[derive(Default)]
struct Ledger {
    procs: BTreeMap<Proc, String>,
    groups: BTreeMap<Proc, String>,
}

impl Ledger {
    /// Records `leader`, the group it leads and every process in that group now.
    fn add_group(&mut self, leader: u32, what: &str) {
        if let Some(p) = track(leader) {
            self.procs.insert(p, what.to_string());
            self.groups.insert(p, what.to_string());
        }
        for p in group_now(leader) {
            self.procs.entry(p).or_insert_with(|| format!("a process in the group of {what}"));
        }
    }

    /// Waits for every tracked process to go, prints the test's figure
    /// (`figure` gets "N orphans of M processes tracked") and fails if any
    /// is left.
    fn finish(&self, figure: impl FnOnce(&str) -> String) {
        let orphans = self.orphans(Duration::from_secs(3));
        println!("{}", figure(&format!("{} orphans of {} processes tracked", orphans.len(), self.len())));
        assert!(orphans.is_empty(), "left behind: {orphans:?}");
    }

    /// Survivors after waiting up to `grace` for them to go.
    fn orphans(&self, grace: Duration) -> Vec<String> {
        let deadline = Instant::now() + grace;
        loop {
            let mut left: Vec<String> = self
                .procs
                .iter()
                .filter(|(p, _)| alive(**p))
                .map(|(p, what)| format!("{what} (pid {})", p.pid))
                .collect();
            for (leader, what) in &self.groups {
                for pid in group_survivors(*leader) {
                    left.push(format!("pid {pid} in the process group of {what} ({})", leader.pid));
                }
            }
            left.sort();
            left.dedup();
            if left.is_empty() || Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Takes over everything `other` recorded, its descriptions prefixed.
    fn absorb(&mut self, other: Ledger, prefix: &str) {
        for (p, what) in other.procs {
            self.procs.insert(p, format!("{prefix}{what}"));
        }
        for (p, what) in other.groups {
            self.groups.insert(p, format!("{prefix}{what}"));
        }
    }

    fn len(&self) -> usize {
        self.procs.len()
    }
}

// ---------------------------------------------------------------------------
// The supervision tree.

fn collect<'a>(node: &'a Value, kind: &str, out: &mut Vec<&'a Value>) {
    if node["kind"] == kind {
        out.push(node);
    }
    for child in node["children"].as_array().into_iter().flatten() {
        collect(child, kind, out);
    }
}

/// Every node of `kind`, anywhere in the tree.
async fn nodes(h: &Harness, kind: &str) -> Vec<Value> {
    let tree = h.rt.tree().await.json();
    let mut out = Vec::new();
    collect(&tree, kind, &mut out);
    out.into_iter().cloned().collect()
}

/// The first node of `kind` satisfying `pick`.
async fn node(h: &Harness, kind: &str, pick: impl Fn(&Value) -> bool) -> Option<Value> {
    nodes(h, kind).await.into_iter().find(|n| pick(n))
}

fn pid(node: &Value) -> Option<u32> {
    node["pid"].as_u64().map(|p| p as u32)
}

// ---------------------------------------------------------------------------
// Figures.

fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s.get(s.len() / 2).copied().unwrap_or_default()
}

fn max(v: &[Duration]) -> Duration {
    v.iter().copied().max().unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// A small deterministic PRNG (splitmix64).
/// The seed: `TETHER_FAULT_SEED` if set, else a fixed one.
fn seed() -> u64 {
    std::env::var("TETHER_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x7e7e_5eed)
}

// ---------------------------------------------------------------------------
// 1. Language servers SIGKILLed mid-request.

/// tether.toml serving Python with the fake server.
fn fake_toml() -> String {
    format!(
        "[[server]]\nid = \"fake\"\ncommand = {:?}\nargs = [\"fake_lsp.py\"]\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\n",
        real_python()
    )
}

/// The Python fixture project, plus the fake server if `fake`.
fn lsp_project(fake: bool) -> Harness {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp");
    let read = |p: &str| std::fs::read_to_string(fixtures.join(p)).unwrap();
    let mut files = vec![
        ("pyproject.toml", read("python/pyproject.toml")),
        ("app.py", read("python/app.py")),
        ("shapes.py", read("python/shapes.py")),
    ];
    if fake {
        files.push(("fake_lsp.py", read("fake_lsp.py")));
        files.push(("tether.toml", fake_toml()));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    Harness::with(&refs, |b| b.connect_all())
}

/// The running language server's node.
async fn lsp_server(h: &Harness) -> Option<Value> {
    node(h, "lsp-server", |n| pid(n).is_some()).await
}

/// What one kill mid-request measured.
struct KillRound {
    /// The server killed, as the tree showed it.
    server: u32,
    /// The server's process group just before the kill.
    ledger: Ledger,
    /// From the kill to the waiting call's error.
    errored_after: Duration,
    /// The call's error text.
    text: String,
}

/// Issues `request`, waits until the tree shows it in flight (sent to a
/// running server and unanswered), SIGKILLs that server and times the
/// call's error. `None` if the request was answered before the kill.
async fn kill_mid_request(h: &Harness, request: Value) -> Option<KillRound> {
    let answered = AtomicBool::new(false);
    let call = async {
        let r = h.call("lsp", request).await;
        answered.store(true, Ordering::SeqCst);
        (r, Instant::now())
    };
    let killer = async {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if answered.load(Ordering::SeqCst) {
                return None;
            }
            let busy = lsp_server(h).await.filter(|n| n["pending"].as_u64() >= Some(1));
            if let Some(server) = busy.as_ref().and_then(pid)
                && !answered.load(Ordering::SeqCst)
            {
                let mut ledger = Ledger::default();
                ledger.add_group(server, "the server killed mid-request");
                sigkill(server);
                return Some((server, ledger, Instant::now()));
            }
            assert!(Instant::now() < deadline, "the request never showed in flight");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let ((result, returned_at), killed) = tokio::join!(call, killer);
    let (server, ledger, killed_at) = killed?;
    if !result.is_error {
        // Answered between the tree's look and the kill.
        return None;
    }
    Some(KillRound {
        server,
        ledger,
        errored_after: returned_at.saturating_duration_since(killed_at),
        text: result.text,
    })
}

/// One round on the fake server: a fresh run, its first request killed
/// in flight, then the next call. Returns what it tracked and measured.
async fn fake_server_round(round: usize) -> (Ledger, Duration, Duration) {
    let definition = json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "unit"});
    let hover = json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"});
    let h = tokio::task::spawn_blocking(|| lsp_project(true)).await.unwrap();
    let mut ledger = Ledger::default();
    // The first call starts the server; the fake never answers it.
    let k = kill_mid_request(&h, definition)
        .await
        .expect("the fake server never answers definition, so the request is in flight");
    ledger.absorb(k.ledger, &format!("round {round}: "));
    let grandchild: u32 = h.read("fake_child.pid").trim().parse().unwrap();
    assert!(
        ledger.procs.keys().any(|p| p.pid == grandchild),
        "round {round}: the fake server's `sleep` was in its group when it was killed"
    );
    assert!(k.text.contains("killed by signal 9"), "round {round}: names the cause: {}", k.text);
    assert!(
        k.errored_after < Duration::from_secs(1),
        "round {round}: errored {:?} after the kill",
        k.errored_after
    );

    let t = Instant::now();
    let next = h.call("lsp", hover).await;
    let next_took = t.elapsed();
    assert!(!next.is_error && next.text == "fake hover", "round {round}: the next call: {}", next.text);
    let restarted = lsp_server(&h).await.expect("the restarted server");
    assert_eq!(restarted["restarts"], 1, "round {round}: {restarted}");
    let again = pid(&restarted).unwrap();
    assert_ne!(again, k.server);
    ledger.add_group(again, &format!("round {round}: the restarted fake server"));
    tokio::task::spawn_blocking(move || drop(h)).await.unwrap();
    (ledger, k.errored_after, next_took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lsp_server_sigkilled_mid_request_100_times() {
    let t_all = Instant::now();
    const ROUNDS: usize = 100;
    /// Rounds run in this many lanes at once (each round has its own run
    /// and server; most of a round is waiting).
    const LANES: usize = 2;
    let started = Instant::now();
    // A fresh run each round: a server killed again and again in one run is
    // restarted with a growing backoff (0.2 s doubling to 8 s), by design.
    let lanes = (0..LANES).map(|lane| {
        tokio::spawn(async move {
            let mut out = Vec::new();
            for round in (lane..ROUNDS).step_by(LANES) {
                out.push(fake_server_round(round).await);
            }
            out
        })
    });
    let mut ledger = Ledger::default();
    let (mut waits, mut nexts) = (Vec::new(), Vec::new());
    for lane in futures::future::join_all(lanes).await {
        for (l, wait, next) in lane.expect("a lane of rounds panicked") {
            ledger.absorb(l, "");
            waits.push(wait);
            nexts.push(next);
        }
    }
    assert_eq!(waits.len(), ROUNDS);
    ledger.finish(|tracked| {
        format!(
            "fault: lsp (fake server) SIGKILL mid-request x{ROUNDS}: {ROUNDS}/{ROUNDS} in-flight calls errored naming signal 9 (median {}, max {} after the kill), {ROUNDS}/{ROUNDS} next calls ok (median {}, max {}, incl. the 0.2 s restart backoff), {tracked}; {} per round ({LANES} lanes); {} in all",
            ms(median(&waits)),
            ms(max(&waits)),
            ms(median(&nexts)),
            ms(max(&nexts)),
            ms(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn answers_from_a_server_are_capped_and_say_so() {
    let h = lsp_project(true);
    let imps =
        h.ok("lsp", json!({"action": "implementation", "file": "app.py", "line": 3, "symbol": "unit"})).await;
    assert!(imps.text.starts_with("implementation of `unit` (5000):"), "{}", &imps.text[..80]);
    assert!(
        imps.text.ends_with("… 4800 more not listed (at most 200)"),
        "{}",
        imps.text.lines().last().unwrap()
    );
    assert_eq!(imps.data.unwrap()["locations"].as_array().unwrap().len(), 200);
    let hover =
        h.ok("lsp", json!({"action": "hover", "file": "app.py", "line": 4, "symbol": "total_area"})).await;
    assert!(hover.text.len() < 9_000, "{} characters", hover.text.len());
    assert!(
        hover.text.ends_with("12000 more characters of hover not shown"),
        "{}",
        &hover.text[hover.text.len() - 80..]
    );
}

#[tokio::test]
async fn pyright_sigkilled_mid_request() {
    let t_all = Instant::now();
    require("pyright", &["--version"], "npm install -g pyright");
    const ROUNDS: usize = 10;
    const PYRIGHT_FILES: usize = 300;
    // A warm pyright answers a definition in well under a millisecond, too
    // fast to catch; `references` over a few hundred files keeps it busy
    // long enough. A round where it answered first is retried and counted.
    let references = json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square"});
    let mut ledger = Ledger::default();
    let (mut waits, mut nexts, mut missed) = (Vec::new(), Vec::new(), 0);
    let started = Instant::now();
    let mut round = 0;
    while round < ROUNDS {
        let h = lsp_project(false);
        for i in 0..PYRIGHT_FILES {
            let module = format!(
                "from shapes import Square\n\n\ndef f{i}(n: float) -> float:\n    return Square(n).area()\n"
            );
            h.write(&format!("pkg{}/m{i}.py", i % 10), &module);
        }
        let Some(k) = kill_mid_request(&h, references.clone()).await else {
            missed += 1;
            assert!(missed < 3 * ROUNDS, "pyright answered before it could be killed {missed} times");
            if let Some(server) = lsp_server(&h).await.and_then(|n| pid(&n)) {
                ledger.add_group(server, &format!("pyright of a missed round {missed}"));
            }
            continue;
        };
        ledger.absorb(k.ledger, &format!("round {round}: "));
        assert!(k.text.contains("killed by signal 9"), "names the cause: {}", k.text);
        assert!(k.errored_after < Duration::from_secs(1), "errored {:?} after the kill", k.errored_after);
        waits.push(k.errored_after);
        let t = Instant::now();
        let refs = h.call("lsp", references.clone()).await;
        nexts.push(t.elapsed());
        let want = format!("{} references to `Square`", 2 * PYRIGHT_FILES + 4);
        assert!(!refs.is_error && refs.text.starts_with(&want), "the next call: {}", refs.text);
        let again = lsp_server(&h).await.and_then(|n| pid(&n)).expect("the restarted pyright");
        ledger.add_group(again, &format!("round {round}: the restarted pyright"));
        drop(h);
        round += 1;
    }
    ledger.finish(|tracked| {
        format!(
            "fault: lsp (pyright) SIGKILL mid-request x{ROUNDS}: {ROUNDS}/{ROUNDS} in-flight calls errored naming signal 9 (median {}, max {} after the kill; {missed} rounds answered before the kill and were retried), {ROUNDS}/{ROUNDS} next calls ok (median {}, max {}), {tracked}; {} per round; {} in all",
            ms(median(&waits)),
            ms(max(&waits)),
            secs(median(&nexts)),
            secs(max(&nexts)),
            secs(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

// ---------------------------------------------------------------------------
// 2. Kernels killed three ways.

async fn py(h: &Harness, code: &str) -> ToolResult {
    h.call("eval", json!({"code": code, "description": D})).await
}

/// The Python kernel's node.
async fn python_kernel(h: &Harness) -> Option<Value> {
    node(h, "kernel", |n| n["id"] == "python").await
}

/// How the kernel is made to die in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Death {
    /// SIGKILL from outside while a cell runs.
    KilledMidCell,
    /// SIGKILL from outside between cells.
    KilledIdle,
    /// `os._exit(3)` inside a cell.
    Exit3,
    /// A segmentation fault inside a cell.
    Segfault,
}

#[tokio::test]
async fn kernel_killed_50_times_three_causes() {
    let t_all = Instant::now();
    const ROUNDS: usize = 50;
    let h = Harness::new(&[]);
    let mut ledger = Ledger::default();
    let mut seen: BTreeMap<Death, usize> = BTreeMap::new();
    let (mut kill_waits, mut fresh_cells) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for round in 0..ROUNDS {
        // State to lose, on the kernel the tree shows.
        let r = py(&h, &format!("v{round} = {round}\nimport os\nos.getpid()")).await;
        assert!(!r.is_error, "round {round}: {}", r.text);
        let cell_pid: u32 = r.text.lines().next().unwrap().trim_start_matches("Out: ").parse().unwrap();
        let kernel = pid(&python_kernel(&h).await.expect("the python kernel")).expect("its pid");
        assert_eq!(kernel, cell_pid, "round {round}: the tree shows the interpreter's own pid");
        ledger.add_group(kernel, &format!("round {round}: the python kernel"));
        let old = track(kernel).unwrap();

        // SIGKILL from outside alternates between a running cell and an idle kernel.
        let death = match (round % 3, (round / 3) % 2) {
            (0, 0) => Death::KilledMidCell,
            (0, _) => Death::KilledIdle,
            (1, _) => Death::Exit3,
            _ => Death::Segfault,
        };
        *seen.entry(death).or_default() += 1;
        let (text, expect) = match death {
            Death::KilledMidCell => {
                let marker = format!("sleeping-{round}");
                let code = format!("import time\nopen({marker:?}, 'w').close()\ntime.sleep(60)");
                let cell = py(&h, &code);
                let killer = async {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    while !h.path(&marker).exists() {
                        assert!(Instant::now() < deadline, "round {round}: the cell never started");
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    sigkill(kernel);
                    Instant::now()
                };
                let timed = async {
                    let r = cell.await;
                    (r, Instant::now())
                };
                let ((r, returned_at), killed_at) = tokio::join!(timed, killer);
                kill_waits.push(returned_at.saturating_duration_since(killed_at));
                assert!(r.is_error, "round {round}: {}", r.text);
                assert_eq!(r.data.as_ref().unwrap()["status"], "died", "round {round}: {}", r.text);
                assert!(
                    r.text.contains("state is lost"),
                    "round {round}: says the state is lost: {}",
                    r.text
                );
                (r.text, "killed by signal 9")
            }
            Death::KilledIdle => {
                sigkill(kernel);
                let deadline = Instant::now() + Duration::from_secs(10);
                while alive(old) {
                    assert!(Instant::now() < deadline, "round {round}: the killed kernel is still running");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                // Time for the exit report (status and stderr) to arrive.
                tokio::time::sleep(Duration::from_millis(300)).await;
                (String::new(), "killed by signal 9")
            }
            Death::Exit3 | Death::Segfault => {
                let (code, expect) = if death == Death::Exit3 {
                    ("import os\nos._exit(3)", "exit status 3")
                } else {
                    ("import ctypes\nctypes.string_at(0)", "killed by signal 11")
                };
                let r = py(&h, code).await;
                assert!(r.is_error, "round {round}: {}", r.text);
                assert_eq!(r.data.as_ref().unwrap()["status"], "died", "round {round}: {}", r.text);
                assert!(
                    r.text.contains("state is lost"),
                    "round {round}: says the state is lost: {}",
                    r.text
                );
                (r.text, expect)
            }
        };

        // The next cell works, on a fresh kernel, and says the state went.
        let t = Instant::now();
        let next = py(&h, &format!("'v{round}' in globals()")).await;
        fresh_cells.push(t.elapsed());
        assert!(!next.is_error, "round {round} ({death:?}): the next cell failed: {}", next.text);
        assert!(
            next.text.starts_with("Out: False"),
            "round {round}: earlier variables are gone: {}",
            next.text
        );
        assert!(next.text.contains("earlier state was reset"), "round {round}: says so: {}", next.text);
        let report = if death == Death::KilledIdle { &next.text } else { &text };
        assert!(report.contains(expect), "round {round} ({death:?}): names the cause `{expect}`: {report}");
        assert!(!alive(old), "round {round}: the dead kernel {kernel} still runs");
    }
    let tree_kernel = python_kernel(&h).await.unwrap();
    assert_eq!(tree_kernel["restarts"], ROUNDS, "{tree_kernel}");
    drop(h);
    ledger.finish(|tracked| {
        format!(
            "fault: kernel killed x{ROUNDS} ({}): {ROUNDS}/{ROUNDS} deaths reported with their cause (signal 9 / exit status 3 / signal 11), {ROUNDS}/{ROUNDS} next cells ran on a fresh kernel saying earlier state was reset (median {}, max {}); SIGKILL mid-cell errored median {}, max {} after the kill; {tracked}; {} per round; {} in all",
            seen.iter().map(|(d, n)| format!("{d:?} {n}")).collect::<Vec<_>>().join(", "),
            ms(median(&fresh_cells)),
            ms(max(&fresh_cells)),
            ms(median(&kill_waits)),
            ms(max(&kill_waits)),
            ms(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

// ---------------------------------------------------------------------------
// 3. Runaway cells under a short idle budget.

#[tokio::test]
async fn runaway_cells_are_interrupted_and_keep_state_100_trials() {
    let t_all = Instant::now();
    const TRIALS: usize = 100;
    const BUDGET: Duration = Duration::from_millis(500);
    let h = Harness::with(&[], |b| b.connect_all().idle_budget(BUDGET));
    let (mut kept, mut busy_ok, mut sleep_ok) = (0, 0, 0);
    let mut took = Vec::new();
    let mut failures = Vec::new();
    let started = Instant::now();
    for k in 0..TRIALS {
        let set = py(&h, &format!("x = {k}")).await;
        assert!(!set.is_error, "trial {k}: {}", set.text);
        let busy = k % 2 == 0;
        let code = if busy { "while True:\n    pass" } else { "import time\ntime.sleep(1000)" };
        let t = Instant::now();
        let r = py(&h, code).await;
        took.push(t.elapsed());
        let interrupted = r.is_error
            && r.data.as_ref().is_some_and(|d| d["status"] == "interrupted")
            && r.text.contains("KeyboardInterrupt: interrupted")
            && r.text.contains("the kernel and its state are kept");
        let check = py(&h, "x").await;
        let state_kept = !check.is_error && check.text == format!("Out: {k}");
        if interrupted && state_kept {
            kept += 1;
            if busy { busy_ok += 1 } else { sleep_ok += 1 }
        } else {
            failures.push(format!("trial {k}: {} | then x: {}", r.text, check.text));
        }
    }
    println!(
        "fault: runaway cell under a {} ms idle budget x{TRIALS}: {kept}/{TRIALS} interrupted with state kept (busy loop {busy_ok}/{}, time.sleep {sleep_ok}/{}); the runaway cell returned after median {}, max {}; {} per trial; {} in all",
        BUDGET.as_millis(),
        TRIALS.div_ceil(2),
        TRIALS / 2,
        ms(median(&took)),
        ms(max(&took)),
        ms(started.elapsed() / TRIALS as u32),
        secs(t_all.elapsed()),
    );
    assert!(kept >= 95, "{kept}/{TRIALS} kept; failures: {failures:#?}");
    for f in &failures {
        println!("  {f}");
    }
}

// ---------------------------------------------------------------------------
// 4. `resolve` racing external writers.

/// What a file held after a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// The content staged as "before".
    Old,
    /// The staged rewrite.
    New,
    /// What the external writer wrote.
    External,
    /// The file is gone.
    Missing,
    /// Anything else: a partial or mixed write.
    Other,
}

/// One file's old content for a trial: some `old(…)` calls among other lines.
fn old_content(rng: &mut Rng, trial: usize, file: usize) -> String {
    let mut text = format!("# trial {trial} file {file}\n");
    for line in 0..2 + rng.below(40) {
        if rng.chance(40) {
            text.push_str(&format!("old({})\n", rng.below(1_000_000)));
        } else {
            text.push_str(&format!("y{line} = {}\n", rng.below(1_000_000)));
        }
    }
    text.push_str(&format!("old({file})\n"));
    text
}

/// What the external writer puts in a file: random length, up to 64 KiB.
fn external_content(rng: &mut Rng, trial: usize, file: usize) -> Vec<u8> {
    let mut text = format!("# written by someone else, trial {trial} file {file}\n");
    let len = rng.below(64 * 1024);
    while text.len() < len {
        text.push_str(&format!("z = {}\n", rng.next()));
    }
    text.into_bytes()
}

/// How the external writer writes one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteKind {
    /// open(O_TRUNC) + write, like `echo > file` or most scripts.
    InPlace,
    /// A temporary file renamed over it, like most editors.
    Rename,
}

fn external_write(path: &Path, bytes: &[u8], kind: WriteKind, tag: usize) {
    match kind {
        WriteKind::InPlace => std::fs::write(path, bytes).unwrap(),
        WriteKind::Rename => {
            let tmp = path.with_file_name(format!(".external-{tag}.tmp"));
            std::fs::write(&tmp, bytes).unwrap();
            std::fs::rename(&tmp, path).unwrap();
        }
    }
}

/// External writes a commit may lose in the whole race test. A writer
/// whose `open` looked the path up just before the commit swapped the file
/// out, and truncates and writes just after the commit compared what it
/// displaced, writes into an inode that is no longer at the path: no
/// check in user space closes that in-kernel window (seen once in 1,000
/// trials on a loaded CI machine, never on a quiet one). Partial, mixed
/// and missing files stay at zero.
const MAX_LOST_WRITES: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_races_external_writers_1000_trials() {
    let t_all = Instant::now();
    const TRIALS: usize = 1000;
    const FILES: usize = 5;
    const CALIBRATION: usize = 30;
    let seed = seed();
    let mut rng = Rng(seed);
    let h = Harness::with(&[], |b| b.connect(Resource::Parsers));
    let paths: Vec<String> = (0..FILES).map(|i| format!("src/f{i}.py")).collect();
    let stage = json!({"pattern": "old($A)", "rewrite": "new($A)", "path": "src", "language": "python"});

    // Lays out a trial's files and stages the rewrite; returns old forms, new forms and the id.
    let setup = |rng: &mut Rng, trial: usize| {
        let old: Vec<String> = (0..FILES).map(|i| old_content(rng, trial, i)).collect();
        for (p, c) in paths.iter().zip(&old) {
            h.write(p, c);
        }
        let new: Vec<String> = old.iter().map(|c| c.replace("old(", "new(")).collect();
        (old, new)
    };

    // Calibration: how long an uncontested resolve takes, to spread the writes over it.
    let mut uncontested = Vec::new();
    for trial in 0..CALIBRATION {
        let (_, new) = setup(&mut rng, trial);
        let staged = h.ok("ast_edit", stage.clone()).await;
        let id = staged.data.as_ref().unwrap()["staged"]["edit_id"].as_str().unwrap().to_string();
        let t = Instant::now();
        h.ok("resolve", json!({"edit_id": id, "action": "accept"})).await;
        uncontested.push(t.elapsed());
        for (p, c) in paths.iter().zip(&new) {
            assert_eq!(&h.read(p), c, "an uncontested resolve writes every file");
        }
    }
    let window = median(&uncontested) * 2;

    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut partial, mut lost, mut mixed, mut missing, mut spurious) = (0, 0, 0, 0, 0);
    let mut raced = 0;
    let mut problems = Vec::new();
    let mut losses = Vec::new();
    let started = Instant::now();
    for trial in CALIBRATION..CALIBRATION + TRIALS {
        let (old, new) = setup(&mut rng, trial);
        let staged = h.ok("ast_edit", stage.clone()).await;
        let data = &staged.data.as_ref().unwrap()["staged"];
        assert_eq!(data["files"].as_object().unwrap().len(), FILES, "{}", staged.text);
        let id = data["edit_id"].as_str().unwrap().to_string();

        // A random subset (sometimes empty), random contents and kinds, at a random moment.
        let mut plan = Vec::new();
        let count = rng.below(FILES + 1);
        let mut order: Vec<usize> = (0..FILES).collect();
        for i in (1..FILES).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for &i in &order[..count] {
            let kind = if rng.chance(50) { WriteKind::InPlace } else { WriteKind::Rename };
            plan.push((i, h.path(&paths[i]), external_content(&mut rng, trial, i), kind));
        }
        let delay = Duration::from_nanos(rng.below(window.as_nanos() as usize + 1) as u64);
        let written: BTreeMap<usize, Vec<u8>> = plan.iter().map(|(i, _, c, _)| (*i, c.clone())).collect();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            wait.recv().unwrap();
            let at = Instant::now() + delay;
            while Instant::now() < at {
                std::hint::spin_loop();
            }
            for (i, path, bytes, kind) in &plan {
                external_write(path, bytes, *kind, *i);
            }
        });
        go.send(()).unwrap();
        let r = h.call("resolve", json!({"edit_id": id, "action": "accept"})).await;
        writer.join().unwrap();

        let outcome = r.data.as_ref().and_then(|d| d["outcome"].as_str()).unwrap_or("no outcome").to_string();
        let held: Vec<Held> = (0..FILES)
            .map(|i| match std::fs::read(h.path(&paths[i])) {
                Err(_) => Held::Missing,
                Ok(b) if b == old[i].as_bytes() => Held::Old,
                Ok(b) if b == new[i].as_bytes() => Held::New,
                Ok(b) if written.get(&i) == Some(&b) => Held::External,
                Ok(_) => Held::Other,
            })
            .collect();
        let mut bad = Vec::new();
        for (i, held) in held.iter().enumerate() {
            let theirs = written.contains_key(&i);
            match (held, theirs, outcome.as_str()) {
                (Held::Missing, ..) => {
                    missing += 1;
                    bad.push(format!("{} is gone", paths[i]));
                }
                (Held::Other, ..) => {
                    partial += 1;
                    bad.push(format!("{} holds a partial or mixed write", paths[i]));
                }
                // Nothing the user wrote is lost — but see MAX_LOST_WRITES.
                (Held::External, true, _) => {}
                (_, true, _) => {
                    lost += 1;
                    losses.push(format!(
                        "trial {trial}: {}: the external write was lost (the file holds {held:?})",
                        paths[i]
                    ));
                }
                // The change is all or nothing.
                (Held::New, false, "accepted") | (Held::Old, false, "refused") => {}
                (_, false, _) => {
                    mixed += 1;
                    bad.push(format!("{} holds {held:?} after `{outcome}`", paths[i]));
                }
            }
        }
        if outcome == "refused" {
            let moved: Vec<&str> = r.data.as_ref().unwrap()["moved"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let named_ok = !moved.is_empty()
                && moved
                    .iter()
                    .all(|m| paths.iter().position(|p| p == m).is_some_and(|i| written.contains_key(&i)));
            if !named_ok {
                spurious += 1;
                bad.push(format!(
                    "refused naming {moved:?}, but the writer wrote {:?}",
                    written.keys().collect::<Vec<_>>()
                ));
            }
            assert!(r.text.contains("nothing was written"), "{}", r.text);
        }
        if outcome == "accepted" && held.contains(&Held::External) {
            raced += 1;
        }
        *outcomes
            .entry(match outcome.as_str() {
                "accepted" => "accepted",
                "refused" => "refused",
                _ => "other",
            })
            .or_default() += 1;
        if !bad.is_empty() {
            problems.push(format!(
                "trial {trial} (delay {delay:?}, outcome {outcome}: {}): {}",
                r.text.lines().next().unwrap_or(""),
                bad.join("; ")
            ));
        }
    }
    println!(
        "fault: resolve racing external writers x{TRIALS} (seed {seed}, {FILES} files, writes spread over {} = 2x the median uncontested resolve): {} accepted ({raced} of them with external writes kept on top of the new form), {} refused for drift, {} other; {partial} partial writes, {lost} external writes lost, {mixed} files left in the wrong form, {missing} files missing, {spurious} refusals naming a file nobody touched; {} per trial; {} in all",
        ms(window),
        outcomes.get("accepted").copied().unwrap_or(0),
        outcomes.get("refused").copied().unwrap_or(0),
        outcomes.get("other").copied().unwrap_or(0),
        ms(started.elapsed() / TRIALS as u32),
        secs(t_all.elapsed()),
    );
    for p in problems.iter().take(10) {
        println!("  {p}");
    }
    for l in &losses {
        println!("  {l}");
    }
    assert!(
        problems.is_empty(),
        "{} of {TRIALS} trials broke the contract (first ones above)",
        problems.len()
    );
    assert!(
        lost <= MAX_LOST_WRITES,
        "{lost} external writes lost in {TRIALS} trials (at most {MAX_LOST_WRITES})"
    );
    assert_eq!(outcomes.get("other"), None, "every resolve was accepted or refused");
}

// ---------------------------------------------------------------------------
// 5. Debug sessions losing their adapter, their program or their TTL.

fn debugpy() {
    require("python3", &["-c", "import debugpy"], "python3 -m pip install debugpy");
}

/// A program that sleeps 30 s on line 4, so a step over it stays in flight.
const SLOW_PROG: &str = "import os, time\n\ndef slow():\n    time.sleep(30)\n    return 1\n\nwith open('pid.txt', 'w') as f:\n    f.write(str(os.getpid()))\nx = slow()\nprint('after', x)\n";

/// The parent pid of `pid`.
fn ppid(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// Every live descendant of `root`.
fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        let children: Vec<u32> =
            all.iter().copied().filter(|p| ppid(*p) == Some(parent) && !found.contains(p)).collect();
        found.extend(children);
        i += 1;
    }
    found.remove(0);
    found
}

/// Launches `program` stopped at `line`; records the adapter, the debuggee
/// and everything they started. Returns (adapter, debuggee).
async fn launch_stopped(h: &Harness, program: &str, line: u32, ledger: &mut Ledger) -> (u32, u32) {
    h.ok("debug", json!({"op": "breakpoints", "file": program, "lines": [line]})).await;
    let launched = h.ok("debug", json!({"op": "launch", "program": program})).await.text;
    assert!(
        launched.starts_with(&format!("launched; stopped (breakpoint) at {program}:{line}")),
        "{launched}"
    );
    let session =
        node(h, "debug-session", |n| pid(n).is_some()).await.expect("a session with an adapter pid");
    let adapter = pid(&session).unwrap();
    let mut debuggees = Vec::new();
    collect(&session, "debuggee", &mut debuggees);
    let debuggee = pid(debuggees.first().expect("the tree shows the debuggee")).unwrap();
    ledger.add_group(adapter, "the debug adapter");
    for p in descendants(adapter) {
        ledger.add_group(p, &format!("a process under the adapter ({p})"));
    }
    ledger.add_group(debuggee, "the debuggee");
    (adapter, debuggee)
}

/// The tree's debug-session node, which must show no running session.
async fn no_session_in_tree(h: &Harness) -> Value {
    let session = node(h, "debug-session", |_| true).await.expect("the debug-session node");
    assert!(pid(&session).is_none(), "the tree still shows a session pid: {session}");
    let mut debuggees = Vec::new();
    collect(&session, "debuggee", &mut debuggees);
    assert!(debuggees.is_empty(), "the tree still shows a debuggee: {session}");
    session
}

#[tokio::test]
async fn debug_adapter_killed_mid_step() {
    let t_all = Instant::now();
    debugpy();
    const ROUNDS: usize = 5;
    let mut ledger = Ledger::default();
    let mut waits = Vec::new();
    let started = Instant::now();
    for round in 0..ROUNDS {
        let h = Harness::new(&[("requirements.txt", ""), ("prog.py", SLOW_PROG)]);
        let (adapter, debuggee) = launch_stopped(&h, "prog.py", 4, &mut ledger).await;
        assert_eq!(h.read("pid.txt"), debuggee.to_string(), "the tree shows the debuggee's own pid");
        // The step runs into a 30 s sleep: it is in flight when the adapter dies.
        let step = async {
            let r = h.call("debug", json!({"op": "step_over"})).await;
            (r, Instant::now())
        };
        let killer = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            sigkill(adapter);
            Instant::now()
        };
        let ((r, returned_at), killed_at) = tokio::join!(step, killer);
        waits.push(returned_at.saturating_duration_since(killed_at));
        assert!(r.is_error, "round {round}: {}", r.text);
        assert!(
            r.text.contains("the debug adapter went away") && r.text.contains("killed by signal 9"),
            "round {round}: the in-flight step names the cause: {}",
            r.text
        );
        // Cleaned up: no session in the tree, nothing left running.
        let session = no_session_in_tree(&h).await;
        let orphans = ledger.orphans(Duration::from_secs(3));
        assert!(orphans.is_empty(), "round {round}: left behind: {orphans:?}\n{session}");
        // The next op explains.
        let next = h.call("debug", json!({"op": "stack"})).await;
        assert!(
            next.is_error
                && next.text.contains("no debug session is running")
                && next.text.contains("killed by signal 9")
                && next.text.contains("launch"),
            "round {round}: {}",
            next.text
        );
        // And a new session starts.
        launch_stopped(&h, "prog.py", 4, &mut ledger).await;
        h.ok("debug", json!({"op": "terminate"})).await;
        drop(h);
    }
    ledger.finish(|tracked| {
        format!(
            "fault: debug adapter (debugpy) SIGKILL mid-step x{ROUNDS}: {ROUNDS}/{ROUNDS} in-flight steps errored naming signal 9 (median {}, max {} after the kill), {ROUNDS}/{ROUNDS} sessions cleaned up (no session pid in the tree), {ROUNDS}/{ROUNDS} next ops explained there is no session and how to start one, {ROUNDS}/{ROUNDS} relaunches ok; {tracked}; {} per round; {} in all",
            ms(median(&waits)),
            ms(max(&waits)),
            secs(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn debug_debuggee_exits_during_continue() {
    let t_all = Instant::now();
    debugpy();
    const ROUNDS: usize = 5;
    let prog = "import sys\nx = 1\nprint('bye')\nsys.exit(3)\n";
    let mut ledger = Ledger::default();
    let started = Instant::now();
    for round in 0..ROUNDS {
        let h = Harness::new(&[("requirements.txt", ""), ("prog.py", prog)]);
        launch_stopped(&h, "prog.py", 2, &mut ledger).await;
        let r = h.call("debug", json!({"op": "continue"})).await;
        assert!(!r.is_error && r.text == "the program exited with code 3", "round {round}: {}", r.text);
        assert_eq!(r.data.as_ref().unwrap()["exit_code"], 3);
        // What it printed can still be read.
        let output = h.ok("debug", json!({"op": "output"})).await.text;
        assert!(output.contains("bye"), "round {round}: {output}");
        // The next op that needs the program explains.
        let next = h.call("debug", json!({"op": "stack"})).await;
        assert!(
            next.is_error
                && next.text.contains("no debug session is running")
                && next.text.contains("the program exited with code 3")
                && next.text.contains("launch"),
            "round {round}: {}",
            next.text
        );
        no_session_in_tree(&h).await;
        let orphans = ledger.orphans(Duration::from_secs(3));
        assert!(orphans.is_empty(), "round {round}: left behind: {orphans:?}");
        // A new launch needs no terminate first.
        launch_stopped(&h, "prog.py", 2, &mut ledger).await;
        h.ok("debug", json!({"op": "terminate"})).await;
        drop(h);
    }
    ledger.finish(|tracked| {
        format!(
            "fault: debuggee exits during continue x{ROUNDS}: {ROUNDS}/{ROUNDS} continues said `the program exited with code 3`, {ROUNDS}/{ROUNDS} next ops explained (no session; the program exited with code 3; launch), {ROUNDS}/{ROUNDS} relaunches ok; {tracked}; {} per round; {} in all",
            secs(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn debug_session_ends_at_its_ttl() {
    let t_all = Instant::now();
    debugpy();
    // Long enough that a launch on a loaded machine (several seconds) is
    // still inside it when the test reads the session's pids.
    const TTL: Duration = Duration::from_secs(8);
    let h = Harness::with(&[("requirements.txt", ""), ("prog.py", SLOW_PROG)], |b| {
        b.connect_all().debug_ttl(TTL)
    });
    let mut ledger = Ledger::default();
    let launched_at = Instant::now();
    launch_stopped(&h, "prog.py", 4, &mut ledger).await;
    let ttl_left = node(&h, "debug-session", |_| true).await.unwrap()["ttl_left_ms"].as_u64().unwrap();
    assert!(ttl_left <= TTL.as_millis() as u64, "{ttl_left}");
    // Nothing touches the session: the TTL alone must end it.
    let deadline = launched_at + TTL + Duration::from_secs(15);
    let ended_after = loop {
        let session = node(&h, "debug-session", |_| true).await.unwrap();
        if pid(&session).is_none() {
            break launched_at.elapsed();
        }
        assert!(Instant::now() < deadline, "the session outlived its TTL: {session}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let session = no_session_in_tree(&h).await;
    assert!(session["last_error"].as_str().is_some_and(|e| e.contains("time-to-live")), "{session}");
    let orphans = ledger.orphans(Duration::from_secs(3));
    assert!(orphans.is_empty(), "left behind at expiry: {orphans:?}");
    let next = h.call("debug", json!({"op": "stack"})).await;
    assert!(
        next.is_error && next.text.contains("time-to-live") && next.text.contains("Launch again"),
        "{}",
        next.text
    );
    println!(
        "fault: debug session TTL {} s: ended {} after launch with nothing touching it (no session pid in the tree), {} orphans of {} processes tracked (the adapter, everything under it, the debuggee), next op explained the TTL ended it; {} in all",
        TTL.as_secs(),
        secs(ended_after),
        orphans.len(),
        ledger.len(),
        secs(t_all.elapsed()),
    );
}

// ---------------------------------------------------------------------------
// 6. Outside edits interleaved with queries: never a stale answer labelled fresh.

/// One caller file of the trial project, as the model knows it.
#[derive(Debug, Clone, Copy, Default)]
struct Caller {
    exists: bool,
    calls: usize,
    errors: usize,
}

impl Caller {
    fn text(&self, k: usize) -> String {
        let mut text = format!("from a import f\n\n\ndef use_{k}():\n    return 0\n");
        for _ in 0..self.calls {
            text.push_str("f()\n");
        }
        for e in 0..self.errors {
            text.push_str(&format!("bad_{e}: int = \"s\"\n"));
        }
        text
    }

    /// References to `f` in the file: the import and each call.
    fn references(&self) -> usize {
        if self.exists { self.calls + 1 } else { 0 }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_edits_interleaved_with_queries_are_never_stale_and_labelled_fresh() {
    require("pyright", &["--version"], "npm install -g pyright");
    const EDITS: usize = 1000;
    const FILES: usize = 8;
    let t_all = Instant::now();
    let seed = seed();
    let mut rng = Rng(seed);
    let h = Harness::new(&[("pyproject.toml", ""), ("a.py", "def f():\n    return 1\n")]);
    let mut model = [Caller::default(); FILES];
    let path = |k: usize| format!("m{k}.py");
    let refs = json!({"action": "references", "file": "a.py", "line": 1, "symbol": "f"});

    let (mut ref_answers, mut diag_answers, mut stale, mut pending, mut noted) = (0, 0, 0, 0, 0);
    let mut stale_labelled_fresh: Vec<String> = Vec::new();
    let mut latencies = Vec::new();
    for edit in 0..EDITS {
        // One outside edit: a rewrite (in place or by rename-over), a delete or a creation.
        let k = rng.below(FILES);
        let file = h.path(&path(k));
        if model[k].exists && rng.one_in(6) {
            std::fs::remove_file(&file).unwrap();
            model[k] = Caller::default();
        } else {
            model[k] = Caller { exists: true, calls: rng.below(4), errors: rng.below(3) };
            let kind = if rng.chance(50) { WriteKind::InPlace } else { WriteKind::Rename };
            external_write(&file, model[k].text(k).as_bytes(), kind, edit);
        }
        // A query after about half the edits, so bursts of edits happen too.
        if !rng.chance(50) {
            continue;
        }
        let t = Instant::now();
        let existing: Vec<usize> = (0..FILES).filter(|i| model[*i].exists).collect();
        if existing.is_empty() || rng.chance(65) {
            let r = h.ok("lsp", refs.clone()).await;
            latencies.push(t.elapsed());
            ref_answers += 1;
            let expected = 1 + model.iter().map(Caller::references).sum::<usize>();
            let total = r.data.as_ref().unwrap()["total"].as_u64().unwrap() as usize;
            let labelled = r.text.contains("\nnote: ");
            if labelled {
                noted += 1;
            }
            if total != expected {
                stale += 1;
                if !labelled {
                    stale_labelled_fresh
                        .push(format!("edit {edit}: references {total}, expected {expected}"));
                }
            }
        } else {
            let k = *rng.pick(&existing);
            let r = h.ok("lsp", json!({"action": "diagnostics", "file": path(k)})).await;
            latencies.push(t.elapsed());
            diag_answers += 1;
            let data = r.data.unwrap();
            let errors: Vec<u64> = data["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["severity"] == 1)
                .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
                .collect();
            let first_error_line = 5 + model[k].calls as u64;
            let expected: Vec<u64> = (0..model[k].errors as u64).map(|e| first_error_line + e).collect();
            match data["freshness"].as_str() {
                Some("fresh") if errors != expected => {
                    stale += 1;
                    stale_labelled_fresh.push(format!(
                        "edit {edit}: {} errors at {errors:?}, expected {expected:?}",
                        path(k)
                    ));
                }
                Some("fresh") => {}
                Some("pending") => pending += 1,
                _ => stale += 1,
            }
        }
    }
    println!(
        "fault: outside edits x{EDITS} (in place, rename-over, delete, create; {FILES} files, pyright) interleaved with {} queries ({ref_answers} references, {diag_answers} diagnostics): {stale} stale, {pending} pending, {noted} with a note (still indexing, or re-reading), {} stale labelled fresh; query after an edit median {}, max {}; {} in all (seed {seed:#x})",
        ref_answers + diag_answers,
        stale_labelled_fresh.len(),
        ms(median(&latencies)),
        ms(max(&latencies)),
        secs(t_all.elapsed()),
    );
    assert!(stale_labelled_fresh.is_empty(), "stale answers labelled fresh: {stale_labelled_fresh:#?}");
}
