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

pub mod tree;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher as _};
use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::oneshot;

use tree::{NoWatches, Tree, WatchFailed, Watches};

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

enum Msg {
    Event(notify::Result<notify::Event>),
    /// A cookie that arrived while events before it were undelivered.
    Cookie(PathBuf, u64),
    /// A sync point answered by a scan (or after the first walk).
    Sync(oneshot::Sender<u64>),
    /// Remove the spent cookies.
    Sweep,
    Stop,
}

enum Phase {
    Starting,
    Events { cookies: PathBuf },
    Scan,
    Stopped,
}

struct Gate {
    phase: Phase,
    /// Sync points waiting for their cookie: (cookie number, answer).
    waiters: Vec<(u64, oneshot::Sender<u64>)>,
}

struct Inner {
    tx: Sender<Msg>,
    gate: Mutex<Gate>,
    next_cookie: AtomicU64,
    seq: AtomicU64,
    /// Events handed to the pump and not yet delivered in a batch (nor
    /// found to change nothing). Zero when a cookie arrives means every
    /// event before it is delivered: notify's thread answers the sync
    /// point itself.
    undelivered: AtomicU64,
    /// Cookies answered, removed by the pump when it next wakes (their
    /// removal events are ignored).
    spent: Mutex<Vec<PathBuf>>,
    status: Mutex<WatchStatus>,
    history: Mutex<VecDeque<Arc<Batch>>>,
}

/// Spent cookies kept before the pump is woken to remove them.
const SPENT_SWEEP: usize = 256;

impl Inner {
    /// Answers every sync point waiting on a cookie numbered up to `n`.
    fn answer_upto(&self, n: u64, seq: u64) {
        let ready: Vec<oneshot::Sender<u64>> = {
            let mut gate = self.gate.lock();
            let (ready, waiting) = std::mem::take(&mut gate.waiters).into_iter().partition(|(k, _)| *k <= n);
            gate.waiters = waiting;
            ready.into_iter().map(|(_, tx)| tx).collect()
        };
        for tx in ready {
            let _ = tx.send(seq);
        }
    }

    /// Takes one event on notify's thread: a cookie is answered here when
    /// nothing before it is still on its way; anything else goes to the pump.
    fn take(&self, cookies: &Path, event: notify::Result<notify::Event>) {
        if let Ok(e) = &event
            && !e.paths.is_empty()
            && e.paths.iter().all(|p| p.parent() == Some(cookies))
        {
            if !matches!(e.kind, EventKind::Create(_)) {
                return; // a spent cookie's removal
            }
            for path in &e.paths {
                let Some(n) = cookie_number(path) else { continue };
                if self.undelivered.load(Ordering::SeqCst) == 0 {
                    self.answer_upto(n, self.seq.load(Ordering::SeqCst));
                    let mut spent = self.spent.lock();
                    spent.push(path.clone());
                    if spent.len() >= SPENT_SWEEP {
                        let _ = self.tx.send(Msg::Sweep);
                    }
                } else {
                    let _ = self.tx.send(Msg::Cookie(path.clone(), n));
                }
            }
            return;
        }
        if let Ok(e) = &event
            && matches!(
                e.kind,
                EventKind::Access(
                    AccessKind::Open(_) | AccessKind::Read | AccessKind::Close(AccessMode::Read)
                )
            )
            && !e.need_rescan()
        {
            return; // not asked for, and never a change
        }
        self.undelivered.fetch_add(1, Ordering::SeqCst);
        let _ = self.tx.send(Msg::Event(event));
    }
}

/// The number a cookie's file name carries (`c17` → 17).
fn cookie_number(path: &Path) -> Option<u64> {
    path.file_name()?.to_str()?.strip_prefix('c')?.parse().ok()
}

/// The run's watcher; stops its thread (and its watches) when dropped.
pub struct Watcher {
    inner: Arc<Inner>,
}

/// What callers hold to sync with the watcher and read its state; it
/// does not keep the watcher running.
#[derive(Clone)]
pub struct WatchHandle {
    inner: Arc<Inner>,
}

