//! Watching the working directory, so the language servers learn of every
//! change to its files — whoever made it: the host's own write tools, an
//! editor, `git checkout`, a formatter, a code generator.
//!
//! One [`Watcher`] per run. Its pump thread owns the `notify` watcher
//! (inotify on Linux, one watch per directory the project's walks visit)
//! and the [`tree::Tree`] of tracked files, and turns raw events into
//! debounced [`Batch`]es of created, changed and deleted files (a `git
//! checkout` touching 500 files is one batch), handed to a delivery
//! callback — the language-server supervisor.
//!
//! **Sync points.** A query must not be answered before the changes made
//! before it arrived have been delivered. The events of a write that has
//! returned are already queued in the kernel, in order, on the watcher's
//! one inotify descriptor; so [`WatchHandle::sync`] creates a cookie file in
//! a private directory watched through that same descriptor and waits for
//! its event: every event queued before the cookie has then been read.
//! When all of those are already delivered (the usual case: nothing
//! changed), notify's own thread answers at once; otherwise the pump
//! delivers them first, without waiting out the debounce. A sync point
//! costs a file creation and two thread wake-ups, not a wait.
//!
//! **Without events** — no inotify instance, the watch limit reached, or
//! `[watch] mode = "scan"` in `tether.toml` — a sync point is a stat scan
//! of the tree instead, and [`WatchHandle::status`] says which mode is in
//! force and why.

//!
//! The submodules: `inner` (the state the threads share, and the cookies
//! answered on notify's thread), `watcher` (the [`Watcher`] and the
//! [`WatchHandle`]), `events` (the notify watcher and its capped watches),
//! `pump` (the thread that debounces events into batches and delivers
//! them), and [`tree`] (the tracked files).

mod events;
mod inner;
mod pump;
pub mod tree;
mod watcher;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;

pub use watcher::{WatchHandle, Watcher};

/// How long the pump waits for quiet after an event before delivering.
pub const DEBOUNCE: Duration = Duration::from_millis(50);
/// Longest a burst is held back before it is delivered anyway (a file
/// written without pause would otherwise never be). Queries never wait
/// for it: a sync point delivers at once. A checkout writing 500 files
/// takes ≈ 0.7 s on the disks measured here.
pub const BATCH_MAX_DELAY: Duration = Duration::from_secs(2);
/// Longest a sync point waits (for the cookie, a scan, or the first walk
/// of a large tree); past it the answer says changes may be missing.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(10);
/// Most directories watched; past it the watcher falls back to scanning.
pub const MAX_WATCHED_DIRS: usize = 20_000;
/// Recent batches kept, to tell which files changed between two sync points.
pub const HISTORY: usize = 512;

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// It appeared (or moved in).
    Created,
    /// Its content changed.
    Changed,
    /// It went away (or moved out).
    Deleted,
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file, absolute.
    pub path: PathBuf,
    /// What happened.
    pub kind: ChangeKind,
}

/// The changes delivered together.
#[derive(Debug, Clone)]
pub struct Batch {
    /// Batches are numbered from 1, in delivery order.
    pub seq: u64,
    /// When the batch was delivered.
    pub at: SystemTime,
    /// What changed.
    pub changes: Vec<Change>,
}

/// Whether to watch for events or scan at each sync point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preference {
    /// Events when the platform allows, a scan otherwise.
    #[default]
    Events,
    /// Always scan (`[watch] mode = "scan"`).
    Scan,
}

/// Where the watcher stands, for `lsp status` and the tree.
#[derive(Debug, Clone, Serialize)]
pub struct WatchStatus {
    /// `starting`, `events` or `scan`.
    pub mode: &'static str,
    /// Why the watcher scans instead of watching for events.
    pub reason: Option<String>,
    /// Directories watched (or walked, when scanning).
    pub directories: usize,
    /// Files tracked.
    pub files: usize,
    /// Whether there were more files than are tracked.
    pub truncated: bool,
    /// Batches delivered.
    pub batches: u64,
    /// Changes delivered.
    pub changes: u64,
    /// When the last batch was delivered.
    #[serde(skip)]
    pub last_batch: Option<SystemTime>,
}

impl WatchStatus {
    /// One line for `lsp status`.
    pub fn describe(&self) -> String {
        let files = format!(
            "{} file(s){}",
            self.files,
            if self.truncated {
                format!(" (capped at {}; the rest are not tracked)", tree::MAX_FILES)
            } else {
                String::new()
            }
        );
        let delivered = format!("{} change(s) delivered in {} batch(es)", self.changes, self.batches);
        match self.mode {
            "events" => format!(
                "file watching: events on {} directories, {files}; {delivered} (debounce {} ms; every query first takes in what changed before it)",
                self.directories,
                DEBOUNCE.as_millis()
            ),
            "scan" => format!(
                "file watching: a stat scan of {files} before every query, because {}; {delivered}",
                self.reason.as_deref().unwrap_or("it was asked for")
            ),
            _ => "file watching: starting (walking the working directory)".to_string(),
        }
    }
}

/// What a sync point found.
#[derive(Debug, Clone)]
pub struct Synced {
    /// The last batch delivered by then.
    pub seq: u64,
    /// Set when the sync point could not be confirmed: what may be missing.
    pub note: Option<String>,
}

/// Called with every batch, on the pump thread; it must not block.
pub type Deliver = Arc<dyn Fn(Arc<Batch>) + Send + Sync>;
