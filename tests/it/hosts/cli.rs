//! The command-line contract: exit codes, `--json` shapes, and `batch` as
//! a conversation held over one run.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::Batch;
use serde_json::{Value, json};

fn tether(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .arg("--workdir")
        .arg(dir)
        .output()
        .expect("tether runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "old(1)\nold(2)\n").unwrap();
    dir
}

#[test]
fn call_prints_text_and_exits_by_outcome() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["call", "ast_grep", r#"{"pattern": "old($A)"}"#]);
    assert_eq!(code, 0);
    assert!(out.contains("a.py:1:1: old(1)") && out.contains("a.py:2:1: old(2)"), "{out}");

    let (code, out, _) = tether(dir.path(), &["call", "ast_grep", r#"{"pattern": "old(("}"#]);
    assert_eq!(code, 1, "a tool error exits 1: {out}");
    assert!(out.contains("not parseable"), "{out}");

    let (code, _, err) = tether(dir.path(), &["call", "ast_grep", "{not json"]);
    assert_eq!(code, 2, "bad usage exits 2");
    assert!(err.contains("not valid JSON"), "{err}");

    let (code, _, _) = tether(dir.path(), &["call", "--surface", "sideways", "ast_grep", "{}"]);
    assert_eq!(code, 2);
}

#[test]
fn a_run_started_with_sigint_ignored_still_starts_kernels_that_can_be_interrupted() {
    // `nohup`, or a background job of a shell without job control, starts
    // tether with SIGINT ignored; its kernels must not inherit that.
    let dir = workdir();
    let code = "import signal; print('interruptible:', signal.getsignal(signal.SIGINT) is signal.default_int_handler)";
    let args = json!({"code": code, "description": "how the kernel takes SIGINT"}).to_string();
    let out = Command::new("sh")
        .args(["-c", r#"trap '' INT QUIT; exec "$0" "$@""#, env!("CARGO_BIN_EXE_tether")])
        .args(["call", "eval", &args, "--workdir"])
        .arg(dir.path())
        .output()
        .expect("sh runs tether");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interruptible: True"), "{text}{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn trust_lists_what_it_allows_records_it_outside_the_checkout_and_takes_it_back() {
    let dir = workdir();
    std::fs::write(dir.path().join("tether.toml"), "[vibe]\nfast = \"./worker --fast\"\n").unwrap();
    let config = tempfile::tempdir().unwrap();
    let trust = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tether"))
            .arg("trust")
            .args(args)
            .arg("--workdir")
            .arg(dir.path())
            .env("XDG_CONFIG_HOME", config.path())
            .output()
            .expect("tether runs");
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (code, out) = trust(&[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("tether.toml [vibe]: background workers: `./worker --fast`"), "{out}");
    assert!(out.contains("trusted; recorded in"), "{out}");
    let canonical = dir.path().canonicalize().unwrap();
    assert!(tether::trust::verdict_in(Some(&config.path().join("tether")), &canonical).is_trusted());
    assert!(!dir.path().join(".tether").exists() && config.path().join("tether/trusted.json").is_file());
    let (_, listed) = trust(&["--list"]);
    assert!(listed.contains(&canonical.display().to_string()), "{listed}");
    let (code, out) = trust(&["--revoke"]);
    assert_eq!(code, 0);
    assert!(out.contains("is no longer trusted"), "{out}");
    assert!(!tether::trust::verdict_in(Some(&config.path().join("tether")), &canonical).is_trusted());
}

#[test]
fn call_json_is_the_result_object() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["call", "--json", "ast_grep", r#"{"pattern": "old($A)"}"#]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["tool"], "ast_grep");
    assert_eq!(v["is_error"], false);
    assert!(v["text"].as_str().unwrap().contains("2 matches"));
    assert_eq!(v["data"]["total"], 2);
    assert_eq!(v["images"], json!([]));
}

#[test]
fn tools_lists_the_surface_schema() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["tools", "--surface", "read-only", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ast_grep", "lsp", "read", "resources"]);
    assert_eq!(v[0]["input_schema"]["properties"]["pattern"]["type"], "string");
    assert_eq!(v[0]["level"], "read");

    let (_, out, _) = tether(dir.path(), &["tools", "--without", "parsers"]);
    assert!(!out.contains("ast_grep") && out.contains("read"), "{out}");
}

#[test]
fn tree_and_status_describe_the_run() {
    let dir = workdir();
    let (code, out, _) = tether(dir.path(), &["tree"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("router default [ready]") && out.contains("ast tree-sitter"), "{out}");
    let (code, out, _) = tether(dir.path(), &["status"]);
    assert_eq!(code, 0);
    assert!(out.contains("parsers: connected"), "{out}");
    assert!(out.contains("python      ok") && out.contains("1 file here"), "{out}");
    assert!(
        out.contains("(budget)") && out.contains("budget (the default, a quarter of this machine's"),
        "the servers' budget that would apply: {out}"
    );
    let (_, out, _) = tether(dir.path(), &["status", "--without", "parsers"]);
    assert!(out.contains("parsers: not connected"), "{out}");
}

#[test]
fn batch_holds_a_conversation_with_state_across_lines() {
    let dir = workdir();
    let mut batch = Batch::start(dir.path(), &[]);
    let staged = batch.ask(json!({"tool": "ast_edit", "args": {"pattern": "old($A)", "rewrite": "new($A)"}}));
    assert_eq!(staged["is_error"], false, "{staged}");
    assert!(staged["text"].as_str().unwrap().contains("edit_1"));
    let tree = batch.ask(json!({"op": "tree"}));
    assert_eq!(tree["op"], "tree");
    assert_eq!(tree["data"]["children"][1]["detail"]["staged"], 1);
    let resolved = batch.ask(json!({"tool": "resolve", "args": {"edit_id": "edit_1", "action": "accept"}}));
    assert_eq!(resolved["is_error"], false, "{resolved}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.py")).unwrap(), "new(1)\nnew(2)\n");
    let tools = batch.ask(json!({"op": "tools"}));
    assert!(tools["text"].as_str().unwrap().contains("ast_grep"));
    let bad = batch.ask(json!({"nonsense": true}));
    assert_eq!(bad["is_error"], true);
    assert!(bad["text"].as_str().unwrap().starts_with("batch line 5"), "{bad}");
    let shaped = batch.ask(json!({"tool": "read", "args": {"path": "a.py"}}));
    for key in ["tool", "is_error", "text", "data", "images"] {
        assert!(shaped.get(key).is_some(), "{key} missing from {shaped}");
    }
}

/// `tether batch` in `dir` with `flags`, fed `input`: its exit code and
/// each answer line.
fn batch_answers(dir: &std::path::Path, flags: &[&str], input: &str) -> (Option<i32>, Vec<Value>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("batch")
        .args(flags)
        .arg("--workdir")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let lines =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (out.status.code(), lines)
}

#[test]
fn batch_reads_to_the_end_of_input() {
    let dir = workdir();
    let input =
        "{\"tool\": \"ast_grep\", \"args\": {\"pattern\": \"old($A)\"}}\nnot json\n\n{\"op\": \"tools\"}\n";
    let (code, lines) = batch_answers(dir.path(), &[], input);
    assert_eq!(code, Some(0));
    assert_eq!(lines.len(), 3, "blank lines are skipped, every other line answered");
    assert_eq!(lines[0]["data"]["total"], 2);
    assert_eq!(lines[1]["is_error"], true);
    assert_eq!(lines[2]["op"], "tools");
}

/// Runs tether with stdout a pipe whose reader is already gone, so its
/// first write fails with `EPIPE`; returns the exit code and stderr.
fn tether_into_closed_pipe(dir: &std::path::Path, args: &[&str], stdin: &str) -> (Option<i32>, String) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe(2)");
    // SAFETY: pipe(2) just opened both descriptors and nothing else owns them.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .arg("--workdir")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ignored: a batch that stopped at its first answer closes stdin early.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_reader_that_goes_away_ends_every_command_quietly() {
    let dir = workdir();
    let lines = "{\"tool\": \"ast_grep\", \"args\": {\"pattern\": \"old($A)\"}}\n".repeat(3);
    let commands: [(&[&str], &str); 7] = [
        (&["status"], ""),
        (&["status", "--json"], ""),
        (&["tools"], ""),
        (&["tree"], ""),
        (&["call", "ast_grep", r#"{"pattern": "old($A)"}"#], ""),
        (&["call", "--json", "ast_grep", r#"{"pattern": "old($A)"}"#], ""),
        (&["batch"], &lines),
    ];
    for (args, stdin) in commands {
        let (code, err) = tether_into_closed_pipe(dir.path(), args, stdin);
        assert_eq!(code, Some(0), "`tether {}` exits 0 when its reader has gone: {err}", args.join(" "));
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: {err}");
    }
    // A tool error keeps its exit code though nobody reads the text.
    let (code, err) =
        tether_into_closed_pipe(dir.path(), &["call", "ast_grep", r#"{"pattern": "old(("}"#], "");
    assert_eq!(code, Some(1), "{err}");
}

#[test]
fn workdir_is_taken_before_or_after_the_command() {
    let dir = workdir();
    let shown = format!("working directory: {}", dir.path().canonicalize().unwrap().display());
    let before = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--workdir")
        .arg(dir.path())
        .arg("status")
        .output()
        .unwrap();
    let before = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(before.starts_with(&shown), "{before}");
    let (code, after, _) = tether(dir.path(), &["status"]);
    assert_eq!(code, 0);
    assert!(after.starts_with(&shown), "{after}");
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("--workdir")
        .arg(dir.path())
        .args(["call", "ast_grep", r#"{"pattern": "old($A)"}"#])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.py:1:1: old(1)"), "{out:?}");
}

#[test]
fn text_leaves_data_out_of_json_answers() {
    let dir = workdir();
    let (code, out, _) =
        tether(dir.path(), &["call", "--json", "--text", "ast_grep", r#"{"pattern": "old($A)"}"#]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v.get("data").is_none(), "{v}");
    assert!(v["text"].as_str().unwrap().contains("2 matches"), "{v}");
    let input =
        "{\"tool\": \"ast_grep\", \"args\": {\"pattern\": \"old($A)\"}}\n{\"op\": \"tree\"}\nnot json\n";
    let (_, lines) = batch_answers(dir.path(), &["--text"], input);
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert!(line.get("data").is_none() && line["text"].is_string(), "{line}");
    }
    assert!(lines[1]["text"].as_str().unwrap().starts_with("router default"), "{}", lines[1]);
}

#[test]
fn a_stray_makefile_makes_no_c_project() {
    // As in requests: pure Python, and Makefiles that make test certificates.
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in [
        ("pyproject.toml", "[project]\nname = \"app\"\n"),
        ("src/app/__init__.py", "x = 1\n"),
        ("tests/certs/expired/Makefile", "all:\n\topenssl req -new\n"),
        ("tests/certs/expired/server.pem", "-----BEGIN CERTIFICATE-----\n"),
        ("tests/certs/expired/CMakeLists.txt", "project(certs)\n"),
    ] {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let (code, out, err) = tether(dir.path(), &["status"]);
    assert_eq!(code, 0, "{err}");
    let lsp = out.split("lsp: connected").nth(1).unwrap_or_default();
    let lsp = lsp.split("\nkernels:").next().unwrap_or_default();
    assert!(lsp.contains("python      ok"), "{out}");
    assert!(!lsp.lines().any(|l| l.trim_start().starts_with("c ")), "no C language here: {lsp}");
    let lldb = out.lines().find(|l| l.trim_start().starts_with("lldb ")).unwrap_or_default();
    assert!(
        lldb.contains("unusable")
            && lldb.contains("only where no c, cpp, rust file is (tests/certs/expired)"),
        "{out}"
    );
}