impl Watcher {
    /// Starts watching `root` (canonical) on a thread of its own; batches
    /// go to `deliver`. The first walk runs there too: sync points wait
    /// for it, so a server started after one sees what the walk saw.
    pub fn start(root: PathBuf, preference: Preference, deliver: Deliver) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        let inner = Arc::new(Inner {
            tx,
            gate: Mutex::new(Gate { phase: Phase::Starting, waiters: Vec::new() }),
            next_cookie: AtomicU64::new(1),
            seq: AtomicU64::new(0),
            undelivered: AtomicU64::new(0),
            spent: Mutex::new(Vec::new()),
            status: Mutex::new(WatchStatus {
                mode: "starting",
                reason: None,
                directories: 0,
                files: 0,
                truncated: false,
                batches: 0,
                changes: 0,
                last_batch: None,
            }),
            history: Mutex::new(VecDeque::new()),
        });
        let pump_inner = inner.clone();
        let started = std::thread::Builder::new().name("tether-watch".into()).spawn(move || {
            let mut pump = Pump {
                tree: Tree::new(root),
                inner: pump_inner,
                events: None,
                dirty: BTreeMap::new(),
                first_at: None,
                last_at: Instant::now(),
                rescan: false,
                consumed: 0,
                deliver,
            };
            pump.begin(preference);
            pump.run(rx);
        });
        if let Err(e) = started {
            let mut gate = inner.gate.lock();
            gate.phase = Phase::Scan;
            let mut status = inner.status.lock();
            status.mode = "scan";
            status.reason = Some(format!("the watcher thread did not start ({e})"));
        }
        Self { inner }
    }

    /// A handle for sync points and status.
    pub fn handle(&self) -> WatchHandle {
        WatchHandle { inner: self.inner.clone() }
    }
}

impl WatchHandle {
    /// Makes sure every change made before this call has been delivered;
    /// answers with the last batch's number, or says what may be missing.
    pub async fn sync(&self) -> Synced {
        let (tx, rx) = oneshot::channel();
        let cookie = {
            let mut gate = self.inner.gate.lock();
            match &gate.phase {
                Phase::Events { cookies } => {
                    let n = self.inner.next_cookie.fetch_add(1, Ordering::SeqCst);
                    let cookie = cookies.join(format!("c{n}"));
                    gate.waiters.push((n, tx));
                    Some(cookie)
                }
                Phase::Stopped => return self.unconfirmed("it has stopped (the run is ending)".to_string()),
                Phase::Starting | Phase::Scan => {
                    let _ = self.inner.tx.send(Msg::Sync(tx));
                    None
                }
            }
        };
        if let Some(cookie) = cookie
            && let Err(e) = std::fs::File::create(&cookie)
        {
            return self
                .unconfirmed(format!("its sync file {} could not be created ({e})", cookie.display()));
        }
        match tokio::time::timeout(SYNC_TIMEOUT, rx).await {
            Ok(Ok(seq)) => Synced { seq, note: None },
            Ok(Err(_)) => self.unconfirmed("it stopped".to_string()),
            Err(_) => self.unconfirmed(format!("it did not answer within {} s", SYNC_TIMEOUT.as_secs())),
        }
    }

    fn unconfirmed(&self, why: String) -> Synced {
        Synced {
            seq: self.inner.seq.load(Ordering::SeqCst),
            note: Some(format!(
                "the file watcher could not confirm that changes made just before this call were taken in: {why}"
            )),
        }
    }

    /// Where the watcher stands.
    pub fn status(&self) -> WatchStatus {
        self.inner.status.lock().clone()
    }

    /// The files changed in batches after `after` up to `upto`, or `None`
    /// when those batches are no longer remembered.
    pub fn changed_between(&self, after: u64, upto: u64) -> Option<Vec<Change>> {
        if upto <= after {
            return Some(Vec::new());
        }
        let history = self.inner.history.lock();
        if history.front().is_none_or(|b| b.seq > after + 1) {
            return None;
        }
        Some(
            history
                .iter()
                .filter(|b| b.seq > after && b.seq <= upto)
                .flat_map(|b| b.changes.iter().cloned())
                .collect(),
        )
    }

    /// When batch `seq` was delivered, if it is remembered.
    pub fn batch_time(&self, seq: u64) -> Option<SystemTime> {
        self.inner.history.lock().iter().find(|b| b.seq == seq).map(|b| b.at)
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.inner.tx.send(Msg::Stop);
    }
}

