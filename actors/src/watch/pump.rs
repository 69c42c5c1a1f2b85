//! The pump: the thread that owns the tree and the notify watcher, picks
//! the mode (events or scan), collects raw events, and after the debounce
//! (or at a sync point) delivers what changed as a numbered [`Batch`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher as _};
use tokio::sync::oneshot;

use super::events::{Capped, Events, sync_dir};
use super::inner::{Inner, Msg, Phase};
use super::tree::{NoWatches, Tree};
use super::{BATCH_MAX_DELAY, Batch, Change, DEBOUNCE, Deliver, HISTORY, Preference};

pub(super) struct Pump {
    pub(super) tree: Tree,
    pub(super) inner: Arc<Inner>,
    pub(super) events: Option<Events>,
    /// Paths with events since the last delivery → whether any was about content.
    pub(super) dirty: BTreeMap<PathBuf, bool>,
    pub(super) first_at: Option<Instant>,
    pub(super) last_at: Instant,
    /// Events were lost (the kernel queue overflowed): scan at the next flush.
    pub(super) rescan: bool,
    /// Events received since the last flush (see `Inner::undelivered`).
    pub(super) consumed: u64,
    pub(super) deliver: Deliver,
}

impl Pump {
    /// Chooses the mode and walks the tree.
    pub(super) fn begin(&mut self, preference: Preference) {
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

    pub(super) fn run(mut self, rx: Receiver<Msg>) {
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
