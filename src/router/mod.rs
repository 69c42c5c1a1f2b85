//! The router: the one actor every call passes through.
//!
//! For each call, in order: (1) is the tool registered for this run — its
//! resource connected (S1)? (2) is it on the caller's surface (S2)? (3) does
//! the approval policy let a write/exec tool run? (4) do the arguments parse
//! into the tool's typed request? (5) with the `ask` policy, a permission
//! card goes to the human first; (6) route: parallel-safe tools run
//! concurrently; the rest go through the [`serial::SerialLane`], one at a
//! time. Steps 1–4 answer synchronously, so a bad call never queues.
//!
//! Every call carries a cancellation token: when it fires, the call's work
//! is dropped (an LSP request is cancelled with it) and the caller gets a
//! "cancelled" result at once.

pub mod changed;
pub mod held_back;
pub mod serial;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use actix::prelude::*;
use tether_actors::describe::{ActorNode, Describe};
use tether_actors::question::Card;
use tether_actors::question::gate::{Ask, AskError, QuestionGateActor};
use tokio_util::sync::CancellationToken;

use crate::approval::ApprovalPolicy;
use crate::conversations::Conversations;
use crate::handler::{CallContext, ToolFuture, ToolHandler};
use crate::result::ToolResult;
use crate::spec::{Level, Surface, ToolSpec};
use serial::{Exclusive, SerialLane};

/// The longest argument summary shown on a permission card.
const PERMISSION_ARGS_CHARS: usize = 600;

/// How long a cancelled call whose tool answers cancellation itself (an
/// interrupted cell, an abandoned debug wait) has to say what state it left
/// before the router answers a bare "cancelled" for it.
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A call that passed every check, ready to run.
struct Prepared {
    work: ToolFuture,
    /// Runs on the serial lane, alone.
    alone: bool,
    /// The permission card to show first (approval policy `ask`).
    permission: Option<Card>,
    /// How long the work may take to answer its own cancellation.
    grace: std::time::Duration,
}

/// The tools registered for one run, fixed when the run starts.
pub struct Registry {
    tools: BTreeMap<String, (ToolSpec, Arc<dyn ToolHandler>)>,
    /// Tools this run could have offered and does not: what each needs
    /// that the run lacks (said to a call of one).
    absent: BTreeMap<String, String>,
}

impl Registry {
    /// A registry of `handlers`; a later handler replaces an earlier one of
    /// the same name (so a host can replace a built-in tool).
    pub fn new(handlers: Vec<Arc<dyn ToolHandler>>) -> Self {
        let tools = handlers.into_iter().map(|h| (h.spec().name.clone(), (h.spec(), h))).collect();
        Self { tools, absent: BTreeMap::new() }
    }

    /// The same, knowing the tools the run leaves out and what each needs
    /// (`needs` completes "it needs …"): the runtime says so where it
    /// wires the resources. A registered tool is never absent.
    pub fn with_absent(mut self, absent: impl IntoIterator<Item = (String, String)>) -> Self {
        self.absent = absent.into_iter().filter(|(name, _)| !self.tools.contains_key(name)).collect();
        self
    }

    /// The tools a surface sees, by name.
    pub fn specs(&self, surface: Surface) -> Vec<ToolSpec> {
        self.tools
            .values()
            .filter(|(spec, _)| surface.allows(spec.level))
            .map(|(spec, _)| spec.clone())
            .collect()
    }

    fn names(&self, surface: Surface, unoffered: &[String]) -> String {
        let names: Vec<&str> = self
            .tools
            .values()
            .filter(|(spec, _)| surface.allows(spec.level) && !unoffered.contains(&spec.name))
            .map(|(spec, _)| spec.name.as_str())
            .collect();
        if names.is_empty() { "none".to_string() } else { names.join(", ") }
    }
}

