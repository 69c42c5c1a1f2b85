//! The terminal port: `tether call` shows the card on its controlling
//! terminal — a real pseudo-terminal here, driven by `tests/terminal/pty_answer.py` —
//! and reads the typed answer from it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Runs `tether` under a pty in `dir`, typing `answers` at each prompt.
fn on_a_terminal(dir: &Path, answers: &[&str], args: &[&str]) -> (String, i32) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/terminal/pty_answer.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(serde_json::to_string(answers).unwrap())
        .arg(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .arg("--workdir")
        .arg(dir)
        .output()
        .expect("python3 runs; install it with the README's test command");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["shown"].as_str().unwrap().replace("\r\n", "\n"), v["code"].as_i64().unwrap() as i32)
}

const QUESTION: &str = r#"{"question": "Which store?", "context": "The cache depends on it.", "options": [{"label": "sqlite", "description": "one file"}, {"label": "postgres"}]}"#;

#[test]
fn the_card_is_numbered_and_a_typed_number_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    let (shown, code) = on_a_terminal(dir.path(), &["7", "2"], &["call", "ask_user", QUESTION]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("── tether question ──\nWhich store?\nContext: The cache depends on it.\n"),
        "{shown}"
    );
    assert!(shown.contains("  1. sqlite — one file\n  2. postgres\n"), "{shown}");
    assert!(
        shown.contains("Answer within 10 min.\nType a number 1–2; an empty answer skips the question.\n> "),
        "{shown}"
    );
    assert!(
        shown.contains("7 is not an option; type a number from 1 to 2"),
        "a bad answer asks again: {shown}"
    );
    assert!(shown.contains("The operator chose option 2. postgres"), "{shown}");
}

#[test]
fn an_empty_answer_skips_and_free_text_is_taken_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let (shown, code) = on_a_terminal(dir.path(), &[""], &["call", "ask_user", QUESTION]);
    assert_eq!(code, 0, "a skip is a success: {shown}");
    assert!(
        shown.contains("The operator skipped this question. Proceed on your own best assumption"),
        "{shown}"
    );
    let open = r#"{"question": "What should the module be called?"}"#;
    let (shown, code) = on_a_terminal(dir.path(), &["cache_store"], &["call", "ask_user", open]);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("The operator answered: cache_store"), "{shown}");
}

#[test]
fn a_permission_card_on_the_terminal_allows_or_denies() {
    let dir = tempfile::tempdir().unwrap();
    let write = r#"{"path": "a.txt", "content": "hello\n"}"#;
    let (shown, code) = on_a_terminal(dir.path(), &["2"], &["call", "--approval", "ask", "write", write]);
    assert_eq!(code, 1, "{shown}");
    assert!(shown.contains("── tether permission ──\ntether wants to run `write` (write level)"), "{shown}");
    assert!(shown.contains("denied permission to run `write`"), "{shown}");
    assert!(!dir.path().join("a.txt").exists());
    let (shown, code) = on_a_terminal(dir.path(), &["allow"], &["call", "--approval", "ask", "write", write]);
    assert_eq!(code, 0, "{shown}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "hello\n");
}

#[test]
fn without_a_terminal_ask_user_is_not_offered_and_permission_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["call", "--questions", "none", "ask_user", QUESTION, "--workdir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("`ask_user` is not available in this run: it needs a question port"), "{text}");
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args([
            "call",
            "--questions",
            "none",
            "--approval",
            "ask",
            "write",
            r#"{"path": "b.txt", "content": "x"}"#,
        ])
        .arg("--workdir")
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no approver is connected") && text.contains("refused"), "{text}");
    assert!(!dir.path().join("b.txt").exists());
}
