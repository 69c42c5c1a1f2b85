//! The notify watcher (inotify on Linux) and its watches: one per
//! directory, capped at [`MAX_WATCHED_DIRS`], and the private directory
//! where sync points create their cookies.

use std::path::Path;

use notify::{RecursiveMode, Watcher as _};

use super::MAX_WATCHED_DIRS;
use super::tree::{WatchFailed, Watches};

/// The notify watcher and the cookie directory it watches.
pub(super) struct Events {
    pub(super) watcher: notify::RecommendedWatcher,
    /// Removed (with any cookie left in it) when the pump stops.
    pub(super) _cookies: tempfile::TempDir,
}

impl Watches for Events {
    fn add(&mut self, dir: &Path) -> Result<(), WatchFailed> {
        match self.watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => Ok(()),
            Err(e) => match e.kind {
                notify::ErrorKind::PathNotFound => Err(WatchFailed::Gone),
                notify::ErrorKind::Io(ref io) if io.kind() == std::io::ErrorKind::NotFound => {
                    Err(WatchFailed::Gone)
                }
                notify::ErrorKind::MaxFilesWatch => Err(WatchFailed::Fatal(format!(
                    "the inotify watch limit was reached (fs.inotify.max_user_watches = {})",
                    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
                        .map(|s| s.trim().to_string())
                        .unwrap_or_else(|_| "?".into())
                ))),
                _ => Err(WatchFailed::Fatal(format!("watching {} failed: {e}", dir.display()))),
            },
        }
    }

    fn remove(&mut self, dir: &Path) {
        let _ = self.watcher.unwatch(dir);
    }
}

/// Where cookies are created: in memory (`/dev/shm`) where there is one —
/// creating a file there costs a third of what it costs on a disk — else
/// the temporary directory. A watch there shares the inotify queue, and
/// so its order, with the working directory's watches.
pub(super) fn sync_dir() -> std::io::Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix(".tether-sync-").tempdir_in(shm)
    {
        return Ok(dir);
    }
    tempfile::Builder::new().prefix(".tether-sync-").tempdir()
}

/// Counts the directories added, to stop at [`MAX_WATCHED_DIRS`].
pub(super) struct Capped<'a> {
    pub(super) events: &'a mut Events,
    pub(super) watched: usize,
}

impl Watches for Capped<'_> {
    fn add(&mut self, dir: &Path) -> Result<(), WatchFailed> {
        if self.watched >= MAX_WATCHED_DIRS {
            return Err(WatchFailed::Fatal(format!(
                "the working directory has more than {MAX_WATCHED_DIRS} directories to watch"
            )));
        }
        self.events.add(dir)?;
        self.watched += 1;
        Ok(())
    }

    fn remove(&mut self, dir: &Path) {
        self.events.remove(dir);
        self.watched = self.watched.saturating_sub(1);
    }
}