/// One tool call.
#[derive(Debug, Clone)]
pub struct Call {
    /// The tool's name.
    pub tool: String,
    /// Its arguments, a JSON object.
    pub args: serde_json::Value,
    /// Where the call comes from.
    pub surface: Surface,
    /// Fires when the caller stops waiting (an MCP `notifications/cancelled`).
    pub cancel: CancellationToken,
    /// The conversation it belongs to; `None` is the run's own.
    pub conversation: Option<Arc<str>>,
    /// Tools the caller is not offered though the run has them (`ask_user`
    /// for an MCP client that cannot show a question): answers to this
    /// call do not name them.
    pub unoffered: Vec<String>,
}

impl Call {
    /// A call nobody will cancel, in the run's own conversation.
    pub fn new(tool: impl Into<String>, args: serde_json::Value, surface: Surface) -> Self {
        Self {
            tool: tool.into(),
            args,
            surface,
            cancel: CancellationToken::new(),
            conversation: None,
            unoffered: Vec::new(),
        }
    }

    /// The same call from a caller that is not offered `tools`.
    pub fn unoffered(mut self, tools: &[&str]) -> Self {
        self.unoffered.extend(tools.iter().map(|t| t.to_string()));
        self
    }

    /// The same call in `conversation`.
    pub fn in_conversation(mut self, conversation: impl Into<Arc<str>>) -> Self {
        self.conversation = Some(conversation.into());
        self
    }

    /// The same call, cancelled by `cancel`.
    pub fn cancelled_by(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }
}

impl Message for Call {
    type Result = ToolResult;
}

/// The router actor.
pub struct RouterActor {
    registry: Arc<Registry>,
    base: CallContext,
    approval: ApprovalPolicy,
    gate: Option<Addr<QuestionGateActor>>,
    question_timeout: std::time::Duration,
    lane: Addr<SerialLane>,
    lane_queued: Arc<AtomicU64>,
    children: Vec<Recipient<Describe>>,
    conversations: Option<Arc<Conversations>>,
    /// What changed since each conversation's previous call, when the run
    /// watches its files.
    changes: Option<Arc<changed::ChangeNotes>>,
    /// What a restricted checkout holds back, told once per conversation.
    held_back: Option<Arc<held_back::HeldBack>>,
    in_flight: Arc<AtomicU64>,
    calls: u64,
    started: Instant,
}

impl RouterActor {
    /// A router over `registry`, with the resource actors it reports in the tree.
    pub fn new(
        registry: Arc<Registry>,
        base: CallContext,
        approval: ApprovalPolicy,
        children: Vec<Recipient<Describe>>,
    ) -> Self {
        Self::with_gate(registry, base, approval, None, std::time::Duration::from_secs(600), children)
    }

    /// A router whose `ask` approval policy shows permission cards through
    /// `gate`, each with `question_timeout` to answer.
    pub fn with_gate(
        registry: Arc<Registry>,
        base: CallContext,
        approval: ApprovalPolicy,
        gate: Option<Addr<QuestionGateActor>>,
        question_timeout: std::time::Duration,
        children: Vec<Recipient<Describe>>,
    ) -> Self {
        let lane_queued = Arc::new(AtomicU64::new(0));
        let lane = SerialLane::new(lane_queued.clone(), serial::SERIAL_CALL_TIMEOUT).start();
        Self {
            registry,
            base,
            approval,
            gate,
            question_timeout,
            lane,
            lane_queued,
            children,
            conversations: None,
            changes: None,
            held_back: None,
            in_flight: Arc::new(AtomicU64::new(0)),
            calls: 0,
            started: Instant::now(),
        }
    }

    /// The same router, also describing the run's conversations in the tree.
    pub fn with_conversations(mut self, conversations: Arc<Conversations>) -> Self {
        self.conversations = Some(conversations);
        self
    }

    /// Every answer names the files changed since its conversation's
    /// previous call ([`changed`]).
    pub fn with_change_notes(mut self, notes: Arc<changed::ChangeNotes>) -> Self {
        self.changes = Some(notes);
        self
    }

    /// The first answer of each conversation from a tool that starts
    /// programs says what the restricted checkout held back ([`held_back`]).
    pub fn with_held_back(mut self, note: Arc<held_back::HeldBack>) -> Self {
        self.held_back = Some(note);
        self
    }

