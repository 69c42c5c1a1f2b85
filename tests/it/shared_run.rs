//! Conversations sharing one run: a `write` lands only over what its
//! conversation saw, an `edit` says what moved under it and who moved it,
//! and a conversation's view of the files goes when it ends.

use serde_json::json;
use tether::{Resource, ToolResult};

use crate::common::Harness;

const CHECKOUT: &str = "def total(items):\n    return sum(i.price for i in items)\n";

fn shop() -> Harness {
    Harness::with(&[("shop/checkout.py", CHECKOUT), ("shop/logo.png", "")], |b| b.connect(Resource::Parsers))
}

async fn call(h: &Harness, conversation: &str, tool: &str, args: serde_json::Value) -> ToolResult {
    h.rt.call_in(conversation, tool, args).await
}

/// Conversation B's edit of the checkout: `sum(` → `round(sum(`.
async fn b_rounds_the_sum(h: &Harness) {
    let edit = json!({"path": "shop/checkout.py", "old_string": "sum(", "new_string": "round(sum("});
    let r = call(h, "B", "edit", edit).await;
    assert!(!r.is_error, "{}", r.text);
}

/// Conversation A stages `area($W, $H)` → `area($H, $W)`; its edit id.
async fn a_swaps_the_sides(h: &Harness) -> String {
    let r = call(h, "A", "ast_edit", json!({"pattern": "area($W, $H)", "rewrite": "area($H, $W)"})).await;
    let id = r.text.split("edit_id \"").nth(1).and_then(|s| s.split('"').next());
    id.unwrap_or_else(|| panic!("{}", r.text)).to_string()
}

fn read_args() -> serde_json::Value {
    json!({"path": "shop/checkout.py"})
}

fn write_args(content: &str) -> serde_json::Value {
    json!({"path": "shop/checkout.py", "content": content})
}

#[tokio::test]
async fn a_write_lands_only_over_what_its_conversation_saw() {
    let h = shop();
    // Never read: refused, the file as it was.
    let r = call(&h, "A", "write", write_args("x = 1\n")).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("this conversation has not read it")
            && r.text.contains("read it first, or use `edit`"),
        "{}",
        r.text
    );
    assert_eq!(h.read("shop/checkout.py"), CHECKOUT);

    // A reads, B edits, A writes its own version: refused, B's edit kept.
    assert!(!call(&h, "A", "read", read_args()).await.is_error);
    b_rounds_the_sum(&h).await;
    let edited = h.read("shop/checkout.py");
    let r = call(&h, "A", "write", write_args("def total(items):\n    return 0\n")).await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("`shop/checkout.py` changed since you read it at "), "{}", r.text);
    assert!(r.text.contains(" UTC (by conversation B): read it again"), "{}", r.text);
    assert_eq!(h.read("shop/checkout.py"), edited, "B's edit is not lost");

    // Read again, the write lands.
    call(&h, "A", "read", read_args()).await;
    let r = call(&h, "A", "write", write_args("def total(items):\n    return 0\n")).await;
    assert!(!r.is_error, "{}", r.text);

    // A program outside tether changes it: said so.
    call(&h, "A", "read", read_args()).await;
    h.write("shop/checkout.py", "# by hand\n");
    let r = call(&h, "A", "write", write_args("x = 2\n")).await;
    assert!(r.text.contains("(by a program outside tether)"), "{}", r.text);

    // A new file needs no read; a binary one is refused plainly.
    let r = call(&h, "A", "write", json!({"path": "shop/new.py", "content": "y = 1\n"})).await;
    assert!(!r.is_error && r.text.starts_with("created `shop/new.py`"), "{}", r.text);
    std::fs::write(h.path("shop/logo.png"), [0x89, b'P', b'N', b'G', 0xff, 0x00]).unwrap();
    let r = call(&h, "A", "write", json!({"path": "shop/logo.png", "content": "text"})).await;
    assert!(r.is_error && r.text.contains("is a binary file"), "{}", r.text);
    let r = call(&h, "A", "write", json!({"path": "shop", "content": "text"})).await;
    assert!(r.is_error && r.text.contains("is a directory"), "{}", r.text);
}

