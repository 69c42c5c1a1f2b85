//! Answers say truthfully whether they are about the content now on disk:
//! diagnostics are **fresh** only then, **pending** when nothing is known,
//! **stale since …** when the list is about older content; a rename whose
//! files changed while it was computed writes nothing, and one whose edit
//! writes anything but the new name is refused whole; the after-write
//! delta is taken against the previous fresh state, whoever wrote the file;
//! and without file events a stat scan keeps answers right. A fake server
//! (tests/fixtures/lsp/quiet_lsp.py) supplies the silences and the slow
//! rename a real one cannot be made to produce on demand; the rest runs
//! against pyright, and typescript-language-server (whose lists carry no
//! version: its tsserver is asked instead).

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::Harness;
use serde_json::json;

fn pyright() {
    common::require("pyright", &["--version"], "npm install -g pyright");
}

/// A run whose Python files are served by the quiet fake server.
fn quiet_run(files: &[(&str, &str)]) -> Harness {
    quiet_run_with(files, "")
}

/// [`quiet_run`] with `extra` lines in the server's `tether.toml` entry.
fn quiet_run_with(files: &[(&str, &str)], extra: &str) -> Harness {
    let h = Harness::new(files);
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/quiet_lsp.py");
    std::fs::copy(&fake, h.path("quiet_lsp.py")).unwrap();
    h.write("pyproject.toml", "");
    h.write(
        "tether.toml",
        &format!(
            "[[server]]\nid = \"quiet\"\ncommand = {:?}\nargs = [\"quiet_lsp.py\"]\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\n{extra}",
            common::real_python()
        ),
    );
    // tether.toml is read when the run starts.
    Harness {
        rt: tether::Runtime::builder()
            .trust(tether::Trust::Trusted)
            .workdir(h.root())
            .connect_all()
            .start()
            .unwrap(),
        dir: h.dir,
    }
}

fn clock_shape(text: &str) -> bool {
    // "stale since HH:MM:SS UTC"
    text.split("stale since ").nth(1).is_some_and(|rest| {
        let t = &rest[..rest.len().min(12)];
        t.len() == 12 && t.as_bytes()[2] == b':' && t.as_bytes()[5] == b':' && t.ends_with(" UTC")
    })
}

#[tokio::test]
async fn an_old_list_is_labelled_stale_since_and_never_fresh() {
    let h = quiet_run(&[("a.py", "x = 1  # ERR\n")]);
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "a.py"})).await;
    assert!(r.text.starts_with("1 diagnostic(s) for `a.py`, 1 error(s) (fresh):"), "{}", r.text);

    // Changed outside tether; the server never publishes for the new content.
    std::fs::write(h.path("a.py"), "x = 2  # SILENT ERR\ny = 3  # ERR\n").unwrap();
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "a.py"})).await;
    assert!(!r.text.contains("(fresh)"), "{}", r.text);
    assert!(r.text.starts_with("1 diagnostic(s) for `a.py`, 1 error(s) (stale since "), "{}", r.text);
    assert!(clock_shape(&r.text), "{}", r.text);
    assert!(
        r.text.contains(
            "about the content before then, because quiet has not published diagnostics for the content now on disk within 15 s"
        ),
        "{}",
        r.text
    );
    let data = r.data.unwrap();
    assert_eq!((data["fresh"].as_bool(), data["freshness"].as_str()), (Some(false), Some("stale")));

    // Fixed outside tether: fresh again, and only what the content holds.
    std::fs::write(h.path("a.py"), "x = 4\n").unwrap();
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "a.py"})).await;
    assert_eq!(
        r.text,
        "no diagnostics for `a.py` (fresh)\nnote: changed since your previous call: a.py (by a program outside tether)"
    );
}

