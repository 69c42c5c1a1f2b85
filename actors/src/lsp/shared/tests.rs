//! The shared state's bookkeeping: configuration lookups, progress, and
//! the errors a server reports.

use super::*;
use serde_json::json;

#[test]
fn a_logged_error_is_kept_with_its_cause() {
    let shared = ServerState::new(None);
    let log = "Dec 2, 2026, 1:32:20 AM Failed to import projects\norg.eclipse.core.runtime.CoreException: Could not calculate build plan: Plugin x could not be resolved\n\tat a.b(C.java:1)";
    shared.notification("window/logMessage", json!({"type": 1, "message": log}));
    shared.notification("language/status", json!({"type": "Error", "message": "Failed to import projects"}));
    shared.notification("window/logMessage", json!({"type": 3, "message": "just info"}));
    assert_eq!(
        shared.reported_errors(),
        ["Failed to import projects: Could not calculate build plan: Plugin x could not be resolved"]
    );
}

#[test]
fn configuration_sections_are_looked_up_by_path() {
    let shared = ServerState::new(Some(json!({"python": {"analysis": {"mode": "basic"}}})));
    let answer = shared
        .request(
            "workspace/configuration",
            &json!({"items": [{"section": "python.analysis"}, {"section": "nope"}]}),
        )
        .unwrap();
    assert_eq!(answer, json!([{"mode": "basic"}, null]));
}

#[test]
fn a_files_formatting_options_are_its_own_when_asked_and_nothing_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("web");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.ts"), "function f() {\n  if (x) {\n    y();\n  }\n}\n").unwrap();
    std::fs::write(dir.path().join("b.ts"), "\tx();\n").unwrap();
    let shared = ServerState::new(None);
    shared.formats_under(&root);
    let uri = |p: &Path| lsp_types::Url::from_file_path(p).unwrap().to_string();
    let answer = shared
        .request(
            "workspace/configuration",
            &json!({"items": [
                {"scopeUri": uri(&root.join("a.ts")), "section": "formattingOptions"},
                {"scopeUri": uri(&dir.path().join("b.ts")), "section": "formattingOptions"},
                {"section": "formattingOptions"},
            ]}),
        )
        .unwrap();
    assert_eq!(answer, json!([{"tabSize": 2, "insertSpaces": true}, null, null]));
    // What the settings say wins.
    let said = ServerState::new(Some(json!({"formattingOptions": {"tabSize": 8}})));
    said.formats_under(&root);
    let answer = said
        .request(
            "workspace/configuration",
            &json!({"items": [{"scopeUri": uri(&root.join("a.ts")), "section": "formattingOptions"}]}),
        )
        .unwrap();
    assert_eq!(answer, json!([{"tabSize": 8}]));
}

#[test]
fn announced_progress_counts_and_progress_on_tethers_own_requests_does_not() {
    let shared = ServerState::new(None);
    shared.notification(
        "$/progress",
        json!({"token": format!("{OWN_TOKEN_PREFIX}7"), "value": {"kind": "begin", "title": "Finding references"}}),
    );
    assert_eq!(shared.indexing(), None, "one caller's request is not the server's own work");
    shared.request("window/workDoneProgress/create", &json!({"token": "srv-1"})).unwrap();
    assert_eq!(shared.indexing().unwrap().title, "announced", "created, before its begin");
    shared.notification(
        "$/progress",
        json!({"token": "srv-1", "value": {"kind": "begin", "title": "analyzing"}}),
    );
    assert_eq!(shared.indexing().unwrap().title, "analyzing");
    shared.notification("$/progress", json!({"token": "srv-1", "value": {"kind": "end"}}));
    assert_eq!(shared.indexing(), None);
    shared.notification("experimental/serverStatus", json!({"health": "ok", "quiescent": false}));
    assert_eq!(shared.indexing().unwrap().title, "loading the project");
    shared.notification("experimental/serverStatus", json!({"health": "ok", "quiescent": true}));
    assert_eq!(shared.indexing(), None);
}

#[test]
fn a_server_indexing_in_the_background_counts_as_indexing_until_its_first_index_ends() {
    let shared = ServerState::with_checker(None, Some("flycheck".into()));
    shared.awaits_first_index(Vec::new());
    // Before it reports anything: what it answers now is from part of it.
    assert_eq!(shared.indexing().unwrap().title, "about to index the workspace");
    shared.notification(
        "$/progress",
        json!({"token": "flycheck/1", "value": {"kind": "begin", "title": "check"}}),
    );
    shared.notification("$/progress", json!({"token": "flycheck/1", "value": {"kind": "end"}}));
    assert!(shared.indexing().is_some(), "a check's end is not the index's");
    shared
        .notification("$/progress", json!({"token": "ix", "value": {"kind": "begin", "title": "indexing"}}));
    assert_eq!(shared.indexing().unwrap().title, "indexing");
    shared.notification("$/progress", json!({"token": "ix", "value": {"kind": "end"}}));
    assert_eq!(shared.indexing(), None, "its first index ended");
}

#[tokio::test]
async fn progress_and_diagnostics_wake_waiters() {
    let shared = std::sync::Arc::new(ServerState::new(None));
    shared.notification(
        "$/progress",
        json!({"token": 1, "value": {"kind": "begin", "title": "indexing", "percentage": 10}}),
    );
    assert_eq!(shared.indexing().unwrap().percentage, Some(10));
    let waiter = {
        let shared = shared.clone();
        tokio::spawn(async move {
            shared.wait_until(Duration::from_secs(5), |s| s.diagnostics("file:///a.py").map(|d| d.seq)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    shared.notification(
        "textDocument/publishDiagnostics",
        json!({"uri": "file:///a.py", "diagnostics": [], "version": 2}),
    );
    assert_eq!(waiter.await.unwrap(), Some(1));
    shared.notification("$/progress", json!({"token": 1, "value": {"kind": "end"}}));
    assert_eq!(shared.indexing(), None);
}

#[test]
fn a_server_that_logs_its_first_index_ending_counts_as_indexing_until_it_does() {
    let shared = ServerState::with_checker(None, None);
    shared.awaits_first_index(vec!["BackgroundAnalysis: Completed".into()]);
    let log =
        |message: &str| shared.notification("window/logMessage", json!({"type": 3, "message": message}));
    log("12:00:00.000 INFO BackgroundAnalysis: resolving glob \"**/*\" inside \"/w\"...");
    assert_eq!(shared.indexing().unwrap().title, "about to index the workspace", "still reading");
    log("12:00:01.500 INFO BackgroundAnalysis: Completed after 1.5 seconds.");
    assert_eq!(shared.indexing(), None, "its first index ended");
}

#[test]
fn only_a_logged_error_holding_a_partial_text_marks_an_answer_partial() {
    let shared = ServerState::new(None);
    shared.on_partial_logs(vec!["Error computing hover".into()]);
    let log = |kind: u64, message: &str| {
        shared.notification("window/logMessage", json!({"type": kind, "message": message}))
    };
    log(3, "Error computing hover (as info)");
    log(1, "Failed to import projects");
    assert_eq!(shared.partial_mark(), 0);
    log(1, "Dec 4, 2026, 5:20:00 AM Error computing hover\njava.lang.NullPointerException: x");
    assert_eq!(shared.partial_mark(), 1);
}