    /// How long one call may hold the serial lane (default
    /// [`serial::SERIAL_CALL_TIMEOUT`]).
    pub fn with_serial_bound(mut self, bound: std::time::Duration) -> Self {
        self.lane = SerialLane::new(self.lane_queued.clone(), bound).start();
        self
    }

    /// Steps 1–4: the checks and the argument parse. Returns the work with
    /// how it must run: alone or not, behind which permission card, and
    /// with what grace to answer its own cancellation.
    fn prepare(&self, mut call: Call) -> Result<Prepared, ToolResult> {
        // Before any step that could drop or print them recursively.
        if let Some(e) = crate::args::take_too_deep(&call.tool, &mut call.args) {
            return Err(e.into());
        }
        if let Some(e) = crate::args::too_large(&call.tool, &call.args) {
            return Err(e.into());
        }
        let Some((spec, handler)) = self.registry.tools.get(&call.tool) else {
            return Err(self.not_registered(&call));
        };
        if !call.surface.allows(spec.level) {
            return Err(ToolResult::error(format!(
                "`{}` is {}, and the {} surface (plan mode, read-only sub-agents) has only read-level tools: {}. Ask the main agent to make this change",
                spec.name,
                spec.level.a_tool(),
                call.surface.as_str(),
                self.registry.names(call.surface, &call.unoffered)
            )));
        }
        if spec.level != Level::Read
            && let Err(why) = self.approval.approve(spec)
        {
            return Err(ToolResult::error(why));
        }
        let permission = (spec.level != Level::Read && self.approval == ApprovalPolicy::Ask)
            .then(|| permission_card(spec, &call.args, self.question_timeout))
            .map(|card| Card { conversation: call.conversation.as_deref().map(str::to_string), ..card });
        if permission.is_some() && self.gate.is_none() {
            return Err(ToolResult::error(format!(
                "`{}` needs the operator's permission (approval policy `ask`), and no approver is connected to this run, so it was refused and did not run. Use read-level tools, or ask the operator to connect a question port",
                spec.name
            )));
        }
        let mut ctx = self.base.clone();
        if let Some(conversation) = call.conversation {
            crate::conversations::check_id(&conversation).map_err(ToolResult::error)?;
            ctx.conversation = conversation;
        }
        ctx.surface = call.surface;
        ctx.cancel = call.cancel;
        let work = handler.call(&ctx, call.args).map_err(ToolResult::from)?;
        Ok(Prepared {
            work,
            alone: !spec.parallel_safe && !spec.serialized_by_resource,
            permission,
            grace: if spec.answers_cancellation { CANCEL_GRACE } else { std::time::Duration::ZERO },
        })
    }

    fn not_registered(&self, call: &Call) -> ToolResult {
        if let Some(need) = self.registry.absent.get(&call.tool) {
            return ToolResult::error(format!(
                "`{}` is not available in this run: it needs {need}. Tools available here: {}",
                call.tool,
                self.registry.names(call.surface, &call.unoffered)
            ));
        }
        ToolResult::error(format!(
            "unknown tool `{}`; the tools available here are: {}",
            call.tool,
            self.registry.names(call.surface, &call.unoffered)
        ))
    }
}

impl Actor for RouterActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(4096);
    }
}

impl Handler<Call> for RouterActor {
    type Result = Routed;

    fn handle(&mut self, call: Call, _ctx: &mut Self::Context) -> Self::Result {
        self.dispatch(call)
    }
}

/// A call's answer on its way: answered in the handler when the work is
/// ready at its first poll (a refusal, a bad argument, a tool with nothing
/// to wait for) — no task spawned for it — or else from a task of its own
/// on the router's thread, as actix does for a `ResponseFuture`.
pub enum Routed {
    /// Answered already.
    Ready(ToolResult),
    /// Still to run.
    Work(ToolFuture),
}

