//! 10,000 concurrent mixed calls — searches, stagings, resolves, reads —
//! through one runtime: every call answers, none deadlocks, resolves never
//! run beside each other, and no file is ever left half-rewritten.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{Harness, positions};
use serde_json::json;
use tether::{Level, ToolError, ToolFuture, ToolHandler, ToolResult, ToolSpec};

const CALLS: usize = 10_000;
const FILES: usize = 12;

fn old_form(i: usize) -> String {
    format!("def f{i}():\n    old({i})\n    old({i}, {i})\n")
}

fn new_form(i: usize) -> String {
    old_form(i).replace("old(", "new(")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_mixed_calls() {
    let files: Vec<(String, String)> = (0..FILES).map(|i| (format!("src/m{i}.py"), old_form(i))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let h = Harness::new(&refs);

    let mut calls = Vec::with_capacity(CALLS);
    let mut stages = 0usize;
    for n in 0..CALLS {
        let file = format!("src/m{}.py", n % FILES);
        let call = match n % 10 {
            0..=3 => {
                ("ast_grep", json!({"pattern": "old($$$A)", "path": if n % 2 == 0 { "src" } else { &file }}))
            }
            4 => ("ast_grep", json!({"pattern": "new($A, $A)"})),
            5 | 6 => {
                stages += 1;
                let (from, to) =
                    if n % 4 == 1 { ("old($$$A)", "new($$$A)") } else { ("new($$$A)", "old($$$A)") };
                let path = if n % 3 == 0 { "src".to_string() } else { file };
                ("ast_edit", json!({"pattern": from, "rewrite": to, "path": path}))
            }
            7 | 8 => {
                let action = if n.is_multiple_of(3) { "discard" } else { "accept" };
                (
                    "resolve",
                    json!({"edit_id": format!("edit_{}", 1 + n * stages.max(1) / CALLS), "action": action}),
                )
            }
            _ => ("read", json!({"path": file})),
        };
        calls.push((call.0.to_string(), call.1));
    }

    let results = h.fan_out(calls.clone()).await;
    assert_eq!(results.len(), CALLS);

    let expected_errors = [
        "refused edit_",            // drift: the files moved since staging
        "already resolved",         // a second resolve of the same id
        "no staged edit is called", // resolving an id not staged yet
    ];
    let mut by_tool = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    for ((tool, args), result) in calls.iter().zip(&results) {
        let entry = by_tool.entry(tool.as_str()).or_default();
        if result.is_error {
            entry.1 += 1;
            assert!(
                tool == "resolve" && expected_errors.iter().any(|e| result.text.contains(e)),
                "unexpected error from {tool} {args}: {}",
                result.text
            );
        } else {
            entry.0 += 1;
        }
    }
    let (accepted_ok, _) = by_tool["resolve"];
    assert!(by_tool["ast_grep"].0 == 5_000, "every search answered: {by_tool:?}");
    assert!(by_tool["ast_edit"].0 == 2_000, "every staging answered: {by_tool:?}");
    assert!(accepted_ok > 0, "some resolves went through: {by_tool:?}");

    let tree = h.rt.tree().await.json();
    let ast = &tree["children"][1];
    assert_eq!(ast["kind"], "ast");
    assert_eq!(ast["detail"]["max_concurrent_resolves"], 1, "resolves never interleave: {ast}");
    assert_eq!(ast["pending"], 0, "nothing is left in flight: {ast}");
    assert_eq!(tree["children"][0]["pending"], 0, "the serial lane drained");

    for i in 0..FILES {
        let text = h.read(&format!("src/m{i}.py"));
        assert!(
            text == old_form(i) || text == new_form(i),
            "src/m{i}.py is in neither form (a partial or interleaved write):\n{text}"
        );
    }
}

// ---------------------------------------------------------------------
// Many conversations, every resource kind.

/// Concurrent callers; caller `i` works in conversation `c{i % CONVERSATIONS}`.
const CALLERS: usize = 50;
/// Conversations, each with its own kernel and debug session.
const CONVERSATIONS: usize = 10;
/// Calls per caller per phase; two phases (the RSS is compared between them).
const PER_PHASE: usize = 100;

const DEBUGGEE: &str = "def add(a, b):\n    total = a + b\n    return total\n\nadd(2, 3)\n";
const STABLE: &str = "stable(1)\nstable(2)\nother(3)\n";

/// The serial-lane probe: a write-level host tool that is not parallel
/// safe, recording when each call starts and ends so overlaps show.
struct Probe {
    intervals: Arc<parking_lot::Mutex<Vec<(Instant, Instant)>>>,
}

impl ToolHandler for Probe {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "probe".into(),
            level: Level::Write,
            parallel_safe: false,
            description: "records its start and end".into(),
            input_schema: json!({"type": "object"}),
            ..ToolSpec::default()
        }
    }

    fn call(&self, _ctx: &tether::CallContext, _args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let intervals = self.intervals.clone();
        Ok(Box::pin(async move {
            let start = Instant::now();
            tokio::time::sleep(Duration::from_micros(200)).await;
            intervals.lock().push((start, Instant::now()));
            ToolResult::text("probed")
        }))
    }
}

