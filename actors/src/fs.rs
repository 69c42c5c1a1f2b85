//! Files: confinement to the working directory, atomic writes, and
//! all-or-nothing commits of multi-file changes.
//!
//! Every path that comes from a tool argument goes through [`confine`]
//! before it is touched. Every write goes through [`atomic_write`] (a
//! temporary file in the same directory, then a rename), so a reader never
//! sees half a file. A change to several files goes through [`commit`]: it
//! first checks that no file moved since the change was prepared, then writes
//! them one by one — each swapped in atomically and checked against what it
//! displaced, so a write someone else makes meanwhile is never overwritten —
//! and, if one write fails or finds its file changed, puts back the ones
//! already written — the tree ends in the old state or the new one, never a
//! mix, with every outside write kept.

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

/// Why a path argument was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    /// The argument was empty.
    #[error("the path is empty; give a path relative to the working directory")]
    Empty,
    /// The argument leaves the working directory, lexically or through a symlink.
    #[error(
        "`{path}` is outside the working directory {root}; give a path inside it (relative paths are resolved against it)"
    )]
    Outside {
        /// The argument as given.
        path: String,
        /// The working directory.
        root: String,
    },
    /// The path (or a directory on it) is a symbolic link whose target
    /// does not exist: where a write through it would land cannot be
    /// checked, so it is not followed.
    #[error(
        "`{path}` goes through the symbolic link `{link}`, whose target does not exist; tether does not follow dangling links — give the path you mean without the link"
    )]
    Dangling {
        /// The argument as given.
        path: String,
        /// The dangling link, relative to the working directory.
        link: String,
    },
    /// The working directory itself cannot be resolved.
    #[error("the working directory {root} cannot be resolved: {reason}")]
    BadRoot {
        /// The working directory.
        root: String,
        /// The I/O error.
        reason: String,
    },
}

/// Resolves `user` (relative to `root`, or absolute) to an absolute path
/// inside `root`, refusing anything that escapes: `..` past the root, an
/// absolute path elsewhere, or a symlink (anywhere along the existing part
/// of the path) that points out. The path need not exist yet.
///
/// `root` should already be canonical (see [`canonical_root`]).
pub fn confine(root: &Path, user: &str) -> Result<PathBuf, PathError> {
    if user.trim().is_empty() {
        return Err(PathError::Empty);
    }
    let outside = || PathError::Outside { path: user.to_string(), root: root.display().to_string() };
    let given = Path::new(user);
    let joined = if given.is_absolute() { given.to_path_buf() } else { root.join(given) };
    // Lexical pass: fold `.` and `..` without touching the disk.
    let mut lexical = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                if !lexical.pop() {
                    return Err(outside());
                }
            }
            Component::CurDir => {}
            other => lexical.push(other.as_os_str()),
        }
    }
    if !lexical.starts_with(root) {
        return Err(outside());
    }
    // Physical pass: the longest existing prefix, with symlinks resolved,
    // must still be inside the root.
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        match existing.symlink_metadata() {
            Ok(_) => break,
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    existing = parent;
                }
                _ => return Err(outside()),
            },
        }
    }
    let mut resolved = match existing.canonicalize() {
        Ok(resolved) => resolved,
        // The prefix exists but does not resolve: a link to nothing.
        Err(_) if existing.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) => {
            return Err(PathError::Dangling { path: user.to_string(), link: relative(root, existing) });
        }
        Err(_) => return Err(outside()),
    };
    if !resolved.starts_with(root) {
        return Err(outside());
    }
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    Ok(resolved)
}

/// The canonical form of a working directory, which [`confine`] compares against.
pub fn canonical_root(root: &Path) -> Result<PathBuf, PathError> {
    root.canonicalize()
        .map_err(|e| PathError::BadRoot { root: root.display().to_string(), reason: e.to_string() })
}

/// `path` relative to `root`, with `/` separators, for results a model reads.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() { ".".to_string() } else { text }
}

/// Permissions of a file tether creates (the temporary file it is written
/// through would otherwise leave it at 0600).
pub const NEW_FILE_MODE: u32 = 0o644;

