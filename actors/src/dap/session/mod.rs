//! `DebugSessionActor`: one debug session per conversation.
//!
//! Every op runs atomically (one mailbox, one op at a time: a `continue`
//! can never overtake a `stack`). The adapter's events are pumped into a
//! shared state — last stop, output ring, exit — as they arrive, so output
//! printed between ops is kept. Run and step ops return when the program
//! stops again or exits, or after [`RUN_WAIT`] saying it still runs. A hard
//! TTL ends the session, killing adapter and debuggee.
//!
//! - [`state`]: what the adapter's events tell (the last stop, output,
//!   exit), shared between the event pump and the ops, and the session's
//!   targets (its connections, what a new one is configured with).
//! - [`start`]: starting or connecting to an adapter, and the handshake
//!   (`initialize`, launch or attach, `initialized`, configure,
//!   `configurationDone`) before the program runs.
//! - `configure`: the one path that sends a target the breakpoints,
//!   function breakpoints and exception filters the session wants — its
//!   first connection, and each process a run follows.
//! - [`ops`]: the ops on a live session (steps, stack, scopes, variables,
//!   evaluate) and waiting for the program to settle.
//! - `outcome`: what an op answers — typed ([`Answer`]: a stop's
//!   [`Snapshot`], where a run [`Settled`], listings, where breakpoints
//!   bound), which the `debug` tool writes out.
//! - [`snapshot`]: reading a stop (frames, source, locals, the reason).
//! - [`breakpoints`], `functions`: breakpoints by line and by function
//!   name as asked, and one answer's element; `bindings`: where each bound,
//!   as the adapter last said.
//! - [`targets`]: the processes a js-debug launch follows (each test file
//!   of `node --test DIR`, the processes of an npm script).
//! - `stopping`: the ops that change where the program stops during a
//!   session (`breakpoints`, `exceptions`, `run_to`), sent to every live
//!   target.
//! - `node`: the session in the supervision tree; `ending`: why a
//!   session is over ([`SessionEnd`]).
//! - `replies`: reading an adapter's typed answers; `failure`: why an op
//!   failed (why a session could not start is `crate::dap::start_failure`).
//!
//! What each adapter needs of its own — launch arguments, exception
//! filters, js-debug's child sessions, rdbg's command line — is
//! `crate::dap::adapters`; what a session is asked for is
//! `crate::dap::asked`; the wire and its typed requests `crate::dap::client`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio_util::sync::CancellationToken;

use super::adapters;
use crate::process::KillGuard;
use crate::wire::dap::DapClient;
use breakpoints::BreakpointSpec;
use ops::inspect;
use state::AdapterState;

pub use crate::dap::asked::{AttachSpec, LaunchSpec, NODE_TEST, NPM_SCRIPT};

/// The hard time-to-live of a session, from when its launch or attach answered.
pub const SESSION_TTL: Duration = Duration::from_secs(30 * 60);
/// How long a run op — `launch`, `attach`, `continue`, `pause`, the
/// steps — waits for the program to stop (or exit) before answering that
/// it still runs. `pause` too: a thread blocked in a system call stops
/// only when the call returns.
pub const RUN_WAIT: Duration = Duration::from_secs(30);
pub use crate::dap::client::CONNECT_WAIT;
pub use crate::dap::client::INITIALIZED_WAIT;
pub use crate::dap::client::REQUEST_TIMEOUT;
/// How long an attach to a port keeps trying a connection refused: the
/// server there is the user's (`debugpy --listen`, `dlv --headless`), one
/// just started may not listen yet, and one that is not there fails fast.
pub const ATTACH_CONNECT_WAIT: Duration = Duration::from_secs(2);
/// How long `disconnect` may take when a session ends; then the adapter
/// and debuggee are killed regardless.
const DISCONNECT_WAIT: Duration = Duration::from_secs(2);
/// Frames listed by `stack`.
pub const MAX_FRAMES: usize = 30;
/// Children listed by `variables`.
pub const MAX_CHILDREN: usize = 50;
/// Longest value shown.
pub const MAX_VALUE: usize = 400;
/// Threads listed at most (the rest counted).
pub const MAX_THREADS: usize = 100;
/// How long an op that saw the adapter's pipe close waits for its exit
/// status: the wire's own grace for an exit report.
const EXIT_REPORT_WAIT: Duration = crate::wire::transport::EXIT_REPORT_GRACE;
/// Debuggee output kept (the last bytes).
pub const MAX_OUTPUT: usize = 64 * 1024;