#[tokio::test]
async fn a_file_deleted_and_created_again_is_not_answered_from_its_last_opening() {
    let h = quiet_run(&[("a.py", "x = 1  # ERR\n"), ("b.py", "y = 1\n")]);
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "a.py"})).await;
    assert!(r.text.starts_with("1 diagnostic(s) for `a.py`"), "{}", r.text);
    // Deleted: the server closes it and publishes an empty list with its
    // last version. Created again with two errors: that old empty list
    // must not pass for the new content.
    std::fs::remove_file(h.path("a.py")).unwrap();
    let r = h.ok("lsp", json!({"action": "hover", "file": "b.py", "line": 1, "symbol": "y"})).await;
    assert_eq!(r.text, "quiet hover", "a query in between takes in the delete");
    // The server takes a second to publish for the new content (SLOW).
    std::fs::write(h.path("a.py"), "x = 1  # ERR SLOW\ny = 2  # ERR\n").unwrap();
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "a.py"})).await;
    assert!(r.text.starts_with("2 diagnostic(s) for `a.py`, 2 error(s) (fresh):"), "{}", r.text);
}

#[tokio::test]
async fn nothing_known_for_new_content_is_pending() {
    let h = quiet_run(&[("b.py", "y = 1  # SILENT\n")]);
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "b.py"})).await;
    assert_eq!(
        r.text,
        "no diagnostics known for `b.py` (pending: quiet has not published diagnostics for the content now on disk within 15 s)"
    );
    assert_eq!(r.data.unwrap()["freshness"], "pending");
}

#[tokio::test]
async fn a_rename_whose_files_changed_meanwhile_writes_nothing() {
    let h = quiet_run(&[
        ("a.py", "def old_name():\n    return 1\n"),
        ("other.py", "from a import old_name\nold_name()\n"),
    ]);
    // Control: with nothing changing meanwhile, the rename is written.
    let r = h
        .ok("lsp_rename", json!({"file": "a.py", "line": 1, "symbol": "old_name", "new_name": "mid_name"}))
        .await;
    assert!(r.text.starts_with("renamed `old_name` → `mid_name`: 3 edit(s) in 2 file(s)"), "{}", r.text);
    assert_eq!(h.read("other.py"), "from a import mid_name\nmid_name()\n");

    // The server takes 2 s; a file the edit touches changes 0.5 s in.
    h.write("rename_delay", "2");
    let rename = h
        .call("lsp_rename", json!({"file": "a.py", "line": 1, "symbol": "mid_name", "new_name": "new_name"}));
    let outside = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        std::fs::write(h.path("other.py"), "# a line above\nfrom a import mid_name\nmid_name()\n").unwrap();
    };
    let (r, ()) = tokio::join!(rename, outside);
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("`other.py` (changed) changed on disk while quiet computed the rename")
            && r.text.contains("nothing was written"),
        "{}",
        r.text
    );
    assert_eq!(h.read("a.py"), "def mid_name():\n    return 1\n", "byte for byte");
    assert_eq!(
        h.read("other.py"),
        "# a line above\nfrom a import mid_name\nmid_name()\n",
        "the outside write is kept"
    );

    // Asked again, it is computed on the new content and written.
    std::fs::remove_file(h.path("rename_delay")).unwrap();
    let r = h
        .ok("lsp_rename", json!({"file": "a.py", "line": 1, "symbol": "mid_name", "new_name": "new_name"}))
        .await;
    assert!(r.text.starts_with("renamed `mid_name` → `new_name`: 3 edit(s) in 2 file(s)"), "{}", r.text);
    assert_eq!(h.read("other.py"), "# a line above\nfrom a import new_name\nnew_name()\n");
}

const CORE: &str = "def target(x):\n    return x\n";
const USER: &str = "from core import target\n\n\ndef use_0():\n    return target(0)\n";

/// How many requests of `method` the quiet server has been sent.
fn asked(h: &Harness, method: &str) -> usize {
    std::fs::read_to_string(h.path("asked.log")).unwrap_or_default().lines().filter(|l| *l == method).count()
}

