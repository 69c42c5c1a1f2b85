//! The serial lane: one mailbox that runs one call at a time.
//!
//! Tools that are not parallel-safe are sent here. Each message's future
//! runs *atomically* (the actor waits on it before taking the next
//! message), which is the whole serialisation — no lock anywhere.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use actix::prelude::*;
use tether_actors::describe::{ActorNode, Describe};

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
}

impl SerialLane {
    /// A lane whose queue length the router tracks through `queued`.
    pub fn new(queued: Arc<AtomicU64>) -> Self {
        Self { started: Instant::now(), queued, done: 0 }
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
        AtomicResponse::new(Box::pin(msg.work.into_actor(self).map(|result, lane, _| {
            lane.done += 1;
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
        .with_detail("completed", self.done);
        MessageResult(node)
    }
}
