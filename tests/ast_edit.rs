//! `ast_edit` + `resolve` end to end (S6): staging, acceptance, drift,
//! and the errors a model can hit.

mod common;

use common::Harness;
use serde_json::json;

fn three_files() -> Harness {
    Harness::new(&[
        ("a.py", "import os\nold(1)\n"),
        ("pkg/b.py", "old(2)\nold(old(3))\n"),
        ("pkg/c.py", "def f():\n    return old(4)\n"),
        ("untouched.py", "new(0)\n"),
    ])
}

#[tokio::test]
async fn staging_writes_nothing_and_accept_writes_everything() {
    let h = three_files();
    let r = h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    assert!(
        r.text.starts_with("(proposed) 5 replacements in 3 files"),
        "nested old(old(3)) is two matches, both rewritten: {}",
        r.text
    );
    assert!(r.text.contains("1 replacement sits inside another match"), "{}", r.text);
    assert!(r.text.contains("edit_id \"edit_1\""), "{}", r.text);
    assert!(r.text.contains("-old(1)\n+new(1)"), "the preview is a unified diff: {}", r.text);
    assert_eq!(h.read("a.py"), "import os\nold(1)\n", "staging writes nothing");

    let r = h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(r.text.contains("wrote 5 replacements in 3 files"), "{}", r.text);
    assert_eq!(h.read("a.py"), "import os\nnew(1)\n");
    assert_eq!(h.read("pkg/b.py"), "new(2)\nnew(new(3))\n");
    assert_eq!(h.read("pkg/c.py"), "def f():\n    return new(4)\n");
    assert_eq!(h.read("untouched.py"), "new(0)\n");

    let again = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(again.contains("already resolved: accepted"), "{again}");
}

#[tokio::test]
async fn drift_in_one_file_refuses_the_whole_change() {
    let h = three_files();
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    h.write("pkg/b.py", "old(2)\nold(old(3))\n# edited by someone else\n");
    let text = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(text.contains("pkg/b.py") && text.contains("nothing was written"), "{text}");
    assert_eq!(h.read("a.py"), "import os\nold(1)\n");
    assert_eq!(h.read("pkg/c.py"), "def f():\n    return old(4)\n");
    assert_eq!(h.read("pkg/b.py"), "old(2)\nold(old(3))\n# edited by someone else\n");
    let again = h.err("resolve", json!({"edit_id": "edit_1", "action": "discard"})).await;
    assert!(again.contains("already resolved: refused because pkg/b.py changed"), "{again}");
}

#[tokio::test]
async fn a_directory_swapped_for_a_link_out_of_the_root_is_refused() {
    let h = three_files();
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    // Same content, reached through a link that leads outside.
    let outside = tempfile::tempdir().unwrap();
    std::fs::rename(h.path("pkg"), outside.path().join("pkg")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("pkg"), h.path("pkg")).unwrap();
    let text = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(text.contains("is now a symbolic link") && text.contains("nothing was written"), "{text}");
    let b = std::fs::read_to_string(outside.path().join("pkg/b.py")).unwrap();
    assert_eq!(b, "old(2)\nold(old(3))\n", "nothing was written outside the root");
    assert_eq!(h.read("a.py"), "import os\nold(1)\n");
}

#[tokio::test]
async fn a_statement_keeps_the_semicolon_the_pattern_did_not_show() {
    let h = Harness::new(&[
        ("src/main.rs", "fn main() {\n    let x = 5;\n    println!(\"{x}\");\n}\n"),
        ("app.js", "let a = b;\n(c || d).f();\n"),
    ]);
    let rust = json!({"pattern": "let $A = $B", "rewrite": "let $A: u8 = $B", "language": "rust"});
    h.ok("ast_edit", rust).await;
    h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert_eq!(h.read("src/main.rs"), "fn main() {\n    let x: u8 = 5;\n    println!(\"{x}\");\n}\n");
    // Without its `;` the next line's parenthesis would call `b`.
    let js = json!({"pattern": "let $A = $B", "rewrite": "const $A = $B", "language": "javascript"});
    h.ok("ast_edit", js).await;
    h.ok("resolve", json!({"edit_id": "edit_2", "action": "accept"})).await;
    assert_eq!(h.read("app.js"), "const a = b;\n(c || d).f();\n");
}

