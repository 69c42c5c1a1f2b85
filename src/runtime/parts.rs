//! Starting the actors: each connected resource's actors and tools, the
//! conversations, the after-write hooks, the registry and the router.

use std::path::PathBuf;
use std::sync::Arc;

use actix::prelude::*;
use tether_actors::ast::actor::AstActor;
use tether_actors::describe::Describe;
use tether_actors::lsp::server::ServerPids;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::question::gate::QuestionGateActor;
use tether_actors::workers::pool::WorkerPoolActor;
use tokio_util::sync::CancellationToken;

use std::collections::BTreeSet;

use tether_actors::question::port::QuestionPort;
use tether_actors::workers::WorkerBackend;

use super::DEFAULT_CONVERSATION;
use crate::approval::ApprovalPolicy;
use crate::conversations::Conversations;
use crate::handler::{AfterWrite, AfterWriteChain, CallContext, ToolHandler};
use crate::router::{Call, Registry, RouterActor};
use crate::spec::{Resource, Surface};
use crate::tools;

/// What a run is configured with, as its builder collected it.
pub(super) struct Settings {
    pub(super) workdir: PathBuf,
    pub(super) conversation: String,
    pub(super) surface: Surface,
    pub(super) resources: BTreeSet<Resource>,
    pub(super) approval: ApprovalPolicy,
    pub(super) host_files: bool,
    pub(super) extra: Vec<Arc<dyn ToolHandler>>,
    pub(super) after_write: Option<Arc<dyn AfterWrite>>,
    pub(super) enclosure: Vec<String>,
    pub(super) idle_budget: std::time::Duration,
    pub(super) debug_ttl: std::time::Duration,
    pub(super) questions: Option<(Arc<dyn QuestionPort>, String)>,
    pub(super) question_timeout: std::time::Duration,
    pub(super) vibe: Option<Arc<dyn WorkerBackend>>,
    pub(super) serial_bound: std::time::Duration,
    /// Whether the checkout may run programs of its own; `None`: as the
    /// user's trust record says ([`crate::trust`]).
    pub(super) trust: Option<tether_actors::trust::Trust>,
}

impl Default for Settings {
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
            trust: None,
        }
    }
}

/// Everything needed to start the actors, moved onto the actor thread.
pub(super) struct Parts {
    pub(super) settings: Settings,
    pub(super) workdir: PathBuf,
}

/// What starting the actors produced.
pub(super) struct Actors {
    pub(super) router: Addr<RouterActor>,
    pub(super) registry: Arc<Registry>,
    pub(super) after_write: Option<Arc<dyn AfterWrite>>,
    pub(super) arbiters: Vec<Arbiter>,
    pub(super) conversations: Arc<Conversations>,
    pub(super) lsp: Option<(Addr<LspSupervisor>, ServerPids)>,
}

impl Parts {
    pub(super) fn start_actors(self) -> Actors {
        let b = self.settings;
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
        // The tools left out, and what each needs: said to a call of one.
        let mut absent: Vec<(String, String)> = Vec::new();
        let mut lacking = |names: &[&str], need: String| {
            absent.extend(names.iter().map(|n| (n.to_string(), need.clone())));
        };
        let not_connected = |r: Resource| format!("{}, which is not connected", r.describe());
        if b.resources.contains(&Resource::Parsers) {
            let root = self.workdir.clone();
            let addr = AstActor::start_in_arbiter(&arbiter(&mut arbiters), move |_| AstActor::new(root));
            handlers.push(Arc::new(tools::ast_grep::AstGrep { ast: addr.clone() }));
            handlers.push(Arc::new(tools::ast_edit::AstEdit { ast: addr.clone() }));
            handlers.push(Arc::new(tools::resolve::Resolve { ast: addr.clone() }));
            children.push(addr.clone().recipient());
            ast = Some(addr);
        } else {
            lacking(
                &[tools::ast_grep::NAME, tools::ast_edit::NAME, tools::resolve::NAME],
                not_connected(Resource::Parsers),
            );
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
            handlers.push(Arc::new(tools::lsp::edit::LspEdit { supervisor: supervisor.clone() }));
            // Files written through tether are synced to their server at once,
            // and the diagnostics the write introduced join the tool's result.
            hooks.push(Arc::new(tools::lsp::diagnostics::LspAfterWrite {
                supervisor: supervisor.clone(),
                workdir: self.workdir.clone(),
            }));
            children.push(supervisor.recipient());
        } else {
            lacking(
                &[tools::lsp::NAME, tools::lsp::rename::NAME, tools::lsp::edit::NAME],
                not_connected(Resource::LanguageServers),
            );
        }
        let router_slot: Arc<std::sync::OnceLock<Recipient<Call>>> = Arc::default();
        // Kernels and debug sessions belong to conversations: every
        // conversation's run on one thread per resource kind.
        let kernel_thread = b.resources.contains(&Resource::Kernels).then(|| arbiter(&mut arbiters));
        let debug_thread = b.resources.contains(&Resource::Debuggers).then(|| arbiter(&mut arbiters));
        let views = Arc::new(crate::views::Views::default());
        let conversations = Arc::new(Conversations::new(
            self.workdir.clone(),
            b.enclosure.clone(),
            b.debug_ttl,
            kernel_thread.clone(),
            debug_thread.clone(),
            views.clone(),
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
        if kernel_thread.is_none() {
            lacking(&[tools::eval::NAME], not_connected(Resource::Kernels));
        }
        if debug_thread.is_none() {
            lacking(&[tools::debug::NAME], not_connected(Resource::Debuggers));
        }
        if b.questions.is_none() {
            lacking(
                &[tools::ask_user::NAME],
                "a question port and a target space (a human connected to answer), which this run does not have"
                    .into(),
            );
        }
        if b.vibe.is_none() {
            lacking(&tools::vibe::NAMES, "vibe mode (a worker pool), which this run does not have".into());
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
        let registry = Arc::new(Registry::new(handlers).with_absent(absent));
        // With the run's file watcher (it comes with the language servers),
        // every answer names what changed since its conversation's previous call.
        let notes = lsp.as_ref().map(|(supervisor, _)| {
            Arc::new(crate::router::changed::ChangeNotes {
                supervisor: supervisor.clone(),
                views: views.clone(),
                workdir: self.workdir.clone(),
            })
        });
        let workdir = self.workdir.clone();
        let base = CallContext {
            workdir: Arc::new(self.workdir),
            conversation: Arc::from(b.conversation.as_str()),
            surface: b.surface,
            after_write: after_write.clone(),
            views,
            cancel: CancellationToken::new(),
        };
        let mut router =
            RouterActor::with_gate(registry.clone(), base, b.approval, gate, b.question_timeout, children)
                .with_conversations(conversations.clone())
                .with_serial_bound(b.serial_bound);
        if let Some(notes) = notes {
            router = router.with_change_notes(notes);
        }
        if !tether_actors::trust::of(&workdir).is_trusted()
            && let Some(note) =
                crate::router::held_back::HeldBack::new(tether_actors::trust::held_back(&workdir))
        {
            router = router.with_held_back(Arc::new(note));
        }
        let router = router.start();
        let _ = router_slot.set(router.clone().recipient());
        let _ = describe_slot.set(router.clone().recipient());
        Actors { router, registry, after_write, arbiters, conversations, lsp }
    }
}