/// The resident set size of this process (the runtime's actors live here;
/// servers, kernels and adapters are children and not counted; the test
/// runs [`common::alone`]), in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// What one caller checks of its own calls.
#[derive(Default)]
struct Tally {
    calls: usize,
    evals: usize,
    /// Calls that went through the run's serial lane (write, probe, resolve).
    lane: usize,
    /// Calls and the time they took, by tool.
    by_tool: BTreeMap<&'static str, (usize, Duration)>,
    longest: Duration,
}

/// Each conversation's cells as (start, end) on the interpreters' clock
/// (CLOCK_MONOTONIC, one clock for every process on the machine).
type Cells = Arc<parking_lot::Mutex<BTreeMap<String, Vec<(u64, u64)>>>>;

/// One caller's calls for `phase`: a fixed mix over every resource kind,
/// each result checked for being the right answer, not just an answer.
async fn caller(h: Arc<Harness>, me: usize, phase: usize, evals_before: usize, cells: Cells) -> Tally {
    let conversation = format!("c{}", me % CONVERSATIONS);
    let mut tally = Tally { evals: evals_before, ..Tally::default() };
    let mut staged: Option<String> = None;
    for k in 0..PER_PHASE {
        let n = phase * PER_PHASE + k;
        let (tool, args): (&'static str, serde_json::Value) = match n % 20 {
            0..=2 => ("ast_grep", json!({"pattern": "stable($A)", "path": "lib"})),
            3 | 4 => ("lsp", json!({"action": "definition", "file": "app.py", "line": 5, "symbol": "area"})),
            5..=8 => (
                "eval",
                json!({"description": "count the cells this caller has run", "code": format!(
                    "import time\nt0 = time.monotonic_ns()\ncounts = globals().setdefault('counts', {{}})\ncounts[{me}] = counts.get({me}, 0) + 1\nsum(range(3000))\n(t0, time.monotonic_ns(), counts[{me}])"
                )}),
            ),
            9 => ("debug", json!({"op": "evaluate", "expression": "a + b"})),
            10 => ("debug", json!({"op": if n % 40 < 20 { "stack" } else { "threads" }})),
            11 | 12 => match staged.take() {
                Some(id) => (
                    "resolve",
                    json!({"edit_id": id, "action": if n.is_multiple_of(3) { "discard" } else { "accept" }}),
                ),
                None => {
                    let (from, to) =
                        if n % 4 < 2 { ("old($$$A)", "new($$$A)") } else { ("new($$$A)", "old($$$A)") };
                    (
                        "ast_edit",
                        json!({"pattern": from, "rewrite": to, "path": format!("src/m{}.py", me % FILES)}),
                    )
                }
            },
            13 | 14 => ("read", json!({"path": "lib/stable.py"})),
            15 => ("write", json!({"path": format!("out/{me}.txt"), "content": format!("{me}:{n}")})),
            16 | 17 => ("probe", json!({})),
            _ => ("lsp", json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"})),
        };
        let started = Instant::now();
        let result =
            tokio::time::timeout(common::call_bound(tool), h.rt.call_in(&conversation, tool, args.clone()))
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "caller {me}: `{tool}` {args} did not answer within {:?}",
                        common::call_bound(tool)
                    )
                });
        let took = started.elapsed();
        tally.longest = tally.longest.max(took);
        tally.calls += 1;
        let entry = tally.by_tool.entry(tool).or_default();
        entry.0 += 1;
        entry.1 += took;
        let text = &result.text;
        match tool {
            "ast_grep" => assert_eq!(positions(&result).len(), 2, "caller {me}: {text}"),
            "lsp" if args["action"] == "definition" => {
                assert!(text.contains("shapes.py:12:9"), "caller {me}: {text}")
            }
            "lsp" => assert!(!result.is_error && text.contains("Square"), "caller {me}: {text}"),
            "eval" => {
                tally.evals += 1;
                let out = text.lines().next().unwrap_or_default();
                let fields: Vec<u64> = out
                    .trim_start_matches("Out: (")
                    .trim_end_matches(')')
                    .split(", ")
                    .map(|f| f.parse().unwrap_or_else(|_| panic!("caller {me}: {text}")))
                    .collect();
                assert_eq!(
                    fields[2] as usize, tally.evals,
                    "caller {me}'s state kept in {conversation}: {text}"
                );
                cells.lock().entry(conversation.clone()).or_default().push((fields[0], fields[1]));
            }
            "debug" if args["op"] == "evaluate" => {
                assert_eq!(common::answer_only(text), "a + b = 5 (int)", "caller {me}")
            }
            "debug" => {
                assert!(!result.is_error && (text.contains("add") || text.contains("MainThread")), "{text}")
            }
            "ast_edit" => {
                if let Some(at) = text.find("edit_id \"") {
                    let id: String = text[at + 9..].chars().take_while(|c| *c != '"').collect();
                    staged = Some(id);
                } else {
                    assert!(text.contains("no match"), "caller {me}: {text}");
                }
            }
            "resolve" => {
                assert!(
                    !result.is_error || text.contains("refused edit_") || text.contains("already resolved"),
                    "caller {me}: {text}"
                );
                tally.lane += 1;
            }
            "read" => assert!(text.contains("stable(1)") && text.contains("other(3)"), "caller {me}: {text}"),
            "write" | "probe" => {
                assert!(!result.is_error, "caller {me}: {text}");
                tally.lane += 1;
            }
            _ => unreachable!(),
        }
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_callers_in_ten_conversations_over_every_resource() {
    // The RSS compared is this process's: other tests must not run in it.
    if !common::alone("faults::stress::fifty_callers_in_ten_conversations_over_every_resource") {
        return;
    }
    let mut files: Vec<(String, String)> =
        (0..FILES).map(|i| (format!("src/m{i}.py"), old_form(i))).collect();
    files.push(("lib/stable.py".into(), STABLE.into()));
    files.push(("prog.py".into(), DEBUGGEE.into()));
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let intervals = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let probe = Arc::new(Probe { intervals: intervals.clone() });
    let h = Harness::with(&refs, |b| b.connect_all().tool(probe));
    common::copy_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/python"),
        &h.root(),
    );

    // Every conversation gets a debug session stopped in `add`.
    let launches = (0..CONVERSATIONS).map(|c| {
        let h = &h;
        async move {
            let c = format!("c{c}");
            let r =
                h.rt.call_in(&c, "debug", json!({"op": "breakpoints", "file": "prog.py", "lines": [2]}))
                    .await;
            assert!(!r.is_error, "{}", r.text);
            let r = h.rt.call_in(&c, "debug", json!({"op": "launch", "program": "prog.py"})).await;
            assert!(r.text.contains("stopped (breakpoint) at prog.py:2 in add"), "{c}: {}", r.text);
        }
    });
    futures::future::join_all(launches).await;

    let h = Arc::new(h);
    let mut evals = vec![0usize; CALLERS];
    let cells: Cells = Arc::default();
    let mut rss = Vec::new();
    let mut totals = Tally::default();
    let started = Instant::now();
    for phase in 0..2 {
        let tasks: Vec<_> = (0..CALLERS)
            .map(|me| tokio::spawn(caller(h.clone(), me, phase, evals[me], cells.clone())))
            .collect();
        let tallies = tokio::time::timeout(common::FANOUT_TIMEOUT, futures::future::join_all(tasks))
            .await
            .expect("no deadlock: every caller finished");
        for (me, t) in tallies.into_iter().enumerate() {
            let t = t.expect("the caller did not panic");
            evals[me] = t.evals;
            totals.calls += t.calls;
            totals.lane += t.lane;
            totals.longest = totals.longest.max(t.longest);
            for (tool, (n, took)) in t.by_tool {
                let entry = totals.by_tool.entry(tool).or_default();
                entry.0 += n;
                entry.1 += took;
            }
        }
        rss.push(rss_kib());
    }
    let elapsed = started.elapsed();
    assert_eq!(totals.calls, 2 * CALLERS * PER_PHASE);
    assert!(totals.calls >= 10_000);

    // The serial lane never ran two calls at once.
    let mut lane = intervals.lock().clone();
    lane.sort();
    for pair in lane.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "two serial-lane calls overlapped: {pair:?}");
    }

    // No two cells of one conversation ran at once; cells of different
    // conversations did (they have a kernel each).
    let mut across = 0;
    let mut all: Vec<(u64, u64)> = Vec::new();
    for (conversation, spans) in cells.lock().iter_mut() {
        spans.sort();
        for pair in spans.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "two cells of {conversation} overlapped: {pair:?}");
        }
        all.extend(spans.iter().copied());
    }
    all.sort();
    for pair in all.windows(2) {
        across += usize::from(pair[0].1 > pair[1].0);
    }

    // The tree's counters add up.
    let tree = h.rt.tree().await;
    let json = tree.json();
    assert_eq!(json["detail"]["calls"], totals.calls + 2 * CONVERSATIONS, "{}", tree.text());
    assert_eq!(json["children"][0]["detail"]["completed"], totals.lane as u64, "{}", tree.text());
    let nodes = tree.root.walk();
    assert!(nodes.iter().all(|n| n.total_pending() == 0), "nothing in flight:\n{}", tree.text());
    let kernels: Vec<_> = nodes.iter().filter(|n| n.kind == "kernel").collect();
    assert_eq!(kernels.len(), CONVERSATIONS, "one kernel per conversation:\n{}", tree.text());
    let cells: u64 = kernels.iter().map(|k| k.detail["cells"].as_u64().unwrap()).sum();
    assert_eq!(cells as usize, evals.iter().sum::<usize>(), "every cell counted once");
    assert!(kernels.iter().all(|k| k.restarts == Some(0) && k.last_error.is_none()), "{}", tree.text());
    let sessions = nodes.iter().filter(|n| n.kind == "debug-session" && n.pid.is_some()).count();
    assert_eq!(sessions, CONVERSATIONS, "one live debug session per conversation:\n{}", tree.text());
    let owners: std::collections::BTreeSet<_> = kernels.iter().map(|k| k.owner.clone().unwrap()).collect();
    assert_eq!(owners.len(), CONVERSATIONS);

    // Memory is flat: the second phase did the same work as the first.
    let growth = rss[1] as i64 - rss[0] as i64;
    assert!(growth < 16 * 1024, "RSS grew by {growth} KiB between equal phases: {rss:?}");
    for i in 0..FILES {
        let text = h.read(&format!("src/m{i}.py"));
        assert!(text == old_form(i) || text == new_form(i), "src/m{i}.py is half-rewritten:\n{text}");
    }
    println!(
        "stress: {} calls from {CALLERS} callers in {CONVERSATIONS} conversations in {:.1} s ({:.0} calls/s); longest call {:.2} s; by tool (calls, mean ms as the caller waited) {}; 0 overlaps within a conversation, {across} cells overlapped one of another conversation; RSS after phase 1 {} KiB, after phase 2 {} KiB ({:+} KiB)",
        totals.calls,
        elapsed.as_secs_f64(),
        totals.calls as f64 / elapsed.as_secs_f64(),
        totals.longest.as_secs_f64(),
        totals
            .by_tool
            .iter()
            .map(|(tool, (n, took))| format!("{tool} {n} {:.1}", took.as_secs_f64() * 1000.0 / *n as f64))
            .collect::<Vec<_>>()
            .join(", "),
        rss[0],
        rss[1],
        growth
    );
}