/// The notify watcher and the cookie directory it watches.
struct Events {
    watcher: notify::RecommendedWatcher,
    /// Removed (with any cookie left in it) when the pump stops.
    _cookies: tempfile::TempDir,
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
fn sync_dir() -> std::io::Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix(".tether-sync-").tempdir_in(shm)
    {
        return Ok(dir);
    }
    tempfile::Builder::new().prefix(".tether-sync-").tempdir()
}

/// Counts the directories added, to stop at [`MAX_WATCHED_DIRS`].
struct Capped<'a> {
    events: &'a mut Events,
    watched: usize,
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

struct Pump {
    tree: Tree,
    inner: Arc<Inner>,
    events: Option<Events>,
    /// Paths with events since the last delivery → whether any was about content.
    dirty: BTreeMap<PathBuf, bool>,
    first_at: Option<Instant>,
    last_at: Instant,
    /// Events were lost (the kernel queue overflowed): scan at the next flush.
    rescan: bool,
    /// Events received since the last flush (see `Inner::undelivered`).
    consumed: u64,
    deliver: Deliver,
}

impl Pump {
    /// Chooses the mode and walks the tree.
    fn begin(&mut self, preference: Preference) {
        if preference == Preference::Scan {
            let _ = self.tree.load(&mut NoWatches);
            self.enter_scan("tether.toml asks for it ([watch] mode = \"scan\")".into());
            return;
        }
        match self.open_events() {
            Ok(events) => self.events = Some(events),
            Err(why) => {
                let _ = self.tree.load(&mut NoWatches);
                self.enter_scan(why);
                return;
            }
        }
        let events = self.events.as_mut().expect("just set");
        let loaded = self.tree.load(&mut Capped { events, watched: 0 });
        match loaded {
            Ok(()) => {
                let cookies = self.events.as_ref().expect("just set")._cookies.path().to_path_buf();
                self.inner.gate.lock().phase = Phase::Events { cookies };
                self.publish_status("events", None);
            }
            Err(why) => {
                self.events = None;
                let _ = self.tree.rescan(&mut NoWatches);
                // Nothing waits on a cookie yet: the phase was Starting.
                self.enter_scan(why);
            }
        }
    }

    fn open_events(&self) -> Result<Events, String> {
        let cookies = sync_dir().map_err(|e| format!("its sync directory could not be created ({e})"))?;
        let inner = self.inner.clone();
        let dir = cookies.path().to_path_buf();
        let handler = move |event| inner.take(&dir, event);
        // Creations, deletions, writes, renames, metadata: no opens, reads
        // or closes, which would wake the watcher whenever the servers or
        // tether read the tree.
        let config = notify::Config::default().with_event_kinds(notify::EventKindMask::CORE);
        let mut watcher = notify::RecommendedWatcher::new(handler, config)
            .map_err(|e| format!("no file watcher could be started ({e})"))?;
        watcher
            .watch(cookies.path(), RecursiveMode::NonRecursive)
            .map_err(|e| format!("its sync directory could not be watched ({e})"))?;
        Ok(Events { watcher, _cookies: cookies })
    }

    /// Scans from now on. Returns the sync points that were waiting for a
    /// cookie (which will never come): the caller answers them after the
    /// scan that follows.
    fn enter_scan(&mut self, why: String) -> Vec<oneshot::Sender<u64>> {
        tracing::warn!("file watching falls back to scanning: {why}");
        self.events = None;
        let waiters = {
            let mut gate = self.inner.gate.lock();
            gate.phase = Phase::Scan;
            std::mem::take(&mut gate.waiters)
        };
        self.publish_status("scan", Some(why));
        waiters.into_iter().map(|(_, tx)| tx).collect()
    }

    fn publish_status(&self, mode: &'static str, reason: Option<String>) {
        let mut status = self.inner.status.lock();
        status.mode = mode;
        if reason.is_some() {
            status.reason = reason;
        }
        status.directories = self.tree.dirs();
        status.files = self.tree.files();
        status.truncated = self.tree.truncated();
    }