/// Writes `bytes` to `path` atomically: a temporary file beside it, flushed
/// to disk, then renamed over the target. An existing file keeps its
/// permissions; a new one gets [`NEW_FILE_MODE`]. Missing parent
/// directories are created.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic_write_mode(path, bytes, None)
}

/// [`atomic_write`], giving a new file `mode` instead of [`NEW_FILE_MODE`].
pub fn atomic_write_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    if !still_resolved(path) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path no longer resolves as when it was checked (a directory on it is now a symbolic link)",
        ));
    }
    let tmp = staged_beside(path, bytes, mode)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

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

/// Whether `path` (resolved when it was confined) still resolves to
/// itself: neither it nor a directory on its way has become a symbolic
/// link since (a link there could lead a write out of the working
/// directory). For a file not yet created, its nearest existing ancestor.
pub fn still_resolved(path: &Path) -> bool {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return false;
    }
    let Some(existing) = path.ancestors().skip(1).find(|a| a.exists()) else { return true };
    std::fs::canonicalize(existing).is_ok_and(|real| real == existing)
}

/// The files of `changes` whose current content differs from `before`.
pub fn moved_files(changes: &[FileChange]) -> Vec<PathBuf> {
    changes
        .iter()
        .filter(|c| read_optional(&c.path).ok().as_ref() != Some(&c.before))
        .map(|c| c.path.clone())
        .collect()
}

fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A temporary file beside `path` holding `bytes`, flushed to disk, with
/// the permissions `path` has now (or `mode`, or [`NEW_FILE_MODE`]).
fn staged_beside(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    let dir =
        path.parent().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let existing = match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
        }
        Ok(meta) => Some(meta),
        Err(_) => None,
    };
    let permissions = existing
        .as_ref()
        .map_or_else(|| std::fs::Permissions::from_mode(mode.unwrap_or(NEW_FILE_MODE)), |m| m.permissions());
    let mut tmp = tempfile::Builder::new().prefix(".tether-").suffix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    keep_owner(tmp.as_file(), existing.as_ref());
    tmp.as_file().set_permissions(permissions)?;
    Ok(tmp)
}

/// Gives the new file the replaced one's owner and group, where this
/// process may (as root it can; otherwise the file was the caller's own):
/// a file edited by a run as root stays the user's.
fn keep_owner(file: &std::fs::File, replaced: Option<&std::fs::Metadata>) {
    use std::os::unix::fs::MetadataExt;
    if let Some(meta) = replaced {
        let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
    }
}

/// Swaps two existing paths atomically (`renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths that outlive the call; nothing else is touched.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Swaps the staged `tmp` into `path` if `path` still holds `expected`;
/// otherwise puts back what was there (someone else's write, or anything
/// that cannot be read) and says `false` — or, if even that fails, keeps
/// it at the temporary name and says where: it is never deleted.
fn swap_in(tmp: tempfile::NamedTempFile, path: &Path, expected: &[u8]) -> io::Result<bool> {
    let gone = |e: &io::Error| e.kind() == io::ErrorKind::NotFound;
    match exchange(tmp.path(), path) {
        Ok(()) => {
            // `tmp` now names the displaced file, removed when dropped
            // — only once it is known to be the `expected` content.
            let displaced = std::fs::read(tmp.path());
            if matches!(&displaced, Ok(d) if d == expected) {
                return Ok(true);
            }
            // Someone else's file (or one that cannot be read, or a
            // directory): back in place before anything else.
            if let Err(e) = exchange(tmp.path(), path) {
                let kept = tmp.keep().map(|(_, p)| p.display().to_string()).unwrap_or_default();
                return Err(io::Error::other(format!("{e}; what was at the path is kept at {kept}")));
            }
            displaced.map(|_| false)
        }
        Err(e) if gone(&e) => Ok(false),
        Err(_) => {
            if read_optional(path)?.as_deref() != Some(expected) {
                return Ok(false);
            }
            tmp.persist(path).map_err(|e| e.error)?;
            Ok(true)
        }
    }
}