/// A `/proc/<pid>/status` memory figure of `pid` (`VmRSS`, `RssAnon`,
/// `RssFile`), in KiB.
fn mem_of(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Idle runtime ≤ 15 MB; 1,000 idle conversations (each with its kernel
/// pool and debug session actors started) ≤ +50 MB. Measured on the
/// `tether` process itself: its children (none here) are not counted.
/// The idle figure is the memory the runtime allocated (`RssAnon`): the
/// test binary is an unoptimised build whose mapped code alone is over
/// 20 MB (`RssFile`); the release binary's whole RSS is in BENCHMARKS.md.
#[test]
fn a_thousand_idle_conversations_fit_in_fifty_megabytes() {
    const IDLE: usize = 1_000;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    let mut tether = common::Batch::start(dir.path(), &["--questions", "none"]);
    let pid = tether.pid();
    let mut ask = |line: serde_json::Value| tether.ask(line);
    // Warm: one search (grammars loaded) and one conversation's debug status.
    assert_eq!(ask(json!({"tool": "ast_grep", "args": {"pattern": "x = $A"}}))["is_error"], false);
    assert_eq!(ask(json!({"tool": "debug", "args": {"op": "status"}}))["is_error"], false);
    let idle = mem_of(pid, "VmRSS");
    let (idle_anon, idle_file) = (mem_of(pid, "RssAnon"), mem_of(pid, "RssFile"));
    for c in 0..IDLE {
        let r = ask(
            json!({"tool": "debug", "args": {"op": "status"}, "conversation": format!("conversation-{c}")}),
        );
        assert_eq!(r["is_error"], false, "{r}");
    }
    let tree = ask(json!({"op": "tree"}));
    let full = mem_of(pid, "VmRSS");
    let conversations = tree["data"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "conversation" && c["children"].as_array().is_some_and(|a| a.len() == 2))
        .count();
    assert_eq!(conversations, IDLE + 1, "each conversation has its kernel pool and debug session");
    assert!(tether.close().success());
    let per = (full.saturating_sub(idle)) as f64 / IDLE as f64;
    println!(
        "memory: idle runtime {:.1} MB RSS ({:.1} MB allocated, {:.1} MB mapped files); with {IDLE} idle conversations {:.1} MB (+{:.1} MB, {per:.1} KiB each)",
        idle as f64 / 1024.0,
        idle_anon as f64 / 1024.0,
        idle_file as f64 / 1024.0,
        full as f64 / 1024.0,
        (full - idle) as f64 / 1024.0
    );
    assert!(idle_anon <= 15 * 1024, "idle runtime allocated {idle_anon} KiB, target ≤ 15 MB");
    assert!(full - idle <= 50 * 1024, "{IDLE} idle conversations added {} KiB, target ≤ 50 MB", full - idle);
}