#[tokio::test]
async fn a_staged_edit_says_which_files_it_could_not_cover() {
    let h = three_files();
    // Over the parser's size limit: its `old(...)` calls are not in the edit.
    let big = format!("old(0)\n{}", "x = 1\n".repeat(800_000));
    h.write("big.py", &big);
    let r = h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    assert!(
        r.text.contains("not every file was covered") && r.text.contains("skipped 1 (1 over 4 MiB)"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_rewrite_that_would_break_the_syntax_is_refused() {
    let h = Harness::new(&[("calls.py", "foo()\nfoo(1)\n")]);
    // An empty `$$$ARGS` leaves `bar(, ctx)`.
    let text = h.err("ast_edit", json!({"pattern": "foo($$$ARGS)", "rewrite": "bar($$$ARGS, ctx)"})).await;
    assert!(text.contains("would leave calls.py with a syntax error at line 1"), "{text}");
    assert_eq!(h.read("calls.py"), "foo()\nfoo(1)\n");
    let text = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(text.contains("edit_1"), "nothing was staged: {text}");
}

#[tokio::test]
async fn a_deleted_file_is_drift_too() {
    let h = three_files();
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    std::fs::remove_file(h.path("pkg/c.py")).unwrap();
    let text = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(text.contains("pkg/c.py"), "{text}");
    assert!(!h.path("pkg/c.py").exists(), "a deleted file is not resurrected");
    assert_eq!(h.read("a.py"), "import os\nold(1)\n");
}

#[tokio::test]
async fn discard_drops_the_change() {
    let h = three_files();
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)", "path": "pkg"})).await;
    let r = h.ok("resolve", json!({"edit_id": "edit_1", "action": "discard"})).await;
    assert!(r.text.contains("discarded edit_1"), "{}", r.text);
    assert_eq!(h.read("pkg/b.py"), "old(2)\nold(old(3))\n");
}

#[tokio::test]
async fn a_rewrite_with_an_unbound_metavariable_is_refused() {
    let h = three_files();
    let text = h.err("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A, $B)"})).await;
    assert!(text.contains("$B") && text.contains("does not bind"), "{text}");
    let text = h.err("ast_edit", json!({"pattern": "old($_)", "rewrite": "new($_)"})).await;
    assert!(text.contains("$_"), "{text}");
    let unknown = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(unknown.contains("nothing is staged"), "a refused rewrite stages nothing: {unknown}");
}

#[tokio::test]
async fn multi_metavariables_and_indentation_survive_the_rewrite() {
    let h = Harness::new(&[("m.py", "class A:\n    def f(self):\n        log(a, b, c)\n")]);
    h.ok("ast_edit", json!({"pattern": "log($$$ARGS)", "rewrite": "logger.info($$$ARGS)"})).await;
    h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert_eq!(h.read("m.py"), "class A:\n    def f(self):\n        logger.info(a, b, c)\n");
}

#[tokio::test]
async fn no_match_stages_nothing_and_says_so() {
    let h = three_files();
    let r = h.ok("ast_edit", json!({"pattern": "missing($A)", "rewrite": "x($A)"})).await;
    assert!(r.text.contains("nothing was staged"), "{}", r.text);
    let text = h.err("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(text.contains("no staged edit is called `edit_1`"), "{text}");
}

#[tokio::test]
async fn resolve_validates_its_arguments() {
    let h = three_files();
    let text = h.err("resolve", json!({"edit_id": "edit_1", "action": "apply"})).await;
    assert!(text.contains("`action`") && text.contains("accept"), "{text}");
    let text = h.err("resolve", json!({"edit_id": 1, "action": "accept"})).await;
    assert!(text.contains("`edit_id`") && text.contains("string"), "{text}");
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    let text = h.err("resolve", json!({"edit_id": "edit_7", "action": "accept"})).await;
    assert!(text.contains("staged edits waiting: edit_1"), "{text}");
}

#[tokio::test]
async fn file_permissions_survive_an_accepted_rewrite() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::new(&[("run.py", "#!/usr/bin/env python3\nold(1)\n")]);
    std::fs::set_permissions(h.path("run.py"), std::fs::Permissions::from_mode(0o755)).unwrap();
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    let mode = std::fs::metadata(h.path("run.py")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn a_metavariable_spelled_inside_a_string_binds_nothing() {
    let h = Harness::new(&[("a.js", "console.log(\"x: $A\");\n")]);
    let text = h.err("ast_edit", json!({"pattern": "console.log(\"x: $A\")", "rewrite": "log($A)"})).await;
    assert!(text.contains("$A") && text.contains("does not bind"), "{text}");
    assert_eq!(h.read("a.js"), "console.log(\"x: $A\");\n");
}
