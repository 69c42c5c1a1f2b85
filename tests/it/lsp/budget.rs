//! A run that stays small: each server's memory (its whole process group)
//! and idle time, and the run's budget, as `lsp status`, `resources` and
//! `tether status` show them.

use serde_json::json;

use super::languages::installed;
use super::tool::{lsp_ok, pyright, tsls};
use crate::common::Harness;

/// The number before `unit` after `key=` on `line` (`memory=312 MiB`).
fn figure(line: &str, key: &str) -> Option<u64> {
    let rest = &line[line.find(&format!(" {key}="))? + key.len() + 2..];
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The resident memory of `pid` alone, from its `/proc/<pid>/status`.
fn own_rss(pid: u64) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() << 10
}

#[tokio::test]
async fn status_and_resources_show_each_servers_memory_and_idle_time_and_the_budget() {
    pyright();
    let h = Harness::new(&[
        ("pyproject.toml", "[project]\nname = \"app\"\n"),
        ("app.py", "def area(r):\n    return r * r\n\nx = area(2)\n"),
        ("tether.toml", "[lsp]\nmemory_budget_mb = 2048\nidle_limit_minutes = 5\n"),
    ]);
    lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 4, "symbol": "area"})).await;
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;

    let status = h.ok("lsp", json!({"action": "status"})).await;
    let line = status.text.lines().find(|l| l.contains("running pyright@. [ready]")).unwrap_or_else(|| {
        panic!("{}", status.text);
    });
    let memory = figure(line, "memory").unwrap_or_else(|| panic!("{line}"));
    let idle = figure(line, "idle").unwrap_or_else(|| panic!("{line}"));
    assert!((20..2048).contains(&memory), "pyright and its node hold tens of MiB: {line}");
    assert!((2..60).contains(&idle), "idle since the hover: {line}");
    assert!(
        status.text.contains(
            "MiB held of a 2.0 GiB budget (tether.toml's [lsp] memory_budget_mb = 2048); a server idle for 5 min is shut down"
        ),
        "{}",
        status.text
    );
    let data = status.data.unwrap();
    let held = data["memory_held"].as_u64().unwrap();
    assert_eq!(data["limits"]["memory_budget"], 2u64 << 30);
    assert_eq!(data["limits"]["idle_limit"], 300);

    // The group's memory holds at least the server process's own.
    let node = &data["languages"][0]["running"][0];
    let pid = node["pid"].as_u64().unwrap();
    let group = node["detail"]["memory_bytes"].as_u64().unwrap();
    assert!(group * 10 >= own_rss(pid) * 8, "group {group} < the server's own {}", own_rss(pid));
    assert!(held * 10 >= group * 8 && held <= group * 2, "held {held}, the one server {group}");

    let resources = h.ok("resources", json!({})).await.text;
    let server = resources.lines().find(|l| l.contains("lsp-server pyright@.")).unwrap();
    assert!(figure(server, "memory").is_some() && server.contains(" idle="), "{server}");
    let supervisor = resources.lines().find(|l| l.contains("lsp-supervisor")).unwrap();
    assert!(
        supervisor.contains("memory_budget=2.0 GiB")
            && supervisor.contains("idle_limit=5m0s")
            && figure(supervisor, "memory_held").is_some(),
        "{supervisor}"
    );
}

#[tokio::test]
async fn a_misspelt_lsp_setting_is_named_and_the_defaults_are_said() {
    let h = Harness::new(&[("app.py", "x = 1\n"), ("tether.toml", "[lsp]\nmemory_budget = 1024\n")]);
    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(
        status.contains("tether.toml is not valid") && status.contains("unknown field `memory_budget`"),
        "{status}"
    );
    assert!(status.contains("a quarter of this machine's"), "the defaults apply meanwhile: {status}");
    let h = Harness::new(&[("app.py", "x = 1\n"), ("tether.toml", "[lsp]\nidle_limit_minutes = 0\n")]);
    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(status.contains("idle servers are kept (idle_limit_minutes = 0)"), "{status}");
}

#[tokio::test]
async fn a_server_idle_past_the_limit_is_shut_down_and_the_next_call_starts_it_and_says_why() {
    pyright();
    let h = Harness::new(&[
        ("pyproject.toml", "[project]\nname = \"app\"\n"),
        ("app.py", "def area(r):\n    return r * r\n\nx = area(2)\n"),
        // Three seconds.
        ("tether.toml", "[lsp]\nidle_limit_minutes = 0.05\n"),
    ]);
    let refs = json!({"action": "references", "file": "app.py", "line": 1, "symbol": "area"});
    let first = lsp_ok(&h, refs.clone()).await;
    assert!(first.starts_with("2 references to `area`"), "{first}");
    let pid = server_pid(&h).await.expect("pyright runs");
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;

    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(
        status.contains("pyright@. [stopped: pyright (.) was stopped after ")
            && status.contains("idle (the run's idle limit is 3 s), holding ")
            && status.contains("it starts again on the next call"),
        "{status}"
    );
    assert!(!alive(pid), "pyright's process {pid} is gone");
    assert_eq!(server_pid(&h).await, None);

    let again = lsp_ok(&h, refs.clone()).await;
    assert!(again.starts_with("2 references to `area`"), "the restarted server answers right: {again}");
    assert!(
        again.contains("note: pyright (.) was stopped after ")
            && again.contains("it was started again for this call"),
        "{again}"
    );
    // Said once: the next answer is plain.
    let plain = lsp_ok(&h, refs).await;
    assert!(!plain.contains("was stopped"), "{plain}");
}

