//! How a run stops: the actor system a runtime started for itself, and
//! the threads and servers of one that joined a host's (what
//! `Runtime::shutdown` stops).

use actix::prelude::*;
use tether_actors::lsp::server::ServerPids;
use tether_actors::lsp::supervisor::{LspSupervisor, StopAll};

use crate::router::RouterActor;

/// How long dropping a runtime waits for its actors to stop (and kill
/// their child processes) before returning anyway.
pub const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// The actor system a runtime started for itself; stopped on drop.
pub(super) struct OwnSystem {
    pub(super) system: System,
    /// Signalled when the actor thread has finished (in a mutex so the
    /// runtime stays `Sync` for hosts that share it).
    pub(super) stopped: parking_lot::Mutex<std::sync::mpsc::Receiver<()>>,
    /// The resource actors' threads, joined on stop: their actors' process
    /// guards drop as those threads end.
    pub(super) arbiters: parking_lot::Mutex<Vec<Arbiter>>,
}

impl OwnSystem {
    /// Stops the system and waits (at most [`STOP_TIMEOUT`]) for its
    /// thread to finish. Idempotent.
    pub(super) fn stop(&self) {
        let deadline = std::time::Instant::now() + STOP_TIMEOUT;
        self.system.stop();
        // Actors drop their process guards as the system and its arbiters
        // stop; wait for that, so a CLI that exits next leaves no child behind.
        let _ = self.stopped.lock().recv_timeout(STOP_TIMEOUT);
        stop_arbiters(std::mem::take(&mut *self.arbiters.lock()), deadline);
    }
}

/// Joins `arbiters` after stopping them, waiting at most `until`; from a
/// helper thread, so a stuck one cannot hold the caller forever.
fn stop_arbiters(arbiters: Vec<Arbiter>, until: std::time::Instant) {
    if arbiters.is_empty() {
        return;
    }
    let (done_tx, done) = std::sync::mpsc::channel();
    let joiner = std::thread::Builder::new().name("tether-stop".into()).spawn(move || {
        for a in arbiters {
            a.stop();
            let _ = a.join();
        }
        let _ = done_tx.send(());
    });
    if joiner.is_ok() {
        let _ = done.recv_timeout(until.saturating_duration_since(std::time::Instant::now()));
    }
}

/// What a runtime that joined a host's actix system stops on `shutdown`:
/// the threads of its own (parsers, kernels, debug sessions, workers) and
/// its language servers, which run on the host's thread.
pub(super) struct Hosted {
    pub(super) arbiters: parking_lot::Mutex<Vec<Arbiter>>,
    pub(super) lsp: Option<(Addr<LspSupervisor>, ServerPids)>,
}

impl Hosted {
    /// Stops what the run added to the host's system: its language servers
    /// killed at once, its router told, its own threads (and with them
    /// every other child) stopped and joined. The host's system runs on.
    pub(super) fn stop(&self, router: &Addr<RouterActor>) {
        if let Some((supervisor, pids)) = &self.lsp {
            // Their actors run on the host's thread, which may be this one:
            // no message would be handled before we return.
            for pid in pids.lock().values() {
                tether_actors::process::kill_group(*pid);
            }
            supervisor.do_send(StopAll);
        }
        router.do_send(crate::router::Shutdown);
        let arbiters = std::mem::take(&mut *self.arbiters.lock());
        stop_arbiters(arbiters, std::time::Instant::now() + STOP_TIMEOUT);
    }
}

impl Drop for OwnSystem {
    fn drop(&mut self) {
        self.stop();
    }
}
