//! `LspServerActor`: one language server process for one (server, root).
//!
//! The actor owns the process (killed with its whole process group when the
//! actor stops), the client, and the documents it has opened. Its `Open`
//! handler runs atomically — start the server if needed (with backoff after
//! a crash), then bring the file up to date (`didOpen`, or `didChange` when
//! the disk content changed, and `didSave` when asked) — and hands back a
//! [`Opened`]; the caller then sends its request outside the mailbox, so
//! queries run concurrently while starts and syncs are serialised.
//!
//! Files changed on disk arrive as [`FilesChanged`] batches from the run's
//! watcher, through the supervisor, before any query that came after the
//! change. The server hears `workspace/didChangeWatchedFiles` for what it
//! registered (or, if it registered nothing, for its languages); an open
//! document is re-synced (`didChange`, or `didClose` when deleted); and
//! the changes a server only learns of from open documents (its table
//! entry's `reopen`) get a brief open of the file — tracked until the
//! server has published for it, so a query can wait for, or name, what is
//! still being re-read.
//!
//! A crash arrives as an [`Exited`] message: every waiter has already been
//! failed with the exit status and the last stderr lines; the next `Open`
//! restarts the server (a restart is the same start, from the same spawn
//! arguments) and the tree counts it.
//!
//! A root whose build the server could not import is served through a
//! project of tether's own ([`fallback`]).
//!
//! The submodules, by job:
//!
//! - `start` — the spawn arguments, the process, the `initialize`
//!   handshake, the backoff after a crash, and the deliberate restart.
//! - `handlers` — the messages (`Open`, `Reload`, `Exited`, `Shutdown`, the
//!   supervisor's `ServerCrashed`) and their handlers.
//! - `sync` — documents sent to the server, re-reads of files changed on
//!   disk, and the watcher's [`FilesChanged`] batches.
//! - `status` — the state in words and the supervision tree's node.
//! - `stop` — stopping it to keep the run small: the idle limit, the
//!   supervisor's stop for the budget, the room made before a start.
//! - `fallback` — serving a root as an unmanaged folder.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use actix::prelude::*;
use serde_json::Value;

mod fallback;
mod handlers;
mod start;
mod status;
mod stop;
mod sync;

use super::discovery::Usable;
use super::in_use::Holds;
pub use super::limits::UsageReport;
pub use super::opened::{
    BARRIER_FLOOR, BARRIER_WAIT, CONTENT_MODIFIED_RETRY, OnError, Opened, Serves, SyncedDoc,
};
use super::shared::{DiagEntry, ServerState};
use super::unmanaged;
use crate::process::{ExitInfo, KillGuard};
use crate::wire::client::Client;
use crate::wire::pending::RequestError;
pub use handlers::{Open, Recheck, Reload, Shutdown};
pub use start::{Exited, ServerCrashed, client_capabilities};
pub use stop::{MakeRoom, Stop, Usage};
pub use sync::FilesChanged;

/// How long `initialize` may take. A cold pyright or clangd answers in well
/// under a second; jdtls, a JVM, took more than 30 s with two more of its
/// kind starting beside it on a busy two-core machine (the hunt).
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `shutdown` may take before `exit` is sent anyway.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long after `exit` the process may linger before it is killed.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(1);
/// First restart delay after a crash; doubled per crash in a row.
const BACKOFF_START: Duration = Duration::from_millis(200);
/// Longest restart delay.
const BACKOFF_MAX: Duration = Duration::from_secs(8);
/// A server up this long is no longer "crashing in a row".
const STABLE_AFTER: Duration = Duration::from_secs(60);
/// Largest file synced to a server.
pub const MAX_SYNC_BYTES: u64 = 8 * 1024 * 1024;
/// How long a file opened for re-reading waits for the server's
/// diagnostics (its sign of having parsed it) before it is closed anyway.
pub const REINDEX_WAIT: Duration = Duration::from_secs(10);
/// Most files re-read by opening them, per batch; a larger batch (a
/// checkout of another branch) restarts the server, which reads
/// everything anew.
pub const REOPEN_MAX: usize = 64;
/// Most files kept open after a re-read (`keep_reopened`); past it the
/// oldest is closed — by then long taken into the server's project.
pub const MAX_KEPT_OPEN: usize = 512;

/// The pid of every running server process, by server: what a host that
/// stops the run from its own actor thread — where no message can be
/// handled before it returns — kills at once.
pub type ServerPids = Arc<parking_lot::Mutex<std::collections::BTreeMap<ServerKey, u32>>>;

pub use super::key::ServerKey;

