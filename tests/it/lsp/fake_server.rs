//! A fake language server (tests/fixtures/lsp/fake_lsp.py) for the one
//! thing a real server cannot do on demand: hang on a request, so that it
//! can be killed mid-request or the request cancelled, or log that an
//! answer it sends is partial.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::tool::{fixture, lsp_ok};
use crate::common::{self, Harness};

/// The Python fixture served by `tests/fixtures/lsp/fake_lsp.py`.
fn fake_server_run() -> Harness {
    fake_server_run_with("")
}

/// [`fake_server_run`] with `extra` lines in the server's table entry.
fn fake_server_run_with(extra: &str) -> Harness {
    let h = fixture("python");
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/fake_lsp.py");
    std::fs::copy(&fake, h.path("fake_lsp.py")).unwrap();
    h.write(
        "tether.toml",
        &format!("[[server]]\nid = \"fake\"\ncommand = \"./fake_lsp.py\"\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\npartial_logs = [\"Error computing hover\"]\n{extra}"),
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

#[tokio::test]
async fn a_server_killed_mid_request_fails_the_call_within_a_second_and_restarts() {
    let h = fake_server_run();
    let hover = lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"})).await;
    assert_eq!(hover, "fake hover");
    let pid = common::server_pid(&h).await;
    let grandchild: i32 = std::fs::read_to_string(h.path("fake_child.pid")).unwrap().trim().parse().unwrap();

    let call = h.call("lsp", json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "unit"}));
    let killer = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        // SAFETY: SIGKILL to the server's pid.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        Instant::now()
    };
    let (result, killed_at) = tokio::join!(call, killer);
    let waited = killed_at.elapsed();
    assert!(result.is_error, "{}", result.text);
    assert!(result.text.contains("killed by signal 9"), "names the exit status: {}", result.text);
    assert!(
        result.text.contains("fake language server ready") || result.text.contains("definition requested"),
        "quotes the last stderr lines: {}",
        result.text
    );
    assert!(waited < Duration::from_secs(1), "the waiter was failed {waited:?} after the kill");

    assert!(common::group_gone(pid).await, "the server's process group is gone");
    assert!(common::gone(grandchild).await, "the grandchild {grandchild} was left behind");

    let hover = lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"})).await;
    assert_eq!(common::answer_only(&hover), "fake hover", "the next call restarts the server");
    let tree = h.rt.tree().await.json();
    let server = &tree["children"][2]["children"][0];
    assert_eq!(server["restarts"], 1, "{tree}");
}

#[tokio::test]
async fn a_cancelled_call_cancels_its_request_and_disturbs_nothing_else() {
    let h = fake_server_run();
    assert_eq!(
        lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"})).await,
        "fake hover"
    );
    let args = json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "unit"});
    let (result, answered_after) = h.cancelled_after("lsp", args, Duration::from_millis(500)).await;
    // "At once" against the 30 s request timeout, with room for a loaded machine.
    assert!(answered_after < Duration::from_secs(2), "the call returned at once");
    assert!(result.is_error && result.text.contains("cancelled by the caller"), "{}", result.text);
    let log = h.path("cancelled.log");
    let deadline = Instant::now() + Duration::from_secs(5);
    // The stand-in creates the file, then writes the line: wait for the line.
    while !std::fs::read_to_string(&log).is_ok_and(|t| t.ends_with('\n')) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ids = std::fs::read_to_string(&log).expect("the server received $/cancelRequest");
    assert_eq!(ids.lines().count(), 1, "{ids}");
    assert_eq!(
        common::answer_only(
            &lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"})).await
        ),
        "fake hover",
        "the server is not disturbed"
    );
}

#[tokio::test]
async fn a_server_a_call_waits_on_is_never_idle_however_long_it_takes_to_load() {
    // Idle after 3 s; the document loads in 6.
    let h = fake_server_run_with("\n[lsp]\nidle_limit_minutes = 0.05\n");
    h.write("slow_load", "6");
    let hover = json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"});
    let started = Instant::now();
    let answer = lsp_ok(&h, hover.clone()).await;
    assert_eq!(answer, "fake hover", "answered by the server it waited for, never stopped under it");
    assert!(started.elapsed() >= Duration::from_secs(6), "the call waited for the load");
    let pid = common::server_pid(&h).await;

    // Once the call has let go, the limit runs from then.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(common::pid_of(&h, "lsp-server").await, None, "stopped 3 s after its last call let go");
    assert!(common::group_gone(pid).await, "its process group is gone");
}