/// An op of the `debug` tool.
#[derive(Debug, Clone)]
pub enum DebugOp {
    /// Which adapters are usable here.
    Adapters,
    /// Is a session running, and where is it stopped.
    Status,
    /// Set (or with none, clear) a file's breakpoints, the function
    /// breakpoints (by name), or both.
    Breakpoints { lines: Option<(PathBuf, Vec<BreakpointSpec>)>, functions: Option<Vec<String>> },
    /// Which exceptions stop the program (the adapter's filter names), or
    /// with `None` which ones do and which the adapter offers.
    Exceptions { filters: Option<Vec<String>> },
    /// Start a program under its adapter.
    Launch(LaunchSpec),
    /// Attach to a running program.
    Attach(AttachSpec),
    /// Continue to `file:line` once (a temporary breakpoint).
    RunTo { file: PathBuf, line: u32, thread: Option<i64> },
    /// Resume.
    Continue { thread: Option<i64> },
    /// Stop where it is.
    Pause { thread: Option<i64> },
    /// One step over.
    StepOver { thread: Option<i64> },
    /// One step in.
    StepIn { thread: Option<i64> },
    /// One step out.
    StepOut { thread: Option<i64> },
    /// Thread ids and names.
    Threads,
    /// Frames of a thread.
    Stack { thread: Option<i64> },
    /// Scopes of a frame (default: the frame the last stop showed).
    Scopes { frame: Option<i64> },
    /// Children of a reference.
    Variables { reference: i64 },
    /// Evaluate in a frame.
    Evaluate { expression: String, frame: Option<i64> },
    /// The debuggee's output.
    Output,
    /// End the session.
    Terminate,
}

impl Message for DebugOp {
    type Result = DebugReply;
}

/// A [`DebugOp`] whose caller may stop waiting: a wait for the program to
/// stop is then abandoned (the program keeps running); nothing else is
/// disturbed.
pub struct Cancellable {
    /// The op.
    pub op: DebugOp,
    /// Cancelled when the caller stops waiting.
    pub cancel: CancellationToken,
}

impl Message for Cancellable {
    type Result = DebugReply;
}

pub mod breakpoints;
mod failure;
mod outcome;
pub use bindings::BoundView;
pub use ending::SessionEnd;
pub use failure::{Debuggee, Failure, Refusal, SessionHead, Unfit};
pub use functions::{FunctionBinding, FunctionFound};
pub use outcome::{
    AdapterRow, Answer, Blind, ChainFrame, DebugReply, Evaluated, ExceptionsSet, FrameAt, FunctionsSet, Lead,
    LinesSet, Locals, NoLocals, NotSet, Note, RunState, ScopeAt, SessionNow, Settled, ShownVariable,
    Snapshot, StackFrameAt, StopWhy,
};
mod bindings;
mod configure;
mod ending;
mod functions;
mod node;
mod ops;
mod replies;
pub mod snapshot;
mod start;
mod state;
mod stopping;
mod targets;

/// The session's connection to its adapter: the adapter, what it offers,
/// the client (and the parent connection a js-debug child session needs),
/// and what its events told.
struct Connection {
    adapter: adapters::Adapter,
    /// The adapter's `initialize` capabilities.
    caps: dap_types::Capabilities,
    /// The exception filters in force.
    exceptions: Vec<String>,
    program: Debuggee,
    client: DapClient,
    /// The connection the session was launched on, when the debuggee runs
    /// as a child session on another (js-debug): kept open for as long.
    parent: Option<DapClient>,
    shared: Arc<AdapterState>,
    /// The adapter process, when tether started it (not when it connected
    /// to one already listening).
    guard: Option<KillGuard>,
    /// Attached to a program tether did not start: ending the session
    /// detaches and leaves it running.
    attached: bool,
    /// A `node:test` run (failed assertions stop it).
    test_run: bool,
    started: Instant,
}

