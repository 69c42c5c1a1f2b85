//! Atomic writes: a temporary file beside the target, flushed to disk and
//! given the target's permissions and owner, then renamed over it.

use std::io::{self, Write};
use std::path::Path;

use super::still_resolved;

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

/// A temporary file beside `path` holding `bytes`, flushed to disk, with
/// the permissions `path` has now (or `mode`, or [`NEW_FILE_MODE`]).
pub(super) fn staged_beside(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> io::Result<tempfile::NamedTempFile> {
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
    super::temps::sweep_once(dir);
    let prefix = super::temps::own_prefix();
    let mut tmp = tempfile::Builder::new().prefix(&prefix).suffix(super::TEMP_SUFFIX).tempfile_in(dir)?;
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