/// The running language server's pid, if one runs.
async fn server_pid(h: &Harness) -> Option<u32> {
    h.rt.tree().await.root.walk().into_iter().filter(|n| n.kind == "lsp-server").find_map(|n| n.pid)
}

fn alive(pid: u32) -> bool {
    tether_actors::process::stat(pid).is_some_and(|s| s.is_live())
}

/// Five projects of five languages, each with `area` declared and used
/// once: (file, line of the declaration, its server).
const MONOREPO: [(&str, u32, &str); 5] = [
    ("py/app.py", 1, "pyright"),
    ("ts/app.ts", 1, "typescript-language-server"),
    ("go/main.go", 3, "gopls"),
    ("rs/src/lib.rs", 1, "rust-analyzer"),
    ("java/src/pkg/App.java", 4, "jdtls"),
];

fn monorepo(budget_mb: u64) -> Harness {
    Harness::new(&[
        ("py/pyproject.toml", "[project]\nname = \"p\"\n"),
        ("py/app.py", "def area(r):\n    return r * r\n\nx = area(2)\n"),
        ("ts/tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}\n"),
        (
            "ts/app.ts",
            "export function area(r: number): number {\n  return r * r;\n}\nexport const x = area(2);\n",
        ),
        ("go/go.mod", "module example.com/g\n\ngo 1.19\n"),
        (
            "go/main.go",
            "package main\n\nfunc area(r int) int {\n\treturn r * r\n}\n\nfunc main() {\n\t_ = area(2)\n}\n",
        ),
        ("rs/Cargo.toml", "[package]\nname = \"r\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        (
            "rs/src/lib.rs",
            "pub fn area(r: i32) -> i32 {\n    r * r\n}\n\npub fn x() -> i32 {\n    area(2)\n}\n",
        ),
        ("java/.git/HEAD", "ref: refs/heads/main\n"),
        (
            "java/src/pkg/App.java",
            "package pkg;\n\npublic class App {\n    static int area(int r) {\n        return r * r;\n    }\n    static int x() {\n        return area(2);\n    }\n}\n",
        ),
        ("tether.toml", &format!("[lsp]\nmemory_budget_mb = {budget_mb}\n")),
    ])
}

fn every_server() {
    pyright();
    tsls();
    crate::common::require("gopls", &["version"], "apt-get install gopls");
    crate::common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer");
    installed("jdtls", "jdtls");
}

#[tokio::test]
async fn a_monorepo_under_a_small_budget_stays_under_it_and_every_answer_after_a_stop_is_right() {
    every_server();
    const BUDGET_MB: u64 = 1300;
    let h = std::sync::Arc::new(monorepo(BUDGET_MB));
    // What the servers hold, sampled every second while the calls run.
    let running = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (h, running) = (h.clone(), running.clone());
        tokio::spawn(async move {
            let mut most = 0u64;
            while running.load(std::sync::atomic::Ordering::Relaxed) {
                let tree = h.rt.tree().await;
                let held: u64 = tree
                    .root
                    .walk()
                    .into_iter()
                    .filter(|n| n.kind == "lsp-server")
                    .filter_map(|n| n.detail.get("memory_bytes").and_then(|v| v.as_u64()))
                    .sum();
                most = most.max(held);
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            most
        })
    };
    let mut stopped_notes = 0;
    // Each project twice, in an order that comes back to the oldest.
    for (file, line, server) in MONOREPO.iter().chain(&[MONOREPO[0], MONOREPO[1], MONOREPO[3], MONOREPO[2]]) {
        // The others idle past the time a server counts as in use.
        tokio::time::sleep(tether_actors::lsp::limits::IN_USE + std::time::Duration::from_secs(1)).await;
        let answer =
            lsp_ok(&h, json!({"action": "references", "file": file, "line": line, "symbol": "area"})).await;
        assert!(answer.starts_with("2 references to `area` in 1 file"), "{server}: {answer}");
        if answer.contains(&format!("note: {server} (")) && answer.contains("was stopped to make room for") {
            assert!(answer.contains("it was started again for this call"), "{answer}");
            stopped_notes += 1;
        }
    }
    running.store(false, std::sync::atomic::Ordering::Relaxed);
    let most = sampler.await.unwrap();
    assert!(
        most <= BUDGET_MB << 20,
        "the servers held {} MiB at most, over the {BUDGET_MB} MiB budget",
        most >> 20
    );
    assert!(most > 600 << 20, "the budget was used: {} MiB", most >> 20);
    assert!(
        stopped_notes >= 2,
        "servers stopped for the budget were started again, and said so: {stopped_notes}"
    );
    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(status.contains("[stopped: ") && status.contains("to make room for"), "{status}");
}

#[tokio::test]
async fn a_server_bigger_than_the_whole_budget_is_refused_with_both_sizes() {
    installed("jdtls", "jdtls");
    let h = monorepo(500);
    let r = h
        .call(
            "lsp",
            json!({"action": "references", "file": "java/src/pkg/App.java", "line": 4, "symbol": "area"}),
        )
        .await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains(
            "jdtls holds about 800 MiB once started, more than the run's whole budget for language servers, 500 MiB (tether.toml's [lsp] memory_budget_mb = 500); raise [lsp] memory_budget_mb in tether.toml"
        ),
        "{}",
        r.text
    );
}
