//! Registration (S1), surfaces (S2), approval, argument errors, and path
//! confinement for every path argument.

use crate::common;

use std::sync::Arc;

use crate::common::Harness;
use serde_json::json;
use tether::{ApprovalPolicy, Level, Surface, ToolError, ToolFuture, ToolHandler, ToolResult, ToolSpec};

fn names(specs: Vec<ToolSpec>) -> Vec<String> {
    specs.into_iter().map(|s| s.name).collect()
}

#[tokio::test]
async fn the_read_only_surface_neither_sees_nor_calls_write_tools() {
    let h = Harness::new(&[("a.py", "old(1)\n")]);
    assert_eq!(names(h.rt.tools(Surface::ReadOnly)), ["ast_grep", "lsp", "read", "resources"]);
    let full = names(h.rt.tools(Surface::Full));
    for tool in ["ast_edit", "resolve", "write", "edit", "apply_patch", "ast_grep", "read"] {
        assert!(full.contains(&tool.to_string()), "{tool} on the full surface");
    }
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    let calls = [
        ("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})),
        ("resolve", json!({"edit_id": "edit_1", "action": "accept"})),
        ("write", json!({"path": "a.py", "content": "x"})),
        ("edit", json!({"path": "a.py", "old_string": "old", "new_string": "new"})),
        ("apply_patch", json!({"patch": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old(1)\n+new(1)\n"})),
    ];
    for (tool, args) in calls {
        let r = h.call_from(Surface::ReadOnly, tool, args).await;
        assert!(r.is_error, "{tool} must be refused on the read-only surface");
        assert!(r.text.contains("read-only surface"), "{}", r.text);
        assert!(r.text.contains("is a write-level tool,"), "{}", r.text);
    }
    assert_eq!(h.read("a.py"), "old(1)\n");
    // The staged edit is still there for the full surface.
    h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert_eq!(h.read("a.py"), "new(1)\n");
}

#[tokio::test]
async fn a_tool_whose_resource_is_not_connected_is_absent() {
    let h = Harness::with(&[("a.py", "x\n")], |b| b);
    let tools = names(h.rt.tools(Surface::Full));
    assert!(!tools.contains(&"ast_grep".to_string()), "{tools:?}");
    let text = h.err("ast_grep", json!({"pattern": "x"})).await;
    assert!(text.contains("not connected") && text.contains("tree-sitter"), "{text}");
    // Every tool the run leaves out says what it needs, as the runtime
    // wired it: each resource's tools, the question gate's, vibe mode's.
    for (tool, need) in [
        ("lsp_rename", "the language-server supervisor, which is not connected"),
        ("lsp_edit", "the language-server supervisor, which is not connected"),
        ("eval", "which is not connected"),
        ("debug", "the debug-session supervisor, which is not connected"),
        ("ask_user", "a question port and a target space"),
        ("vibe_list", "vibe mode (a worker pool), which this run does not have"),
    ] {
        let text = h.err(tool, json!({})).await;
        assert!(text.contains(&format!("`{tool}` is not available in this run: it needs")), "{text}");
        assert!(text.contains(need), "{tool}: {text}");
    }
}

#[tokio::test]
async fn unknown_tools_list_the_available_ones() {
    let h = Harness::new(&[]);
    let text = h.err("grep", json!({})).await;
    assert!(text.contains("unknown tool `grep`") && text.contains("ast_grep"), "{text}");
}

#[tokio::test]
async fn the_deny_policy_refuses_write_tools_but_not_reads() {
    let h = Harness::with(&[("a.py", "old(1)\n")], |b| b.connect_all().approval(ApprovalPolicy::Deny));
    let text = h.err("write", json!({"path": "a.py", "content": "x"})).await;
    assert!(text.contains("approval policy denies"), "{text}");
    let text = h.err("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    assert!(text.contains("approval policy denies"), "{text}");
    let text = h.err("eval", json!({"code": "1", "description": "try a cell on a denying run"})).await;
    assert!(
        text.starts_with(
            "`eval` is an exec-level tool and this run's approval policy denies exec-level calls"
        ),
        "{text}"
    );
    h.ok("ast_grep", json!({"pattern": "old($A)"})).await;
    assert_eq!(h.read("a.py"), "old(1)\n");
}

#[tokio::test]
async fn bad_argument_types_name_the_field() {
    let h = Harness::new(&[("a.py", "x\n")]);
    let cases = [
        ("ast_grep", json!({"pattern": 42}), "`pattern`"),
        ("ast_grep", json!({"pattern": "x", "max_results": "ten"}), "`max_results`"),
        ("ast_grep", json!({"pattern": "x", "max_results": 0}), "`max_results`"),
        ("ast_grep", json!({}), "missing field `pattern`"),
        ("ast_grep", json!({"pattern": "x", "lang": "python"}), "unknown field `lang`"),
        ("ast_grep", json!("print"), "must be a JSON object"),
        ("ast_edit", json!({"pattern": "x"}), "missing field `rewrite`"),
        ("write", json!({"path": "a.py", "content": null}), "`content`"),
        ("edit", json!({"path": "a.py", "old_string": "", "new_string": "y"}), "`old_string`"),
        ("read", json!({"path": ["a.py"]}), "`path`"),
    ];
    for (tool, args, needle) in cases {
        let text = h.err(tool, args.clone()).await;
        assert!(text.contains(needle), "{tool} {args}: {text}");
    }
}

#[tokio::test]
async fn every_path_argument_refuses_escapes() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "old(1)\n").unwrap();
    let h = Harness::new(&[("in.py", "old(1)\n")]);
    std::os::unix::fs::symlink(outside.path(), h.path("link")).unwrap();
    let abs = outside.path().join("secret.py").display().to_string();
    for bad in ["../x.py", "a/../../x.py", abs.as_str(), "link/secret.py", "link"] {
        let calls = [
            ("ast_grep", json!({"pattern": "old($A)", "path": bad})),
            ("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)", "path": bad})),
            ("read", json!({"path": bad})),
            ("write", json!({"path": bad, "content": "pwned"})),
            ("edit", json!({"path": bad, "old_string": "old", "new_string": "new"})),
            (
                "apply_patch",
                json!({"patch": format!("--- a/{bad}\n+++ b/{bad}\n@@ -1 +1 @@\n-old(1)\n+new(1)\n")}),
            ),
        ];
        for (tool, args) in calls {
            let text = h.err(tool, args).await;
            assert!(text.contains("outside the working directory"), "{tool} {bad}: {text}");
        }
    }
    assert_eq!(std::fs::read_to_string(outside.path().join("secret.py")).unwrap(), "old(1)\n");
    // A directory search never follows the symlink out either.
    let r = h.ok("ast_grep", json!({"pattern": "old($A)"})).await;
    assert_eq!(common::positions(&r), vec!["in.py:1:1"]);
}

/// A host's own tool, replacing the built-in `read`.
struct HostRead;

impl ToolHandler for HostRead {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read".into(),
            level: Level::Read,
            parallel_safe: true,
            description: "the host's read".into(),
            input_schema: json!({"type": "object"}),
            ..ToolSpec::default()
        }
    }

    fn call(&self, _ctx: &tether::CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        Ok(Box::pin(async move { ToolResult::text(format!("host read {args}")) }))
    }
}

