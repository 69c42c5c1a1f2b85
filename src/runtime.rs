//! The embedding API: [`Runtime::builder`] → [`RuntimeBuilder::start`] →
//! [`Runtime`], whose handle lists tools, calls them and dumps the
//! supervision tree.
//!
//! When the host already runs inside an actix system (on one of its
//! threads), the actors join it; otherwise the runtime starts its own
//! system on a dedicated thread, and stops it when the handle is dropped.
//! Either way [`Runtime::call`] is a plain future any executor can await.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use actix::prelude::*;
use tether_actors::ast::actor::AstActor;
use tether_actors::describe::{ActorNode, Describe};
use tether_actors::lsp::server::ServerPids;
use tether_actors::lsp::supervisor::{LspSupervisor, StopAll};
use tether_actors::question::gate::QuestionGateActor;
use tether_actors::question::port::QuestionPort;
use tether_actors::workers::WorkerBackend;
use tether_actors::workers::pool::WorkerPoolActor;
use tokio_util::sync::CancellationToken;

use crate::approval::ApprovalPolicy;
use crate::conversations::Conversations;
use crate::handler::{AfterWrite, AfterWriteChain, CallContext, ToolHandler};
use crate::result::ToolResult;
use crate::router::{Call, Check, Registry, RouterActor};
use crate::spec::{Resource, Surface, ToolSpec};
use crate::tools;

/// The conversation id used when the host gives none.
pub const DEFAULT_CONVERSATION: &str = "default";

/// Why a runtime did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The working directory is missing or unreadable.
    #[error("working directory: {0}")]
    Workdir(#[from] tether_actors::fs::PathError),
    /// The actor system thread could not be started.
    #[error("could not start the actor system: {0}")]
    System(String),
    /// The run's conversation id is not usable.
    #[error("{0}")]
    Conversation(String),
}

/// Configures a run.
pub struct RuntimeBuilder {
    workdir: PathBuf,
    conversation: String,
    surface: Surface,
    resources: BTreeSet<Resource>,
    approval: ApprovalPolicy,
    host_files: bool,
    extra: Vec<Arc<dyn ToolHandler>>,
    after_write: Option<Arc<dyn AfterWrite>>,
    enclosure: Vec<String>,
    idle_budget: std::time::Duration,
    debug_ttl: std::time::Duration,
    questions: Option<(Arc<dyn QuestionPort>, String)>,
    question_timeout: std::time::Duration,
    vibe: Option<Arc<dyn WorkerBackend>>,
    serial_bound: std::time::Duration,
}

impl Default for RuntimeBuilder {
    fn default() -> Self {
        Self {
            workdir: PathBuf::from("."),
            conversation: DEFAULT_CONVERSATION.to_string(),
            surface: Surface::Full,
            resources: BTreeSet::new(),
            approval: ApprovalPolicy::AutoApprove,
            host_files: true,
            extra: Vec::new(),
            after_write: None,
            enclosure: Vec::new(),
            idle_budget: tether_actors::kernel::actor::DEFAULT_IDLE_BUDGET,
            debug_ttl: tether_actors::dap::session::SESSION_TTL,
            questions: None,
            question_timeout: tools::ask_user::DEFAULT_QUESTION_TIMEOUT,
            vibe: None,
            serial_bound: crate::router::serial::SERIAL_CALL_TIMEOUT,
        }
    }
}