#[tokio::test]
async fn an_edit_lands_and_says_what_moved_under_it_and_who_moved_it() {
    let h = shop();
    call(&h, "A", "read", read_args()).await;
    call(&h, "B", "read", read_args()).await;
    let r = call(&h, "A", "edit", json!({"path": "shop/checkout.py", "old_string": "def total(items):", "new_string": "def total(items, tax=0):"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(!r.text.contains("changed since"), "A saw the file as it was: {}", r.text);
    // B's view is older: its edit still lands, and it learns of A's.
    let r = call(
        &h,
        "B",
        "edit",
        json!({"path": "shop/checkout.py", "old_string": "sum(", "new_string": "round(sum("}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("note: `shop/checkout.py` changed since you last saw it at "), "{}", r.text);
    assert!(r.text.contains("(by conversation A)"), "{}", r.text);
    assert!(
        r.text.contains("-def total(items):") && r.text.contains("+def total(items, tax=0):"),
        "{}",
        r.text
    );
    assert_eq!(
        h.read("shop/checkout.py"),
        "def total(items, tax=0):\n    return round(sum(i.price for i in items)\n"
    );
    // A patch from A, after B's edit, says so too.
    let patch = "--- a/shop/checkout.py\n+++ b/shop/checkout.py\n@@ -1,2 +1,2 @@\n def total(items, tax=0):\n-    return round(sum(i.price for i in items)\n+    return round(sum(i.price for i in items))\n";
    let r = call(&h, "A", "apply_patch", json!({"patch": patch})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("(by conversation B)"), "{}", r.text);
}

#[tokio::test]
async fn a_conversations_view_goes_with_it() {
    let h = shop();
    call(&h, "A", "read", read_args()).await;
    assert!(h.rt.open_conversation("A").is_ok());
    h.rt.close_conversation("A");
    let r = call(&h, "A", "write", write_args("x = 1\n")).await;
    assert!(
        r.is_error && r.text.contains("has not read it"),
        "a closed conversation saw nothing: {}",
        r.text
    );
}

#[tokio::test]
async fn every_answer_names_what_changed_since_the_conversations_previous_call() {
    // The watcher comes with the language servers.
    let h = Harness::with(
        &[("shop/checkout.py", CHECKOUT), ("shop/cart.txt", "apples\n"), (".gitignore", "build/\n")],
        |b| b.connect(Resource::Parsers).connect(Resource::LanguageServers),
    );
    let grep = json!({"pattern": "def $F($$$A): $$$B", "path": "shop"});
    let first = call(&h, "A", "ast_grep", grep.clone()).await;
    assert!(
        !first.text.contains("changed since your previous call"),
        "a first call has no previous: {}",
        first.text
    );
    call(&h, "A", "read", read_args()).await;
    // A's own write is no news to A, in its own answer or later.
    let r = call(&h, "A", "write", json!({"path": "shop/mine.txt", "content": "mine\n"})).await;
    assert!(!r.is_error && !r.text.contains("changed since your previous call"), "{}", r.text);
    // B edits, a program outside tether writes, an ignored file changes.
    call(&h, "B", "read", read_args()).await;
    b_rounds_the_sum(&h).await;
    h.write("shop/cart.txt", "pears\n");
    h.write("build/out.txt", "generated\n");
    let r = call(&h, "A", "ast_grep", grep.clone()).await;
    let note = r
        .text
        .lines()
        .find(|l| l.starts_with("note: changed since your previous call: "))
        .unwrap_or_else(|| panic!("{}", r.text));
    assert!(note.contains("shop/checkout.py (by conversation B)"), "{note}");
    assert!(note.contains("shop/cart.txt (by a program outside tether)"), "{note}");
    assert!(
        !note.contains("mine.txt") && !note.contains("build/"),
        "own writes and ignored files are not noted: {note}"
    );
    let data = &r.data.as_ref().unwrap()["changed_since_previous_call"];
    assert!(
        data["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "shop/checkout.py" && f["by"] == "by conversation B"),
        "{data}"
    );
    // Nothing changed since: nothing added.
    let r = call(&h, "A", "ast_grep", grep).await;
    assert!(!r.text.contains("changed since your previous call"), "{}", r.text);
    // B is told of its own edit by no one; of A's new file, yes.
    let r = call(&h, "B", "read", read_args()).await;
    let note = r.text.lines().find(|l| l.starts_with("note: changed since")).unwrap_or_default().to_string();
    assert!(!note.contains("checkout.py"), "{note}");
    // B edits again; A's edit lands over that change, unseen: the file
    // holds A's own write now, and A's answer still names B's change.
    let edit = json!({"path": "shop/checkout.py", "old_string": "round(sum(", "new_string": "int(sum("});
    assert!(!call(&h, "B", "edit", edit).await.is_error);
    let edit =
        json!({"path": "shop/checkout.py", "old_string": "def total", "new_string": "def grand_total"});
    let r = call(&h, "A", "edit", edit).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(
            "note: changed since your previous call: shop/checkout.py (by conversation B, before your write)"
        ),
        "{}",
        r.text
    );
    // Said once.
    let r = call(&h, "A", "ast_grep", json!({"pattern": "def $F($$$A): $$$B", "path": "shop"})).await;
    assert!(!r.text.contains("changed since your previous call"), "{}", r.text);
}

#[tokio::test]
async fn a_staged_change_over_files_others_moved_writes_nothing_and_names_who() {
    let h = Harness::with(&[("a.py", "print(area(1, 2))\n"), ("b.py", "print(area(3, 4))\n")], |b| {
        b.connect(Resource::Parsers)
    });
    let id = a_swaps_the_sides(&h).await;
    call(&h, "B", "read", json!({"path": "b.py"})).await;
    call(&h, "B", "edit", json!({"path": "b.py", "old_string": "area(3, 4)", "new_string": "area(3, 5)"}))
        .await;
    h.write("a.py", "print(area(1, 9))\n");
    let r = call(&h, "A", "resolve", json!({"edit_id": id, "action": "accept"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("moved: `a.py` (by a program outside tether), `b.py` (by conversation B)"),
        "{}",
        r.text
    );
    assert_eq!(
        (h.read("a.py"), h.read("b.py")),
        ("print(area(1, 9))\n".into(), "print(area(3, 5))\n".into())
    );
}

#[tokio::test]
async fn what_an_accepted_change_wrote_is_what_its_conversation_saw() {
    let h = Harness::with(&[("a.py", "print(area(1, 2))\n")], |b| b.connect(Resource::Parsers));
    call(&h, "B", "read", json!({"path": "a.py"})).await;
    let id = a_swaps_the_sides(&h).await;
    let r = call(&h, "A", "resolve", json!({"edit_id": id, "action": "accept"})).await;
    assert!(!r.is_error, "{}", r.text);
    // A wrote it through the one commit path: it may write over it.
    let r = call(&h, "A", "write", json!({"path": "a.py", "content": "print(area(2, 1), 'A')\n"})).await;
    assert!(!r.is_error, "{}", r.text);
    // B read it before: refused, naming A.
    let r = call(&h, "B", "write", json!({"path": "a.py", "content": "print('B')\n"})).await;
    assert!(r.is_error && r.text.contains("(by conversation A)"), "{}", r.text);
}
