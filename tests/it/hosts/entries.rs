//! The read-only surface (S2) through every entry — the Rust API's call
//! paths, `tether call` and `tether batch`, `tether serve` over MCP — never
//! reaches a write- or exec-level tool, and a denying approval holds through
//! the eval bridge. Every attempt uses arguments that are valid for the full
//! surface, so the refusal is the surface's (or the policy's), not the
//! parser's; each entry counts its attempts and prints the figure
//! (`--nocapture`).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::common::Harness;
use serde_json::{Value, json};
use tether::router::Call;
use tether::{
    ApprovalPolicy, CallContext, Level, Surface, ToolError, ToolFuture, ToolHandler, ToolResult, ToolSpec,
};
use tether_actors::question::port::ChannelPort;
use tether_actors::question::{ALLOW, CardKind, DENY};
use tether_actors::workers::Tier;
use tether_actors::workers::command::CommandBackend;

/// Attempts per write/exec tool through the Rust API: 15 through each of
/// its seven entry points.
const RUST_ATTEMPTS: usize = 105;
/// Attempts per write/exec tool through `tether batch`.
const BATCH_ATTEMPTS: usize = 100;

const FILES: &[(&str, &str)] =
    &[("a.py", "old(1)\n"), ("sub/b.py", "old(2)\n"), ("prog.py", "print('hi')\n")];

/// Arguments that are valid for `tool` on the full surface (the `i`th of
/// a varied set); `None` for a tool this test does not know yet.
fn valid_args(tool: &str, i: usize) -> Option<Value> {
    Some(match tool {
        "write" => json!({"path": format!("made/w{i}.txt"), "content": format!("pwned {i}")}),
        "edit" => json!({"path": "a.py", "old_string": "old", "new_string": format!("pwned{i}")}),
        "apply_patch" if i.is_multiple_of(2) => {
            json!({"patch": format!("--- /dev/null\n+++ b/made/p{i}.txt\n@@ -0,0 +1 @@\n+pwned\n")})
        }
        "apply_patch" => json!({"patch": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old(1)\n+pwned(1)\n"}),
        "ast_edit" => json!({"pattern": "old($A)", "rewrite": format!("pwned{i}($A)")}),
        "resolve" => {
            json!({"edit_id": "edit_1", "action": if i.is_multiple_of(2) { "accept" } else { "discard" }})
        }
        "lsp_rename" => json!({"file": "a.py", "line": 1, "symbol": "old", "new_name": format!("pwned{i}")}),
        "lsp_edit" => json!({"action": "format", "file": "a.py"}),
        "eval" => json!({
            "code": format!("open('pwned_{i}.txt', 'w').write('x')"),
            "description": "write a file from inside a cell",
            "language": if i.is_multiple_of(3) { "javascript" } else { "python" },
        }),
        "debug" => match i % 8 {
            0 => json!({"op": "launch", "program": "prog.py"}),
            1 => json!({"op": "breakpoints", "file": "prog.py", "lines": [1]}),
            2 => json!({"op": "attach", "port": 5678}),
            3 => json!({"op": "status"}),
            4 => json!({"op": "adapters"}),
            5 => json!({"op": "continue"}),
            6 => json!({"op": "evaluate", "expression": "1 + 1"}),
            _ => json!({"op": "terminate"}),
        },
        "host_write" | "host_exec" => json!({"x": format!("{i}")}),
        _ => return None,
    })
}

/// A host tool that counts how often the router reached it.
struct Counting {
    name: &'static str,
    level: Level,
    started: Arc<AtomicUsize>,
    ran: Arc<AtomicUsize>,
}

impl ToolHandler for Counting {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            level: self.level,
            parallel_safe: true,
            description: "counts the calls that reach it".into(),
            input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            ..ToolSpec::default()
        }
    }

    fn call(&self, _: &CallContext, _: Value) -> Result<ToolFuture, ToolError> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let ran = self.ran.clone();
        Ok(Box::pin(async move {
            ran.fetch_add(1, Ordering::SeqCst);
            ToolResult::text("ran")
        }))
    }
}

/// Every file under `root`: relative path → bytes.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Every node of the tree that shows a process id: `(kind, id, pid)`.
fn pids(tree: &Value) -> Vec<(String, String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![tree];
    while let Some(node) = stack.pop() {
        if let Some(pid) = node["pid"].as_u64() {
            out.push((node["kind"].to_string(), node["id"].to_string(), pid));
        }
        stack.extend(node["children"].as_array().into_iter().flatten());
    }
    out
}