impl RuntimeBuilder {
    /// The working directory every path is confined to (default `.`).
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir = dir.into();
        self
    }

    /// The conversation this run belongs to.
    pub fn conversation(mut self, id: impl Into<String>) -> Self {
        self.conversation = id.into();
        self
    }

    /// The surface calls come from unless a call says otherwise.
    pub fn surface(mut self, surface: Surface) -> Self {
        self.surface = surface;
        self
    }

    /// Connects a resource; its tools are registered (S1).
    pub fn connect(mut self, resource: Resource) -> Self {
        self.resources.insert(resource);
        self
    }

    /// Connects every resource tether has.
    pub fn connect_all(mut self) -> Self {
        self.resources.extend(Resource::ALL);
        self
    }

    /// The approval policy for write- and exec-level calls.
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = policy;
        self
    }

    /// Whether to offer the minimal host tools (`read`, `write`, `edit`,
    /// `apply_patch`); a host with its own turns them off.
    pub fn host_file_tools(mut self, on: bool) -> Self {
        self.host_files = on;
        self
    }

    /// Registers a host tool; it replaces a built-in tool of the same name.
    pub fn tool(mut self, handler: Arc<dyn ToolHandler>) -> Self {
        self.extra.push(handler);
        self
    }

    /// The hook run after file-writing tools; its text joins their result.
    pub fn after_write(mut self, hook: Arc<dyn AfterWrite>) -> Self {
        self.after_write = Some(hook);
        self
    }

    /// The conversation's enclosure: a command prefix (a container exec, a
    /// sandbox wrapper) that kernels are started through. tether never
    /// starts an enclosure itself.
    pub fn enclosure(mut self, prefix: Vec<String>) -> Self {
        self.enclosure = prefix;
        self
    }

    /// The idle budget of `eval` cells (time without progress before a
    /// cell is interrupted); default 5 minutes.
    pub fn idle_budget(mut self, budget: std::time::Duration) -> Self {
        self.idle_budget = budget;
        self
    }

    /// The hard time-to-live of a debug session (default 30 minutes).
    pub fn debug_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.debug_ttl = ttl;
        self
    }

    /// Connects a human: cards (`ask_user`, permission prompts) are shown
    /// through `port` in `target_space` (where the card appears: a
    /// terminal, a conversation pane). Registers `ask_user` (S1).
    pub fn questions(mut self, port: Arc<dyn QuestionPort>, target_space: impl Into<String>) -> Self {
        self.questions = Some((port, target_space.into()));
        self
    }

    /// How long the human has to answer a card (default 10 minutes);
    /// stated on the card.
    pub fn question_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.question_timeout = timeout;
        self
    }

    /// How long one call that is not parallel-safe (a write, `resolve`,
    /// `lsp_rename`, a host tool that declares itself exclusive) may hold
    /// the serial lane before it is cancelled and the calls behind it run
    /// (default 10 minutes).
    pub fn serial_call_timeout(mut self, bound: std::time::Duration) -> Self {
        self.serial_bound = bound;
        self
    }

    /// Switches vibe mode on: a worker pool running briefs through
    /// `backend` (tether's own is
    /// [`tether_actors::workers::command::CommandBackend`]). Registers the
    /// five `vibe_*` tools (S1).
    pub fn vibe(mut self, backend: Arc<dyn WorkerBackend>) -> Self {
        self.vibe = Some(backend);
        self
    }

    /// Starts the actors.
    pub fn start(self) -> Result<Runtime, StartError> {
        crate::conversations::check_id(&self.conversation).map_err(StartError::Conversation)?;
        let workdir = tether_actors::fs::canonical_root(&self.workdir)?;
        if !workdir.is_dir() {
            return Err(StartError::Workdir(tether_actors::fs::PathError::BadRoot {
                root: workdir.display().to_string(),
                reason: "not a directory".into(),
            }));
        }
        // Paths travel as JSON strings (tool answers, LSP URIs, DAP
        // requests): a root whose name is not UTF-8 could not be named.
        if workdir.to_str().is_none() {
            return Err(StartError::Workdir(tether_actors::fs::PathError::BadRoot {
                root: workdir.display().to_string(),
                reason: "its path is not valid UTF-8; start tether in a directory whose path is".into(),
            }));
        }
        // Children of a run that died without stopping them (SIGKILL, a
        // crash) would otherwise live on: they carry its run id.
        let reaped = tether_actors::process::reap_orphans(&workdir);
        let surface = self.surface;
        let resources = self.resources.clone();
        let conversation = self.conversation.clone();
        let parts = Parts { builder: self, workdir: workdir.clone() };
        let (mut started, system) = if System::try_current().is_some() {
            (parts.start(), None)
        } else {
            let (tx, rx) = std::sync::mpsc::channel();
            let (stopped_tx, stopped) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("tether-actors".into())
                .spawn(move || {
                    let system = System::new();
                    system.block_on(async move {
                        let _ = tx.send((parts.start(), System::current()));
                    });
                    // `run` consumes the system: when it returns, every
                    // actor has stopped and dropped its process guards.
                    let _ = system.run();
                    let _ = stopped_tx.send(());
                })
                .map_err(|e| StartError::System(e.to_string()))?;
            let (mut started, system) = rx.recv().map_err(|e| StartError::System(e.to_string()))?;
            let arbiters = parking_lot::Mutex::new(std::mem::take(&mut started.arbiters));
            (started, Some(OwnSystem { system, stopped: parking_lot::Mutex::new(stopped), arbiters }))
        };
        // In a host's system, the run's own threads and servers are what
        // `shutdown` stops; the system is the host's.
        let hosted = system.is_none().then(|| Hosted {
            arbiters: parking_lot::Mutex::new(std::mem::take(&mut started.arbiters)),
            lsp: started.lsp.clone(),
        });
        Ok(Runtime {
            router: started.router,
            registry: started.registry,
            surface,
            resources,
            workdir,
            conversation,
            after_write: started.after_write,
            conversations: started.conversations,
            reaped,
            _system: system,
            hosted,
            shut: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// Everything needed to start the actors, moved onto the actor thread.
struct Parts {
    builder: RuntimeBuilder,
    workdir: PathBuf,
}

/// What starting the actors produced.
struct Started {
    router: Addr<RouterActor>,
    registry: Arc<Registry>,
    after_write: Option<Arc<dyn AfterWrite>>,
    arbiters: Vec<Arbiter>,
    conversations: Arc<Conversations>,
    lsp: Option<(Addr<LspSupervisor>, ServerPids)>,
}

impl Parts {
    fn start(self) -> Started {
        let b = self.builder;
        // Resource actors that do blocking or process work get threads of
        // their own; the runtime joins them when it stops.
        let mut arbiters: Vec<Arbiter> = Vec::new();
        fn arbiter(all: &mut Vec<Arbiter>) -> actix::ArbiterHandle {
            let a = Arbiter::new();
            let handle = a.handle();
            all.push(a);
            handle
        }
        let mut handlers: Vec<Arc<dyn ToolHandler>> = Vec::new();
        let mut children: Vec<Recipient<Describe>> = Vec::new();
        let mut hooks: Vec<Arc<dyn AfterWrite>> = Vec::new();
        let mut ast = None;
        let mut lsp = None;
        if b.resources.contains(&Resource::Parsers) {
            let root = self.workdir.clone();
            let addr = AstActor::start_in_arbiter(&arbiter(&mut arbiters), move |_| AstActor::new(root));
            handlers.push(Arc::new(tools::ast_grep::AstGrep { ast: addr.clone() }));
            handlers.push(Arc::new(tools::ast_edit::AstEdit { ast: addr.clone() }));
            handlers.push(Arc::new(tools::resolve::Resolve { ast: addr.clone() }));
            children.push(addr.clone().recipient());
            ast = Some(addr);
        }
        if b.resources.contains(&Resource::LanguageServers) {
            let root = self.workdir.clone();
            // On the router's own thread: a query then crosses no thread
            // between router, supervisor, server actor and the reader task
            // that receives the answer.
            let supervisor = LspSupervisor::new(root);
            let pids = supervisor.server_pids();
            let supervisor = supervisor.start();
            lsp = Some((supervisor.clone(), pids));
            handlers.push(Arc::new(tools::lsp::Lsp { supervisor: supervisor.clone() }));
            handlers.push(Arc::new(tools::lsp::rename::LspRename { supervisor: supervisor.clone(), ast }));
            // Files written through tether are synced to their server at once,
            // and the diagnostics the write introduced join the tool's result.
            hooks.push(Arc::new(tools::lsp::diagnostics::LspAfterWrite {
                supervisor: supervisor.clone(),
                workdir: self.workdir.clone(),
                registry: Default::default(),
            }));
            children.push(supervisor.recipient());
        }
        let router_slot: Arc<std::sync::OnceLock<Recipient<Call>>> = Arc::default();
        // Kernels and debug sessions belong to conversations: every
        // conversation's run on one thread per resource kind.
        let kernel_thread = b.resources.contains(&Resource::Kernels).then(|| arbiter(&mut arbiters));
        let debug_thread = b.resources.contains(&Resource::Debuggers).then(|| arbiter(&mut arbiters));
        let conversations = Arc::new(Conversations::new(
            self.workdir.clone(),
            b.enclosure.clone(),
            b.debug_ttl,
            kernel_thread.clone(),
            debug_thread.clone(),
        ));
        if kernel_thread.is_some() {
            handlers.push(Arc::new(tools::eval::Eval {
                conversations: conversations.clone(),
                router: router_slot.clone(),
                idle_budget: b.idle_budget,
            }));
        }
        if debug_thread.is_some() {
            handlers.push(Arc::new(tools::debug::Debug { conversations: conversations.clone() }));
        }
        if kernel_thread.is_some() || debug_thread.is_some() {
            // The run's own conversation is open from the start.
            let _ = conversations.get(&b.conversation);
        }
        let gate = b.questions.map(|(port, target)| {
            let gate = QuestionGateActor::new(port, target).start();
            handlers
                .push(Arc::new(tools::ask_user::AskUser { gate: gate.clone(), timeout: b.question_timeout }));
            children.push(gate.clone().recipient());
            gate
        });
        let vibe_on = b.vibe.is_some();
        if let Some(backend) = b.vibe {
            let pool = WorkerPoolActor::start_in_arbiter(&arbiter(&mut arbiters), move |_| {
                WorkerPoolActor::new(backend)
            });
            handlers.extend(tools::vibe::tools(pool.clone()));
            children.push(pool.recipient());
        }
        // With live resources, the model can see them all (`resources`).
        let describe_slot: Arc<std::sync::OnceLock<Recipient<Describe>>> = Arc::default();
        let live = [Resource::LanguageServers, Resource::Kernels, Resource::Debuggers];
        if live.iter().any(|r| b.resources.contains(r)) || vibe_on {
            handlers.push(Arc::new(tools::resources::Resources { router: describe_slot.clone() }));
        }
        hooks.extend(b.after_write);
        let after_write: Option<Arc<dyn AfterWrite>> = match hooks.len() {
            0 => None,
            1 => hooks.pop(),
            _ => Some(Arc::new(AfterWriteChain(hooks))),
        };
        if b.host_files {
            handlers.extend(tools::host_file_tools());
        }
        handlers.extend(b.extra);
        let registry = Arc::new(Registry::new(handlers));
        let base = CallContext {
            workdir: Arc::new(self.workdir),
            conversation: Arc::from(b.conversation.as_str()),
            surface: b.surface,
            after_write: after_write.clone(),
            cancel: CancellationToken::new(),
        };
        let router =
            RouterActor::with_gate(registry.clone(), base, b.approval, gate, b.question_timeout, children)
                .with_conversations(conversations.clone())
                .with_serial_bound(b.serial_bound)
                .start();
        let _ = router_slot.set(router.clone().recipient());
        let _ = describe_slot.set(router.clone().recipient());
        Started { router, registry, after_write, arbiters, conversations, lsp }
    }
}

/// How long dropping a runtime waits for its actors to stop (and kill
/// their child processes) before returning anyway.
pub const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// The actor system a runtime started for itself; stopped on drop.
struct OwnSystem {
    system: System,
    /// Signalled when the actor thread has finished (in a mutex so the
    /// runtime stays `Sync` for hosts that share it).
    stopped: parking_lot::Mutex<std::sync::mpsc::Receiver<()>>,
    /// The resource actors' threads, joined on stop: their actors' process
    /// guards drop as those threads end.
    arbiters: parking_lot::Mutex<Vec<Arbiter>>,
}

impl OwnSystem {
    /// Stops the system and waits (at most [`STOP_TIMEOUT`]) for its
    /// thread to finish. Idempotent.
    fn stop(&self) {
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
struct Hosted {
    arbiters: parking_lot::Mutex<Vec<Arbiter>>,
    lsp: Option<(Addr<LspSupervisor>, ServerPids)>,
}

impl Drop for OwnSystem {
    fn drop(&mut self) {
        self.stop();
    }
}

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
    router: Addr<RouterActor>,
    registry: Arc<Registry>,
    surface: Surface,
    resources: BTreeSet<Resource>,
    workdir: PathBuf,
    conversation: String,
    after_write: Option<Arc<dyn AfterWrite>>,
    conversations: Arc<Conversations>,
    reaped: Vec<tether_actors::process::Orphan>,
    _system: Option<OwnSystem>,
    hosted: Option<Hosted>,
    shut: std::sync::atomic::AtomicBool,
}

impl Runtime {
    /// Starts configuring a run.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

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
    pub async fn after_write(&self, paths: Vec<PathBuf>) -> Option<String> {
        match &self.after_write {
            Some(hook) => hook.after_write(paths).await,
            None => None,
        }
    }

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
            return;
        }
        let Some(hosted) = &self.hosted else { return };
        if let Some((supervisor, pids)) = &hosted.lsp {
            // Their actors run on the host's thread, which may be this one:
            // no message would be handled before we return.
            for pid in pids.lock().values() {
                tether_actors::process::kill_group(*pid);
            }
            supervisor.do_send(StopAll);
        }
        self.router.do_send(crate::router::Stop);
        let arbiters = std::mem::take(&mut *hosted.arbiters.lock());
        stop_arbiters(arbiters, std::time::Instant::now() + STOP_TIMEOUT);
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_handle_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<super::Runtime>();
    }
}
