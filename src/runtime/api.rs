//! The handle hosts hold: [`Runtime`] lists tools, calls them, opens and
//! closes conversations and dumps the supervision tree ([`Tree`]).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use actix::prelude::*;
use tether_actors::describe::{ActorNode, Describe};
use tokio_util::sync::CancellationToken;

use super::shutdown::{Hosted, OwnSystem};
use crate::conversations::Conversations;
use crate::handler::AfterWrite;
use crate::result::ToolResult;
use crate::router::{Call, Check, Registry, RouterActor};
use crate::spec::{Resource, Surface, ToolSpec};

/// The supervision tree, as JSON and as indented text.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The root (the router) and everything below it.
    pub root: ActorNode,
}

impl Tree {
    /// The tree as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(&self.root).unwrap_or_default()
    }

    /// The tree as indented text, one actor a line.
    pub fn text(&self) -> String {
        self.root.to_text()
    }
}

/// A running tether: the handle hosts hold (`Send + Sync`: share it in an `Arc`).
pub struct Runtime {
    pub(super) router: Addr<RouterActor>,
    pub(super) registry: Arc<Registry>,
    pub(super) surface: Surface,
    pub(super) resources: BTreeSet<Resource>,
    pub(super) workdir: PathBuf,
    pub(super) conversation: String,
    pub(super) after_write: Option<Arc<dyn AfterWrite>>,
    pub(super) conversations: Arc<Conversations>,
    pub(super) reaped: Vec<tether_actors::process::Orphan>,
    pub(super) _system: Option<OwnSystem>,
    pub(super) hosted: Option<Hosted>,
    pub(super) shut: std::sync::atomic::AtomicBool,
}

impl Runtime {
    /// The tools `surface` sees, with their schemas.
    pub fn tools(&self, surface: Surface) -> Vec<ToolSpec> {
        self.registry.specs(surface)
    }

    /// Calls `tool` from the run's default surface.
    pub async fn call(&self, tool: &str, args: serde_json::Value) -> ToolResult {
        self.call_from(self.surface, tool, args).await
    }

    /// Calls `tool` from `surface`.
    pub async fn call_from(&self, surface: Surface, tool: &str, args: serde_json::Value) -> ToolResult {
        self.call_cancellable(surface, tool, args, CancellationToken::new()).await
    }

    /// Calls `tool` from `surface`; cancelling `cancel` abandons the call:
    /// its LSP request is cancelled, its cell interrupted (state kept), its
    /// debug or worker wait given up, and a "cancelled" result returned at
    /// once. Nothing else in the run is disturbed.
    pub async fn call_cancellable(
        &self,
        surface: Surface,
        tool: &str,
        args: serde_json::Value,
        cancel: CancellationToken,
    ) -> ToolResult {
        self.send(Call::new(tool, args, surface).cancelled_by(cancel)).await
    }

    /// Calls `tool` in `conversation` from the run's default surface. Each
    /// conversation has its own kernels and debug session (started on its
    /// first `eval` or `debug` call); everything else is the run's.
    pub async fn call_in(&self, conversation: &str, tool: &str, args: serde_json::Value) -> ToolResult {
        self.send(Call::new(tool, args, self.surface).in_conversation(conversation)).await
    }

    /// Sends a prepared [`Call`] (any conversation, surface and token).
    pub async fn send(&self, call: Call) -> ToolResult {
        if self.shut.load(std::sync::atomic::Ordering::SeqCst) {
            return ToolResult::error("the runtime was shut down; start a new one");
        }
        self.router.send(call).await.unwrap_or_else(|e| {
            ToolResult::error(format!("the runtime is not running ({e}); start a new one"))
        })
    }

    /// Starts `conversation`'s actors now (kernel pool, debug session)
    /// rather than on its first call; a host that knows a conversation is
    /// coming pays the set-up early. Opening an open one does nothing.
    pub fn open_conversation(&self, conversation: &str) -> Result<(), String> {
        crate::conversations::check_id(conversation)?;
        self.conversations.get(conversation).map(drop)
    }

