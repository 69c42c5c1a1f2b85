//! The serial lane: one mailbox that runs one call at a time.
//!
//! Tools that are not parallel-safe are sent here. Each message's future
//! runs *atomically* (the actor waits on it before taking the next
//! message), which is the whole serialisation — no lock anywhere. A call
//! holds the lane for at most the lane's bound ([`SERIAL_CALL_TIMEOUT`]
//! unless the run sets another): past it the call's cancellation token
//! fires, its work is dropped, its caller is told what held the lane and
//! for how long, and the next call runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use actix::prelude::*;
use tether_actors::describe::{ActorNode, Describe};
use tokio_util::sync::CancellationToken;

use crate::handler::ToolFuture;
use crate::result::ToolResult;

/// Longest a call may hold the lane: everything behind it waits, so a call
/// stuck on a pipe or a dead peer must not hold it forever. Generous,
/// because writes include the bounded after-write diagnostics.
pub const SERIAL_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// A call to run with nothing else running beside it.
pub struct Exclusive {
    /// The call's work.
    pub work: ToolFuture,
    /// The tool, for the answer when the call outlives the bound.
    pub tool: String,
    /// Fired when the call outlives the bound.
    pub cancel: CancellationToken,
}

impl Message for Exclusive {
    type Result = ToolResult;
}

/// The lane's actor.
pub struct SerialLane {
    started: Instant,
    /// Calls sent and not yet finished (the router increments it on send).
    queued: Arc<AtomicU64>,
    done: u64,
    bound: std::time::Duration,
    timed_out: u64,
}

impl SerialLane {
    /// A lane whose queue length the router tracks through `queued`, where
    /// a call may run for at most `bound`.
    pub fn new(queued: Arc<AtomicU64>, bound: std::time::Duration) -> Self {
        Self { started: Instant::now(), queued, done: 0, bound, timed_out: 0 }
    }
}

/// "10 min", "1.5 s": a bound as a person reads it.
fn human(d: std::time::Duration) -> String {
    if d.as_secs() >= 60 && d.as_secs().is_multiple_of(60) {
        format!("{} min", d.as_secs() / 60)
    } else {
        format!("{} s", (d.as_secs_f64() * 10.0).round() / 10.0)
    }
}

impl Actor for SerialLane {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(1024);
    }
}

impl Handler<Exclusive> for SerialLane {
    type Result = AtomicResponse<Self, ToolResult>;

    fn handle(&mut self, msg: Exclusive, _ctx: &mut Self::Context) -> Self::Result {
        let Exclusive { work, tool, cancel } = msg;
        let bound = self.bound;
        let guarded = async move {
            match tokio::time::timeout(bound, work).await {
                Ok(result) => (result, false),
                Err(_) => {
                    cancel.cancel();
                    let text = format!(
                        "`{tool}` held the serial lane (where writes, renames, resolves and other exclusive calls run one at a time) for {}, its bound, so it was cancelled and the calls waiting behind it run now. What it did before that stands: check the files it touches before calling it again",
                        human(bound)
                    );
                    (ToolResult::error(text), true)
                }
            }
        };
        AtomicResponse::new(Box::pin(guarded.into_actor(self).map(|(result, timed_out), lane, _| {
            lane.done += 1;
            lane.timed_out += u64::from(timed_out);
            lane.queued.fetch_sub(1, Ordering::Relaxed);
            result
        })))
    }
}

impl Handler<Describe> for SerialLane {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let node = ActorNode::new(
            "serial-lane",
            "exclusive-tools",
            "ready",
            self.started.elapsed().as_millis() as u64,
            self.queued.load(Ordering::Relaxed),
        )
        .with_detail("completed", self.done)
        .with_detail("timed_out", self.timed_out)
        .with_detail("bound_ms", self.bound.as_millis() as u64);
        MessageResult(node)
    }
}
