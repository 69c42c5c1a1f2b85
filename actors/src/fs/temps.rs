//! The temporary files writes go through, and those a run left behind.
//!
//! A write puts its bytes in `.tether-<pid>-<secs>-<random>.tmp` beside
//! the target (`secs`: when it was made, in seconds since the epoch), then
//! renames it over the target. A run killed between the two leaves the
//! temporary file; the next write into that directory removes it:
//!
//! - once its writer is gone (`kill(pid, 0)` finds no such process) and
//!   the file is older than [`DEAD_WRITER_AGE`] — a pid from another PID
//!   namespace (a container sharing the project) can look gone while its
//!   writer is alive, and a write holds its file for milliseconds;
//! - whoever wrote it, once it is older than [`STALE_TEMP_AGE`].
//!
//! The age is read from the name, not the file's times: after a swap
//! (`RENAME_EXCHANGE`) the temporary name holds the displaced file, with
//! the user's old modification time. A name without the time (an older
//! run's) is aged by its ctime. Each directory is swept once per process.
//! What a failed swap must keep is renamed out of this pattern first
//! ([`keep_aside`]), so no sweep ever takes it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

/// How a temporary file's name starts.
pub const TEMP_PREFIX: &str = ".tether-";
/// How it ends.
pub const TEMP_SUFFIX: &str = ".tmp";
/// Age past which a temporary file is left over whoever wrote it: a
/// write holds its file for the time of a write and an fsync.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(600);
/// Age past which the temporary file of a writer that looks gone is left
/// over: long enough for a live writer whose pid this process cannot see.
pub const DEAD_WRITER_AGE: Duration = Duration::from_secs(60);
/// What a kept file's name gets instead of [`TEMP_SUFFIX`].
const KEPT_SUFFIX: &str = ".kept";

/// Directories swept by this process.
static SWEPT: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Default::default);

/// The prefix of a temporary file this process makes now.
pub(super) fn own_prefix() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{TEMP_PREFIX}{}-{secs}-", std::process::id())
}

/// Removes the temporary files left over in `dir`, the first time this
/// process writes there; returns those removed.
pub(super) fn sweep_once(dir: &Path) -> Vec<PathBuf> {
    if !SWEPT.lock().insert(dir.to_path_buf()) {
        return Vec::new();
    }
    sweep_at(dir, SystemTime::now())
}

/// [`sweep_once`]'s work, with the clock given.
fn sweep_at(dir: &Path, now: SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(written) = Written::parse(name) else { continue };
        // Never through a link; a file only.
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
        if !meta.is_file() {
            continue;
        }
        let made = written.made.unwrap_or_else(|| ctime(&meta));
        let age = now.duration_since(made).unwrap_or_default();
        if written.left_over(age) && std::fs::remove_file(entry.path()).is_ok() {
            tracing::info!(path = %entry.path().display(), "removed a temporary file a run left behind");
            removed.push(entry.path());
        }
    }
    removed
}

/// What a temporary file's name says of its write.
#[derive(Debug, PartialEq)]
struct Written {
    /// The writing process, when the name gives it.
    pid: Option<u32>,
    /// When the file was made, when the name gives it.
    made: Option<SystemTime>,
}

impl Written {
    /// `None` for a name that is not a temporary file of a write.
    fn parse(name: &str) -> Option<Self> {
        let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
        let mut parts = middle.split('-');
        let pid = parts.next().and_then(|p| p.parse::<u32>().ok());
        let made = pid
            .and(parts.next())
            .and_then(|s| s.parse::<u64>().ok())
            .map(|secs| UNIX_EPOCH + Duration::from_secs(secs));
        Some(Self { pid, made })
    }

    /// Whether a file of this write, `age` old, will never be renamed.
    fn left_over(&self, age: Duration) -> bool {
        if age > STALE_TEMP_AGE {
            return true;
        }
        let own = self.pid == Some(std::process::id());
        !own && self.pid.is_some_and(gone) && age > DEAD_WRITER_AGE
    }
}

