//! One run, many conversations: each has its own kernels and debug
//! session; the `resources` tool (and the tree behind it) shows every live
//! resource with its owner; closing a conversation kills what it owned.

use crate::common;

use crate::common::Harness;
use serde_json::json;
use tether_actors::process::is_running;

const D: &str = "a cell in one of two conversations";
const PROG: &str = "import time\n\ndef wait():\n    time.sleep(300)\n\nwait()\n";

async fn cell(h: &Harness, conversation: &str, code: &str) -> String {
    let r = h.rt.call_in(conversation, "eval", json!({"code": code, "description": D})).await;
    assert!(!r.is_error, "{conversation}: {}", r.text);
    r.text
}

fn kernel_pid(resources: &serde_json::Value, owner: &str) -> Option<u32> {
    let mut stack = vec![resources];
    while let Some(node) = stack.pop() {
        if node["kind"] == "kernel" && node["owner"] == owner {
            return node["pid"].as_u64().map(|p| p as u32);
        }
        stack.extend(node["children"].as_array().into_iter().flatten());
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_have_their_own_kernels_and_the_registry_shows_owners() {
    let h = Harness::new(&[("prog.py", PROG), ("requirements.txt", "")]);
    cell(&h, "alpha", "x = 'alpha'").await;
    cell(&h, "beta", "x = 'beta'").await;
    assert_eq!(cell(&h, "alpha", "x").await, "Out: 'alpha'");
    assert_eq!(cell(&h, "beta", "x").await, "Out: 'beta'");
    let missing = h.rt.call_in("gamma", "eval", json!({"code": "x", "description": D})).await;
    assert!(missing.text.contains("NameError"), "a third conversation starts clean: {}", missing.text);

    // A debug session in alpha only, with its TTL and debuggee.
    for args in [
        json!({"op": "breakpoints", "file": "prog.py", "lines": [4]}),
        json!({"op": "launch", "program": "prog.py"}),
    ] {
        let r = h.rt.call_in("alpha", "debug", args).await;
        assert!(!r.is_error, "{}", r.text);
    }
    let beta_status = h.rt.call_in("beta", "debug", json!({"op": "status"})).await.text;
    assert!(beta_status.starts_with("no debug session is running"), "{beta_status}");
    assert!(beta_status.contains("call `resources`"), "status points to the registry: {beta_status}");

    let all = h.ok("resources", json!({})).await;
    for line in ["conversation alpha [open]", "conversation beta [open]", "conversation gamma [open]"] {
        assert!(all.text.contains(line), "{line}: {}", all.text);
    }
    let session = all.text.lines().find(|l| l.contains("debug-session alpha")).unwrap();
    assert!(
        session.contains("owner=alpha") && session.contains(" pid=") && session.contains("ttl_left=29m"),
        "{session}"
    );
    let debuggee = all.text.lines().find(|l| l.trim_start().starts_with("debuggee prog.py")).unwrap();
    assert!(debuggee.contains("owner=alpha") && debuggee.contains("pid="), "{debuggee}");
    let pid_in = |line: &str| -> i32 {
        line.split(" pid=").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap()
    };
    let (adapter_pid, debuggee_pid) = (pid_in(session), pid_in(debuggee));
    let data = all.data.clone().unwrap();
    let (alpha, beta) = (kernel_pid(&data, "alpha").unwrap(), kernel_pid(&data, "beta").unwrap());
    assert_ne!(alpha, beta, "one interpreter each");

    // `mine` from inside a cell: the bridge call belongs to the cell's conversation.
    let mine = cell(
        &h,
        "beta",
        "r = tool('resources', {'mine': True})\n[l.strip().split(' [')[0] for l in r.splitlines() if 'conversation ' in l]",
    )
    .await;
    assert_eq!(mine, "Out: ['conversation beta']");

    // A staged edit belongs to the conversation that staged it.
    let staged = h.rt.call_in("alpha", "ast_edit", json!({"pattern": "wait()", "rewrite": "pause()"})).await;
    assert!(staged.text.contains("edit_id \"edit_1\""), "{}", staged.text);
    let theirs = h.rt.call_in("beta", "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(theirs.is_error && theirs.text.contains("staged by another conversation"), "{}", theirs.text);
    assert!(h.read("prog.py").contains("wait()"), "nothing was written");
    let mine = h.rt.call_in("alpha", "resolve", json!({"edit_id": "edit_1", "action": "discard"})).await;
    assert!(!mine.is_error, "{}", mine.text);

    let bad = h.rt.call_in("", "read", json!({"path": "prog.py"})).await;
    assert!(bad.is_error && bad.text.starts_with("conversation: expected an id"), "{}", bad.text);

    // Closing alpha kills its kernel, adapter and debuggee; beta is untouched.
    assert!(h.rt.close_conversation("alpha"));
    assert!(!h.rt.close_conversation("alpha"), "closed once");
    assert!(common::gone(alpha as i32).await, "alpha's kernel {alpha} was killed");
    assert!(is_running(beta as i32), "beta's kernel {beta} still runs");
    assert!(common::gone(adapter_pid).await, "alpha's debug adapter {adapter_pid} was killed");
    assert!(common::gone(debuggee_pid).await, "alpha's debuggee {debuggee_pid} was killed");
    let after = h.ok("resources", json!({})).await.text;
    assert!(!after.contains("conversation alpha") && !after.contains("debuggee"), "{after}");
    assert_eq!(cell(&h, "beta", "x").await, "Out: 'beta'");
    let reopened = h.rt.call_in("alpha", "eval", json!({"code": "x", "description": D})).await;
    assert!(reopened.text.contains("NameError"), "a closed conversation reopens clean: {}", reopened.text);
}
