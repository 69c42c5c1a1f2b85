//! How the actor describes itself in the supervision tree: its state in
//! words, and its node with uptime, pending requests and details.

use actix::prelude::*;

use super::{LspServerActor, State};
use crate::describe::{ActorNode, Describe};

impl LspServerActor {
    fn state_words(&self) -> String {
        match (&self.state, &self.running) {
            (State::Running, Some(r)) => match r.shared.indexing() {
                Some(p) => format!("indexing{}", p.detail()),
                None => "ready".to_string(),
            },
            (State::Running, None) => "starting".to_string(),
            (State::Crashed(info), _) => format!("crashed: {}", info.status),
            (State::NotStarted, _) => match &self.stopped {
                Some(why) => format!("stopped: {why}; it starts again on the next call"),
                None => "not started (starts on first use)".to_string(),
            },
        }
    }
}

impl Handler<Describe> for LspServerActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let id = format!("{}@{}", self.key.server, crate::fs::relative(&self.workdir, &self.key.root));
        let (uptime, pending) = match &self.running {
            Some(r) => (r.started.elapsed().as_millis() as u64, r.client.pending() as u64),
            None => (self.created.elapsed().as_millis() as u64, 0),
        };
        let mut node = ActorNode::new("lsp-server", &id, &self.state_words(), uptime, pending);
        node.pid = self.running.as_ref().map(|r| r.guard.pid());
        node.restarts = Some(self.restarts);
        node = node.with_detail("open_documents", self.docs.len());
        if let Some(r) = &self.running {
            // Its whole process group: the server and what it started.
            node = node.with_detail("memory_bytes", crate::process::group_rss(r.guard.pid()));
            // Idle: no caller holds a session on it, and it owes none an answer.
            let idle = self.idle_for().map_or(0, |idle| idle.as_millis() as u64);
            node = node.with_detail("idle_ms", idle);
            let held = self.holds.held();
            if held > 0 {
                node = node.with_detail("sessions_held", held);
            }
            node = node.with_detail("file_watchers", r.shared.watchers());
            let rereading = r.shared.rereading().len();
            if rereading > 0 {
                node = node.with_detail("rereading_changed_files", rereading);
            }
            let reported = r.shared.reported_errors();
            if !reported.is_empty() {
                node = node.with_detail("reported_errors", reported);
            }
        }
        node.last_error = self.last_crash.as_ref().map(|info| info.describe(&self.key.server));
        MessageResult(node)
    }
}
