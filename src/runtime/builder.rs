//! [`RuntimeBuilder`]: a run's configuration, and [`RuntimeBuilder::start`],
//! which checks the working directory and starts the actors on the host's
//! actix system or on one of the runtime's own.

use std::path::PathBuf;
use std::sync::Arc;

use actix::prelude::*;
use tether_actors::question::port::QuestionPort;
use tether_actors::workers::WorkerBackend;

use super::parts::{Parts, Settings};
use super::shutdown::{Hosted, OwnSystem};
use super::{Runtime, StartError};
use crate::approval::ApprovalPolicy;
use crate::handler::{AfterWrite, ToolHandler};
use crate::spec::{Resource, Surface};

/// Configures a run.
#[derive(Default)]
pub struct RuntimeBuilder {
    settings: Settings,
}

impl Runtime {
    /// Starts configuring a run.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }
}

impl RuntimeBuilder {
    /// The working directory every path is confined to (default `.`).
    pub fn workdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.workdir = dir.into();
        self
    }

    /// The conversation this run belongs to.
    pub fn conversation(mut self, id: impl Into<String>) -> Self {
        self.settings.conversation = id.into();
        self
    }

    /// The surface calls come from unless a call says otherwise.
    pub fn surface(mut self, surface: Surface) -> Self {
        self.settings.surface = surface;
        self
    }

    /// Connects a resource; its tools are registered (S1).
    pub fn connect(mut self, resource: Resource) -> Self {
        self.settings.resources.insert(resource);
        self
    }

    /// Connects every resource tether has.
    pub fn connect_all(mut self) -> Self {
        self.settings.resources.extend(Resource::ALL);
        self
    }

    /// The approval policy for write- and exec-level calls.
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.settings.approval = policy;
        self
    }

    /// Whether to offer the minimal host tools (`read`, `write`, `edit`,
    /// `apply_patch`); a host with its own turns them off.
    pub fn host_file_tools(mut self, on: bool) -> Self {
        self.settings.host_files = on;
        self
    }

    /// Registers a host tool; it replaces a built-in tool of the same name.
    pub fn tool(mut self, handler: Arc<dyn ToolHandler>) -> Self {
        self.settings.extra.push(handler);
        self
    }

    /// The hook run after file-writing tools; its text joins their result.
    pub fn after_write(mut self, hook: Arc<dyn AfterWrite>) -> Self {
        self.settings.after_write = Some(hook);
        self
    }

    /// The conversation's enclosure: a command prefix (a container exec, a
    /// sandbox wrapper) that kernels are started through. tether never
    /// starts an enclosure itself.
    pub fn enclosure(mut self, prefix: Vec<String>) -> Self {
        self.settings.enclosure = prefix;
        self
    }

    /// The idle budget of `eval` cells (time without progress before a
    /// cell is interrupted); default 5 minutes.
    pub fn idle_budget(mut self, budget: std::time::Duration) -> Self {
        self.settings.idle_budget = budget;
        self
    }

    /// The hard time-to-live of a debug session (default 30 minutes).
    pub fn debug_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.settings.debug_ttl = ttl;
        self
    }

    /// Connects a human: cards (`ask_user`, permission prompts) are shown
    /// through `port` in `target_space` (where the card appears: a
    /// terminal, a conversation pane). Registers `ask_user` (S1).
    pub fn questions(mut self, port: Arc<dyn QuestionPort>, target_space: impl Into<String>) -> Self {
        self.settings.questions = Some((port, target_space.into()));
        self
    }

    /// How long the human has to answer a card (default 10 minutes);
    /// stated on the card.
    pub fn question_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.settings.question_timeout = timeout;
        self
    }

    /// How long one call that is not parallel-safe (a write, `resolve`,
    /// `lsp_rename`, a host tool that declares itself exclusive) may hold
    /// the serial lane before it is cancelled and the calls behind it run
    /// (default 10 minutes).
    pub fn serial_call_timeout(mut self, bound: std::time::Duration) -> Self {
        self.settings.serial_bound = bound;
        self
    }

    /// Switches vibe mode on: a worker pool running briefs through
    /// `backend` (tether's own is
    /// [`tether_actors::workers::command::CommandBackend`]). Registers the
    /// five `vibe_*` tools (S1).
    pub fn vibe(mut self, backend: Arc<dyn WorkerBackend>) -> Self {
        self.settings.vibe = Some(backend);
        self
    }

    /// Whether the checkout may run programs of its own (its `tether.toml`
    /// commands, its `.venv/bin`): for a host with its own trust step. By
    /// default the user's trust record decides ([`crate::trust`]).
    pub fn trust(mut self, trust: tether_actors::trust::Trust) -> Self {
        self.settings.trust = Some(trust);
        self
    }

    /// Starts the actors.
    pub fn start(self) -> Result<Runtime, StartError> {
        crate::conversations::check_id(&self.settings.conversation).map_err(StartError::Conversation)?;
        let workdir = tether_actors::fs::canonical_root(&self.settings.workdir)?;
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
        // Before anything resolves a program or reads `tether.toml`.
        let trust = self.settings.trust.unwrap_or_else(|| match crate::trust::verdict(&workdir) {
            crate::trust::Verdict::Trusted => tether_actors::trust::Trust::Trusted,
            crate::trust::Verdict::Untrusted(_) => tether_actors::trust::Trust::Restricted,
        });
        tether_actors::trust::set(&workdir, trust);
        // Children of a run that died without stopping them (SIGKILL, a
        // crash) would otherwise live on: they carry its run id.
        let reaped = tether_actors::process::reap_orphans(&workdir);
        let surface = self.settings.surface;
        let resources = self.settings.resources.clone();
        let conversation = self.settings.conversation.clone();
        let parts = Parts { settings: self.settings, workdir: workdir.clone() };
        let (mut started, system) = if System::try_current().is_some() {
            (parts.start_actors(), None)
        } else {
            let (tx, rx) = std::sync::mpsc::channel();
            let (stopped_tx, stopped) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("tether-actors".into())
                .spawn(move || {
                    let system = System::new();
                    system.block_on(async move {
                        let _ = tx.send((parts.start_actors(), System::current()));
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