/// Waits until the quiet server has been sent `n` requests of `method`.
async fn until_asked(h: &Harness, method: &str, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while asked(h, method) < n {
        assert!(std::time::Instant::now() < deadline, "{method} was not asked {n} times");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Another program's write is truncate-then-fill: a server that read the
/// file in between answers without it, and such an answer must never
/// read as complete once the file is whole again.
#[tokio::test]
async fn a_cross_file_answer_a_file_was_rewritten_under_is_asked_again() {
    let h = quiet_run(&[("core.py", CORE), ("m0.py", USER)]);
    let refs = json!({"action": "references", "file": "core.py", "line": 1, "symbol": "target"});
    let r = h.ok("lsp", refs.clone()).await;
    assert!(r.text.starts_with("3 references to `target` in 2 files"), "{}", r.text);

    // Caught half-written: empty when the server takes its snapshot,
    // whole again before it answers.
    h.write("references_delay", "1");
    std::fs::File::create(h.path("m0.py")).unwrap();
    let call = h.call("lsp", refs.clone());
    let outside = async {
        until_asked(&h, "textDocument/references", 2).await;
        std::fs::write(h.path("m0.py"), USER).unwrap();
    };
    let (r, ()) = tokio::join!(call, outside);
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("3 references to `target` in 2 files"), "{}", r.text);
    assert_eq!(asked(&h, "textDocument/references"), 3, "asked again once the file was whole");

    // The same for workspace symbols.
    std::fs::File::create(h.path("m0.py")).unwrap();
    let call = h.call("lsp", json!({"action": "symbols", "query": "use_"}));
    let outside = async {
        until_asked(&h, "workspace/symbol", 1).await;
        std::fs::write(h.path("m0.py"), USER).unwrap();
    };
    let (r, ()) = tokio::join!(call, outside);
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("use_0 (function, python) m0.py:4"), "{}", r.text);
    assert_eq!(asked(&h, "workspace/symbol"), 2, "asked again once the file was whole");
}

#[tokio::test]
async fn a_question_whose_server_is_restarted_meanwhile_is_asked_of_the_new_one() {
    let h = quiet_run(&[("core.py", CORE), ("m0.py", USER)]);
    let refs = json!({"action": "references", "file": "core.py", "line": 1, "symbol": "target"});
    h.ok("lsp", refs.clone()).await;
    // The old process answers after the restart began: from what it had,
    // never taken.
    h.write("references_delay", "1.5");
    let call = h.call("lsp", refs.clone());
    let restart = async {
        until_asked(&h, "textDocument/references", 2).await;
        h.ok("lsp", json!({"action": "reload", "file": "core.py"})).await
    };
    let (r, reloaded) = tokio::join!(call, restart);
    assert!(!reloaded.is_error, "{}", reloaded.text);
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("3 references to `target` in 2 files"), "{}", r.text);
    assert_eq!(asked(&h, "textDocument/references"), 3, "asked again of the new process");
}

#[tokio::test]
async fn an_answer_files_keep_changing_under_says_so_after_three_asks() {
    let h = quiet_run(&[("core.py", CORE), ("m0.py", USER)]);
    let refs = json!({"action": "references", "file": "core.py", "line": 1, "symbol": "target"});
    h.ok("lsp", refs.clone()).await;
    h.write("references_delay", "0.6");
    let done = std::sync::atomic::AtomicBool::new(false);
    let call = async {
        let r = h.call("lsp", refs.clone()).await;
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    };
    // Rewritten every 150 ms for as long as the call runs: each answer
    // is overtaken.
    let outside = async {
        let mut n = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            n += 1;
            std::fs::write(h.path("m0.py"), format!("{USER}# rewrite {n}\n")).unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    };
    let (r, ()) = tokio::join!(call, outside);
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(
            "note: `m0.py` changed on disk while quiet computed this answer, 3 times running, so it may be incomplete about it — ask again"
        ),
        "{}",
        r.text
    );
    assert_eq!(asked(&h, "textDocument/references"), 4, "the first call, then three asks");
}

