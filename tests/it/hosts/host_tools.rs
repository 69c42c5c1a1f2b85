//! The minimal host tools: read, write, edit, apply_patch, and the
//! after-write hook that later carries diagnostics.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use crate::common::Harness;
use parking_lot::Mutex;
use serde_json::json;
use tether::{AfterWrite, WriteBaseline};

#[tokio::test]
async fn read_returns_text_and_refuses_what_it_cannot_show() {
    let h = Harness::new(&[("a.txt", "hello\n"), ("bin.dat", "\u{0}\u{1}"), ("d/x", "")]);
    assert_eq!(h.ok("read", json!({"path": "a.txt"})).await.text, "hello\n");
    std::fs::write(h.path("bad.txt"), [0xff, 0xfe, 0x00]).unwrap();
    assert!(h.err("read", json!({"path": "bad.txt"})).await.contains("not UTF-8"));
    assert!(h.err("read", json!({"path": "d"})).await.contains("is a directory"));
    assert!(h.err("read", json!({"path": "nope"})).await.contains("does not exist"));
}

#[tokio::test]
async fn write_creates_and_replaces_atomically() {
    let h = Harness::new(&[("a.txt", "old")]);
    // Replacing a file takes having read it (never over unseen work).
    assert!(h.err("write", json!({"path": "a.txt", "content": "new"})).await.contains("read it first"));
    h.ok("read", json!({"path": "a.txt"})).await;
    let r = h.ok("write", json!({"path": "a.txt", "content": "new"})).await;
    assert!(r.text.starts_with("replaced `a.txt`"), "{}", r.text);
    let r = h.ok("write", json!({"path": "deep/dir/b.txt", "content": "b"})).await;
    assert!(r.text.starts_with("created `deep/dir/b.txt`"), "{}", r.text);
    assert_eq!(h.read("a.txt"), "new");
    assert_eq!(h.read("deep/dir/b.txt"), "b");
    let leftovers: Vec<_> = std::fs::read_dir(h.root())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tether-"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files are left behind");
}

#[tokio::test]
async fn edit_replaces_exactly_one_occurrence() {
    let h = Harness::new(&[("a.py", "x = 1\ny = 1\nz = 2\n")]);
    let text = h.err("edit", json!({"path": "a.py", "old_string": "= 1", "new_string": "= 3"})).await;
    assert!(text.contains("occurs 2 times"), "{text}");
    let text = h.err("edit", json!({"path": "a.py", "old_string": "w = 1", "new_string": "w = 3"})).await;
    assert!(text.contains("does not occur"), "{text}");
    let r = h.ok("edit", json!({"path": "a.py", "old_string": "y = 1", "new_string": "y = 3"})).await;
    assert!(r.text.starts_with("edited `a.py` at line 2"), "{}", r.text);
    assert_eq!(h.read("a.py"), "x = 1\ny = 3\nz = 2\n");
}

#[tokio::test]
async fn edits_and_patches_keep_a_files_line_endings() {
    let h = Harness::new(&[("win.py", "a = 1\r\nb = 2\r\nc = 3\r\n"), ("mixed.py", "a\nb\r\nc\n")]);
    // Text given with bare `\n` matches and writes the file's own endings.
    let args =
        json!({"path": "win.py", "old_string": "a = 1\nb = 2", "new_string": "a = 1\nb = 20\nbb = 21"});
    h.ok("edit", args).await;
    assert_eq!(h.read("win.py"), "a = 1\r\nb = 20\r\nbb = 21\r\nc = 3\r\n");
    // One CRLF line among LF lines stays as it is; the patch changes no other ending.
    h.ok("apply_patch", json!({"patch": "--- a/mixed.py\n+++ b/mixed.py\n@@ -3 +3 @@\n-c\n+C\n"})).await;
    assert_eq!(h.read("mixed.py"), "a\nb\r\nC\n");
}

