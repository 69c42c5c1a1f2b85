//! Stopping a server to keep the run small ([`crate::lsp::limits`]): the
//! idle limit each server watches itself, the supervisor's [`Stop`] when
//! the servers together hold more than the budget, what a server tells the
//! supervisor of its use ([`Usage`]), and the room the supervisor makes
//! before one starts ([`MakeRoom`]).
//!
//! A stop is clean — `shutdown`, `exit` — and the process group is killed
//! when it has not gone within [`EXIT_TIMEOUT`]; either way the server is
//! then *not started*, as before its first call. The next call starts it
//! again, and its answer says the server was stopped and why.

use std::time::{Duration, Instant};

use actix::prelude::*;
use serde_json::Value;

use super::{EXIT_TIMEOUT, LspError, LspServerActor, SHUTDOWN_TIMEOUT, ServerKey, State};
use crate::lsp::limits::{UsageReport, idle_check_every, minutes, size};

/// How often a stopped server's process is looked at while it exits.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// Stop the server if it owes nobody an answer; `why` is said to the
/// caller whose call starts it again. Answers whether it stopped.
pub struct Stop {
    pub why: String,
}

impl Message for Stop {
    type Result = bool;
}

/// Asks a server for its [`UsageReport`]; `None` when it is not running.
pub struct Usage;

impl Message for Usage {
    type Result = Option<UsageReport>;
}

/// Asked of the supervisor before a server starts: stop the least recently
/// used idle servers until `size` more fits the budget. Refused, with the
/// sizes, when `start` alone is more than the whole budget.
pub struct MakeRoom {
    pub key: ServerKey,
    /// What its table entry says it holds once started, in bytes.
    pub start: u64,
    /// The room to make: the most it held in an earlier run of this one,
    /// or `start`.
    pub size: u64,
}

impl Message for MakeRoom {
    type Result = Result<(), String>;
}

impl Handler<Usage> for LspServerActor {
    type Result = Option<UsageReport>;

    fn handle(&mut self, _msg: Usage, _ctx: &mut Self::Context) -> Self::Result {
        let running = self.running.as_ref()?;
        let memory = crate::process::group_rss(running.guard.pid());
        self.peak_memory = self.peak_memory.max(memory);
        Some(UsageReport {
            key: self.key.clone(),
            memory,
            last_used: self.last_used.max(self.holds.released()),
            // A held session is a caller about to ask.
            pending: (running.client.pending() + self.holds.held()) as u64,
        })
    }
}

impl Handler<Stop> for LspServerActor {
    type Result = ResponseActFuture<Self, bool>;

    fn handle(&mut self, msg: Stop, _ctx: &mut Self::Context) -> Self::Result {
        if self.running.is_none() || self.idle_for().is_none() {
            return Box::pin(fut::ready(false));
        }
        Box::pin(self.stop(msg.why).map(|(), _, _| true))
    }
}

impl LspServerActor {
    /// Looks every so often whether the server has been idle past the
    /// limit, and stops it then.
    pub(super) fn watch_idle(&self, ctx: &mut Context<Self>) {
        let Some(limit) = self.idle_limit else { return };
        ctx.run_interval(idle_check_every(limit), move |act, ctx| {
            if act.running.is_none() {
                return;
            }
            // Held by a caller (waiting for it to start or load) is in use.
            let Some(idle) = act.idle_for() else { return };
            if idle < limit {
                return;
            }
            let why = format!("after {} idle (the run's idle limit is {})", minutes(idle), minutes(limit));
            ctx.wait(act.stop(why));
        });
    }

    /// Stops the running server cleanly — `shutdown`, `exit`, and the kill
    /// of its process group if it has not gone within [`EXIT_TIMEOUT`] —
    /// and leaves it not started; `why` is kept for the call that starts
    /// it again.
    pub(super) fn stop(&mut self, why: String) -> ResponseActFuture<Self, ()> {
        let Some(old) = self.running.take() else { return Box::pin(fut::ready(())) };
        old.shared.supersede();
        self.pids.lock().remove(&self.key);
        // A deliberate stop is not a crash: the old generation's exit is ignored.
        self.generation += 1;
        self.docs.clear();
        self.state = State::NotStarted;
        let memory = crate::process::group_rss(old.guard.pid());
        let name = self.name();
        tracing::info!(server = %name, "stopping it {why}");
        self.stopped = Some(format!("{name} was stopped {why}, holding {}", size(memory)));
        let stop = async move {
            let pid = old.guard.pid();
            let _ = old.client.request("shutdown", Value::Null, SHUTDOWN_TIMEOUT).await;
            let _ = old.client.notify("exit", Value::Null);
            let deadline = Instant::now() + EXIT_TIMEOUT;
            while crate::process::stat(pid).is_some_and(|s| s.is_live()) && Instant::now() < deadline {
                tokio::time::sleep(EXIT_POLL).await;
            }
            let lingered = crate::process::stat(pid).is_some_and(|s| s.is_live());
            // Dropping the guard kills the process group, whatever is left of it.
            drop(old.guard);
            lingered.then(|| {
                format!(
                    "it had not exited {} ms after `exit`, so its process group was killed",
                    EXIT_TIMEOUT.as_millis()
                )
            })
        };
        Box::pin(stop.into_actor(self).map(|killed, act, _| {
            if let Some(killed) = killed {
                tracing::warn!(server = %act.name(), "{killed}");
                if let Some(stopped) = &mut act.stopped {
                    stopped.push_str(&format!("; {killed}"));
                }
            }
        }))
    }

    /// Asks the supervisor to make room for this server before it starts;
    /// an error when it cannot fit the budget at all.
    pub(super) fn room_to_start(&self) -> ResponseActFuture<Self, Result<(), LspError>> {
        let Some(make_room) = self.make_room.clone() else { return Box::pin(fut::ready(Ok(()))) };
        let start = crate::lsp::limits::start_memory(&self.usable.config);
        let ask =
            make_room.send(MakeRoom { key: self.key.clone(), start, size: self.peak_memory.max(start) });
        let server = self.key.server.clone();
        Box::pin(fut::wrap_future::<_, Self>(ask).map(move |made, _, _| match made {
            Ok(Err(why)) => Err(LspError::Spawn { server, reason: why }),
            // A supervisor gone or busy does not keep the server from starting.
            Ok(Ok(())) | Err(_) => Ok(()),
        }))
    }
}
