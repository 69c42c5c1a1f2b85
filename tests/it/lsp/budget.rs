//! A run that stays small: each server's memory (its whole process group)
//! and idle time, and the run's budget, as `lsp status`, `resources` and
//! `tether status` show them.

use serde_json::json;

use super::tool::{lsp_ok, pyright};
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