impl actix::dev::MessageResponse<RouterActor, Call> for Routed {
    fn handle(self, _ctx: &mut Context<RouterActor>, tx: Option<actix::dev::OneshotSender<ToolResult>>) {
        let mut work = match self {
            Routed::Ready(result) => {
                if let Some(tx) = tx {
                    let _ = tx.send(result);
                }
                return;
            }
            Routed::Work(work) => work,
        };
        let mut once = std::task::Context::from_waker(std::task::Waker::noop());
        match work.as_mut().poll(&mut once) {
            std::task::Poll::Ready(result) => {
                if let Some(tx) = tx {
                    let _ = tx.send(result);
                }
            }
            // Polled again with a real waker there; a future stores the
            // waker of its latest poll.
            std::task::Poll::Pending => {
                actix::spawn(async move {
                    let result = work.await;
                    if let Some(tx) = tx {
                        let _ = tx.send(result);
                    }
                });
            }
        }
    }
}

impl RouterActor {
    /// The call's whole path after the checks, as one future: cancellation,
    /// the serial lane, the permission card, the in-flight count.
    fn dispatch(&mut self, call: Call) -> Routed {
        self.calls += 1;
        let started = Instant::now();
        let tool = call.tool.clone();
        let cancel = call.cancel.clone();
        // One span per call: what the tool's own code logs, and the
        // call's end, are told apart from the calls beside it.
        let span = tracing::debug_span!("tool_call", tool = %tool, call = self.calls);
        let entered = span.enter();
        let conversation = call.conversation.clone().unwrap_or_else(|| self.base.conversation.clone());
        let Prepared { mut work, alone, permission, grace } = match self.prepare(call) {
            Ok(prepared) => prepared,
            Err(refused) => {
                tracing::debug!(tool = %tool, refused = true, "tool call");
                return Routed::Ready(refused);
            }
        };
        if let Some(note) = self.held_back.clone() {
            let (inner, conversation, tool) = (work, conversation.clone(), tool.clone());
            work = Box::pin(async move { note.add(&conversation, &tool, inner.await) });
        }
        if let Some(notes) = self.changes.clone() {
            let inner = work;
            work = Box::pin(async move { notes.add(&conversation, inner.await).await });
        }
        // Work that needs neither the lane nor a card, and is done at its
        // first poll, is the answer: nothing to cancel, count or wrap.
        if !alone && permission.is_none() {
            let mut once = std::task::Context::from_waker(std::task::Waker::noop());
            if let std::task::Poll::Ready(result) = work.as_mut().poll(&mut once) {
                tracing::debug!(tool = %tool, is_error = result.is_error, micros = started.elapsed().as_micros() as u64, "tool call");
                return Routed::Ready(result);
            }
        }
        let lane = alone.then(|| {
            self.lane_queued.fetch_add(1, Ordering::Relaxed);
            self.lane.clone()
        });
        let gate = permission.and_then(|card| self.gate.clone().map(|gate| (card, gate)));
        let in_flight = self.in_flight.clone();
        in_flight.fetch_add(1, Ordering::Relaxed);
        drop(entered);
        Routed::Work(Box::pin(tracing::Instrument::instrument(
            async move {
                // Dropping the work on cancellation is what cancels it: an LSP
                // request sends `$/cancelRequest` when its future is dropped,
                // and a queued exclusive call never starts.
                let work = cancellable(work, cancel.clone(), tool.clone(), grace);
                let work = async {
                    match lane {
                        Some(lane) => {
                            let exclusive = Exclusive {
                                work: Box::pin(work),
                                tool: tool.clone(),
                                cancel: cancel.clone(),
                            };
                            lane.send(exclusive).await.unwrap_or_else(|e| {
                            ToolResult::error(format!(
                                "the serial lane stopped before the call ran ({e}); nothing ran, call again"
                            ))
                        })
                        }
                        None => work.await,
                    }
                };
                let result = match gate {
                    Some((card, gate)) => match gate.send(Ask { card, cancel: cancel.clone() }).await {
                        Ok(Ok(reply)) if reply.grants() => work.await,
                        Ok(Ok(_)) => ToolResult::error(format!(
                            "the operator denied permission to run `{tool}`; it did not run. Do not retry it — continue without it, or ask the operator (ask_user) what they want instead"
                        )),
                        Ok(Err(AskError::TimedOut(d))) => ToolResult::error(format!(
                            "nobody answered the permission card for `{tool}` within {}, so it was refused and did not run. Continue without it, and do not retry it now",
                            tether_actors::text::human_duration(d)
                        )),
                        Ok(Err(e)) => ToolResult::error(format!(
                            "`{tool}` needs the operator's permission and could not get it ({e}), so it was refused and did not run"
                        )),
                        Err(e) => ToolResult::error(format!(
                            "the question gate is not running ({e}); `{tool}` was refused and did not run"
                        )),
                    },
                    None => work.await,
                };
                in_flight.fetch_sub(1, Ordering::Relaxed);
                tracing::debug!(
                    tool = %tool,
                    is_error = result.is_error,
                    micros = started.elapsed().as_micros() as u64,
                    "tool call"
                );
                result
            },
            span,
        )))
    }
}

