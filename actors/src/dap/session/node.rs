//! The session in the supervision tree: adapter, program, debuggee, TTL
//! left, and how the last session ended.

use actix::prelude::*;

use super::{DebugSessionActor, Debuggee, SessionEnd};
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
                    &format!("{} on {}", s.adapter.id, in_brief_debuggee(&s.program)),
                    s.started.elapsed().as_millis() as u64,
                    0,
                );
                n.pid = s.guard.as_ref().map(KillGuard::pid);
                n.ttl_left_ms = Some(self.ttl.saturating_sub(s.started.elapsed()).as_millis() as u64);
                let state = s.shared.state.lock();
                if let Some(pid) = state.debuggee_pid {
                    let mut debuggee = ActorNode::new(
                        "debuggee",
                        &in_brief_debuggee(&s.program),
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
                if let Some(ended) = &self.ended {
                    // A fault the caller has not heard of, or the adapter
                    // going away, is the node's last error.
                    let fault = self.unheard || matches!(ended, SessionEnd::AdapterGone(_));
                    if fault {
                        n.last_error = Some(in_brief(ended));
                    }
                    n = n.with_detail("last_ended", in_brief(ended));
                }
                n
            }
        };
        MessageResult(node.owned_by(&self.conversation))
    }
}

/// How a session ended, in the tree's few words for whoever reads the
/// run's state (the `debug` tool words it for the model, in `src/`).
fn in_brief(end: &SessionEnd) -> String {
    match end {
        SessionEnd::Requested => "terminated on request".into(),
        SessionEnd::Expired { ttl } => {
            format!("expired: its {} time-to-live passed", crate::text::human_duration(*ttl))
        }
        SessionEnd::Exited(code) => format!("program exited with code {code}"),
        SessionEnd::Terminated => "program terminated".into(),
        SessionEnd::AdapterGone(why) => format!("adapter went away: {}", why.reason()),
    }
}

/// What a session debugs, in the tree's few words: the command line, or
/// where it attached (`pid 4242`, `port 5678`).
fn in_brief_debuggee(debuggee: &Debuggee) -> String {
    use crate::dap::asked::AttachSpec;
    match debuggee {
        Debuggee::Launched(line) => line.clone(),
        Debuggee::Attached(AttachSpec::LldbPid(pid) | AttachSpec::DelvePid(pid)) => format!("pid {pid}"),
        Debuggee::Attached(
            AttachSpec::DebugpyPort(p)
            | AttachSpec::DelvePort(p)
            | AttachSpec::NodeInspectPort(p)
            | AttachSpec::RdbgPort(p),
        ) => format!("port {p}"),
        Debuggee::Attached(AttachSpec::DartVmService(uri)) => uri.clone(),
    }
}