/// The session actor of one conversation.
pub struct DebugSessionActor {
    workdir: PathBuf,
    conversation: String,
    ttl: Duration,
    session: Option<Connection>,
    breakpoints: BTreeMap<PathBuf, Vec<BreakpointSpec>>,
    /// The function breakpoints asked for, by name (one set for the whole
    /// program: each `setFunctionBreakpoints` replaces the last).
    functions: Vec<String>,
    /// Files whose breakpoints were set before or during an earlier
    /// session (not asked anew since): a next session keeps them, and
    /// says so.
    earlier_files: std::collections::BTreeSet<PathBuf>,
    /// Whether the function breakpoints are likewise an earlier session's.
    earlier_functions: bool,
    /// The exception filters asked for (`None`: the default, uncaught
    /// exceptions wherever the adapter offers that).
    exception_filters: Option<Vec<String>>,
    /// The frame the last stop showed, the default of `scopes`.
    focus_frame: Option<i64>,
    /// How the last session ended.
    ended: Option<SessionEnd>,
    /// Whether that end is one the caller has not heard of: an expiry,
    /// which happens between calls. Told once, by the next call.
    unheard: bool,
    created: Instant,
    op_cancel: CancellationToken,
    /// The timer of the session's TTL: aborted when the actor stops or a
    /// next session starts, so that a run whose sessions come and go does
    /// not keep one sleeping task for each until its TTL.
    ttl_timer: Option<tokio::task::JoinHandle<()>>,
}

impl DebugSessionActor {
    /// The session actor for `conversation` in `workdir` with the given TTL.
    pub fn new(workdir: PathBuf, conversation: String, ttl: Duration) -> Self {
        Self {
            workdir,
            conversation,
            ttl,
            session: None,
            breakpoints: BTreeMap::new(),
            earlier_files: Default::default(),
            earlier_functions: false,
            functions: Vec::new(),
            exception_filters: None,
            focus_frame: None,
            ended: None,
            unheard: false,
            created: Instant::now(),
            op_cancel: CancellationToken::new(),
            ttl_timer: None,
        }
    }

    /// Ends a session that outlived its TTL; the next call hears why.
    fn expire(&mut self) -> Option<impl std::future::Future<Output = ()> + use<>> {
        let f = self.end(SessionEnd::Expired { ttl: self.ttl })?;
        self.unheard = true;
        Some(f)
    }

    /// Keeps the frame a stop showed, the default of `scopes` and
    /// `evaluate`; a new stop replaces it (a stop whose stack could not be
    /// read leaves none), and an answer after which the program runs or
    /// ended forgets it — a frame id is good only while its stop lasts.
    fn remember(&mut self, reply: &DebugReply) {
        let still_stopped = self.session.as_ref().is_some_and(|s| s.shared.state.lock().stop.is_some());
        self.focus_frame = match &reply.state() {
            Some(RunState::Stopped(frame)) => frame.as_ref().and_then(|f| i64::try_from(f.id).ok()),
            Some(_) => None,
            None if still_stopped => self.focus_frame,
            None => None,
        };
    }

    /// The breakpoints a starting session keeps from before: every file's
    /// but the one its start gives (`given`), and the function breakpoints
    /// unless it gives its own.
    fn kept(&self, given: Option<&Path>, functions_given: bool) -> Option<Note> {
        let files: Vec<(String, Vec<u32>)> = self
            .breakpoints
            .iter()
            .filter(|(file, _)| Some(file.as_path()) != given && self.earlier_files.contains(*file))
            .map(|(file, specs)| (self.rel(file), specs.iter().map(|s| s.line).collect()))
            .collect();
        let earlier = self.earlier_functions && !functions_given;
        let functions = if earlier { self.functions.clone() } else { Vec::new() };
        (!files.is_empty() || !functions.is_empty()).then_some(Note::Kept { files, functions })
    }

