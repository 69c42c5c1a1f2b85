//! `ast_edit` + `resolve` end to end (S6): staging, acceptance, drift,
//! and the errors a model can hit.

use crate::common::Harness;
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
    let big = format!("old(0)\n{}", "x = 1\n".repeat(3_000_000));
    h.write("big.py", &big);
    let r = h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    assert!(
        r.text.contains("not every file was covered") && r.text.contains("skipped 1 (1 over 16 MiB)"),
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

/// Stages `pattern` → `rewrite` over the whole workspace and accepts it.
async fn rewrite_all(h: &Harness, args: serde_json::Value) -> String {
    let staged = h.ok("ast_edit", args).await;
    let id = staged.data.as_ref().unwrap()["staged"]["edit_id"].as_str().unwrap().to_string();
    h.ok("resolve", json!({"edit_id": id, "action": "accept"})).await;
    staged.text
}

#[tokio::test]
async fn a_multi_line_rewrite_in_tab_indented_code_is_indented_with_tabs() {
    let go = "package p\n\nfunc f(items []int) {\n\tfor _, x := range items {\n\t\tif x > 0 {\n\t\t\tuse(x)\n\t\t\tlog(x)\n\t\t}\n\t}\n}\n";
    let py = "def f(x):\n\tif x:\n\t\ta()\n\t\tb()\n";
    let h = Harness::new(&[("a.go", go), ("a.py", py)]);
    // The template is written with spaces, as a model writes it.
    rewrite_all(
        &h,
        json!({"pattern": "if $C { $$$B }", "rewrite": "if !($C) {\n    continue\n}\n$$$B", "language": "go"}),
    )
    .await;
    assert_eq!(
        h.read("a.go"),
        "package p\n\nfunc f(items []int) {\n\tfor _, x := range items {\n\t\tif !(x > 0) {\n\t\t\tcontinue\n\t\t}\n\t\tuse(x)\n\t\tlog(x)\n\t}\n}\n"
    );
    rewrite_all(
        &h,
        json!({"pattern": "if $C:\n    $$$B", "rewrite": "if not $C:\n    return\n$$$B", "language": "python"}),
    )
    .await;
    assert_eq!(h.read("a.py"), "def f(x):\n\tif not x:\n\t\treturn\n\ta()\n\tb()\n");
}

#[tokio::test]
async fn nested_matches_are_rewritten_inside_out_and_dropped_ones_are_counted() {
    let h = Harness::new(&[
        ("a.py", "x = old(old(old(1)), old(2))\ny = old(old(3))\n"),
        ("b.py", "wrap(wrap(1))\n"),
    ]);
    let text = rewrite_all(&h, json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    // The outermost call has two arguments: it is no match of `old($A)`.
    assert_eq!(h.read("a.py"), "x = old(new(new(1)), new(2))\ny = new(new(3))\n");
    assert!(text.starts_with("(proposed) 5 replacements"), "{text}");
    assert!(text.contains("2 replacements sit inside another match"), "{text}");
    let text = rewrite_all(&h, json!({"pattern": "wrap($A)", "rewrite": "done()"})).await;
    assert_eq!(h.read("b.py"), "done()\n");
    assert!(text.contains("1 nested match went with text the rewrite does not keep"), "{text}");
}

#[tokio::test]
async fn a_script_inside_html_is_rewritten_in_place() {
    let page =
        "<html>\n<body>\n<script>\n  console.log(1);\n</script>\n<p>console.log(2)</p>\n</body>\n</html>\n";
    let h = Harness::new(&[("index.html", page)]);
    rewrite_all(
        &h,
        json!({"pattern": "console.log($A)", "rewrite": "logger.info($A)", "language": "javascript"}),
    )
    .await;
    assert_eq!(h.read("index.html"), page.replace("console.log(1)", "logger.info(1)"));
}

#[tokio::test]
async fn a_rewrite_keeps_its_guarantees_in_the_languages_ast_grep_adds() {
    let h = Harness::new(&[
        (
            "A.java",
            "class A {\n    void f() {\n        dispose(x);\n    }\n    void dispose(Object o) {}\n}\n",
        ),
        ("a.rb", "def f\n  dispose(x)\nend\n"),
        ("a.kt", "fun f() {\n    dispose(x)\n}\n"),
    ]);
    rewrite_all(&h, json!({"pattern": "dispose($X)", "rewrite": "close($X)"})).await;
    assert_eq!(
        h.read("A.java"),
        "class A {\n    void f() {\n        close(x);\n    }\n    void dispose(Object o) {}\n}\n"
    );
    assert_eq!(h.read("a.rb"), "def f\n  close(x)\nend\n");
    assert_eq!(h.read("a.kt"), "fun f() {\n    close(x)\n}\n");
    // A rewrite that would break a file's syntax is refused there too.
    let text =
        h.err("ast_edit", json!({"pattern": "close($X)", "rewrite": "close($X", "language": "java"})).await;
    assert!(text.contains("syntax error"), "{text}");
    assert!(h.read("A.java").contains("close(x);"), "nothing written");
}

#[tokio::test]
async fn review_cases_a_markdown_file_a_held_semicolon_and_deep_nesting() {
    let h = Harness::new(&[
        ("README.md", "# console.log(1)\n"),
        ("app.js", "console.log(2);\n"),
        ("A.cs", "class A {\n    void F(bool v) {\n        if (v) return;\n    }\n}\n"),
        ("deep.py", "x = f(f(f(f(1))))\n"),
    ]);
    // A Markdown file reads the pattern as text binding nothing; it does not refuse the edit.
    rewrite_all(&h, json!({"pattern": "console.log($A)", "rewrite": "logger.info($A)"})).await;
    assert_eq!(h.read("app.js"), "logger.info(2);\n");
    // The `;` of the `return` the capture holds is not added again after the block.
    rewrite_all(&h, json!({"pattern": "if ($C) $S", "rewrite": "if ($C) { $S }", "language": "csharp"}))
        .await;
    assert_eq!(h.read("A.cs"), "class A {\n    void F(bool v) {\n        if (v) { return; }\n    }\n}\n");
    // The innermost match is inside a match the capture leaves out: rewritten too.
    let text = rewrite_all(&h, json!({"pattern": "f(f($X))", "rewrite": "g($X)"})).await;
    assert_eq!(h.read("deep.py"), "x = g(g(1))\n", "{text}");
}

#[tokio::test]
async fn a_broken_script_elsewhere_in_a_page_does_not_turn_the_syntax_check_off() {
    let page = "<html>\n<script type=\"text/plain\">not ) code</script>\n<script>\nconsole.log(1);\n</script>\n</html>\n";
    let h = Harness::new(&[("index.html", page)]);
    let text = h
        .err(
            "ast_edit",
            json!({"pattern": "console.log($A)", "rewrite": "logger.info($A", "language": "javascript"}),
        )
        .await;
    assert!(text.contains("syntax error"), "{text}");
}

#[tokio::test]
async fn accepting_a_rewrite_of_a_hard_linked_file_says_its_other_link_keeps_the_old_content() {
    let h = three_files();
    std::fs::hard_link(h.path("a.py"), h.path("a_copy.txt")).unwrap();
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)", "path": "a.py"})).await;
    let r = h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(
        r.text.contains("accepted edit_1: wrote 1 replacement in 1 file: a.py\nnote: `a.py` had 1 other hard link; it keeps the old content"),
        "{}",
        r.text
    );
    assert_eq!(r.data.as_ref().unwrap()["linked"], json!([["a.py", 1]]));
    assert_eq!(h.read("a_copy.txt"), "import os\nold(1)\n");
}

#[tokio::test]
async fn a_rewrite_with_an_unnamed_list_says_it_binds_nothing_and_how_to_name_it() {
    let h = Harness::new(&[("b.py", "foo(1, 2)\nfoo(x)\n")]);
    let text =
        h.err("ast_edit", json!({"pattern": "foo($$$)", "rewrite": "bar($$$, 0)", "path": "b.py"})).await;
    assert!(text.contains("uses `$$$`, which binds nothing"), "{text}");
    assert!(text.contains("pattern `foo($$$ARGS)` and rewrite `bar($$$ARGS, 0)`"), "{text}");
    assert!(!text.contains("syntax error"), "the cause, not a symptom: {text}");
    // The suggestion, taken, stages what was meant.
    let staged = h
        .ok("ast_edit", json!({"pattern": "foo($$$ARGS)", "rewrite": "bar($$$ARGS, 0)", "path": "b.py"}))
        .await;
    assert!(staged.text.contains("2 replacements"), "{}", staged.text);
}