async fn cancellable(
    mut work: ToolFuture,
    cancel: CancellationToken,
    tool: String,
    grace: std::time::Duration,
) -> ToolResult {
    {
        tokio::select! {
            biased;
            result = &mut work => return result,
            () = cancel.cancelled() => {}
        }
        if !grace.is_zero()
            && let Ok(result) = tokio::time::timeout(grace, work).await
        {
            return result;
        }
        ToolResult::error(format!("the `{tool}` call was cancelled by the caller before it finished"))
    }
}

/// The permission card for a write/exec call: the tool, what it says it
/// does (its `description` argument when it has one), and the arguments.
fn permission_card(spec: &ToolSpec, args: &serde_json::Value, timeout: std::time::Duration) -> Card {
    let what = args.get("description").and_then(|d| d.as_str()).map(str::to_string).unwrap_or_else(|| {
        crate::schema::lead(&spec.description).split(". ").next().unwrap_or("").to_string()
    });
    let mut card = Card::permission(&spec.name, spec.level.as_str(), &what, timeout);
    let (shown, _) =
        tether_actors::text::cut(&serde_json::to_string(args).unwrap_or_default(), PERMISSION_ARGS_CHARS);
    card.context = Some(format!("arguments: {shown}"));
    card
}

/// Stops the router (a host's `Runtime::shutdown`): calls sent after it fail.
pub struct Shutdown;

impl Message for Shutdown {
    type Result = ();
}

impl Handler<Shutdown> for RouterActor {
    type Result = ();

    fn handle(&mut self, _msg: Shutdown, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

/// Validates a call without running it: steps 1–4 (registered, on the
/// surface, approved by the policy, arguments parse). No permission card is
/// shown and no work is started.
#[derive(Debug, Clone)]
pub struct Check(pub Call);

impl Message for Check {
    type Result = Result<(), ToolResult>;
}

impl Handler<Check> for RouterActor {
    type Result = Result<(), ToolResult>;

    fn handle(&mut self, Check(call): Check, _ctx: &mut Self::Context) -> Self::Result {
        // The work future is dropped unpolled: tools do their work inside
        // it, so nothing runs.
        self.prepare(call).map(drop)
    }
}

impl Handler<Describe> for RouterActor {
    type Result = ResponseFuture<ActorNode>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let mut node = ActorNode::new(
            "router",
            &self.base.conversation,
            "ready",
            self.started.elapsed().as_millis() as u64,
            self.in_flight.load(Ordering::Relaxed),
        )
        .with_detail("calls", self.calls)
        .with_detail("tools", self.registry.tools.len())
        .with_detail("approval", self.approval.as_str());
        let mut asks: Vec<Recipient<Describe>> = vec![self.lane.clone().recipient()];
        asks.extend(self.children.iter().cloned());
        let conversations = self.conversations.clone();
        Box::pin(async move {
            for ask in asks {
                node.children.push(tether_actors::describe::describe_or_busy(&ask, "actor").await);
            }
            if let Some(conversations) = conversations {
                node.children.extend(conversations.describe().await);
            }
            node
        })
    }
}
