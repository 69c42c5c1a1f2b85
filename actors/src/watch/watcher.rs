//! The run's [`Watcher`], which starts the pump on a thread of its own,
//! and the [`WatchHandle`] callers hold: sync points, status, and the
//! files changed between two batches.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::inner::{Gate, Inner, Msg, Phase};
use super::pump::Pump;
use super::tree::Tree;
use super::{Change, Deliver, Preference, SYNC_TIMEOUT, Synced, WatchStatus};

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

    /// The files changed in batches delivered at or after `since`, up to
    /// batch `upto`: what was written just before and during a call, as
    /// far as the history (the last [`super::HISTORY`] batches) reaches.
    pub fn changed_since_time(&self, since: SystemTime, upto: u64) -> Vec<Change> {
        let history = self.inner.history.lock();
        history
            .iter()
            .filter(|b| b.at >= since && b.seq <= upto)
            .flat_map(|b| b.changes.iter().cloned())
            .collect()
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