/// Whether no process `pid` exists (as this process sees them).
fn gone(pid: u32) -> bool {
    // 0 and what does not fit a pid_t would address a group, not a process.
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; kill(2) only checks that `pid` exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// When `meta`'s inode last changed (a rename or an exchange counts).
fn ctime(meta: &std::fs::Metadata) -> SystemTime {
    use std::os::unix::fs::MetadataExt;
    let secs = u64::try_from(meta.ctime()).unwrap_or(0);
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// Moves a temporary file that must be kept (what a failed swap displaced)
/// to a name no sweep takes: `.tether-….kept` beside it. Returns where it
/// is; its own path if the rename fails.
pub(super) fn keep_aside(kept: PathBuf) -> PathBuf {
    let name = kept.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(TEMP_SUFFIX));
    let Some(name) = name else { return kept };
    let aside = kept.with_file_name(format!("{name}{KEPT_SUFFIX}"));
    match std::fs::rename(&kept, &aside) {
        Ok(()) => aside,
        Err(_) => kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pid no process has: one past the kernel's largest.
    fn dead_pid() -> u32 {
        std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(4_194_304)
            + 1
    }

    #[test]
    fn names_say_who_wrote_and_when() {
        assert_eq!(
            Written::parse(".tether-42-1700000000-Ab12.tmp"),
            Some(Written { pid: Some(42), made: Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000)) })
        );
        assert_eq!(Written::parse(".tether-42-Ab12.tmp"), Some(Written { pid: Some(42), made: None }));
        assert_eq!(Written::parse(".tether-Qx81zA.tmp"), Some(Written { pid: None, made: None }));
        for other in ["notes.tmp", ".tether-1-2-x.tmp.kept", ".tether-1-2-x.kept", "tether-1-2-x.tmp"] {
            assert_eq!(Written::parse(other), None, "{other}");
        }
    }

    #[test]
    fn a_gone_writers_file_goes_after_a_minute_anyones_after_ten() {
        let dead = Written { pid: Some(dead_pid()), made: None };
        let live = Written { pid: Some(1), made: None };
        let own = Written { pid: Some(std::process::id()), made: None };
        let unknown = Written { pid: None, made: None };
        let minute = DEAD_WRITER_AGE + Duration::from_secs(1);
        let stale = STALE_TEMP_AGE + Duration::from_secs(1);
        assert!(!dead.left_over(Duration::from_secs(1)), "a writer in another pid namespace may be writing");
        assert!(dead.left_over(minute));
        for kept in [&live, &own, &unknown] {
            assert!(!kept.left_over(minute), "{kept:?}");
            assert!(kept.left_over(stale), "{kept:?}");
        }
        assert!(!gone(0) && !gone(u32::MAX), "a group, never a process");
        assert!(gone(dead_pid()) && !gone(std::process::id()));
    }

    #[test]
    fn a_sweep_takes_only_what_will_never_be_renamed() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let secs = |ago: u64| now.duration_since(UNIX_EPOCH).unwrap().as_secs() - ago;
        let names = [
            format!(".tether-{}-{}-a1.tmp", dead_pid(), secs(120)), // gone, 2 min: removed
            format!(".tether-{}-{}-a2.tmp", dead_pid(), secs(5)),   // gone, 5 s: kept
            format!(".tether-{}-{}-a3.tmp", std::process::id(), secs(120)), // own: kept
            format!(".tether-1-{}-a4.tmp", secs(700)),              // alive, 11 min: removed
            ".tether-Qx81zA.tmp".to_string(),                       // no pid, fresh ctime: kept
            ".tether-1-2-a5.kept".to_string(),                      // kept aside: never
            "notes.tmp".to_string(),
        ];
        for name in &names {
            std::fs::write(dir.path().join(name), "half").unwrap();
        }
        let mut removed: Vec<String> = sweep_at(dir.path(), now)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        removed.sort();
        let mut expected = vec![names[0].clone(), names[3].clone()];
        expected.sort();
        assert_eq!(removed, expected);
        // An hour on, a name without a time is aged by its ctime.
        let later = sweep_at(dir.path(), now + Duration::from_secs(3600));
        assert!(later.iter().any(|p| p.ends_with(".tether-Qx81zA.tmp")), "{later:?}");
        assert!(dir.path().join(".tether-1-2-a5.kept").exists() && dir.path().join("notes.tmp").exists());
    }

    #[test]
    fn a_file_kept_aside_leaves_the_swept_names() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join(".tether-1-2-x.tmp");
        std::fs::write(&kept, "the user's old content").unwrap();
        let aside = keep_aside(kept.clone());
        assert_eq!(aside, dir.path().join(".tether-1-2-x.kept"));
        assert!(!kept.exists());
        assert!(sweep_at(dir.path(), SystemTime::now() + STALE_TEMP_AGE * 10).is_empty());
        assert_eq!(std::fs::read_to_string(aside).unwrap(), "the user's old content");
    }
}
