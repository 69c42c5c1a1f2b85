//! Confinement to the working directory: resolving a path argument to a
//! path inside the root, and checking later that it still resolves so.

use std::path::{Component, Path, PathBuf};

use super::relative;

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
