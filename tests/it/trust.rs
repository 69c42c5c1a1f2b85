//! A checkout runs nothing of its own until its user trusts it: each
//! hostile checkout carries programs that leave a mark outside it, then
//! run the real one. Restricted (no trust recorded, no `--trusted`), the
//! read-only surface starts none of them and still answers, with a note
//! naming what was held back; trusted, the checkout's own run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tether::{Runtime, Surface, Trust};
use tether_actors::workers::command::CommandBackend;

use crate::common::{self, Harness};

/// A program at `rel` in `dir` that leaves `mark` and then runs `real`.
fn hostile(dir: &Path, rel: &str, mark: &Path, real: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let script = format!("#!/bin/sh\necho ran >> '{}'\nexec {real} \"$@\"\n", mark.display());
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn real(program: &str) -> String {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(program))
        .find(|p| p.is_file());
    found
        .unwrap_or_else(|| panic!("`{program}` is not on PATH (the README's test command installs it)"))
        .display()
        .to_string()
}

const PYPROJECT: &str = "[project]\nname = \"shapes\"\n";
const PY: &str = "def area(w: float, h: float) -> float:\n    return w * h\n\n\nprint(area(2, 3))\n";

/// A checkout with `files` and hostile programs placed by `place`, and a
/// marker file outside it.
fn checkout(
    files: &[(&str, &str)],
    place: impl FnOnce(&Path, &Path),
) -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        std::fs::write(dir.path().join(rel), text).unwrap();
    }
    let outside = tempfile::tempdir().unwrap();
    let mark = outside.path().join("mark");
    place(dir.path(), &mark);
    (dir, outside, mark)
}

fn run(dir: &Path, trust: Trust) -> Runtime {
    Runtime::builder().workdir(dir).conversation("reader").trust(trust).connect_all().start().unwrap()
}

async fn references(rt: &Runtime) -> tether::ToolResult {
    let args = json!({"action": "references", "file": "shapes.py", "line": 1, "symbol": "area"});
    let bound = common::call_bound("lsp");
    tokio::time::timeout(bound, rt.call_from(Surface::ReadOnly, "lsp", args)).await.expect("lsp answers")
}

#[tokio::test]
async fn a_checkouts_venv_server_and_its_tether_toml_server_run_only_once_trusted() {
    common::require_on_path("pyright-langserver", "npm install -g pyright");
    let pyright = real("pyright-langserver");
    let toml = "[[server]]\nid = \"pyright\"\ncommand = \"tools/lsp\"\nargs = [\"--stdio\"]\nlanguages = [\"python\"]\nroot_markers = []\n";
    // A: the checkout's `.venv/bin`; B: its `tether.toml` `[[server]]`.
    for case in ["venv", "tether.toml"] {
        let (dir, _outside, mark) =
            checkout(&[("shapes.py", PY), ("pyproject.toml", PYPROJECT)], |dir, mark| match case {
                "venv" => hostile(dir, ".venv/bin/pyright-langserver", mark, &pyright),
                _ => {
                    std::fs::write(dir.join("tether.toml"), toml).unwrap();
                    hostile(dir, "tools/lsp", mark, &pyright);
                }
            });
        let rt = run(dir.path(), Trust::Restricted);
        let r = references(&rt).await;
        assert!(!r.is_error && r.text.contains("2 references to `area`"), "{case}: {}", r.text);
        assert!(!mark.exists(), "{case}: the checkout's program ran on a restricted run");
        let held = if case == "venv" { ".venv/bin/" } else { "tether.toml [server]" };
        assert!(
            r.text.contains(&format!(
                "note: this checkout is not trusted, so its own programs do not run: {held} held back"
            )),
            "{case}: {}",
            r.text
        );
        // Said once a conversation.
        let again = references(&rt).await;
        assert!(!again.text.contains("not trusted"), "{case}: {}", again.text);
        rt.shutdown();
        let rt = run(dir.path(), Trust::Trusted);
        let r = references(&rt).await;
        assert!(!r.is_error && r.text.contains("2 references to `area`"), "{case}: {}", r.text);
        assert!(mark.exists(), "{case}: trusted, the checkout's own program serves");
        assert!(!r.text.contains("not trusted"), "{case}: {}", r.text);
        rt.shutdown();
    }
}

#[tokio::test]
async fn a_checkouts_worker_command_runs_only_once_trusted() {
    let (dir, _outside, mark) =
        checkout(&[("tether.toml", "[vibe]\nfast = \"tools/worker\"\n")], |dir, mark| {
            hostile(dir, "tools/worker", mark, "cat")
        });
    let start = |trust| {
        Runtime::builder()
            .workdir(dir.path())
            .trust(trust)
            .vibe(Arc::new(CommandBackend::load(dir.path())))
            .start()
            .unwrap()
    };
    let spawn = json!({"brief": "read the code", "label": "reader", "tier": "fast"});
    let rt = start(Trust::Restricted);
    let r = rt.call_from(Surface::ReadOnly, "vibe_spawn", spawn.clone()).await;
    assert!(r.is_error && r.text.contains("the checkout is not trusted: nothing was started"), "{}", r.text);
    assert!(r.text.contains("`tether trust`"), "{}", r.text);
    assert!(!mark.exists(), "the worker ran on a restricted run");
    rt.shutdown();
    let rt = start(Trust::Trusted);
    let r = rt.call_from(Surface::ReadOnly, "vibe_spawn", spawn).await;
    assert!(!r.is_error, "{}", r.text);
    let wait = json!({"worker_id": r.data.as_ref().unwrap()["id"], "timeout_seconds": 30});
    rt.call_from(Surface::ReadOnly, "vibe_wait", wait).await;
    assert!(mark.exists(), "trusted, the worker runs");
    rt.shutdown();
}

#[tokio::test]
async fn a_checkout_with_nothing_of_its_own_answers_as_before_with_no_note() {
    common::require_on_path("pyright-langserver", "npm install -g pyright");
    let h = Harness::with(&[("shapes.py", PY), ("pyproject.toml", PYPROJECT)], |b| {
        b.trust(Trust::Restricted).connect_all()
    });
    let r = references(&h.rt).await;
    assert!(!r.is_error && r.text.contains("2 references to `area`"), "{}", r.text);
    assert!(!r.text.contains("not trusted"), "{}", r.text);
}