    fn run(mut self, rx: Receiver<Msg>) {
        loop {
            let msg = match self.first_at {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(first) => {
                    let due = (first + BATCH_MAX_DELAY).min(self.last_at + DEBOUNCE);
                    rx.recv_deadline(due)
                }
            };
            match msg {
                Ok(Msg::Event(Ok(event))) => {
                    self.consumed += 1;
                    self.on_event(event);
                }
                Ok(Msg::Event(Err(e))) => {
                    self.consumed += 1;
                    tracing::debug!("file watcher error: {e}");
                    // An error in the stream may mean lost events: look again.
                    self.rescan = true;
                    self.mark();
                }
                Ok(Msg::Cookie(path, n)) => {
                    // Everything before it has been received: deliver it, then answer.
                    let seq = self.flush();
                    self.inner.answer_upto(n, seq);
                    self.inner.spent.lock().push(path);
                }
                Ok(Msg::Sweep) => {}
                Ok(Msg::Sync(reply)) => {
                    if matches!(self.inner.gate.lock().phase, Phase::Scan) {
                        self.rescan = true;
                    }
                    let seq = self.flush();
                    let _ = reply.send(seq);
                }
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    self.flush();
                }
            }
            self.sweep();
        }
        // Sync points still waiting are answered (with "stopped") as their
        // senders drop; later ones are refused at once.
        let mut gate = self.inner.gate.lock();
        gate.phase = Phase::Stopped;
        gate.waiters.clear();
    }

    fn mark(&mut self) {
        let now = Instant::now();
        self.first_at.get_or_insert(now);
        self.last_at = now;
    }

    fn on_event(&mut self, event: notify::Event) {
        if event.need_rescan() {
            self.rescan = true;
            self.mark();
        }
        let content = match event.kind {
            // Opens and reads are not changes (and not asked for); a close
            // after writing is.
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) => return,
            EventKind::Modify(ModifyKind::Metadata(_)) => false,
            _ => true,
        };
        for path in event.paths {
            *self.dirty.entry(path).or_insert(false) |= content;
            self.mark();
        }
    }

    /// Removes the cookies already answered.
    fn sweep(&mut self) {
        let spent = std::mem::take(&mut *self.inner.spent.lock());
        for cookie in spent {
            let _ = std::fs::remove_file(cookie);
        }
    }

    /// Delivers what changed since the last batch; returns the last batch's number.
    fn flush(&mut self) -> u64 {
        self.first_at = None;
        let dirty = std::mem::take(&mut self.dirty);
        let rescan = std::mem::take(&mut self.rescan);
        let mut orphaned = Vec::new();
        let settled = match self.events.as_mut() {
            Some(events) => {
                let watched = self.tree.dirs();
                let mut capped = Capped { events, watched };
                if rescan { self.tree.rescan(&mut capped) } else { self.tree.settle(dirty, &mut capped) }
            }
            None if rescan => self.tree.rescan(&mut NoWatches),
            None => self.tree.settle(dirty, &mut NoWatches),
        };
        let changes = match settled {
            Ok(changes) => changes,
            Err(why) => {
                // Event mode cannot go on: scan from now on. This scan
                // catches what the failed step did not; the sync points
                // waiting for cookies are answered once it is delivered.
                orphaned = self.enter_scan(why);
                self.tree.rescan(&mut NoWatches).unwrap_or_default()
            }
        };
        let mode = self.inner.status.lock().mode;
        self.publish_status(mode, None);
        let seq = self.deliver_changes(changes);
        // Every event received so far is now delivered (or changed nothing).
        self.inner.undelivered.fetch_sub(std::mem::take(&mut self.consumed), Ordering::SeqCst);
        for tx in orphaned {
            let _ = tx.send(seq);
        }
        seq
    }

    /// Numbers, records and delivers a batch; returns the last batch's number.
    fn deliver_changes(&mut self, changes: Vec<Change>) -> u64 {
        if changes.is_empty() {
            return self.inner.seq.load(Ordering::SeqCst);
        }
        let seq = self.inner.seq.load(Ordering::SeqCst) + 1;
        let batch = Arc::new(Batch { seq, at: SystemTime::now(), changes });
        {
            let mut status = self.inner.status.lock();
            status.batches += 1;
            status.changes += batch.changes.len() as u64;
            status.last_batch = Some(batch.at);
        }
        {
            let mut history = self.inner.history.lock();
            history.push_back(batch.clone());
            while history.len() > HISTORY {
                history.pop_front();
            }
        }
        // Delivered before the number is published, so a sync point that
        // sees it knows the batch is on its way to the servers.
        (self.deliver)(batch);
        self.inner.seq.store(seq, Ordering::SeqCst);
        seq
    }
}
