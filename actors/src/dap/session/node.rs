//! The session in the supervision tree: adapter, program, debuggee, TTL
//! left, and how the last session ended.

use actix::prelude::*;

use super::DebugSessionActor;
use crate::describe::{ActorNode, Describe};
use crate::process::KillGuard;

impl Handler<Describe> for DebugSessionActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let node = match &self.session {
            Some(s) => {
                let mut n = ActorNode::new(
                    "debug-session",
                    &self.conversation,
                    &format!("{} on {}", s.adapter.id, s.program),
                    s.started.elapsed().as_millis() as u64,
                    0,
                );
                n.pid = s.guard.as_ref().map(KillGuard::pid);
                n.ttl_left_ms = Some(self.ttl.saturating_sub(s.started.elapsed()).as_millis() as u64);
                let state = s.shared.state.lock();
                if let Some(pid) = state.debuggee_pid {
                    let mut debuggee = ActorNode::new(
                        "debuggee",
                        &s.program,
                        if state.running { "running" } else { "stopped" },
                        s.started.elapsed().as_millis() as u64,
                        0,
                    );
                    debuggee.pid = Some(pid);
                    n.children.push(debuggee.owned_by(&self.conversation));
                }
                if let Some(why) = &state.closed {
                    n.last_error = Some(why.reason().to_string());
                }
                drop(state);
                n
            }
            None => {
                let mut n = ActorNode::new(
                    "debug-session",
                    &self.conversation,
                    "no session",
                    self.created.elapsed().as_millis() as u64,
                    0,
                );
                n.last_error.clone_from(&self.expired);
                if let Some(ended) = &self.ended {
                    n = n.with_detail("last_ended", ended.clone());
                }
                n
            }
        };
        MessageResult(node.owned_by(&self.conversation))
    }
}