/// Puts `state` at `path` (bytes, or deleted for `None`; a created file
/// gets `mode`) only if the file still holds `expected` (`None`: absent),
/// and says whether it did. Someone may write the file between the drift
/// check and this step; their write must not be overwritten. So the new
/// content is swapped in atomically with the old (`RENAME_EXCHANGE`), the
/// displaced file compared with `expected`, and swapped back if it is not
/// — their file is back in place and `false` returned. A file system
/// without the exchange gets a check right before the rename (a
/// microseconds-wide window); a deletion too.
fn replace_if(
    path: &Path,
    expected: Option<&[u8]>,
    state: Option<&[u8]>,
    mode: Option<u32>,
) -> io::Result<bool> {
    let gone = |e: &io::Error| e.kind() == io::ErrorKind::NotFound;
    match (expected, state) {
        (Some(expected), Some(bytes)) => swap_in(staged_beside(path, bytes, mode)?, path, expected),
        (None, Some(bytes)) => match staged_beside(path, bytes, mode)?.persist_noclobber(path) {
            Ok(_) => Ok(true),
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e.error),
        },
        (expected, None) => {
            if read_optional(path)?.as_deref() != expected {
                return Ok(false);
            }
            match std::fs::remove_file(path) {
                Err(e) if !gone(&e) => Err(e),
                _ => Ok(true),
            }
        }
    }
}