#[tokio::test]
async fn an_answer_the_server_logged_as_partial_is_asked_again_and_never_passed_on() {
    let h = fake_server_run();
    let hover = json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"});
    assert_eq!(lsp_ok(&h, hover.clone()).await, "fake hover");
    h.write("partial.count", "2");
    assert_eq!(
        common::answer_only(&lsp_ok(&h, hover.clone()).await),
        "fake hover",
        "asked again until whole"
    );
    h.write("partial.count", "3");
    let r = h.call("lsp", hover.clone()).await;
    assert!(r.is_error, "three partial answers are an error, never the partial text: {}", r.text);
    assert!(
        r.text.contains("fake logged an error each of the 3 times it answered, so its answer would be partial: Error computing hover: fDocument is null"),
        "{}",
        r.text
    );
    assert_eq!(lsp_ok(&h, hover).await, "fake hover", "the next call is whole again");
}

#[tokio::test]
async fn a_references_answer_that_misses_a_file_written_around_it_is_asked_again() {
    let h = fake_server_run();
    let refs = json!({"action": "references", "file": "app.py", "line": 3, "symbol": "unit"});
    let asked =
        |h: &Harness| std::fs::read_to_string(h.path("references.log")).unwrap_or_default().lines().count();
    let quiet = lsp_ok(&h, refs.clone()).await;
    assert!(quiet.starts_with("3 references to `unit` in 1 file"), "{quiet}");
    assert_eq!(asked(&h), 1, "nothing was written around this call: asked once");

    // Written just before the call, and left out of the first answer, as a
    // server that read it between its truncation and its content would:
    // asked again, the answer is whole.
    h.write("other.py", "from app import unit\n# unit, in a comment line\nprint(unit)\n");
    h.write("half_read", "");
    let whole = lsp_ok(&h, refs.clone()).await;
    assert_eq!(asked(&h), 3, "asked once more: {whole}");
    assert!(whole.starts_with("5 references to `unit` in 2 files"), "{whole}");
    assert!(!whole.contains("written on disk"), "{whole}");

    // A file that holds the word where the server, asked again, still
    // lists no use (a local of the same name): it held still, so it was
    // read whole — no note.
    h.write("omits", "");
    h.write("third.py", "unit = 'm'\nprint(unit)\n");
    let held = lsp_ok(&h, refs.clone()).await;
    assert_eq!(asked(&h), 5, "asked once more: {held}");
    assert!(held.starts_with("3 references to `unit` in 1 file"), "{held}");
    assert!(!held.contains("written on disk"), "{held}");

    // Past the window, a file written earlier is not held against the answer.
    tokio::time::sleep(tether::tools::lsp::HALF_WRITTEN_WINDOW + Duration::from_millis(300)).await;
    let later = lsp_ok(&h, refs).await;
    assert!(!later.contains("written on disk"), "{later}");
    assert_eq!(asked(&h), 6);
}

#[tokio::test]
async fn a_rename_answered_with_what_no_edit_can_be_writes_nothing_and_quotes_it() {
    let h = fake_server_run();
    let before = h.read("app.py");
    let r =
        h.call("lsp_rename", json!({"file": "app.py", "line": 3, "symbol": "unit", "new_name": "one"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text
            .starts_with("lsp_rename: fake answered textDocument/rename with what its type does not allow (")
            && r.text.ends_with("): {\"changes\":5}; nothing was written"),
        "{}",
        r.text
    );
    assert_eq!(h.read("app.py"), before);
}

#[tokio::test]
async fn diagnostics_tsserver_never_gives_wait_their_bound_and_say_what_the_list_is() {
    let h = fake_server_run_with("tsserver_requests = true\n");
    h.write("unversioned", "");
    let started = Instant::now();
    let r = h.ok("lsp", json!({"action": "diagnostics", "file": "app.py"})).await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(14) && took < Duration::from_secs(25),
        "bounded by the wait: {took:?}"
    );
    assert!(
        r.text.contains("(unconfirmed: fake's tsserver did not give this content's diagnostics: no answer within 15000 ms; this is the list it published after the content was sent)"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn a_member_search_over_more_files_than_its_cap_says_so_and_how_to_narrow_it() {
    let h = fake_server_run_with("workspace_symbols_types_only = true\n");
    // The stand-in offers workspace symbols when this file is there as it starts.
    h.write("workspace_symbols", "");
    for k in 0..45 {
        h.write(&format!("pkg/m{k:02}.py"), "def zebra_stripe():\n    return 1\n");
    }
    let r = h.call("lsp", json!({"action": "symbols", "query": "zebra"})).await;
    assert!(
        r.text.contains("fake's workspace symbols list types only; members were read from the document symbols of the 40 file(s) holding `zebra`; 5 more file(s) hold it and were not read (at most 40 files, 60 s): give `file` to search one, or a longer query"),
        "{}",
        r.text
    );
}