#[tokio::test]
async fn a_rename_edit_that_writes_anything_but_the_new_name_refuses_the_whole_rename() {
    let a = "def foo():\n    return 1\n\n\nx = foo()\n";
    let b = "from a import foo\nfoo()\n";
    let h = quiet_run(&[("a.py", a), ("b.py", b)]);
    let edit = |line: u32, start: u32, end_line: u32, end: u32, text: &str| json!({"range": {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}, "newText": text});
    let good_b = json!([edit(0, 14, 0, 17, "bar"), edit(1, 0, 1, 3, "bar")]);
    let cases = [
        // (a) the wrong new text in one edit of one file
        (
            json!({"a.py": [edit(0, 4, 0, 7, "bar"), edit(4, 4, 4, 7, "qux_zz")], "b.py": good_b}),
            "`a.py`",
            "line 5 replaces `foo` with `qux_zz`",
        ),
        // (b) one edit spanning many lines
        (json!({"a.py": [edit(0, 4, 4, 7, "bar")], "b.py": good_b}), "`a.py`", "line 1 replaces `foo():"),
    ];
    for (reply, file, says) in cases {
        h.write("rename_reply.json", &json!({"changes": reply}).to_string());
        let r = h
            .call("lsp_rename", json!({"file": "a.py", "line": 1, "symbol": "foo", "new_name": "bar"}))
            .await;
        assert!(r.is_error, "{}", r.text);
        assert!(r.text.contains(&format!("in {file}")) && r.text.contains(says), "{}", r.text);
        assert!(r.text.contains("nothing was written"), "{}", r.text);
        assert_eq!((h.read("a.py"), h.read("b.py")), (a.to_string(), b.to_string()), "byte for byte");
    }
    // (c) a correct edit is written, byte for byte.
    h.write(
        "rename_reply.json",
        &json!({"changes": {"a.py": [edit(0, 4, 0, 7, "bar"), edit(4, 4, 4, 7, "bar")], "b.py": good_b}})
            .to_string(),
    );
    let r = h.ok("lsp_rename", json!({"file": "a.py", "line": 1, "symbol": "foo", "new_name": "bar"})).await;
    assert!(r.text.starts_with("renamed `foo` → `bar`: 4 edit(s) in 2 file(s)"), "{}", r.text);
    assert_eq!(h.read("a.py"), "def bar():\n    return 1\n\n\nx = bar()\n");
    assert_eq!(h.read("b.py"), "from a import bar\nbar()\n");
}

#[tokio::test]
async fn the_write_delta_is_taken_against_the_previous_fresh_state_whoever_wrote_it() {
    pyright();
    let h = Harness::new(&[("pyproject.toml", ""), ("app.py", "x = 1\n")]);
    h.ok("read", json!({"path": "app.py"})).await;
    let r = h.ok("write", json!({"path": "app.py", "content": "print(first_missing)\n"})).await;
    assert!(r.text.contains("1 new, 0 resolved") && r.text.contains("first_missing"), "{}", r.text);

    // Outside tether: the first problem fixed, a second introduced.
    std::fs::write(h.path("app.py"), "print(second_missing)\n").unwrap();
    let d = h.ok("lsp", json!({"action": "diagnostics", "file": "app.py"})).await.text;
    assert!(d.contains("(fresh)") && d.contains("second_missing") && !d.contains("first_missing"), "{d}");

    // tether's next write (the file read again: it changed) adds a third:
    // that is the only news, and the first was resolved by the outside
    // write, not by this one.
    h.ok("read", json!({"path": "app.py"})).await;
    let r = h
        .ok("write", json!({"path": "app.py", "content": "print(second_missing)\nprint(third_missing)\n"}))
        .await;
    assert!(r.text.contains("diagnostics (fresh) for `app.py`: 1 new, 0 resolved"), "{}", r.text);
    assert!(r.text.contains("third_missing") && !r.text.contains("first_missing"), "{}", r.text);
    assert!(!r.text.contains("+ app.py:1:"), "second_missing was there before this write: {}", r.text);
}