/// The first node of `kind` in the tree.
fn node<'a>(tree: &'a Value, kind: &str) -> Option<&'a Value> {
    let mut stack = vec![tree];
    while let Some(node) = stack.pop() {
        if node["kind"] == kind {
            return Some(node);
        }
        stack.extend(node["children"].as_array().into_iter().flatten());
    }
    None
}

fn refused_by_surface(text: &str, tool: &str) -> bool {
    text.contains(&format!("`{tool}` is a")) && text.contains("read-only surface")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_api_every_entry_point_refuses_write_and_exec_tools_on_the_read_only_surface() {
    let (port, _cards) = ChannelPort::new();
    let backend = CommandBackend::with_commands(
        &std::env::temp_dir(),
        BTreeMap::from([(Tier::Fast, vec!["true".to_string()])]),
    );
    let counters: Vec<(Arc<AtomicUsize>, Arc<AtomicUsize>)> =
        (0..2).map(|_| (Arc::default(), Arc::default())).collect();
    let (write_counter, exec_counter) = (counters[0].clone(), counters[1].clone());
    let h = Harness::with(FILES, |b| {
        b.connect_all()
            .surface(Surface::ReadOnly)
            .questions(Arc::new(port), "test")
            .vibe(Arc::new(backend))
            .tool(Arc::new(Counting {
                name: "host_write",
                level: Level::Write,
                started: write_counter.0,
                ran: write_counter.1,
            }))
            .tool(Arc::new(Counting {
                name: "host_exec",
                level: Level::Exec,
                started: exec_counter.0,
                ran: exec_counter.1,
            }))
    });
    let rt = &h.rt;
    assert_eq!(rt.surface(), Surface::ReadOnly, "the run's default surface");
    // A staged rewrite the read-only side must not be able to accept.
    let staged =
        h.call_from(Surface::Full, "ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    assert!(!staged.is_error && staged.text.contains("edit_1"), "{}", staged.text);

    let read_only: Vec<String> = rt.tools(Surface::ReadOnly).into_iter().map(|s| s.name).collect();
    let writers: Vec<ToolSpec> =
        rt.tools(Surface::Full).into_iter().filter(|s| s.level != Level::Read).collect();
    for spec in rt.tools(Surface::ReadOnly) {
        assert_eq!(spec.level, Level::Read, "{} is on the read-only surface", spec.name);
    }
    for spec in &writers {
        assert!(!read_only.contains(&spec.name), "{} is absent from the read-only surface", spec.name);
    }
    let names: Vec<&str> = writers.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "apply_patch",
        "ast_edit",
        "debug",
        "edit",
        "eval",
        "host_exec",
        "host_write",
        "lsp_edit",
        "lsp_rename",
        "resolve",
        "write",
    ] {
        assert!(names.contains(&expected), "{expected} is a registered write/exec tool: {names:?}");
    }

    let before = files(&h.root());
    let conversations = rt.open_conversations();
    let entries = [
        "call (default surface)",
        "call_in (default surface)",
        "call_from",
        "call_cancellable",
        "send(Call)",
        "router().send(Call)",
        "check",
    ];
    let mut by_entry: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut attempts, mut refused) = (0usize, 0usize);
    for spec in &writers {
        let tool = spec.name.as_str();
        for i in 0..RUST_ATTEMPTS {
            let args = valid_args(tool, i).unwrap_or_else(|| {
                panic!("`{tool}` is a {}-level tool this test has no valid arguments for; add them to valid_args", spec.level.as_str())
            });
            if !tool.starts_with("host_") {
                // Valid: the full surface would run it (check drops the work unpolled).
                let ok = rt.check(Surface::Full, tool, args.clone()).await;
                assert!(ok.is_ok(), "{tool} {args} is valid on the full surface: {ok:?}");
            }
            let entry = entries[i % entries.len()];
            let result = match i % entries.len() {
                0 => rt.call(tool, args).await,
                1 => rt.call_in("another-conversation", tool, args).await,
                2 => rt.call_from(Surface::ReadOnly, tool, args).await,
                3 => {
                    let token = tokio_util::sync::CancellationToken::new();
                    rt.call_cancellable(Surface::ReadOnly, tool, args, token).await
                }
                4 => rt.send(Call::new(tool, args, Surface::ReadOnly)).await,
                5 => rt
                    .router()
                    .send(Call::new(tool, args, Surface::ReadOnly))
                    .await
                    .expect("the router answers"),
                _ => rt
                    .check(Surface::ReadOnly, tool, args)
                    .await
                    .err()
                    .unwrap_or_else(|| ToolResult::text("accepted")),
            };
            attempts += 1;
            let e = by_entry.entry(entry).or_default();
            e.0 += 1;
            assert!(
                result.is_error && refused_by_surface(&result.text, tool),
                "{tool} through {entry} on the read-only surface was not refused by the surface: {}",
                result.text
            );
            refused += 1;
            e.1 += 1;
        }
    }

    // Nothing happened: no file, no staged change accepted or dropped, no
    // process, no conversation opened, no host tool reached.
    assert_eq!(files(&h.root()), before, "files changed");
    let tree = rt.tree().await.json();
    assert_eq!(pids(&tree), vec![], "a process was started:\n{}", rt.tree().await.text());
    assert_eq!(
        node(&tree, "ast").expect("the parser set")["detail"]["staged"],
        1,
        "the staged edit is untouched"
    );
    assert_eq!(rt.open_conversations(), conversations, "no conversation was opened");
    for (name, (started, ran)) in [("host_write", &counters[0]), ("host_exec", &counters[1])] {
        assert_eq!(started.load(Ordering::SeqCst), 0, "{name} was reached (start)");
        assert_eq!(ran.load(Ordering::SeqCst), 0, "{name} ran");
    }

    // The same calls from the full surface do reach them: the checks
    // above can see a side effect when there is one.
    let r = h.call_from(Surface::Full, "host_write", json!({"x": "1"})).await;
    assert_eq!((r.text.as_str(), counters[0].0.load(Ordering::SeqCst)), ("ran", 1));
    let r = h.call_from(Surface::Full, "write", valid_args("write", 0).unwrap()).await;
    assert!(!r.is_error && h.path("made/w0.txt").exists(), "{}", r.text);
    let r = h
        .call_from(
            Surface::Full,
            "eval",
            json!({"code": "1 + 1", "description": "start a kernel as a control"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text);
    let tree = rt.tree().await.json();
    assert!(
        pids(&tree).iter().any(|(kind, _, _)| kind.contains("kernel")),
        "the kernel shows its pid: {tree}"
    );

    println!("entries: rust api, per entry point (attempts / refused):");
    for (entry, (n, r)) in &by_entry {
        println!("  {entry:<24} {n:>5} / {r:>5}");
    }
    println!(
        "entries: rust api — {attempts} read-only attempts on {} write/exec tools through {} entry points, {refused} refused ({:.0}%), 0 files changed, 0 processes started, 0 host tools reached",
        writers.len(),
        entries.len(),
        100.0 * refused as f64 / attempts as f64
    );
    assert_eq!(refused, attempts);
}

// --- the command line ------------------------------------------------------

fn tether(dir: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .args(["--trusted", "--questions", "none", "--workdir"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tether runs");
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in FILES {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    std::fs::write(dir.path().join("tether.toml"), "[vibe]\nfast = \"true\"\n").unwrap();
    dir
}

/// The built-in write/exec tools `tether tools --json` lists for the full surface.
fn cli_writers(dir: &Path) -> Vec<String> {
    let (code, out, err) = tether(dir, &["tools", "--json", "--vibe"], None);
    assert_eq!(code, 0, "{err}");
    let tools: Value = serde_json::from_str(out.trim()).unwrap();
    tools
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["level"] != "read")
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn cli_call_and_batch_refuse_write_and_exec_tools_on_the_read_only_surface() {
    let dir = workdir();
    let before = files(dir.path());
    let writers = cli_writers(dir.path());
    assert!(writers.len() >= 8, "{writers:?}");

    let (code, out, err) = tether(dir.path(), &["tools", "--surface", "read-only", "--json", "--vibe"], None);
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(out.trim()).unwrap();
    for t in listed.as_array().unwrap() {
        assert_eq!(t["level"], "read", "`tether tools --surface read-only` lists {}", t["name"]);
    }

    // `tether call`: one process per tool, exit 1, the surface's refusal.
    let mut call_attempts = 0;
    for tool in &writers {
        let args =
            valid_args(tool, 0).unwrap_or_else(|| panic!("no valid arguments for `{tool}`")).to_string();
        let (code, out, err) =
            tether(dir.path(), &["call", "--surface", "read-only", "--vibe", tool, &args], None);
        assert_eq!(code, 1, "tether call {tool} exits 1 (a tool error): {out}{err}");
        assert!(refused_by_surface(&out, tool), "{tool}: {out}");
        call_attempts += 1;
    }

    // `tether batch`: one run, BATCH_ATTEMPTS lines per tool, some in
    // another conversation, then the tree.
    let batch = |surface: &str, approval: &str, expect: &dyn Fn(&str, &str) -> bool| {
        let mut lines = String::new();
        let mut asked = Vec::new();
        for tool in &writers {
            for i in 0..BATCH_ATTEMPTS {
                let mut request = json!({"tool": tool, "args": valid_args(tool, i).unwrap()});
                if i % 4 == 0 {
                    request["conversation"] = json!("another-conversation");
                }
                lines.push_str(&request.to_string());
                lines.push('\n');
                asked.push(tool.clone());
            }
        }
        lines.push_str("{\"op\": \"tree\"}\n");
        let (code, out, err) = tether(
            dir.path(),
            &["batch", "--surface", surface, "--approval", approval, "--vibe"],
            Some(&lines),
        );
        assert_eq!(code, 0, "{err}");
        let answers: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(answers.len(), asked.len() + 1, "one answer a line");
        let mut refused = 0;
        for (tool, answer) in asked.iter().zip(&answers) {
            let text = answer["text"].as_str().unwrap_or("");
            assert!(
                answer["is_error"] == true && expect(text, tool),
                "batch {surface}/{approval} {tool}: {answer}"
            );
            refused += 1;
        }
        let tree = &answers.last().unwrap()["data"];
        assert_eq!(pids(tree), vec![], "batch {surface}/{approval} started a process: {tree}");
        (asked.len(), refused)
    };
    let (surface_attempts, surface_refused) =
        batch("read-only", "auto", &|text, tool| refused_by_surface(text, tool));
    let (deny_attempts, deny_refused) = batch("full", "deny", &|text, tool| {
        text.contains(&format!("`{tool}`")) && text.contains("approval policy denies")
    });

    assert_eq!(files(dir.path()), before, "files changed");
    println!(
        "entries: cli — tether call: {call_attempts}/{call_attempts} refused; tether batch --surface read-only: {surface_refused}/{surface_attempts} refused; tether batch --approval deny: {deny_refused}/{deny_attempts} refused ({} write/exec tools); 0 files changed, 0 processes started",
        writers.len()
    );
}

// --- MCP -------------------------------------------------------------------

#[test]
fn mcp_read_only_surface_lists_and_runs_no_write_or_exec_tool() {
    let sdk = Command::new("python3").args(["-c", "import mcp.client"]).output();
    if !sdk.as_ref().is_ok_and(|o| o.status.success()) {
        panic!(
            "python3 with the MCP SDK is needed; install with `python3 -m pip install 'mcp==2.3.0'` (the README's test command does)"
        );
    }
    let dir = workdir();
    let stdout = common::mcp_scenario("read_only_entry", dir.path());
    for line in stdout.lines().filter(|l| l.starts_with("mcp:")) {
        println!("entries: {line}");
    }
}

// --- the eval bridge ---------------------------------------------------------

const BRIDGE_ROUNDS: usize = 17;

/// The cell: every write-level tool through the bridge, `BRIDGE_ROUNDS`
/// times, counting what was refused and why; then `eval` and `debug`.
fn bridge_cell() -> String {
    format!(
        r#"import json
calls = [
    ("write", {{"path": "bridge.txt", "content": "x"}}),
    ("edit", {{"path": "a.py", "old_string": "old", "new_string": "pwned"}}),
    ("apply_patch", {{"patch": "--- /dev/null\n+++ b/bridge_patch.txt\n@@ -0,0 +1 @@\n+x\n"}}),
    ("ast_edit", {{"pattern": "old($A)", "rewrite": "pwned($A)"}}),
    ("resolve", {{"edit_id": "edit_1", "action": "accept"}}),
    ("lsp_rename", {{"file": "a.py", "line": 1, "symbol": "old", "new_name": "pwned"}}),
    ("lsp_edit", {{"action": "format", "file": "a.py"}}),
]
attempts, denied, other = {{}}, {{}}, []
for _ in range({BRIDGE_ROUNDS}):
    for name, args in calls:
        attempts[name] = attempts.get(name, 0) + 1
        try:
            tool(name, args)
            other.append(name + ": ran")
        except ToolError as e:
            if "denied permission" in str(e):
                denied[name] = denied.get(name, 0) + 1
            else:
                other.append(name + ": " + str(e)[:300])
nested = []
for name, args in [("eval", {{"code": "1", "description": "a nested cell is refused here"}}), ("debug", {{"op": "status"}})]:
    try:
        tool(name, args)
        nested.append(name + ": ran")
    except ToolError as e:
        nested.append(name + ": " + str(e)[:120])
print(json.dumps({{"attempts": attempts, "denied": denied, "other": other, "nested": nested}}))"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denying_approver_holds_through_the_eval_bridge() {
    // The strongest policy the product can express that lets a cell run at
    // all but refuses writes: `ask`, with an approver that allows `eval`
    // and denies everything else. (`deny` refuses `eval` itself, and a
    // read-only caller cannot call `eval`; see below.)
    let (port, mut cards) = ChannelPort::new();
    let allow_all = Arc::new(AtomicBool::new(false));
    let asked: Arc<parking_lot::Mutex<Vec<String>>> = Arc::default();
    let human = {
        let (allow_all, asked) = (allow_all.clone(), asked.clone());
        tokio::spawn(async move {
            while let Some(card) = cards.recv().await {
                let CardKind::Permission { tool } = &card.card.kind else {
                    card.skip();
                    continue;
                };
                asked.lock().push(tool.clone());
                if tool == "eval" || allow_all.load(Ordering::SeqCst) {
                    card.choose(&[ALLOW]);
                } else {
                    card.choose(&[DENY]);
                }
            }
        })
    };
    let h = Harness::with(FILES, |b| {
        b.connect_all().approval(ApprovalPolicy::Ask).questions(Arc::new(port), "test")
    });
    let before = files(&h.root());

    let r = h
        .call(
            "eval",
            json!({"code": bridge_cell(), "description": "try every write tool through the bridge"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text);
    let report: Value = serde_json::from_str(r.text.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {}", r.text));
    let attempts: usize =
        report["attempts"].as_object().unwrap().values().map(|v| v.as_u64().unwrap() as usize).sum();
    let denied: usize =
        report["denied"].as_object().unwrap().values().map(|v| v.as_u64().unwrap() as usize).sum();
    assert_eq!(report["other"], json!([]), "every bridge write was refused by the approver: {report}");
    assert_eq!(report["attempts"], report["denied"], "{report}");
    let nested = report["nested"].as_array().unwrap();
    assert!(
        nested.iter().all(|n| n.as_str().unwrap().contains("cannot be called from inside a cell")),
        "eval and debug are refused inside a cell: {report}"
    );
    let cards_seen = asked.lock().clone();
    let write_cards = cards_seen.iter().filter(|t| *t != "eval").count();
    assert_eq!(cards_seen.iter().filter(|t| *t == "eval").count(), 1, "{cards_seen:?}");
    assert_eq!(write_cards, attempts, "each bridge write asked the approver once: {cards_seen:?}");
    assert_eq!(files(&h.root()), before, "files changed");
    let tree = h.rt.tree().await.json();
    assert_eq!(node(&tree, "ast").expect("the parser set")["detail"]["staged"], 0, "nothing was staged");

    // Read-level tools through the bridge ask nobody.
    let r = h.call("eval", json!({"code": "tool('read', {'path': 'a.py'}).strip()", "description": "read a file through the bridge"})).await;
    assert_eq!(r.text, "Out: 'old(1)'", "{}", r.text);
    assert_eq!(asked.lock().len(), cards_seen.len() + 1, "only the cell's own card");

    // Control: with the approver allowing, the same bridge write lands.
    allow_all.store(true, Ordering::SeqCst);
    let r = h.call("eval", json!({"code": "tool('write', {'path': 'bridge.txt', 'content': 'allowed'})", "description": "write through the bridge when allowed"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(std::fs::read_to_string(h.path("bridge.txt")).unwrap(), "allowed");
    drop(h);
    human.abort();

    // `deny` refuses `eval` itself, so no cell (and no bridge) runs.
    let denied_run = Harness::with(FILES, |b| b.connect_all().approval(ApprovalPolicy::Deny));
    let text = denied_run.err("eval", json!({"code": "tool('write', {'path': 'x.txt', 'content': 'x'})", "description": "try to write through the bridge"})).await;
    assert!(text.contains("approval policy denies"), "{text}");
    assert_eq!(pids(&denied_run.rt.tree().await.json()), vec![], "no kernel started");
    assert!(!denied_run.path("x.txt").exists());

    println!(
        "entries: eval bridge — approval `ask` allowing eval and denying writes: {denied}/{attempts} bridge write attempts refused ({} tools × {BRIDGE_ROUNDS}), {write_cards} permission cards, 0 files changed; eval/debug from a cell refused; under `deny` eval itself is refused",
        report["attempts"].as_object().unwrap().len()
    );
}
