//! Replacing one file only if it still holds what was expected: the staged
//! content swapped in atomically with the old (`RENAME_EXCHANGE`), and
//! swapped back if what it displaced is someone else's write.

use std::io;
use std::path::Path;

use super::atomic::staged_beside;

pub(super) fn read_optional(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
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
/// it beside the file under a name no sweep takes and says where: it is
/// never deleted.
pub(super) fn swap_in(tmp: tempfile::NamedTempFile, path: &Path, expected: &[u8]) -> io::Result<bool> {
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
                let kept = tmp
                    .keep()
                    .map(|(_, p)| super::temps::keep_aside(p).display().to_string())
                    .unwrap_or_default();
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
pub(super) fn replace_if(
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
