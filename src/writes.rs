//! The run's one way to write files: every write tool commits through
//! [`commit`]. A change is computed on a snapshot of the files it touches
//! (each [`FileChange`]'s `before`); it is written only when every file is
//! byte-identical to that snapshot at commit time, all or nothing;
//! otherwise nothing is written and the answer names each file that moved
//! and who moved it (another conversation of the run, a program outside
//! tether, or "by whom unknown"). What a conversation writes joins its
//! view ([`crate::views`]).

use std::path::{Path, PathBuf};

use tether_actors::fs::{CommitError, Committed, FileChange};

use crate::handler::CallContext;
use crate::views::Digest;

/// Commits `changes` for `ctx`'s conversation (off the async threads: it
/// reads and writes files). On success the conversation's view holds what
/// it wrote; on failure the error says how the files are left and, for
/// files that moved since the snapshot, who moved each.
pub fn commit(ctx: &CallContext, changes: &[FileChange]) -> Result<Committed, String> {
    if let Some(change) = changes.iter().find(|c| in_version_control(ctx.root(), &c.path)) {
        return Err(format!(
            "nothing was written: `{}` is inside `.git/`, the repository's own files (a hook there runs on the next commit, a config names programs git runs); write tools change the working tree only",
            tether_actors::fs::relative(ctx.root(), &change.path)
        ));
    }
    match commit_changes(ctx, changes) {
        Ok(committed) => Ok(committed),
        Err(CommitError::Drift { moved }) => Err(format!(
            "nothing was written: {} changed since the change was computed; read again, and redo the change on what is there now",
            moved_by_whom(ctx, &moved)
        )),
        Err(e) => Err(format!("{}: {}", e.left(), e.describe(ctx.root()))),
    }
}

/// [`commit`], with the error as the file layer gives it (for a writer that
/// words it itself, such as `resolve` through the parser set's staging).
pub fn commit_changes(ctx: &CallContext, changes: &[FileChange]) -> Result<Committed, CommitError> {
    let committed = tether_actors::fs::commit(changes)?;
    for change in changes {
        ctx.views.replaced(&ctx.conversation, &change.path, change.before.as_deref());
        ctx.wrote(&change.path, change.after.as_deref());
    }
    Ok(committed)
}

/// Whether `path` lies in a `.git` directory (or is a `.git` file) under
/// `root`: what git runs (hooks, the config's programs) lives there.
fn in_version_control(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| rel.components().any(|c| c.as_os_str() == ".git"))
}

/// "`a.py` (by conversation B), `b.py` (by a program outside tether)".
pub fn moved_by_whom(ctx: &CallContext, moved: &[PathBuf]) -> String {
    moved
        .iter()
        .map(|path| format!("`{}` ({})", tether_actors::fs::relative(ctx.root(), path), who_moved(ctx, path)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who left `path` as it is now, as `ctx`'s conversation is told.
fn who_moved(ctx: &CallContext, path: &Path) -> String {
    let digest = match std::fs::read(path) {
        Ok(bytes) => Digest::of(&bytes),
        Err(_) => Digest::DELETED,
    };
    ctx.views.who_wrote(&ctx.conversation, path, digest).phrase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn ctx(root: &Path, conversation: &str, views: Arc<crate::views::Views>) -> CallContext {
        CallContext {
            workdir: Arc::new(root.to_path_buf()),
            conversation: Arc::from(conversation),
            surface: crate::spec::Surface::Full,
            after_write: None,
            views,
            cancel: Default::default(),
        }
    }

    #[test]
    fn a_change_over_moved_files_writes_nothing_and_names_who_moved_each() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, b) = (root.join("a.py"), root.join("b.py"));
        std::fs::write(&a, "one\n").unwrap();
        std::fs::write(&b, "one\n").unwrap();
        let views = Arc::new(crate::views::Views::default());
        let change = |path: &Path| FileChange {
            path: path.to_path_buf(),
            before: Some(b"one\n".to_vec()),
            after: Some(b"two\n".to_vec()),
            mode: None,
        };
        let (mine, theirs) = (ctx(&root, "A", views.clone()), ctx(&root, "B", views.clone()));
        // B writes a.py through the one path; b.py is changed outside.
        commit(&theirs, &[change(&a)]).unwrap();
        std::fs::write(&b, "three\n").unwrap();
        let err = commit(&mine, &[change(&a), change(&b)]).unwrap_err();
        assert!(err.starts_with("nothing was written: "), "{err}");
        assert!(err.contains("`a.py` (by conversation B)"), "{err}");
        assert!(err.contains("`b.py` (by a program outside tether)"), "{err}");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "three\n", "all or nothing");
        // What a conversation wrote is what it saw.
        assert!(views.moved("B", &a, b"two\n").is_none());
    }

    #[test]
    fn nothing_under_dot_git_is_written_with_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let hook = root.join(".git/hooks/post-commit");
        let a = root.join("a.py");
        let new = |path: &Path| FileChange {
            path: path.to_path_buf(),
            before: None,
            after: Some(b"echo hi\n".to_vec()),
            mode: None,
        };
        let err = commit(&ctx(&root, "A", Default::default()), &[new(&a), new(&hook)]).unwrap_err();
        assert!(err.contains("`.git/hooks/post-commit` is inside `.git/`"), "{err}");
        assert!(!hook.exists() && !a.exists(), "nothing written");
        assert!(!in_version_control(&root, &root.join("src/git.rs")));
        assert!(in_version_control(&root, &root.join("sub/.git/config")));
    }
}
