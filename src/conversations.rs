//! The conversations of a run: each has its own kernels and its own debug
//! session, started on its first `eval` or `debug` call (or when the host
//! opens it) and stopped — their processes killed — when the host closes
//! it or the run stops. Language servers, parsers, staged edits and the
//! serial lane for file writes belong to the run: every conversation works
//! on the same working directory.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use parking_lot::Mutex;
use tether_actors::dap::session::DebugSessionActor;
use tether_actors::describe::{ActorNode, describe_or_busy};
use tether_actors::kernel::pool::KernelPool;

/// The most conversations one run keeps at once; a host with more closes
/// the ones it has finished with.
pub const MAX_CONVERSATIONS: usize = 10_000;
/// The longest conversation id.
pub const MAX_CONVERSATION_ID: usize = 128;

/// The actors of one conversation.
#[derive(Clone)]
pub struct ConversationActors {
    /// Its kernels, one per language.
    pub kernels: Option<Addr<KernelPool>>,
    /// Its debug session.
    pub debug: Option<Addr<DebugSessionActor>>,
    /// The command prefix its kernels start through (empty: none).
    pub enclosure: Vec<String>,
    opened: Instant,
}

/// Where conversations' actors run and how they are made.
pub struct Conversations {
    workdir: PathBuf,
    enclosure: Vec<String>,
    debug_ttl: Duration,
    /// The thread kernel pools run on (`None`: kernels not connected).
    kernel_thread: Option<ArbiterHandle>,
    /// The thread debug sessions run on (`None`: debuggers not connected).
    debug_thread: Option<ArbiterHandle>,
    open: Mutex<BTreeMap<Arc<str>, ConversationActors>>,
    /// What each conversation last saw of each file.
    views: Arc<crate::views::Views>,
}

impl Conversations {
    /// A set whose conversations start kernels (on `kernel_thread`) and
    /// debug sessions (on `debug_thread`) for the resources connected.
    pub fn new(
        workdir: PathBuf,
        enclosure: Vec<String>,
        debug_ttl: Duration,
        kernel_thread: Option<ArbiterHandle>,
        debug_thread: Option<ArbiterHandle>,
        views: Arc<crate::views::Views>,
    ) -> Self {
        Self { workdir, enclosure, debug_ttl, kernel_thread, debug_thread, open: Mutex::default(), views }
    }

    /// The actors of `conversation`, started (with the run's enclosure) if
    /// it is new.
    pub fn get(&self, conversation: &str) -> Result<ConversationActors, String> {
        self.open_with(conversation, None)
    }

    /// The actors of `conversation`, started if it is new; its kernels
    /// start through `enclosure` when given (else the run's). An open
    /// conversation keeps the enclosure it was opened with: asking for
    /// another one is refused.
    pub fn open_with(
        &self,
        conversation: &str,
        enclosure: Option<&[String]>,
    ) -> Result<ConversationActors, String> {
        let mut open = self.open.lock();
        if let Some(actors) = open.get(conversation) {
            if enclosure.is_some_and(|e| e != actors.enclosure.as_slice()) {
                return Err(format!(
                    "conversation `{conversation}` is already open with another enclosure; close it first to change where its kernels run"
                ));
            }
            return Ok(actors.clone());
        }
        if open.len() >= MAX_CONVERSATIONS {
            return Err(format!(
                "this run already holds {MAX_CONVERSATIONS} conversations; close finished ones (Runtime::close_conversation) before opening `{conversation}`"
            ));
        }
        let id = conversation.to_string();
        let enclosure = enclosure.map_or_else(|| self.enclosure.clone(), <[String]>::to_vec);
        let kernels = self.kernel_thread.as_ref().map(|thread| {
            let (id, workdir, enclosure) = (id.clone(), self.workdir.clone(), enclosure.clone());
            KernelPool::start_in_arbiter(thread, move |_| KernelPool::new(id, workdir, enclosure))
        });
        let debug = self.debug_thread.as_ref().map(|thread| {
            let (id, workdir, ttl) = (id.clone(), self.workdir.clone(), self.debug_ttl);
            DebugSessionActor::start_in_arbiter(thread, move |_| DebugSessionActor::new(workdir, id, ttl))
        });
        let actors = ConversationActors { kernels, debug, enclosure, opened: Instant::now() };
        open.insert(Arc::from(conversation), actors.clone());
        Ok(actors)
    }

    /// Forgets `conversation`: its actors stop once calls still running
    /// in it finish, killing its kernels, debug adapter and debuggee, and
    /// what it saw of the files goes. Returns whether it was open.
    pub fn close(&self, conversation: &str) -> bool {
        self.views.forget(conversation);
        self.open.lock().remove(conversation).is_some()
    }

    /// How many conversations are open.
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    /// Whether no conversation is open.
    pub fn is_empty(&self) -> bool {
        self.open.lock().is_empty()
    }

    /// One node per open conversation, its kernels and debug session below
    /// it. Conversations are asked all at once: a busy one (a debug op
    /// waiting on its program) costs the dump one describe timeout, not one
    /// per conversation.
    pub async fn describe(&self) -> Vec<ActorNode> {
        let open: Vec<(Arc<str>, ConversationActors)> =
            self.open.lock().iter().map(|(id, a)| (id.clone(), a.clone())).collect();
        let mut asked = tokio::task::JoinSet::new();
        for (index, (id, actors)) in open.into_iter().enumerate() {
            asked.spawn(async move {
                let mut node = ActorNode::new(
                    "conversation",
                    &id,
                    "open",
                    actors.opened.elapsed().as_millis() as u64,
                    0,
                )
                .owned_by(&id);
                if let Some(k) = actors.kernels {
                    node.children.push(describe_or_busy(&k.recipient(), "kernel-pool").await);
                }
                if let Some(d) = actors.debug {
                    node.children.push(describe_or_busy(&d.recipient(), "debug-session").await);
                }
                node.pending = node.children.iter().map(ActorNode::total_pending).sum();
                (index, node)
            });
        }
        let mut nodes: Vec<(usize, ActorNode)> = asked.join_all().await;
        nodes.sort_by_key(|(index, _)| *index);
        nodes.into_iter().map(|(_, node)| node).collect()
    }
}

/// Checks a conversation id a host passed: 1 to [`MAX_CONVERSATION_ID`]
/// characters, no control characters.
pub fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.chars().count() > MAX_CONVERSATION_ID || id.chars().any(char::is_control) {
        return Err(format!(
            "conversation: expected an id of 1 to {MAX_CONVERSATION_ID} characters without control characters, got {:?}; pass the host's own conversation id",
            id.chars().take(40).collect::<String>()
        ));
    }
    Ok(())
}