    /// Starts `conversation`'s actors now with its own enclosure: its
    /// kernels start through `enclosure` (a container exec, a sandbox
    /// wrapper) instead of the run's. Refused if it is already open with
    /// another enclosure.
    pub fn open_conversation_in(&self, conversation: &str, enclosure: Vec<String>) -> Result<(), String> {
        crate::conversations::check_id(conversation)?;
        self.conversations.open_with(conversation, Some(&enclosure)).map(drop)
    }

    /// Closes `conversation`: its kernels, debug adapter and debuggee are
    /// killed once its calls still running finish. Returns whether it was
    /// open. A later call in it opens it afresh.
    pub fn close_conversation(&self, conversation: &str) -> bool {
        self.conversations.close(conversation)
    }

    /// How many conversations have their actors open.
    pub fn open_conversations(&self) -> usize {
        self.conversations.len()
    }

    /// Validates a call from `surface` without running it: the tool is
    /// registered, on the surface, allowed by the approval policy, and its
    /// arguments parse. The error is the result the call would have given.
    pub async fn check(
        &self,
        surface: Surface,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<(), ToolResult> {
        let call = Call::new(tool, args, surface);
        self.router.send(Check(call)).await.unwrap_or_else(|e| {
            Err(ToolResult::error(format!("the runtime is not running ({e}); start a new one")))
        })
    }

    /// The supervision tree.
    pub async fn tree(&self) -> Tree {
        let root = self.router.send(Describe).await.unwrap_or_else(|e| {
            ActorNode::new("router", &self.conversation, &format!("unreachable: {e}"), 0, 0)
        });
        let root = root
            .with_detail("run", tether_actors::process::run_id())
            .with_detail("reaped_orphans", self.reaped.len());
        Tree { root }
    }

    /// The processes of dead runs on this working directory that this run
    /// killed when it started (see [`tether_actors::process::reap_orphans`]).
    pub fn reaped_orphans(&self) -> &[tether_actors::process::Orphan] {
        &self.reaped
    }

    /// Runs the after-write hooks for files the host wrote with its own
    /// tools — with language servers connected: sync and save each file
    /// and report the diagnostics the write introduced or resolved.
    /// Returns the text to append to that tool's result, if any.
    pub async fn after_write(
        &self,
        paths: Vec<PathBuf>,
        before: crate::handler::WriteBaseline,
    ) -> Option<String> {
        match &self.after_write {
            Some(hook) => hook.after_write(paths, before).await,
            None => None,
        }
    }

    /// For a host tool about to write `paths`: what the hooks need to know
    /// of the content they still hold (the diagnostics the write's report
    /// compares with). Pass it to [`Runtime::after_write`].
    pub async fn before_write(&self, paths: Vec<PathBuf>) -> crate::handler::WriteBaseline {
        match &self.after_write {
            Some(hook) => hook.before_write(paths).await,
            None => None,
        }
    }

    /// Whether the runtime started its own actor system (on its own
    /// thread), rather than joining the host's.
    pub fn owns_actor_system(&self) -> bool {
        self._system.is_some()
    }

    /// The router's address, for actix hosts that send [`Call`] directly.
    pub fn router(&self) -> Addr<RouterActor> {
        self.router.clone()
    }

    /// The connected resources.
    pub fn resources(&self) -> &BTreeSet<Resource> {
        &self.resources
    }

    /// The working directory (canonical).
    pub fn workdir(&self) -> &std::path::Path {
        &self.workdir
    }

    /// The conversation id.
    pub fn conversation(&self) -> &str {
        &self.conversation
    }

    /// The default surface.
    pub fn surface(&self) -> Surface {
        self.surface
    }
}

impl Runtime {
    /// Stops the run now — every actor, and with them every child process
    /// (servers, adapters, debuggees, kernels, workers) — even while other
    /// handles (an `Arc` held by a task) still exist; calls after this
    /// fail. A runtime that owns its actor system stops it; one that joined
    /// a host's system kills its language servers at once, stops and joins
    /// its own threads (and with them every other child), and leaves the
    /// host's system running.
    pub fn shutdown(&self) {
        self.shut.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(system) = &self._system {
            system.stop();
        } else if let Some(hosted) = &self.hosted {
            hosted.stop(&self.router);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_handle_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::Runtime>();
    }
}
