//! Real servers killed under tether — pyright itself, and the tsserver
//! typescript-language-server runs — are restarted on the next call, with
//! nothing of the dead one left and never an empty answer.

use std::time::{Duration, Instant};

use serde_json::json;

use super::tool::{fixture, lsp_ok, pyright, tsls};
use crate::common;
use tether_actors::process;

#[tokio::test]
async fn a_killed_pyright_is_restarted_with_nothing_left_behind() {
    pyright();
    let h = fixture("python");
    lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"})).await;
    let pid = common::server_pid(&h).await;
    // SAFETY: SIGKILL to the server's pid.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(common::group_gone(pid).await, "nothing of pyright's process group remains");
    // The server actor learns of the death from its reader; give it a moment.
    let deadline = Instant::now() + common::GONE_WITHIN;
    let tree = loop {
        let tree = h.rt.tree().await.json();
        let crashed =
            tree["children"][2]["children"][0]["state"].as_str().is_some_and(|s| s.starts_with("crashed"));
        if crashed || Instant::now() >= deadline {
            break tree;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let state = tree["children"][2]["children"][0]["state"].as_str().unwrap().to_string();
    assert!(state.starts_with("crashed: killed by signal 9"), "{state}");
    let last_error = tree["children"][2]["children"][0]["last_error"].as_str().unwrap_or_default();
    assert!(last_error.contains("pyright exited (killed by signal 9)"), "kept for the tree: {last_error}");
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "app.py", "line": 4, "symbol": "total_area"}))
            .await;
    assert!(def.contains("shapes.py:16:5"), "{def}");
    let tree = h.rt.tree().await.json();
    assert_eq!(tree["children"][2]["children"][0]["restarts"], 1);
    assert!(tree["children"][2]["children"][0]["last_error"].is_string(), "the last crash stays visible");
    assert_ne!(common::server_pid(&h).await, pid);
}

#[tokio::test]
async fn a_typescript_server_whose_tsserver_died_is_restarted_never_answering_empty() {
    tsls();
    let h = fixture("ts");
    let ask = json!({"action": "references", "file": "shapes.ts", "line": 5, "symbol": "Square"});
    let refs = lsp_ok(&h, ask.clone()).await;
    assert!(refs.contains("app.ts (2)"), "{refs}");
    // Its tsserver killed under it, typescript-language-server keeps
    // running and answers every request with nothing.
    let server = common::pid_of(&h, "lsp-server").await.expect("a server pid");
    let tsservers: Vec<u32> = process::children_of(server)
        .into_iter()
        .filter(|pid| process::command_line(*pid).is_some_and(|c| c.contains("tsserver")))
        .collect();
    assert!(!tsservers.is_empty(), "typescript-language-server {server} runs a tsserver");
    for pid in tsservers {
        // SAFETY: kill(2) on a pid just read from /proc.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    // typescript-language-server logs the death at once; the next call
    // finds the server ended and starts it afresh: the right list, never
    // "ready and found none".
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(lsp_ok(&h, ask).await.contains("app.ts (2)"));
}