#[tokio::test]
async fn a_file_too_large_to_hold_is_refused_by_name() {
    let h = Harness::new(&[]);
    let big = std::fs::File::create(h.path("big.log")).unwrap();
    big.set_len(tether::tools::MAX_EDIT_BYTES + 1).unwrap();
    let text = h.err("edit", json!({"path": "big.log", "old_string": "a", "new_string": "b"})).await;
    assert!(text.contains("`big.log` holds") && text.contains("use write"), "{text}");
    let text =
        h.err("apply_patch", json!({"patch": "--- a/big.log\n+++ b/big.log\n@@ -1 +1 @@\n-a\n+b\n"})).await;
    assert!(text.contains("`big.log` holds") && text.contains("nothing was changed"), "{text}");
}

#[tokio::test]
async fn apply_patch_changes_every_file_or_none() {
    let h = Harness::new(&[("a.py", "a = 1\nb = 2\n"), ("b.py", "c = 3\n")]);
    let bad = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 20\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-c = 999\n+c = 30\n";
    let text = h.err("apply_patch", json!({"patch": bad})).await;
    assert!(text.contains("does not apply to b.py") && text.contains("nothing was changed"), "{text}");
    assert_eq!(h.read("a.py"), "a = 1\nb = 2\n", "the first file is untouched when the second fails");

    let good = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 20\n--- /dev/null\n+++ b/new/c.py\n@@ -0,0 +1 @@\n+d = 4\n--- a/b.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-c = 3\n";
    let r = h.ok("apply_patch", json!({"patch": good})).await;
    assert!(
        r.text.contains("patched `a.py`")
            && r.text.contains("created `new/c.py`")
            && r.text.contains("deleted `b.py`"),
        "{}",
        r.text
    );
    assert_eq!(h.read("a.py"), "a = 1\nb = 20\n");
    assert_eq!(h.read("new/c.py"), "d = 4\n");
    assert!(!h.path("b.py").exists());
    let text = h.err("apply_patch", json!({"patch": "not a diff"})).await;
    assert!(text.contains("`patch`") && text.contains("unified diff"), "{text}");
}

/// Records what was written and answers with a line of its own, saying
/// which of the files it was shown before they were written.
struct Recorder(Mutex<Vec<PathBuf>>);

impl AfterWrite for Recorder {
    fn before_write(
        &self,
        paths: Vec<PathBuf>,
    ) -> Pin<Box<dyn std::future::Future<Output = WriteBaseline> + Send>> {
        Box::pin(async move { Some(Box::new(paths) as Box<dyn std::any::Any + Send>) })
    }

    fn after_write(
        &self,
        paths: Vec<PathBuf>,
        before: WriteBaseline,
    ) -> Pin<Box<dyn std::future::Future<Output = Option<String>> + Send>> {
        let n = paths.len();
        let shown = before.and_then(|b| b.downcast::<Vec<PathBuf>>().ok()).map(|b| *b).unwrap_or_default();
        let seen_before = paths.iter().filter(|p| shown.contains(p)).count();
        self.0.lock().extend(paths);
        Box::pin(async move { Some(format!("[after-write: {n} file(s), {seen_before} seen before]")) })
    }
}