/// Applies every change or none: refuses the whole change if any file moved
/// since it was prepared — also one that moves while the change is being
/// written — and rolls back the files already written if a later write
/// fails. A write someone else makes meanwhile is never overwritten: it
/// either refuses the change or lands on top of it.
pub fn commit(changes: &[FileChange]) -> Result<(), CommitError> {
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
pub fn commit_with(changes: &[FileChange], write: &WriteStep<'_>) -> Result<(), CommitError> {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_root(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn a_failed_commit_counts_only_what_it_restored_and_says_how_files_are_left() {
        let (_d, root) = root();
        let (a, b) = (root.join("a.txt"), root.join("b.txt"));
        std::fs::write(&a, "a0").unwrap();
        std::fs::write(&b, "b0").unwrap();
        let change = |p: &Path, before: &str, after: &str| FileChange {
            path: p.to_path_buf(),
            before: Some(before.into()),
            after: Some(after.into()),
            mode: None,
        };
        let changes = [change(&a, "a0", "a1"), change(&b, "b0", "b1")];
        // a is written, then someone writes on top of it; b's write fails.
        let step = |path: &Path, expected: Option<&[u8]>, state: Option<&[u8]>| {
            if path.ends_with("b.txt") {
                return Err(io::Error::other("disk full"));
            }
            let done = replace_if(path, expected, state, None);
            std::fs::write(path, "theirs").unwrap();
            done
        };
        match commit_with(&changes, &step) {
            Err(e @ CommitError::WriteFailed { restored: 0, .. }) => {
                assert!(e.nothing_changed(), "{e}");
                assert_eq!(e.left(), "nothing was changed");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "theirs", "a write on top is kept");
        let partly = CommitError::WriteFailed {
            path: b.clone(),
            source: io::Error::other("x"),
            restored: 0,
            unrestored: vec![a.clone()],
        };
        assert!(!partly.nothing_changed() && partly.left().contains("only partly undone"));
    }

    #[test]
    fn a_rewritten_file_keeps_its_owner() {
        use std::os::unix::fs::MetadataExt;
        let (_d, root) = root();
        let path = root.join("theirs.txt");
        std::fs::write(&path, "v1").unwrap();
        // As root (the test command's CI), the file is handed to another
        // user first; elsewhere it is the caller's own and must stay so.
        let owner = match std::os::unix::fs::chown(&path, Some(4321), Some(4321)) {
            Ok(()) => (4321, 4321),
            Err(_) => {
                let meta = std::fs::metadata(&path).unwrap();
                (meta.uid(), meta.gid())
            }
        };
        atomic_write(&path, b"v2").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!((meta.uid(), meta.gid()), owner);
        let change = FileChange {
            path: path.clone(),
            before: Some(b"v2".to_vec()),
            after: Some(b"v3".to_vec()),
            mode: None,
        };
        commit(&[change]).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!((meta.uid(), meta.gid()), owner);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "v3");
    }

    #[test]
    fn a_rolled_back_change_removes_the_directories_it_made() {
        let (_d, root) = root();
        std::fs::write(root.join("b.txt"), "b0").unwrap();
        let changes = [
            FileChange {
                path: root.join("new/deep/f.txt"),
                before: None,
                after: Some(b"f".to_vec()),
                mode: None,
            },
            FileChange {
                path: root.join("b.txt"),
                before: Some(b"b0".to_vec()),
                after: Some(b"b1".to_vec()),
                mode: None,
            },
        ];
        let step = |path: &Path, expected: Option<&[u8]>, state: Option<&[u8]>| {
            if path.ends_with("b.txt") {
                return Err(io::Error::other("disk full"));
            }
            replace_if(path, expected, state, None)
        };
        assert!(matches!(commit_with(&changes, &step), Err(CommitError::WriteFailed { restored: 1, .. })));
        assert!(!root.join("new").exists(), "the directories the change made are gone");
        assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b0");
    }

    #[test]
    fn what_a_swap_displaces_is_put_back_never_deleted() {
        let (_d, root) = root();
        let path = root.join("b.txt");
        std::fs::write(&path, "old").unwrap();
        let tmp = staged_beside(&path, b"new", None).unwrap();
        // Between staging and the swap, the file became a directory with
        // the user's work in it.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("work.txt"), "mine").unwrap();
        assert!(
            swap_in(tmp, &path, b"old").is_err(),
            "a displaced directory cannot be read as the expected file"
        );
        assert_eq!(std::fs::read_to_string(path.join("work.txt")).unwrap(), "mine");
        let stray: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tether-"))
            .collect();
        assert!(stray.is_empty(), "nothing left at a temporary name");
    }

    #[test]
    fn confine_accepts_paths_inside_and_new_files() {
        let (_d, root) = root();
        std::fs::create_dir(root.join("src")).unwrap();
        assert_eq!(confine(&root, "src").unwrap(), root.join("src"));
        assert_eq!(confine(&root, "src/new/x.py").unwrap(), root.join("src/new/x.py"));
        assert_eq!(confine(&root, "src/../a.py").unwrap(), root.join("a.py"));
        let abs = root.join("src").display().to_string();
        assert_eq!(confine(&root, &abs).unwrap(), root.join("src"));
        assert_eq!(confine(&root, ".").unwrap(), root);
    }

    #[test]
    fn confine_refuses_escapes() {
        let (_d, root) = root();
        let outside = tempfile::tempdir().unwrap();
        for bad in ["..", "../x", "a/../../x", "/etc/passwd"] {
            assert!(matches!(confine(&root, bad), Err(PathError::Outside { .. })), "{bad} should be refused");
        }
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        assert!(matches!(confine(&root, "link"), Err(PathError::Outside { .. })));
        assert!(matches!(confine(&root, "link/new.txt"), Err(PathError::Outside { .. })));
        assert_eq!(confine(&root, " "), Err(PathError::Empty));
    }

    #[test]
    fn dangling_links_are_refused_as_dangling_wherever_they_point() {
        let (_d, root) = root();
        std::os::unix::fs::symlink(root.join("missing.txt"), root.join("inside")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/tether-target", root.join("outside")).unwrap();
        for (given, link) in [("inside", "inside"), ("outside", "outside"), ("outside/new.txt", "outside")] {
            let e = confine(&root, given).unwrap_err();
            assert_eq!(e, PathError::Dangling { path: given.into(), link: link.into() });
            assert!(e.to_string().contains("whose target does not exist"), "{e}");
        }
    }

    #[test]
    fn atomic_write_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, root) = root();
        let path = root.join("run.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        atomic_write(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    fn change(path: &Path, before: &str, after: &str) -> FileChange {
        FileChange {
            path: path.to_path_buf(),
            before: Some(before.as_bytes().to_vec()),
            after: Some(after.as_bytes().to_vec()),
            mode: None,
        }
    }

    /// `a`, `b` and `c` under `root`, each holding "old".
    fn three_old_files(root: &Path) -> [PathBuf; 3] {
        let names = ["a", "b", "c"].map(|n| root.join(n));
        for p in &names {
            std::fs::write(p, "old").unwrap();
        }
        names
    }

    #[test]
    fn commit_refuses_the_whole_change_on_drift() {
        let (_d, root) = root();
        let names = three_old_files(&root);
        let changes: Vec<_> = names.iter().map(|p| change(p, "old", "new")).collect();
        std::fs::write(&names[1], "moved").unwrap();
        match commit(&changes) {
            Err(CommitError::Drift { moved }) => assert_eq!(moved, vec![names[1].clone()]),
            other => panic!("expected drift, got {other:?}"),
        }
        for (p, want) in names.iter().zip(["old", "moved", "old"]) {
            assert_eq!(std::fs::read_to_string(p).unwrap(), want);
        }
    }

    #[test]
    fn a_failed_write_restores_the_files_already_written() {
        let (_d, root) = root();
        let names = three_old_files(&root);
        let mut changes: Vec<_> = names.iter().map(|p| change(p, "old", "new")).collect();
        changes.push(FileChange {
            path: root.join("created"),
            before: None,
            after: Some(b"fresh".to_vec()),
            mode: None,
        });
        let fail_on = names[2].clone();
        let result = commit_with(&changes, &|path, expected, state| {
            if path == fail_on {
                Err(io::Error::other("disk full"))
            } else {
                replace_if(path, expected, state, None)
            }
        });
        match result {
            Err(CommitError::WriteFailed { path, restored, unrestored, .. }) => {
                assert_eq!(path, names[2]);
                assert_eq!(restored, 2);
                assert!(unrestored.is_empty());
            }
            other => panic!("expected a write failure, got {other:?}"),
        }
        for p in &names {
            assert_eq!(std::fs::read_to_string(p).unwrap(), "old");
        }
        assert!(!root.join("created").exists());
    }

    #[test]
    fn a_write_landing_during_the_commit_is_kept_and_refuses_the_change() {
        let (_d, root) = root();
        let names = three_old_files(&root);
        let changes: Vec<_> = names.iter().map(|p| change(p, "old", "new")).collect();
        // Someone writes `a` (already committed) and `c` (not yet) just
        // before `c` is written: both their writes stay, `b` goes back.
        let result = commit_with(&changes, &|path, expected, state| {
            if path == names[2] {
                std::fs::write(&names[0], "theirs a").unwrap();
                std::fs::write(&names[2], "theirs c").unwrap();
            }
            replace_if(path, expected, state, None)
        });
        match result {
            Err(CommitError::Drift { moved }) => assert_eq!(moved, vec![names[2].clone(), names[0].clone()]),
            other => panic!("expected drift, got {other:?}"),
        }
        for (p, want) in names.iter().zip(["theirs a", "old", "theirs c"]) {
            assert_eq!(std::fs::read_to_string(p).unwrap(), want);
        }
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 3, "no temporary file is left behind: {left:?}");
    }

    #[test]
    fn commit_creates_and_deletes() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, root) = root();
        std::fs::write(root.join("gone"), "x").unwrap();
        let gone =
            FileChange { path: root.join("gone"), before: Some(b"x".to_vec()), after: None, mode: None };
        let new =
            FileChange { path: root.join("d/new"), before: None, after: Some(b"y".to_vec()), mode: None };
        let run = FileChange {
            path: root.join("d/run"),
            before: None,
            after: Some(b"z".to_vec()),
            mode: Some(0o755),
        };
        commit(&[gone, new, run]).unwrap();
        assert!(!root.join("gone").exists());
        assert_eq!(std::fs::read_to_string(root.join("d/new")).unwrap(), "y");
        let mode = |p: &str| std::fs::metadata(root.join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("d/new"), NEW_FILE_MODE, "not the temporary file's 0600");
        assert_eq!(mode("d/run"), 0o755);
    }
}