    /// Every breakpoint set now belongs to the session starting: a next
    /// one keeps them from before.
    fn mark_earlier(&mut self) {
        self.earlier_files = self.breakpoints.keys().cloned().collect();
        self.earlier_functions = !self.functions.is_empty();
    }

    /// Breakpoints set by a `breakpoints` op: asked for the next session
    /// when none runs, this session's (so a later one's earlier) when one
    /// does.
    fn asked_anew(&mut self, file: Option<&Path>, functions: bool) {
        let running = self.session.is_some();
        if let Some(file) = file {
            match running {
                true => self.earlier_files.insert(file.to_path_buf()),
                false => self.earlier_files.remove(file),
            };
        }
        if functions {
            self.earlier_functions = running;
        }
    }

    fn rel(&self, p: &Path) -> String {
        crate::fs::relative(&self.workdir, p)
    }

    /// Ends the session: disconnect (bounded), then kill adapter and
    /// debuggee — unless tether attached to a program it did not start,
    /// which it detaches from and leaves running.
    fn end(&mut self, why: SessionEnd) -> Option<impl std::future::Future<Output = ()> + use<>> {
        let session = self.session.take()?;
        self.ended = Some(why);
        self.unheard = false;
        self.focus_frame = None;
        let ours = !session.attached;
        let debuggee = session.shared.state.lock().debuggee().filter(|_| ours);
        Some(async move {
            // An attached program is left running, not suspended (a
            // `dlv --headless --accept-multiclient` server would halt it).
            let bound = DISCONNECT_WAIT;
            // Every process a followed launch connected, the first among them.
            let mut clients = session.shared.targets.lock().all.clone();
            if !clients.iter().any(|c| c.same(&session.client)) {
                clients.push(session.client.clone());
            }
            // All at once, each bounded.
            let disconnects: Vec<_> = clients
                .into_iter()
                .map(|c| {
                    tokio::spawn(async move { tokio::time::timeout(bound, c.disconnect(ours, bound)).await })
                })
                .collect();
            for done in disconnects {
                let _ = done.await;
            }
            if let Some(parent) = &session.parent {
                let _ = tokio::time::timeout(bound, parent.disconnect(ours, bound)).await;
            }
            if let Some(debuggee) = debuggee {
                debuggee.kill();
            }
            drop(session.guard);
        })
    }
}

impl Actor for DebugSessionActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.kill_debuggee();
    }
}

/// Also on drop: an actor whose thread stops after its last address went
/// away, before it could notice, is dropped without `stopped`.
impl Drop for DebugSessionActor {
    fn drop(&mut self) {
        self.kill_debuggee();
    }
}

impl DebugSessionActor {
    /// Kills the program tether started (not one it attached to); the
    /// adapter goes with the session's guard.
    fn kill_debuggee(&mut self) {
        if let Some(timer) = self.ttl_timer.take() {
            timer.abort();
        }
        if let Some(s) = self.session.take()
            && !s.attached
            && let Some(debuggee) = s.shared.state.lock().debuggee()
        {
            debuggee.kill();
        }
    }
}

/// The TTL fired for the session that started at `started`.
struct Expire {
    started: Instant,
}

impl Message for Expire {
    type Result = ();
}

impl Handler<Expire> for DebugSessionActor {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: Expire, _ctx: &mut Self::Context) -> Self::Result {
        let current = self.session.as_ref().is_some_and(|s| s.started == msg.started);
        if !current {
            return AtomicResponse::new(Box::pin(fut::ready(())));
        }
        match self.expire() {
            Some(f) => AtomicResponse::new(Box::pin(f.into_actor(self))),
            None => AtomicResponse::new(Box::pin(fut::ready(()))),
        }
    }
}

impl Handler<Cancellable> for DebugSessionActor {
    type Result = AtomicResponse<Self, DebugReply>;