#[tokio::test]
async fn the_after_write_hook_appends_to_every_writing_tool() {
    let recorder = Arc::new(Recorder(Mutex::new(Vec::new())));
    let hook = recorder.clone();
    let h = Harness::with(&[("a.py", "old(1)\n")], move |b| b.connect_all().after_write(hook));
    let r = h.ok("write", json!({"path": "b.py", "content": "x = 1\n"})).await;
    assert!(r.text.ends_with("[after-write: 1 file(s), 1 seen before]"), "{}", r.text);
    let r = h.ok("edit", json!({"path": "b.py", "old_string": "x = 1", "new_string": "x = 2"})).await;
    assert!(r.text.ends_with("[after-write: 1 file(s), 1 seen before]"), "{}", r.text);
    let r =
        h.ok("apply_patch", json!({"patch": "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 2\n+x = 3\n"})).await;
    assert!(r.text.ends_with("[after-write: 1 file(s), 1 seen before]"), "{}", r.text);
    h.ok("ast_edit", json!({"pattern": "old($A)", "rewrite": "new($A)"})).await;
    let r = h.ok("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(r.text.ends_with("[after-write: 1 file(s), 1 seen before]"), "{}", r.text);
    let seen = recorder.0.lock().clone();
    assert_eq!(seen.len(), 4);
    assert!(seen.iter().all(|p| p.is_absolute() && p.starts_with(h.root())), "{seen:?}");
    // A failed write runs no hook.
    h.err("edit", json!({"path": "b.py", "old_string": "nope", "new_string": "x"})).await;
    assert_eq!(recorder.0.lock().len(), 4);
}

#[tokio::test]
async fn apply_patch_refuses_what_it_would_get_wrong() {
    let h = Harness::new(&[("a.py", "a = 1\nb = 2\n"), ("gone.py", "x = 1\ny = 2\n")]);
    // A hunk with more lines than its header counts: refused, not half applied.
    let miscounted = "--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 10\n-b = 2\n+b = 20\n";
    let text = h.err("apply_patch", json!({"patch": miscounted})).await;
    assert!(text.contains("more lines than its header counts"), "{text}");
    // Two sections for one file: refused (the first would be lost).
    let twice = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 10\n--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-b = 2\n+b = 20\n";
    let text = h.err("apply_patch", json!({"patch": twice})).await;
    assert!(text.contains("more than once"), "{text}");
    // A deletion whose lines do not cover the file: refused.
    let partial = "--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n";
    let text = h.err("apply_patch", json!({"patch": partial})).await;
    assert!(text.contains("do not cover the whole file"), "{text}");
    assert_eq!(h.read("a.py"), "a = 1\nb = 2\n");
    assert_eq!(h.read("gone.py"), "x = 1\ny = 2\n");
    // Deleting or renaming a link would take the file it points to.
    std::os::unix::fs::symlink(h.path("gone.py"), h.path("link.py")).unwrap();
    let through_link = "--- a/link.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x = 1\n-y = 2\n";
    let text = h.err("apply_patch", json!({"patch": through_link})).await;
    assert!(text.contains("`link.py` is a symbolic link"), "{text}");
    let renamed = "diff --git a/link.py b/moved.py\nrename from link.py\nrename to moved.py\n--- a/link.py\n+++ b/moved.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 2\n";
    let text = h.err("apply_patch", json!({"patch": renamed})).await;
    assert!(text.contains("`link.py` is a symbolic link"), "{text}");
    assert_eq!(h.read("gone.py"), "x = 1\ny = 2\n");
}

#[tokio::test]
async fn apply_patch_renames_keep_the_mode_and_new_files_are_not_private() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::new(&[("run.sh", "echo hi\n")]);
    std::fs::set_permissions(h.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let rename = "diff --git a/run.sh b/bin/run.sh\nrename from run.sh\nrename to bin/run.sh\n--- a/run.sh\n+++ b/bin/run.sh\n@@ -1 +1 @@\n-echo hi\n+echo hello\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+note\n";
    let r = h.ok("apply_patch", json!({"patch": rename})).await;
    assert!(r.text.contains("renamed `run.sh` to `bin/run.sh`"), "{}", r.text);
    assert!(!h.path("run.sh").exists());
    assert_eq!(h.read("bin/run.sh"), "echo hello\n");
    let mode = |p: &str| std::fs::metadata(h.path(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("bin/run.sh"), 0o755);
    assert_eq!(mode("notes.txt"), 0o644);
}

/// A host write tool that never answers.
struct Stuck;

impl tether::ToolHandler for Stuck {
    fn spec(&self) -> tether::ToolSpec {
        tether::ToolSpec {
            name: "stuck_write".into(),
            level: tether::Level::Write,
            parallel_safe: false,
            description: "a host write that hangs on a dead pipe".into(),
            input_schema: json!({"type": "object"}),
            ..tether::ToolSpec::default()
        }
    }

    fn call(
        &self,
        _ctx: &tether::CallContext,
        _args: serde_json::Value,
    ) -> Result<tether::ToolFuture, tether::ToolError> {
        Ok(Box::pin(std::future::pending::<tether::ToolResult>()))
    }
}

#[tokio::test]
async fn a_call_that_never_answers_holds_the_serial_lane_only_for_its_bound() {
    let h = Harness::with(&[], |b| {
        b.connect_all().tool(Arc::new(Stuck)).serial_call_timeout(std::time::Duration::from_millis(1500))
    });
    let token = tokio_util::sync::CancellationToken::new();
    let started = std::time::Instant::now();
    // The stuck call takes the lane; a write queues behind it.
    let stuck = h.rt.call_cancellable(tether::Surface::Full, "stuck_write", json!({}), token.clone());
    let (stuck, write) = tokio::join!(stuck, async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        h.call("write", json!({"path": "after.txt", "content": "ran"})).await
    });
    assert!(stuck.is_error, "{}", stuck.text);
    assert!(
        stuck.text.starts_with("`stuck_write` held the serial lane")
            && stuck.text.contains("for 1.5 s, its bound, so it was cancelled"),
        "{}",
        stuck.text
    );
    assert!(token.is_cancelled(), "the call's token fired, so whatever it started stops too");
    assert!(!write.is_error, "{}", write.text);
    assert_eq!(h.read("after.txt"), "ran", "the lane moved on");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
}

#[tokio::test]
async fn writing_a_name_with_other_hard_links_says_they_keep_the_old_content() {
    let h = Harness::new(&[("a.txt", "x = 1\n"), ("b.txt", "y = 1\n")]);
    std::fs::hard_link(h.path("a.txt"), h.path("a_link.txt")).unwrap();
    std::fs::hard_link(h.path("b.txt"), h.path("b_link.txt")).unwrap();
    std::fs::hard_link(h.path("b.txt"), h.path("b_link2.txt")).unwrap();
    let r = h.ok("edit", json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"})).await;
    assert_eq!(
        r.text,
        "edited `a.txt` at line 1\nnote: `a.txt` had 1 other hard link; it keeps the old content (tether writes a new file and renames it over the name)"
    );
    assert_eq!((h.read("a.txt"), h.read("a_link.txt")), ("x = 2\n".into(), "x = 1\n".into()));
    h.ok("read", json!({"path": "b.txt"})).await;
    let r = h.ok("write", json!({"path": "b.txt", "content": "y = 2\n"})).await;
    assert!(r.text.ends_with("\nnote: `b.txt` had 2 other hard links; they keep the old content (tether writes a new file and renames it over the name)"), "{}", r.text);
    let patch = "--- a/b_link.txt\n+++ b/b_link.txt\n@@ -1 +1 @@\n-y = 1\n+y = 3\n";
    let r = h.ok("apply_patch", json!({"patch": patch})).await;
    assert!(r.text.contains("note: `b_link.txt` had 1 other hard link; it keeps"), "{}", r.text);
    let r = h.ok("write", json!({"path": "c.txt", "content": "z\n"})).await;
    assert!(!r.text.contains("hard link"), "a name of its own says nothing: {}", r.text);
}

#[tokio::test]
async fn a_temporary_file_a_dead_run_left_is_removed_by_the_next_write_there() {
    let h = Harness::new(&[("src/a.py", "x = 1\n")]);
    // A run (a process now gone) killed between its write and its rename.
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let left = h.path(&format!("src/.tether-{pid}-{}-Ab12Cd.tmp", now - 120));
    std::fs::write(&left, "half a file").unwrap();
    // A writer this process cannot see (another pid namespace) looks gone
    // too: its file of a few seconds is kept.
    let unseen = h.path(&format!("src/.tether-{pid}-{}-Qq11Rr.tmp", now - 5));
    std::fs::write(&unseen, "a write in flight elsewhere").unwrap();
    let live = h.path(&format!("src/.tether-{}-{}-Zz99Yy.tmp", std::process::id(), now - 120));
    std::fs::write(&live, "a write in flight").unwrap();
    h.ok("read", json!({"path": "src/a.py"})).await;
    h.ok("write", json!({"path": "src/a.py", "content": "x = 2\n"})).await;
    assert!(!left.exists(), "the dead run's temporary file is gone");
    assert!(unseen.exists(), "a fresh one is kept whoever wrote it");
    assert!(live.exists(), "a live writer's is kept");
    assert_eq!(h.read("src/a.py"), "x = 2\n");
}
