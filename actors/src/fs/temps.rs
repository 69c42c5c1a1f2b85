//! The temporary files writes go through, and those a run left behind.
//!
//! A write puts its bytes in `.tether-<pid>-<random>.tmp` beside the
//! target, then renames it over the target. A run killed between the two
//! leaves the temporary file; the next write into that directory removes
//! it — once its writer is gone (no process `<pid>`), or, for a name that
//! carries no pid, once it is older than [`STALE_TEMP_AGE`]. Each
//! directory is swept once per process.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use parking_lot::Mutex;

/// How a temporary file's name starts.
pub const TEMP_PREFIX: &str = ".tether-";
/// How it ends.
pub const TEMP_SUFFIX: &str = ".tmp";
/// Age past which a temporary file is left over whoever wrote it: a
/// write holds its file for the time of a write and an fsync.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(600);

/// Directories swept by this process.
static SWEPT: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Default::default);

/// The prefix of this process's temporary files.
pub(super) fn own_prefix() -> String {
    format!("{TEMP_PREFIX}{}-", std::process::id())
}

/// Removes the temporary files left over in `dir`, the first time this
/// process writes there; returns those removed.
pub(super) fn sweep_once(dir: &Path) -> Vec<PathBuf> {
    if !SWEPT.lock().insert(dir.to_path_buf()) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if left_over(name, &entry) && std::fs::remove_file(entry.path()).is_ok() {
            tracing::info!(path = %entry.path().display(), "removed a temporary file a run left behind");
            removed.push(entry.path());
        }
    }
    removed
}

/// Whether `name` is a temporary file of a write that will never finish.
fn left_over(name: &str, entry: &std::fs::DirEntry) -> bool {
    let Some(middle) = name.strip_prefix(TEMP_PREFIX).and_then(|n| n.strip_suffix(TEMP_SUFFIX)) else {
        return false;
    };
    if !entry.file_type().is_ok_and(|t| t.is_file()) {
        return false;
    }
    let writer = middle.split_once('-').and_then(|(pid, _)| pid.parse::<u32>().ok());
    if let Some(pid) = writer
        && pid != std::process::id()
        && !Path::new(&format!("/proc/{pid}")).exists()
    {
        return true;
    }
    let age = entry.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok());
    age.is_some_and(|age| age > STALE_TEMP_AGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_writers_temp_and_an_old_one_go_a_live_ones_stays() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str| std::fs::write(dir.path().join(name), "half").unwrap();
        // pid 0 is never a process of ours; /proc/0 does not exist.
        write(".tether-0-abc123.tmp");
        write(&format!("{}xyz.tmp", own_prefix()));
        write(".tether-Qx81zA.tmp"); // no pid, fresh: kept
        write(".tether-old.tmp.keep");
        write("notes.tmp");
        let old = dir.path().join(".tether-Old000.tmp");
        std::fs::write(&old, "half").unwrap();
        let long_ago = std::time::SystemTime::now() - STALE_TEMP_AGE - Duration::from_secs(60);
        std::fs::File::options().write(true).open(&old).unwrap().set_modified(long_ago).unwrap();
        let mut removed: Vec<String> = sweep_once(dir.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        removed.sort();
        assert_eq!(removed, [".tether-0-abc123.tmp", ".tether-Old000.tmp"]);
        assert!(sweep_once(dir.path()).is_empty(), "once per directory");
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), 4, "{left:?}");
    }
}