/// Why a server could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    /// The process did not start.
    #[error("{server} did not start: {reason}")]
    Spawn {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// `initialize` failed.
    #[error("{server} failed to initialize: {reason}")]
    Initialize {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// The file could not be read or synced.
    #[error("{0}")]
    File(String),
    /// A request failed.
    #[error("{0}")]
    Request(String),
}

impl From<RequestError> for LspError {
    fn from(e: RequestError) -> Self {
        LspError::Request(e.to_string())
    }
}

struct Running {
    client: Client,
    guard: KillGuard,
    shared: Arc<ServerState>,
    started: Instant,
    capabilities: Arc<Value>,
}

struct Doc {
    version: i32,
    text: Arc<String>,
    /// The version it was opened at, and the publication number then:
    /// the server has loaded it once it has published for it since.
    opened_version: i32,
    opened_seq: u64,
    /// The publication number when this content was sent.
    synced_seq: u64,
    /// When this content was sent.
    changed_at: SystemTime,
    /// The fresh diagnostics of the content before this one, if known.
    previous: Option<DiagEntry>,
    /// Opened only so the server re-reads a file changed on disk; closed
    /// once it has published for it (unless a query opens it meanwhile).
    transient: bool,
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq)]
enum State {
    NotStarted,
    Running,
    Crashed(ExitInfo),
}

/// The actor for one language server process.
pub struct LspServerActor {
    key: ServerKey,
    usable: Usable,
    workdir: PathBuf,
    running: Option<Running>,
    docs: HashMap<PathBuf, Doc>,
    /// The last version sent for each file, whichever opening it was.
    versions: HashMap<PathBuf, i32>,
    state: State,
    generation: u64,
    restarts: u32,
    crashes_in_row: u32,
    crashed_at: Option<Instant>,
    /// How the last process ended unasked (or why its start failed).
    last_crash: Option<ExitInfo>,
    created: Instant,
    /// When a caller last opened a session on it: it is idle since.
    last_used: Instant,
    /// The sessions callers hold on it: in use while any is held.
    holds: Holds,
    /// How long it may sit idle before it is stopped (`None`: never).
    idle_limit: Option<Duration>,
    /// Why it was last stopped to keep the run small, until it starts again.
    stopped: Option<String>,
    /// What the first call after such a start is told.
    restart_note: Option<String>,
    /// The supervisor's, asked for room before a start.
    make_room: Option<Recipient<stop::MakeRoom>>,
    /// The most its process group was seen to hold, in bytes.
    peak_memory: u64,
    supervisor: Option<Recipient<ServerCrashed>>,
    pids: ServerPids,
    /// The project the server serves the root through since it could
    /// not import the root's build, and what it reported then.
    unmanaged: Option<(unmanaged::Project, String)>,
    /// Which files are its: its languages' under its root.
    serves: Serves,
}

impl LspServerActor {
    /// An actor for `usable`, not started until first used.
    pub fn new(
        usable: Usable,
        workdir: PathBuf,
        supervisor: Option<Recipient<ServerCrashed>>,
        make_room: Option<Recipient<stop::MakeRoom>>,
        idle_limit: Option<Duration>,
        pids: ServerPids,
    ) -> Self {
        let key = ServerKey { server: usable.config.id.clone(), root: usable.root.clone() };
        let serves = Serves::new(usable.root.clone(), usable.languages.clone(), &usable.config.languages);
        Self {
            key,
            usable,
            workdir,
            running: None,
            docs: HashMap::new(),
            versions: HashMap::new(),
            state: State::NotStarted,
            generation: 0,
            restarts: 0,
            crashes_in_row: 0,
            crashed_at: None,
            last_crash: None,
            created: Instant::now(),
            last_used: Instant::now(),
            holds: Holds::default(),
            idle_limit,
            stopped: None,
            restart_note: None,
            make_room,
            peak_memory: 0,
            supervisor,
            pids,
            unmanaged: None,
            serves,
        }
    }

    /// How long it has been idle: `None` while a caller holds a session
    /// on it or it owes an answer, else since the last session was opened
    /// or let go, whichever was later.
    fn idle_for(&self) -> Option<Duration> {
        let pending = self.running.as_ref().map_or(0, |r| r.client.pending());
        if pending > 0 || self.holds.held() > 0 {
            return None;
        }
        Some(self.last_used.max(self.holds.released()).elapsed())
    }

    fn name(&self) -> String {
        format!("{} ({})", self.key.server, crate::fs::relative(&self.workdir, &self.key.root))
    }
}

impl Actor for LspServerActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.watch_idle(ctx);
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        // Dropping the guard kills the process group.
        self.running = None;
        self.pids.lock().remove(&self.key);
    }
}