    fn handle(&mut self, msg: Cancellable, _ctx: &mut Self::Context) -> Self::Result {
        if msg.cancel.is_cancelled() {
            return AtomicResponse::new(Box::pin(fut::ready(DebugReply::failed(
                Failure::CancelledBeforeRun,
            ))));
        }
        self.op_cancel = msg.cancel.clone();
        if let Some(s) = &self.session {
            *s.shared.op_cancel.lock() = msg.cancel;
        }
        self.run_op(msg.op)
    }
}

impl Handler<DebugOp> for DebugSessionActor {
    type Result = AtomicResponse<Self, DebugReply>;

    fn handle(&mut self, op: DebugOp, ctx: &mut Self::Context) -> Self::Result {
        <Self as Handler<Cancellable>>::handle(
            self,
            Cancellable { op, cancel: CancellationToken::new() },
            ctx,
        )
    }
}

impl DebugSessionActor {
    fn run_op(&mut self, op: DebugOp) -> AtomicResponse<Self, DebugReply> {
        let ready = |r: DebugReply| AtomicResponse::new(Box::pin(fut::ready(r)));
        // A session whose TTL passed ends before anything else happens.
        if let Some(s) = &self.session
            && s.started.elapsed() >= self.ttl
            && let Some(f) = self.expire()
        {
            actix::spawn(f);
        }
        // A session whose adapter went away is over (terminate ends it itself);
        // one whose program ended is over for an op that needs the program.
        let live = !matches!(op, DebugOp::Adapters | DebugOp::Status | DebugOp::Output | DebugOp::Terminate);
        if let Some(why) = self.over(live).filter(|_| !matches!(op, DebugOp::Terminate))
            && let Some(f) = self.end(why)
        {
            actix::spawn(f);
        }
        let workdir = self.workdir.clone();
        match op {
            DebugOp::Adapters => {
                let rows = adapters::report(&workdir)
                    .into_iter()
                    .map(|(id, usable, detail)| {
                        // A language no adapter serves is no adapter id to pass.
                        let served = !adapters::MISSING.iter().any(|(m, _, _)| *m == id);
                        let attach = served.then(|| adapters::attach_forms(&id));
                        AdapterRow { id, usable, detail, attach }
                    })
                    .collect();
                ready(DebugReply::found(Answer::Adapters(rows)))
            }
            DebugOp::Status => {
                let Some(s) = &self.session else {
                    self.unheard = false;
                    let last = self.ended.clone();
                    let held_breakpoints =
                        self.breakpoints.values().map(Vec::len).sum::<usize>() + self.functions.len();
                    return ready(DebugReply::found(Answer::NoSession { last, held_breakpoints }));
                };
                let (client, shared) = (s.shared.target_or(&s.client), s.shared.clone());
                let head = SessionHead {
                    adapter: s.adapter.id,
                    program: s.program.clone(),
                    up: s.started.elapsed(),
                };
                AtomicResponse::new(Box::pin(
                    async move {
                        let (stop, running, exit, terminated) = {
                            let st = shared.state.lock();
                            (st.stop.clone(), st.running, st.exit_code, st.terminated)
                        };
                        let now = match (stop, exit) {
                            (_, Some(code)) => SessionNow::Exited(code),
                            // Some adapters end with `terminated` and no `exited`.
                            (_, None) if terminated => SessionNow::Terminated,
                            // Stopped: the same snapshot the stop answered with, so
                            // "where was I" needs no second call.
                            (Some(stop), None) if !running => {
                                SessionNow::Stopped(snapshot::snapshot(&client, &stop, &workdir).await)
                            }
                            _ => SessionNow::Running,
                        };
                        DebugReply::found(Answer::Status { head, now: Box::new(now) })
                    }
                    .into_actor(self),
                ))
            }
            DebugOp::Breakpoints { lines, functions } => self.breakpoints(lines, functions),
            DebugOp::Exceptions { filters } => self.set_exceptions(filters),
            DebugOp::RunTo { file, line, thread } => self.run_to(file, line, thread),
            DebugOp::Launch(_) | DebugOp::Attach(_) if self.session.is_some() => {
                let s = self.session.as_ref().expect("checked");
                let head = SessionHead {
                    adapter: s.adapter.id,
                    program: s.program.clone(),
                    up: s.started.elapsed(),
                };
                ready(DebugReply::failed(Failure::AlreadyRunning(head)))
            }
            DebugOp::Launch(mut spec) => {
                let given = spec.breakpoints.as_ref().map(|(file, _)| file.clone());
                let kept = self.kept(given.as_deref(), spec.functions.is_some());
                if let Some((file, specs)) = spec.breakpoints.take() {
                    if specs.is_empty() {
                        self.breakpoints.remove(&file);
                    } else {
                        self.breakpoints.insert(file, specs);
                    }
                }
                if let Some(names) = spec.functions.take() {
                    self.functions = names;
                }
                self.mark_earlier();
                self.start_session(Some(spec), None, kept)
            }
            DebugOp::Attach(spec) => {
                let kept = self.kept(None, false);
                self.mark_earlier();
                self.start_session(None, Some(spec), kept)
            }
            DebugOp::Output => {
                let Some(s) = &self.session else {
                    return ready(DebugReply::failed(self.no_session()));
                };
                let st = s.shared.state.lock();
                let bytes: Vec<u8> = st.output.iter().copied().collect();
                let text = String::from_utf8_lossy(&bytes).into_owned();
                ready(DebugReply::found(Answer::Output { text, dropped: st.dropped }))
            }
            DebugOp::Terminate => {
                let detached = self.session.as_ref().is_some_and(|s| s.attached);
                match self.end(SessionEnd::Requested) {
                    Some(f) => AtomicResponse::new(Box::pin(
                        f.into_actor(self).map(move |(), _, _| DebugReply::found(Answer::Ended { detached })),
                    )),
                    // Already over (adapter or program gone, TTL): nothing is left to kill.
                    None => match self.ended.clone() {
                        Some(why) => ready(DebugReply::found(Answer::AlreadyEnded(why))),
                        None => ready(DebugReply::failed(self.no_session())),
                    },
                }
            }
            other => {
                let Some(s) = &self.session else {
                    return ready(DebugReply::failed(self.no_session()));
                };
                let (adapter, client, shared) = (s.adapter, s.shared.target_or(&s.client), s.shared.clone());
                let other = match other {
                    DebugOp::Scopes { frame: None } => match self.focus_frame {
                        Some(frame) => DebugOp::Scopes { frame: Some(frame) },
                        None => {
                            return ready(DebugReply::failed(Failure::NoFrameShown));
                        }
                    },
                    // The frame whose locals the stop showed, which is not the
                    // top one when that is library code.
                    DebugOp::Evaluate { expression, frame: None } => {
                        DebugOp::Evaluate { expression, frame: self.focus_frame }
                    }
                    other => other,
                };
                AtomicResponse::new(Box::pin(
                    inspect(other, adapter, client, shared, workdir).into_actor(self).map(|reply, act, _| {
                        act.remember(&reply);
                        if let Some(f) = act.over(false).and_then(|why| act.end(why)) {
                            actix::spawn(f);
                        }
                        reply
                    }),
                ))
            }
        }
    }
}

impl DebugSessionActor {
    /// Why the running session is over: its adapter went away, or (when
    /// `program_too`) its program ended.
    fn over(&self, program_too: bool) -> Option<SessionEnd> {
        let st = self.session.as_ref()?.shared.state.lock();
        match (st.exit_code, st.terminated, &st.closed) {
            (Some(code), ..) => program_too.then_some(SessionEnd::Exited(code)),
            (None, true, _) => program_too.then_some(SessionEnd::Terminated),
            (None, false, Some(why)) => Some(SessionEnd::AdapterGone(why.clone())),
            (None, false, None) => None,
        }
    }

    /// Why an op that needs a session has none: how the last one ended,
    /// and whether the caller hears of it for the first time.
    fn no_session(&mut self) -> Failure {
        Failure::NoSession { last: self.ended.clone(), unheard: std::mem::take(&mut self.unheard) }
    }
}