#[tokio::test]
async fn without_events_a_stat_scan_keeps_answers_right_and_status_says_so() {
    pyright();
    let h = Harness::new(&[
        ("pyproject.toml", ""),
        ("tether.toml", "[watch]\nmode = \"scan\"\n"),
        ("a.py", "def f():\n    return 1\n"),
        ("b.py", "from a import f\n\nf()\n"),
    ]);
    let refs = json!({"action": "references", "file": "a.py", "line": 1, "symbol": "f"});
    let total = |r: &tether::ToolResult| r.data.as_ref().unwrap()["total"].as_u64().unwrap();
    assert_eq!(total(&h.ok("lsp", refs.clone()).await), 3);
    let status = h.ok("lsp", json!({"action": "status"})).await.text;
    assert!(
        status.starts_with(
            "file watching: a stat scan of 4 file(s) before every query, because tether.toml asks for it ([watch] mode = \"scan\")"
        ),
        "{status}"
    );
    std::fs::write(h.path("b.py"), "from a import f\n\nf()\nf()\n").unwrap();
    assert_eq!(total(&h.ok("lsp", refs.clone()).await), 4);
    h.write("new/c.py", "from a import f\nf()\n");
    assert_eq!(total(&h.ok("lsp", refs.clone()).await), 6);
    std::fs::remove_file(h.path("new/c.py")).unwrap();
    assert_eq!(total(&h.ok("lsp", refs).await), 4);
}

