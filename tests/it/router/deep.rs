//! Deep arguments the router refuses itself, before any tool parses them.

use super::*;

// --- deep arguments the router refuses itself -------------------------------

/// A call the router refuses before the tool parses its arguments (steps
/// 1–3: unknown tool, not on the surface, denied; or an `ask` permission
/// card, which serialises the arguments) must not drop or serialise them
/// recursively on the actor thread: 10,000 levels would overflow its stack
/// and abort the process. Only the Rust API can hand over such a value —
/// MCP, the CLI and the eval bridge parse JSON text with serde_json's
/// 128-level limit.
pub(super) async fn refused_deep(policy: tether::ApprovalPolicy, surface: Surface, tool: &str) {
    let h = Harness::with(&[("a.py", "x\n")], |b| b.connect_all().approval(policy));
    let mut args = Map::new();
    args.insert("path".into(), json!("a.py"));
    args.insert("content".into(), json!("x"));
    args.insert("junk".into(), deep_object(DEEP));
    let refused = h.rt.check(surface, tool, Value::Object(args)).await;
    assert!(refused.is_err());
    assert!(
        h.rt.check(Surface::Full, "read", json!({"path": "a.py"})).await.is_ok(),
        "the runtime still answers"
    );
}

#[tokio::test]

pub(super) async fn deep_arguments_refused_by_the_surface_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::AutoApprove, Surface::ReadOnly, "write").await;
}

#[tokio::test]

pub(super) async fn deep_arguments_to_an_unknown_tool_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::AutoApprove, Surface::Full, "no_such_tool").await;
}

#[tokio::test]

pub(super) async fn deep_arguments_denied_by_the_policy_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::Deny, Surface::Full, "write").await;
}

#[tokio::test]

pub(super) async fn deep_arguments_on_a_permission_card_do_not_overflow_the_router() {
    refused_deep(tether::ApprovalPolicy::Ask, Surface::Full, "write").await;
}

// --- arguments past the size every host allows ------------------------------

#[tokio::test]
async fn arguments_larger_than_a_request_may_be_are_refused_naming_the_field() {
    let h = Harness::new(&[("a.py", "x\n")]);
    let big = "x".repeat(tether::args::MAX_ARGUMENT_BYTES + 1);
    let r = h.call("write", json!({"path": "big.py", "content": big})).await;
    assert!(
        r.is_error && r.text.contains("argument `content` holds 4.0 MiB"),
        "{}",
        &r.text[..r.text.len().min(400)]
    );
    assert!(!h.path("big.py").exists(), "nothing written");
    let r = h
        .call("edit", json!({"path": "a.py", "old_string": "x", "new_string": "y".repeat(5 * 1024 * 1024)}))
        .await;
    assert!(
        r.is_error && r.text.contains("argument `new_string` holds 5.0 MiB"),
        "{}",
        &r.text[..r.text.len().min(400)]
    );
    assert_eq!(h.read("a.py"), "x\n");
}
