//! All-or-nothing commits of multi-file changes: the drift and relink
//! checks, the writes one by one, and the rollback when one fails.

use std::io;
use std::path::{Path, PathBuf};

use super::replace::{read_optional, replace_if};
use super::{Committed, relative, still_resolved};

/// One file's part in a multi-file change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileChange {
    /// Absolute path, already confined.
    pub path: PathBuf,
    /// What the file held when the change was prepared; `None` if it did not exist.
    pub before: Option<Vec<u8>>,
    /// What it should hold; `None` deletes it.
    pub after: Option<Vec<u8>>,
    /// Permissions for the file if it is created (default [`NEW_FILE_MODE`]).
    ///
    /// [`NEW_FILE_MODE`]: super::NEW_FILE_MODE
    pub mode: Option<u32>,
}

/// Why a multi-file change was not applied. In every case no file is left changed.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// Files changed on disk since the change was prepared.
    #[error("{} changed since the change was prepared", list(moved))]
    Drift {
        /// The files whose content no longer matches.
        moved: Vec<PathBuf>,
    },
    /// A path no longer resolves as it did when the change was prepared: a
    /// directory on its way (or the file itself) is now a symbolic link,
    /// which could lead the write outside the working directory.
    #[error("{} no longer resolve(s) as when the change was prepared", list(paths))]
    Relinked {
        /// The files whose way changed.
        paths: Vec<PathBuf>,
    },
    /// A write failed; the files already written were put back.
    #[error("writing {path} failed ({source}); the {restored} file(s) already written were restored")]
    WriteFailed {
        /// The file whose write failed.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
        /// How many files were rolled back.
        restored: usize,
        /// Files that could not be rolled back (should be empty; listed so
        /// nothing is lost silently).
        unrestored: Vec<PathBuf>,
    },
}

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

impl CommitError {
    /// Whether the files are as they were before the commit (false only
    /// when a rollback could not put a file back).
    pub fn nothing_changed(&self) -> bool {
        !matches!(self, CommitError::WriteFailed { unrestored, .. } if !unrestored.is_empty())
    }

    /// How the files are left, for the start of a message: "nothing was
    /// changed", or that the change is only partly undone.
    pub fn left(&self) -> &'static str {
        if self.nothing_changed() {
            "nothing was changed"
        } else {
            "the change is only partly undone (see which files below)"
        }
    }

    /// The error in a sentence, with paths relative to `root`.
    pub fn describe(&self, root: &Path) -> String {
        let rel = |paths: &[PathBuf]| paths.iter().map(|p| relative(root, p)).collect::<Vec<_>>().join(", ");
        match self {
            CommitError::Drift { moved } => {
                format!("{} changed since the change was prepared", rel(moved))
            }
            CommitError::Relinked { paths } => format!(
                "the way to {} changed since the change was prepared (a directory on it, or the file, is now a symbolic link); nothing was written",
                rel(paths)
            ),
            CommitError::WriteFailed { path, source, restored, unrestored } => {
                let mut text = format!(
                    "writing {} failed ({source}); the {restored} file(s) already written were restored",
                    relative(root, path)
                );
                if !unrestored.is_empty() {
                    text.push_str(&format!("; could NOT restore {}", rel(unrestored)));
                }
                text
            }
        }
    }
}

/// The outermost directory on the way to `path` that does not exist yet.
fn first_missing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors().skip(1).take_while(|a| !a.exists()).last().map(Path::to_path_buf)
}

/// Removes `dir` and the directories below it, as far as they are empty;
/// a file anywhere keeps its directories.
fn remove_empty_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_tree(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// The files of `changes` whose current content differs from `before`.
pub fn moved_files(changes: &[FileChange]) -> Vec<PathBuf> {
    changes
        .iter()
        .filter(|c| read_optional(&c.path).ok().as_ref() != Some(&c.before))
        .map(|c| c.path.clone())
        .collect()
}

/// Applies every change or none: refuses the whole change if any file moved
/// since it was prepared — also one that moves while the change is being
/// written — and rolls back the files already written if a later write
/// fails. A write someone else makes meanwhile is never overwritten: it
/// either refuses the change or lands on top of it. What it wrote to a
/// name with other hard links is in the [`Committed`] it returns.
pub fn commit(changes: &[FileChange]) -> Result<Committed, CommitError> {
    commit_with(changes, &|path, expected, state| {
        let mode = changes.iter().find(|c| c.path == path).and_then(|c| c.mode);
        replace_if(path, expected, state, mode)
    })
}

/// One file's write step: put `Some(bytes)` there (or delete it for
/// `None`) if the file still holds `expected` (`None`: absent); `Ok(false)`
/// when it no longer does, and nothing was written.
pub type WriteStep<'a> = dyn Fn(&Path, Option<&[u8]>, Option<&[u8]>) -> io::Result<bool> + 'a;

/// [`commit`] with the write step supplied, so tests can make a write fail
/// half-way through.
pub fn commit_with(changes: &[FileChange], write: &WriteStep<'_>) -> Result<Committed, CommitError> {
    use std::os::unix::fs::PermissionsExt;
    let relinked: Vec<PathBuf> =
        changes.iter().filter(|c| !still_resolved(&c.path)).map(|c| c.path.clone()).collect();
    if !relinked.is_empty() {
        return Err(CommitError::Relinked { paths: relinked });
    }
    let moved = moved_files(changes);
    if !moved.is_empty() {
        return Err(CommitError::Drift { moved });
    }
    // Directories the change will create, to remove again (when empty) if
    // it is rolled back.
    let mut created: Vec<PathBuf> = changes.iter().filter_map(|c| first_missing_ancestor(&c.path)).collect();
    created.sort();
    created.dedup();
    // Names rewritten that share their content with other links: those
    // keep the old content. (A deleted name's other links keep it too, as
    // with `rm`: nothing to say.)
    let linked = super::linked(
        changes.iter().filter(|c| c.before.is_some() && c.after.is_some()).map(|c| c.path.clone()),
    );
    // A file deleted and then restored on rollback gets its mode back.
    let modes: Vec<Option<u32>> =
        changes.iter().map(|c| std::fs::metadata(&c.path).ok().map(|m| m.permissions().mode())).collect();
    for (done, change) in changes.iter().enumerate() {
        let failure = match write(&change.path, change.before.as_deref(), change.after.as_deref()) {
            Ok(true) => continue,
            Ok(false) => None,
            Err(source) => Some(source),
        };
        // Put back what was written — each file only if it still holds what
        // this commit wrote: a write that landed on top since is kept.
        let mut moved = vec![change.path.clone()];
        let mut unrestored = Vec::new();
        for (k, earlier) in changes[..done].iter().enumerate().rev() {
            match replace_if(&earlier.path, earlier.after.as_deref(), earlier.before.as_deref(), modes[k]) {
                Ok(true) => {}
                Ok(false) => moved.push(earlier.path.clone()),
                Err(_) => unrestored.push(earlier.path.clone()),
            }
        }
        for dir in &created {
            remove_empty_tree(dir);
        }
        return Err(match failure {
            None if unrestored.is_empty() => CommitError::Drift { moved },
            failure => CommitError::WriteFailed {
                path: change.path.clone(),
                source: failure
                    .unwrap_or_else(|| io::Error::other("it changed while the change was written")),
                // Files that moved on since they were written hold someone
                // else's content: neither restored nor lost.
                restored: done - unrestored.len() - (moved.len() - 1),
                unrestored,
            },
        });
    }
    Ok(Committed { linked })
}