/// A small project with `format_price` imported and called in five files:
/// eleven references with the declaration.
fn priced_project() -> Vec<(String, String)> {
    let mut files = vec![
        ("pyproject.toml".to_string(), String::new()),
        ("shop/__init__.py".to_string(), String::new()),
        (
            "shop/money.py".to_string(),
            "def format_price(cents: int) -> str:\n    return f\"{cents / 100:.2f}\"\n".to_string(),
        ),
    ];
    for k in 0..5 {
        files.push((
            format!("shop/use_{k}.py"),
            format!("from shop.money import format_price\n\n\ndef show_{k}() -> str:\n    return format_price({k})\n"),
        ));
    }
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_caller_of_a_cold_server_waits_for_it_to_load_not_only_the_first() {
    pyright();
    // Cold runs, each asked by several conversations at once (and twice
    // in one of them): every answer is the whole list, or says it may not be.
    for round in 0..3 {
        let files = priced_project();
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        let h = Harness::new(&refs);
        let ask =
            json!({"action": "references", "file": "shop/money.py", "line": 1, "symbol": "format_price"});
        let calls = (0..4)
            .map(|k| h.rt.call_in(if k == 3 { "c0" } else { ["c0", "c1", "c2"][k] }, "lsp", ask.clone()));
        let answers =
            tokio::time::timeout(common::FANOUT_TIMEOUT, futures::future::join_all(calls)).await.unwrap();
        for r in answers {
            assert!(!r.is_error, "{}", r.text);
            let total = r.data.as_ref().unwrap()["total"].as_u64().unwrap();
            assert!(
                total == 11 || r.text.contains("may be incomplete"),
                "round {round}: a short list that reads as complete: {}",
                r.text
            );
        }
    }
}

#[tokio::test]
async fn a_position_is_computed_on_the_text_the_server_holds_when_it_reads_the_request() {
    // b.py's first publication takes 3 s; 1 s in, lines are inserted above
    // the symbol outside tether. The request goes out after that edit has
    // been synced: asked on the old line, it would land on `# one`.
    let b = "# SLOW ECHO\ndef target():\n    pass\n";
    let h = quiet_run(&[("a.py", "ECHO = 1\n"), ("b.py", b)]);
    h.write("slow_delay", "3");
    let warm = h.ok("lsp", json!({"action": "hover", "file": "a.py", "line": 1, "symbol": "ECHO"})).await;
    assert_eq!(warm.text, "quiet hover of `ECHO`");
    let ask = h.call("lsp", json!({"action": "hover", "file": "b.py", "line": 2, "symbol": "target"}));
    let outside = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        std::fs::write(h.path("b.py"), "# SLOW ECHO\n# one\n# two\ndef target():\n    pass\n").unwrap();
    };
    let (r, ()) = tokio::join!(ask, outside);
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.starts_with("quiet hover of `target`"),
        "asked on the text the server did not hold: {}",
        r.text
    );
    assert!(r.text.contains("line 2 is now line 4"), "{}", r.text);

    // The line asked about is gone from the text the server holds: an
    // error that says so, never an answer about another line.
    h.write("c.py", b);
    let ask = h.call("lsp", json!({"action": "hover", "file": "c.py", "line": 2, "symbol": "target"}));
    let outside = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        std::fs::write(h.path("c.py"), "# SLOW ECHO\ndef renamed():\n    pass\n").unwrap();
    };
    let (r, ()) = tokio::join!(ask, outside);
    assert!(
        r.is_error
            && r.text.contains("changed on disk while the call waited")
            && r.text.contains("no longer in it"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_check_the_servers_own_restart_cancelled_is_not_taken_for_a_finished_one() {
    // rust-analyzer restarts its check by itself when its loading is done;
    // the cancelled check ends as a finished one does, and the new one
    // begins after a debounce. The fake does the same on the second save.
    let h = quiet_run_with(&[("lib.py", "x = 1\n"), ("checker", "")], "check_progress = \"quiet/check\"\n");
    let ask = json!({"action": "diagnostics", "file": "lib.py"});
    let r = h.ok("lsp", ask.clone()).await;
    assert_eq!(r.text, "no diagnostics for `lib.py` (fresh)");
    h.write("restart_on_save", "");
    std::fs::write(h.path("lib.py"), "x = 1\ny = x  # MOVED\n").unwrap();
    let r = h.ok("lsp", ask).await;
    assert!(r.text.contains("use of moved value") && r.text.contains("(fresh)"), "{}", r.text);
    assert!(!h.path("restart_on_save").exists(), "the save went through the restart");
}

#[tokio::test]
async fn a_check_during_the_servers_own_work_with_no_restart_is_unconfirmed_once() {
    let h = quiet_run_with(&[("lib.py", "x = 1\n"), ("checker", "")], "check_progress = \"quiet/check\"\n");
    let ask = json!({"action": "diagnostics", "file": "lib.py"});
    h.ok("lsp", ask.clone()).await;
    h.write("work_during_check", "");
    std::fs::write(h.path("lib.py"), "x = 1\ny = x  # MOVED\n").unwrap();
    let r = h.ok("lsp", ask.clone()).await;
    assert!(r.text.contains("use of moved value"), "{}", r.text);
    assert!(r.text.contains("unconfirmed") && r.text.contains("may have been cancelled"), "{}", r.text);
    // Waited out once: the same content is not waited for again.
    let again = h.ok("lsp", ask).await;
    assert!(again.text.contains("use of moved value") && again.text.contains("(fresh)"), "{}", again.text);
}

#[tokio::test]
async fn a_check_whose_list_is_published_after_its_end_is_waited_for() {
    let h = quiet_run_with(&[("lib.py", "x = 1\n"), ("checker", "")], "check_progress = \"quiet/check\"\n");
    let ask = json!({"action": "diagnostics", "file": "lib.py"});
    h.ok("lsp", ask.clone()).await;
    h.write("publish_after_end", "");
    std::fs::write(h.path("lib.py"), "x = 1\ny = x  # MOVED\n").unwrap();
    let r = h.ok("lsp", ask).await;
    assert!(r.text.contains("use of moved value") && r.text.contains("(fresh)"), "{}", r.text);
    assert!(!h.path("publish_after_end").exists(), "the check went through the late publication");
}

#[tokio::test]
async fn rust_analyzer_diagnostics_wait_for_its_cargo_check_of_the_content_on_disk() {
    common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer");
    common::require("cargo", &["--version"], "install a Rust toolchain with rustup");
    let clean = "pub fn f() -> u32 {\n    1\n}\n";
    let h = Harness::new(&[
        (
            "Cargo.toml",
            "[package]\nname = \"checked\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        ("src/lib.rs", clean),
    ]);
    let ask = json!({"action": "diagnostics", "file": "src/lib.rs"});
    // A cold rust-analyzer indexes the standard library first: on a busy
    // machine past one call's wait, which the answer then says ("pending").
    let first = common::until_answer(&h, "lsp", ask.clone(), |t| !t.contains("(pending")).await;
    assert_eq!(first, "no diagnostics for `src/lib.rs` (fresh)");
    // Only `cargo check` finds a use of a moved value; rust-analyzer's own
    // analysis does not. Written outside tether, with no editor to save it.
    let moved = format!(
        "{clean}\npub fn g() -> String {{\n    let s = String::new();\n    let t = s;\n    drop(t);\n    s\n}}\n"
    );
    for round in 0..4 {
        std::fs::write(h.path("src/lib.rs"), &moved).unwrap();
        let r = h.ok("lsp", ask.clone()).await;
        assert!(
            r.text.contains("(fresh)") && r.text.contains("use of moved value"),
            "round {round}: {}",
            r.text
        );
        std::fs::write(h.path("src/lib.rs"), clean).unwrap();
        let r = h.ok("lsp", ask.clone()).await;
        assert_eq!(common::answer_only(&r.text), "no diagnostics for `src/lib.rs` (fresh)", "round {round}");
    }
}

#[tokio::test]
async fn a_write_rust_analyzers_check_finds_broke_another_file_says_so() {
    common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer");
    common::require("cargo", &["--version"], "install a Rust toolchain with rustup");
    let h = Harness::new(&[
        (
            "Cargo.toml",
            "[package]\nname = \"reach\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        ),
        ("src/lib.rs", "pub mod a;\npub mod b;\n"),
        ("src/a.rs", "pub fn f() -> u32 {\n    1\n}\n"),
        ("src/b.rs", "pub fn g() -> u32 {\n    crate::a::f()\n}\n"),
    ]);
    let ask = json!({"action": "diagnostics", "file": "src/a.rs"});
    let first = common::until_answer(&h, "lsp", ask, |t| !t.contains("(pending")).await;
    assert_eq!(first, "no diagnostics for `src/a.rs` (fresh)");
    h.ok("read", json!({"path": "src/a.rs"})).await;
    let r = h
        .ok("edit", json!({"path": "src/a.rs", "old_string": "-> u32 {\n    1", "new_string": "-> String {\n    String::new()"}))
        .await;
    assert!(
        // With the error, its related place as a hint of its own.
        r.text.contains(
            "other files: rust-analyzer's check of its workspace after the write: 2 new, 0 resolved in them"
        ),
        "{}",
        r.text
    );
    assert!(r.text.contains("+ src/b.rs:2:5: error [E0308] mismatched types"), "{}", r.text);
}

/// Two CPU-bound processes, killed when dropped.
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn two() -> Busy {
        let spin = || {
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(std::process::Stdio::null())
                .spawn()
                .expect("sh runs")
        };
        Busy(vec![spin(), spin()])
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test]
async fn typescript_diagnostics_of_an_outside_edit_asked_at_once_under_load_are_fresh() {
    super::tool::tsls();
    let clean = "export const v: number = 1;\n";
    let h = Harness::new(&[
        ("tsconfig.json", r#"{"compilerOptions": {"strict": true}, "include": ["**/*.ts"]}"#),
        ("a.ts", clean),
    ]);
    let ask = || h.ok("lsp", json!({"action": "diagnostics", "file": "a.ts"}));
    let first = ask().await;
    assert_eq!(first.data.as_ref().unwrap()["freshness"], "fresh", "{}", first.text);
    let _busy = Busy::two();
    for k in 0..10 {
        // An error only this round's content has, written outside tether.
        h.write("a.ts", &format!("export const v: number = missing{k};\n"));
        let r = ask().await;
        assert_eq!(r.data.as_ref().unwrap()["freshness"], "fresh", "round {k}: {}", r.text);
        assert!(!r.text.contains("unconfirmed"), "round {k}: {}", r.text);
        assert!(r.text.contains(&format!("Cannot find name 'missing{k}'")), "round {k}: {}", r.text);
        // Back to clean: an empty list that stays empty is one the server
        // never publishes again, and it is fresh all the same.
        h.write("a.ts", clean);
        let r = ask().await;
        assert_eq!(r.data.as_ref().unwrap()["freshness"], "fresh", "round {k}, clean: {}", r.text);
        assert!(!r.text.contains("missing"), "round {k}, clean: {}", r.text);
    }
}
