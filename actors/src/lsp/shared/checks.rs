//! The on-save checker (rust-analyzer's `cargo check`): which saves were
//! sent, which checks run and ended, and whether the last one to end may
//! have been cancelled by the server's own restart rather than finished.

use std::sync::atomic::Ordering;

use super::{ServerState, doc_key};
use crate::wire::pending::RequestError;

impl ServerState {
    /// Whether the server has an on-save checker.
    pub fn has_checker(&self) -> bool {
        self.check_prefix.is_some()
    }

    /// The mark taken when `version` of `uri` was saved, if it was.
    pub fn saved_mark(&self, uri: &str, version: i32) -> Option<u64> {
        self.saved.lock().get(&doc_key(uri)).filter(|(v, _)| *v >= version).map(|(_, mark)| *mark)
    }

    /// Sends, through `send`, a save of `version` of `uri` if that is the
    /// version the server holds (a newer one is saved by whoever synced
    /// it), under the held lock; returns the mark taken before sending.
    pub fn save_held(
        &self,
        uri: &str,
        version: i32,
        send: impl FnOnce() -> Result<(), RequestError>,
    ) -> Option<u64> {
        let held = self.held.lock();
        if held.get(&doc_key(uri)).map(|h| h.version) != Some(version) {
            return None;
        }
        let mut saved = self.saved.lock();
        if let Some((v, mark)) = saved.get(&doc_key(uri))
            && *v >= version
        {
            return Some(*mark);
        }
        let mark = self.progress_mark();
        send().ok()?;
        saved.insert(doc_key(uri), (version, mark));
        self.last_save.fetch_max(mark, Ordering::SeqCst);
        Some(mark)
    }

    /// Whether a check is running now.
    pub fn checking(&self) -> bool {
        !self.checks.lock().is_empty()
    }

    /// Whether a check begun after `mark`, and after every save since,
    /// has ended: a check cancelled by a later save (its `end` comes all
    /// the same) does not count.
    pub fn checked_since(&self, mark: u64) -> bool {
        let after = mark.max(self.last_save.load(Ordering::SeqCst));
        self.check_done.load(Ordering::SeqCst) > after
    }

    /// Whether the last check to end may have been cancelled rather than
    /// finished: the server did work of its own while it ran. rust-analyzer
    /// restarts its check by itself when its loading is done, and a
    /// cancelled check ends exactly as a finished one does (`$/progress`
    /// `end`, no message); the new one begins only after a debounce. A
    /// caller then waits for the server to settle and for the new check.
    pub fn check_may_restart(&self) -> bool {
        self.check_suspect.load(Ordering::SeqCst)
    }

    /// The check whose begin place is `ended` was waited out and no
    /// restart came: it counts as finished from now on (later calls do not
    /// wait again).
    pub fn clear_check_suspect(&self, ended: u64) {
        let _checks = self.checks.lock();
        if self.check_done.load(Ordering::SeqCst) == ended {
            self.check_suspect.store(false, Ordering::SeqCst);
        }
    }

    /// The begin place of the latest check to end: it moves when another
    /// check ends.
    pub fn check_done_mark(&self) -> u64 {
        self.check_done.load(Ordering::SeqCst)
    }

    /// Whether progress on `token` is the on-save checker's, not the
    /// server's own work.
    pub(super) fn is_check(&self, token: &str) -> bool {
        self.check_prefix.as_deref().is_some_and(|prefix| token.starts_with(prefix))
    }

    /// Keeps count of the checks from a `$/progress` of `token` (`kind`
    /// begin or end) at `place`; any other token's progress is the
    /// server's own work.
    pub(super) fn check_progress(&self, token: &str, kind: Option<&str>, place: u64) {
        if self.check_prefix.is_none() {
            return;
        }
        if !self.is_check(token) {
            self.work_place.fetch_max(place, Ordering::SeqCst);
            return;
        }
        let mut checks = self.checks.lock();
        match kind {
            Some("begin") => {
                checks.insert(token.to_string(), place);
            }
            Some("end") => {
                if let Some(began) = checks.remove(token)
                    && self.check_done.fetch_max(began, Ordering::SeqCst) < began
                {
                    // Work while it ran. (A check whose begin came after
                    // the work is what a restart starts: taken as it ends.)
                    let suspect = self.work_place.load(Ordering::SeqCst) > began;
                    self.check_suspect.store(suspect, Ordering::SeqCst);
                }
            }
            _ => {}
        }
    }
}
