//! The state the watcher's three threads share — notify's, the pump's and
//! the callers' — and the cookies of sync points, answered on notify's
//! thread when nothing before them is still on its way.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_channel::Sender;
use notify::EventKind;
use notify::event::{AccessKind, AccessMode};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::{Batch, WatchStatus};

pub(super) enum Msg {
    Event(notify::Result<notify::Event>),
    /// A cookie that arrived while events before it were undelivered.
    Cookie(PathBuf, u64),
    /// A sync point answered by a scan (or after the first walk).
    Sync(oneshot::Sender<u64>),
    /// Remove the spent cookies.
    Sweep,
    Stop,
}

pub(super) enum Phase {
    Starting,
    Events { cookies: PathBuf },
    Scan,
    Stopped,
}

pub(super) struct Gate {
    pub(super) phase: Phase,
    /// Sync points waiting for their cookie: (cookie number, answer).
    pub(super) waiters: Vec<(u64, oneshot::Sender<u64>)>,
}

pub(super) struct Inner {
    pub(super) tx: Sender<Msg>,
    pub(super) gate: Mutex<Gate>,
    pub(super) next_cookie: AtomicU64,
    pub(super) seq: AtomicU64,
    /// Events handed to the pump and not yet delivered in a batch (nor
    /// found to change nothing). Zero when a cookie arrives means every
    /// event before it is delivered: notify's thread answers the sync
    /// point itself.
    pub(super) undelivered: AtomicU64,
    /// Cookies answered, removed by the pump when it next wakes (their
    /// removal events are ignored).
    pub(super) spent: Mutex<Vec<PathBuf>>,
    pub(super) status: Mutex<WatchStatus>,
    pub(super) history: Mutex<VecDeque<Arc<Batch>>>,
}

/// Spent cookies kept before the pump is woken to remove them.
const SPENT_SWEEP: usize = 256;

impl Inner {
    /// Answers every sync point waiting on a cookie numbered up to `n`.
    pub(super) fn answer_upto(&self, n: u64, seq: u64) {
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
    pub(super) fn take(&self, cookies: &Path, event: notify::Result<notify::Event>) {
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