#[tokio::test]
async fn a_host_can_replace_the_built_in_host_tools() {
    let h = Harness::with(&[], |b| b.connect_all().tool(Arc::new(HostRead)));
    let r = h.ok("read", json!({"path": "x"})).await;
    assert_eq!(r.text, r#"host read {"path":"x"}"#);
    let h = Harness::with(&[], |b| b.connect_all().host_file_tools(false));
    assert!(!names(h.rt.tools(Surface::Full)).contains(&"write".to_string()));
}

#[tokio::test]
async fn the_tree_describes_the_router_the_lane_and_the_parsers() {
    let h = Harness::new(&[("a.py", "old(1)\n")]);
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    let tree = h.rt.tree().await;
    let json = tree.json();
    assert_eq!(json["kind"], "router");
    assert_eq!(json["id"], "test");
    let kinds: Vec<&str> =
        json["children"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["serial-lane", "ast", "lsp-supervisor", "conversation"]);
    assert_eq!(json["children"][1]["detail"]["staged"], 1);
    let own: Vec<&str> = json["children"][3]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(own, ["kernel-pool", "debug-session"], "the run's own conversation is open from the start");
    assert_eq!(json["children"][3]["owner"], "test");
    let text = tree.text();
    assert!(text.starts_with("router test [ready]"), "{text}");
    assert!(text.contains("\n  ast tree-sitter [ready]"), "{text}");
    assert!(text.contains("\n  conversation test [open]"), "{text}");
    assert!(text.contains("\n    debug-session test [no session] owner=test"), "{text}");
}
