//! `DebugSessionActor`: one debug session per conversation.
//!
//! Every op runs atomically (one mailbox, one op at a time: a `continue`
//! can never overtake a `stack`). The adapter's events are pumped into a
//! shared state — last stop, output ring, exit — as they arrive, so output
//! printed between ops is kept. Run and step ops return when the program
//! stops again or exits, or after [`RUN_WAIT`] saying it still runs. A hard
//! TTL ends the session, killing adapter and debuggee.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::adapters::{self, Transport, Usable};
use crate::describe::{ActorNode, Describe};
use crate::process::{self, KillGuard};
use crate::wire::dap::{DapClient, DapEvent};

/// The hard time-to-live of a session, from launch.
pub const SESSION_TTL: Duration = Duration::from_secs(30 * 60);
/// How long a run op — `launch`, `attach`, `continue`, `pause`, the
/// steps — waits for the program to stop (or exit) before answering that
/// it still runs. `pause` too: a thread blocked in a system call stops
/// only when the call returns.
pub const RUN_WAIT: Duration = Duration::from_secs(30);
/// How long one request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the adapter may take to say `initialized`.
pub const INITIALIZED_WAIT: Duration = Duration::from_secs(20);
/// Frames listed by `stack`.
pub const MAX_FRAMES: usize = 30;
/// Children listed by `variables`.
pub const MAX_CHILDREN: usize = 50;
/// Longest value shown.
pub const MAX_VALUE: usize = 400;
/// How much of a reply that does not parse is quoted in the error.
const MAX_RAW_QUOTED: usize = 200;
/// How long an op that saw the adapter's pipe close waits for its exit status.
const EXIT_REPORT_WAIT: Duration = Duration::from_millis(500);
/// Debuggee output kept (the last bytes).
pub const MAX_OUTPUT: usize = 64 * 1024;

/// An op of the `debug` tool.
#[derive(Debug, Clone)]
pub enum DebugOp {
    /// Which adapters are usable here.
    Adapters,
    /// Is a session running, and where is it stopped.
    Status,
    /// Set (or with no lines, clear) a file's breakpoints.
    Breakpoints { file: PathBuf, lines: Vec<u32> },
    /// Start a program under its adapter.
    Launch { program: PathBuf, args: Vec<String> },
    /// Attach to a process listening for a debugger (debugpy) on a port.
    Attach { port: u16 },
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
    /// Scopes of a frame.
    Scopes { frame: i64 },
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

/// An op's answer.
#[derive(Debug, Clone)]
pub struct DebugReply {
    /// Whether the op failed.
    pub is_error: bool,
    /// What the model reads.
    pub text: String,
    /// Structured form.
    pub data: Value,
}

impl DebugReply {
    fn ok(text: impl Into<String>, data: Value) -> Self {
        Self { is_error: false, text: text.into(), data }
    }
    fn err(text: impl Into<String>) -> Self {
        Self { is_error: true, text: text.into(), data: Value::Null }
    }
}

#[derive(Debug, Clone, Default)]
struct Stop {
    thread: Option<i64>,
    reason: String,
    description: Option<String>,
}

#[derive(Default)]
struct State {
    stop: Option<Stop>,
    stops: u64,
    initialized: bool,
    exit_code: Option<i64>,
    terminated: bool,
    closed: Option<String>,
    output: VecDeque<u8>,
    dropped: u64,
    debuggee_pid: Option<u32>,
    running: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Notify,
    /// The running op's cancellation: a wait for the next stop is
    /// abandoned when it fires (the program keeps running).
    op_cancel: Mutex<CancellationToken>,
}

impl Shared {
    async fn wait_for(&self, timeout: Duration, mut done: impl FnMut(&State) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done(&self.state.lock()) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                return done(&self.state.lock());
            }
        }
    }

    fn apply(&self, ev: DapEvent) {
        let mut s = self.state.lock();
        match ev.event.as_str() {
            "initialized" => s.initialized = true,
            "stopped" => {
                s.stop = Some(Stop {
                    thread: ev.body["threadId"].as_i64(),
                    reason: ev.body["reason"].as_str().unwrap_or("stopped").to_string(),
                    description: ev.body["text"]
                        .as_str()
                        .or(ev.body["description"].as_str())
                        .map(str::to_string),
                });
                s.stops += 1;
                s.running = false;
            }
            "continued" => {
                s.running = true;
                s.stop = None;
            }
            "exited" => s.exit_code = ev.body["exitCode"].as_i64(),
            "terminated" => s.terminated = true,
            "process" => s.debuggee_pid = ev.body["systemProcessId"].as_u64().map(|p| p as u32),
            "output" => {
                let category = ev.body["category"].as_str().unwrap_or("console");
                if matches!(category, "stdout" | "stderr") {
                    let text = ev.body["output"].as_str().unwrap_or("");
                    s.output.extend(text.bytes());
                    let over = s.output.len().saturating_sub(MAX_OUTPUT);
                    if over > 0 {
                        s.output.drain(..over);
                        s.dropped += over as u64;
                    }
                }
            }
            "tether/closed" if !s.closed.as_deref().is_some_and(|c| c.contains(" exited (")) => {
                s.closed = Some(ev.body["reason"].as_str().unwrap_or("closed").to_string());
            }
            _ => {}
        }
        drop(s);
        self.changed.notify_waiters();
    }
}

struct Session {
    adapter: &'static str,
    program: String,
    client: DapClient,
    shared: Arc<Shared>,
    /// The adapter process, when tether started it (not when attached).
    guard: Option<KillGuard>,
    started: Instant,
}

/// The session actor of one conversation.
pub struct DebugSessionActor {
    workdir: PathBuf,
    conversation: String,
    ttl: Duration,
    session: Option<Session>,
    breakpoints: BTreeMap<PathBuf, Vec<u32>>,
    expired: Option<String>,
    ended: Option<String>,
    created: Instant,
    op_cancel: CancellationToken,
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
            expired: None,
            ended: None,
            created: Instant::now(),
            op_cancel: CancellationToken::new(),
        }
    }

    /// Why a session that outlived its TTL ended.
    fn expiry(&self) -> String {
        format!(
            "the session expired after its {} time-to-live; adapter and program were killed",
            crate::question::human_duration(self.ttl)
        )
    }

    fn rel(&self, p: &Path) -> String {
        crate::fs::relative(&self.workdir, p)
    }

    /// Ends the session: disconnect (bounded), then kill adapter and
    /// debuggee — unless tether attached to a program it did not start,
    /// which it detaches from and leaves running.
    fn end(&mut self, why: &str) -> Option<impl std::future::Future<Output = ()> + use<>> {
        let session = self.session.take()?;
        self.ended = Some(why.to_string());
        let ours = session.guard.is_some();
        let debuggee = session.shared.state.lock().debuggee_pid.filter(|_| ours);
        Some(async move {
            let args = json!({"terminateDebuggee": ours});
            let bound = Duration::from_secs(2);
            let _ = tokio::time::timeout(bound, session.client.request("disconnect", args, bound)).await;
            if let Some(pid) = debuggee {
                process::kill_group(pid);
                // SAFETY: SIGKILL to the debuggee's pid; harmless if it is gone.
                unsafe {
                    libc::kill(pid as i32, libc::SIGKILL);
                }
            }
            drop(session.guard);
        })
    }
}

fn cut(s: &str, max: usize) -> (String, bool) {
    if s.chars().count() <= max {
        (s.to_string(), false)
    } else {
        (format!("{}…", s.chars().take(max).collect::<String>()), true)
    }
}

/// `body[field]` read as `T`, or an error naming the op and quoting the
/// start of the adapter's reply: a reply that does not fit is never read as
/// an empty list.
fn parse_body<T: serde::de::DeserializeOwned>(op: &str, body: &Value, field: &str) -> Result<T, DebugReply> {
    serde_json::from_value(body[field].clone()).map_err(|e| {
        let (raw, _) = cut(&body.to_string(), MAX_RAW_QUOTED);
        DebugReply::err(format!(
            "{op}: the adapter's reply does not fit DAP's `{field}` ({e}); it began: {raw}"
        ))
    })
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn connect_tcp(port: u16) -> std::io::Result<tokio::net::TcpStream> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Where a thread is stopped: `file:line in function`.
async fn top_frame(client: &DapClient, thread: i64, workdir: &Path) -> Option<(String, Value)> {
    let st = client
        .request("stackTrace", json!({"threadId": thread, "startFrame": 0, "levels": 1}), REQUEST_TIMEOUT)
        .await
        .ok()?;
    let f = st["stackFrames"].get(0)?.clone();
    let path = f["source"]["path"].as_str().map(|p| display(workdir, p)).unwrap_or_else(|| "?".into());
    Some((format!("{path}:{} in {}", f["line"], f["name"].as_str().unwrap_or("?")), f))
}

fn display(workdir: &Path, p: &str) -> String {
    let path = Path::new(p);
    if path.starts_with(workdir) { crate::fs::relative(workdir, path) } else { p.to_string() }
}

/// Waits for the next stop, exit or closure after `before` stops.
async fn settle(
    shared: &Shared,
    client: &DapClient,
    before: u64,
    workdir: &Path,
    wait: Duration,
) -> DebugReply {
    let cancel = shared.op_cancel.lock().clone();
    let until_settled = shared
        .wait_for(wait, |s| s.stops > before || s.terminated || s.exit_code.is_some() || s.closed.is_some());
    let done = tokio::select! {
        done = until_settled => done,
        () = cancel.cancelled() => {
            return DebugReply::err(
                "the call was cancelled, so tether stopped waiting; the program keeps running — use pause to stop it, or status",
            );
        }
    };
    // The adapter's pipe closes before its exit status is known; wait a moment for the cause.
    if shared.state.lock().closed.is_some() {
        shared
            .wait_for(EXIT_REPORT_WAIT, |s| s.closed.as_deref().is_some_and(|c| c.contains(" exited (")))
            .await;
    }
    let (stop, exit, terminated, closed, stops) = {
        let s = shared.state.lock();
        (s.stop.clone(), s.exit_code, s.terminated, s.closed.clone(), s.stops)
    };
    if !done {
        return DebugReply::ok(
            format!(
                "still running after {} s; it keeps running — use pause to stop it, or status",
                wait.as_secs()
            ),
            json!({"state": "running"}),
        );
    }
    if stops > before
        && let Some(stop) = stop
    {
        let thread = stop.thread.unwrap_or(1);
        let (place, frame) =
            top_frame(client, thread, workdir).await.unwrap_or(("(unknown)".into(), Value::Null));
        let why = stop.description.map(|d| format!(" ({d})")).unwrap_or_default();
        return DebugReply::ok(
            format!("stopped ({}{why}) at {place}, thread {thread}", stop.reason),
            json!({"state": "stopped", "reason": stop.reason, "thread": thread, "frame": frame}),
        );
    }
    if let Some(code) = exit {
        return DebugReply::ok(
            format!("the program exited with code {code}"),
            json!({"state": "exited", "exit_code": code}),
        );
    }
    if terminated {
        return DebugReply::ok(
            "the debug session ended (the program terminated)",
            json!({"state": "terminated"}),
        );
    }
    DebugReply::err(format!("the debug adapter went away: {}", closed.unwrap_or_default()))
}

impl Actor for DebugSessionActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        if let Some(s) = self.session.take()
            && s.guard.is_some()
            && let Some(pid) = s.shared.state.lock().debuggee_pid
        {
            process::kill_group(pid);
            // SAFETY: SIGKILL to the debuggee's pid.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
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
        let why = self.expiry();
        self.expired = Some(why.clone());
        match self.end(&why) {
            Some(f) => AtomicResponse::new(Box::pin(f.into_actor(self))),
            None => AtomicResponse::new(Box::pin(fut::ready(()))),
        }
    }
}

impl Handler<Cancellable> for DebugSessionActor {
    type Result = AtomicResponse<Self, DebugReply>;

    fn handle(&mut self, msg: Cancellable, ctx: &mut Self::Context) -> Self::Result {
        if msg.cancel.is_cancelled() {
            return AtomicResponse::new(Box::pin(fut::ready(DebugReply::err(
                "the call was cancelled while it waited for the session, so the op did not run",
            ))));
        }
        self.op_cancel = msg.cancel.clone();
        if let Some(s) = &self.session {
            *s.shared.op_cancel.lock() = msg.cancel;
        }
        self.run_op(msg.op, ctx)
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
    fn run_op(&mut self, op: DebugOp, ctx: &mut Context<Self>) -> AtomicResponse<Self, DebugReply> {
        let ready = |r: DebugReply| AtomicResponse::new(Box::pin(fut::ready(r)));
        // A session whose TTL passed ends before anything else happens.
        if let Some(s) = &self.session
            && s.started.elapsed() >= self.ttl
        {
            let why = self.expiry();
            self.expired = Some(why.clone());
            if let Some(f) = self.end(&why) {
                actix::spawn(f);
            }
        }
        // A session whose adapter went away is over (terminate ends it itself);
        // one whose program ended is over for an op that needs the program.
        let live = !matches!(op, DebugOp::Adapters | DebugOp::Status | DebugOp::Output | DebugOp::Terminate);
        if let Some(why) = self.over(live).filter(|_| !matches!(op, DebugOp::Terminate))
            && let Some(f) = self.end(&why)
        {
            actix::spawn(f);
        }
        let workdir = self.workdir.clone();
        match op {
            DebugOp::Adapters => {
                let rows = adapters::report(&workdir);
                let mut text = String::new();
                for (id, usable, detail) in &rows {
                    text.push_str(&format!(
                        "{id}: {} — {detail}\n",
                        if *usable { "usable" } else { "not usable" }
                    ));
                }
                let data = json!(
                    rows.iter()
                        .map(|(id, u, d)| json!({"adapter": id, "usable": u, "detail": d}))
                        .collect::<Vec<_>>()
                );
                ready(DebugReply::ok(text.trim_end(), data))
            }
            DebugOp::Status => {
                let Some(s) = &self.session else {
                    let mut text = "no debug session is running".to_string();
                    if let Some(why) = self.expired.take().or_else(|| self.ended.clone()) {
                        text.push_str(&format!("; the last one ended: {why}"));
                    }
                    let bps: usize = self.breakpoints.values().map(Vec::len).sum();
                    if bps > 0 {
                        text.push_str(&format!("; {bps} breakpoint(s) set for the next launch"));
                    }
                    return ready(DebugReply::ok(text, json!({"running": false})));
                };
                let (client, shared) = (s.client.clone(), s.shared.clone());
                let head = format!(
                    "{} session on {} (up {} s)",
                    s.adapter,
                    s.program,
                    s.started.elapsed().as_secs()
                );
                AtomicResponse::new(Box::pin(
                    async move {
                        let (stop, running, exit) = {
                            let st = shared.state.lock();
                            (st.stop.clone(), st.running, st.exit_code)
                        };
                        match (stop, exit) {
                            (_, Some(code)) => DebugReply::ok(
                                format!("{head}: the program exited with code {code}"),
                                json!({"state": "exited"}),
                            ),
                            (Some(stop), None) if !running => {
                                let thread = stop.thread.unwrap_or(1);
                                let place = top_frame(&client, thread, &workdir)
                                    .await
                                    .map(|p| p.0)
                                    .unwrap_or_default();
                                DebugReply::ok(
                                    format!("{head}: stopped ({}) at {place}, thread {thread}", stop.reason),
                                    json!({"state": "stopped", "thread": thread}),
                                )
                            }
                            _ => DebugReply::ok(format!("{head}: running"), json!({"state": "running"})),
                        }
                    }
                    .into_actor(self),
                ))
            }
            DebugOp::Breakpoints { file, lines } => {
                let rel = self.rel(&file);
                if lines.is_empty() {
                    self.breakpoints.remove(&file);
                } else {
                    self.breakpoints.insert(file.clone(), lines.clone());
                }
                let Some(s) = &self.session else {
                    let text = if lines.is_empty() {
                        format!("cleared the breakpoints of {rel}")
                    } else {
                        format!(
                            "{} breakpoint(s) in {rel} will be set at launch: lines {lines:?}",
                            lines.len()
                        )
                    };
                    return ready(DebugReply::ok(
                        text,
                        json!({"file": rel, "lines": lines, "verified": null}),
                    ));
                };
                let client = s.client.clone();
                AtomicResponse::new(Box::pin(
                    async move {
                        let bps: Vec<Value> = lines.iter().map(|l| json!({"line": l})).collect();
                        match client
                            .request(
                                "setBreakpoints",
                                json!({"source": {"path": file}, "breakpoints": bps}),
                                REQUEST_TIMEOUT,
                            )
                            .await
                        {
                            Ok(body) => {
                                let verified: Vec<bool> = body["breakpoints"]
                                    .as_array()
                                    .map(|a| {
                                        a.iter().map(|b| b["verified"].as_bool().unwrap_or(false)).collect()
                                    })
                                    .unwrap_or_default();
                                DebugReply::ok(
                                    format!(
                                        "set {} breakpoint(s) in {rel}; verified: {verified:?}",
                                        lines.len()
                                    ),
                                    json!({"file": rel, "lines": lines, "verified": verified}),
                                )
                            }
                            Err(e) => DebugReply::err(format!("setBreakpoints failed: {e}")),
                        }
                    }
                    .into_actor(self),
                ))
            }
            DebugOp::Launch { .. } | DebugOp::Attach { .. } if self.session.is_some() => {
                let s = self.session.as_ref().expect("checked");
                ready(DebugReply::err(format!(
                    "a {} session on {} is already running (up {} s); terminate it first — a second launch never replaces the first",
                    s.adapter,
                    s.program,
                    s.started.elapsed().as_secs()
                )))
            }
            DebugOp::Launch { program, args } => self.start(ctx, Some((program, args)), None),
            DebugOp::Attach { port } => self.start(ctx, None, Some(port)),
            DebugOp::Output => {
                let Some(s) = &self.session else {
                    return ready(DebugReply::err(self.no_session()));
                };
                let st = s.shared.state.lock();
                let bytes: Vec<u8> = st.output.iter().copied().collect();
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if st.dropped > 0 {
                    text = format!(
                        "… {} earlier bytes dropped (the last {} KiB are kept)\n{text}",
                        st.dropped,
                        MAX_OUTPUT / 1024
                    );
                }
                if text.is_empty() {
                    text = "(no output yet)".into();
                }
                ready(DebugReply::ok(text, json!({"dropped": st.dropped})))
            }
            DebugOp::Terminate => {
                let attached = self.session.as_ref().is_some_and(|s| s.guard.is_none());
                let text = if attached {
                    "detached from the program, which keeps running; the session is over"
                } else {
                    "terminated the session: adapter and program were killed"
                };
                match self.end("terminated on request") {
                    Some(f) => AtomicResponse::new(Box::pin(
                        f.into_actor(self)
                            .map(move |(), _, _| DebugReply::ok(text, json!({"state": "terminated"}))),
                    )),
                    // Already over (adapter or program gone, TTL): nothing is left to kill.
                    None => match self.ended.clone() {
                        Some(why) => ready(DebugReply::ok(
                            format!("no debug session is running; the last one already ended: {why}"),
                            json!({"state": "terminated"}),
                        )),
                        None => ready(DebugReply::err(self.no_session())),
                    },
                }
            }
            other => {
                let Some(s) = &self.session else {
                    return ready(DebugReply::err(self.no_session()));
                };
                let (adapter, client, shared) = (s.adapter, s.client.clone(), s.shared.clone());
                AtomicResponse::new(Box::pin(
                    inspect(other, adapter, client, shared, workdir).into_actor(self).map(|reply, act, _| {
                        if let Some(f) = act.over(false).and_then(|why| act.end(&why)) {
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
    fn over(&self, program_too: bool) -> Option<String> {
        let st = self.session.as_ref()?.shared.state.lock();
        match (st.exit_code, st.terminated, &st.closed) {
            (Some(code), ..) => program_too.then(|| format!("the program exited with code {code}")),
            (None, true, _) => program_too.then(|| "the program terminated".to_string()),
            (None, false, Some(why)) => Some(format!("the debug adapter went away: {why}")),
            (None, false, None) => None,
        }
    }

    fn no_session(&mut self) -> String {
        match self.expired.take() {
            Some(why) => format!("no debug session: {why}. Launch again to start a new one"),
            None => match &self.ended {
                Some(why) => {
                    format!("no debug session is running (the last one ended: {why}); launch one first")
                }
                None => "no debug session is running; set breakpoints and launch a program first".to_string(),
            },
        }
    }

    fn start(
        &mut self,
        ctx: &mut Context<Self>,
        launch: Option<(PathBuf, Vec<String>)>,
        attach: Option<u16>,
    ) -> AtomicResponse<Self, DebugReply> {
        let ready = |r: DebugReply| AtomicResponse::new(Box::pin(fut::ready(r)));
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Notify::new(),
            op_cancel: Mutex::new(self.op_cancel.clone()),
        });
        // Attaching connects straight to the adapter that `debugpy --listen`
        // already runs at that port; launching starts an adapter of our own.
        let (adapter_id, name, port, spawned) = match (&launch, attach) {
            (None, Some(port)) => ("debugpy", format!("debugpy at 127.0.0.1:{port}"), Some(port), None),
            (Some((program, _)), _) => {
                let table = match adapters::load(&self.workdir) {
                    Ok(t) => t,
                    Err(e) => return ready(DebugReply::err(e)),
                };
                let Some(config) = adapters::for_program(&table, program).cloned() else {
                    return ready(DebugReply::err(format!(
                        "no debug adapter handles `{}`",
                        self.rel(program)
                    )));
                };
                let usable: Usable = match adapters::choose(&config, program, &self.workdir) {
                    Ok(u) => u,
                    Err(why) => return ready(DebugReply::err(format!("adapter unavailable: {why}"))),
                };
                let port = match (config.transport, free_port()) {
                    (Transport::Tcp, Ok(p)) => Some(p),
                    (Transport::Tcp, Err(e)) => {
                        return ready(DebugReply::err(format!(
                            "no free loopback port for {}: {e}",
                            config.id
                        )));
                    }
                    (Transport::Stdio, _) => None,
                };
                let args: Vec<String> =
                    config.args.iter().map(|a| a.replace("{port}", &port.unwrap_or(0).to_string())).collect();
                let exit_shared = shared.clone();
                let spawned = match process::spawn(&usable.binary, &args, &usable.root, move |info| {
                    exit_shared.apply(DapEvent {
                        event: "tether/closed".into(),
                        body: json!({"reason": info.describe("the debug adapter")}),
                    });
                }) {
                    Ok(s) => s,
                    Err(e) => {
                        return ready(DebugReply::err(format!(
                            "{} did not start: {e}",
                            usable.binary.display()
                        )));
                    }
                };
                (config.id, format!("{} ({})", config.id, usable.binary.display()), port, Some(spawned))
            }
            (None, None) => return ready(DebugReply::err("nothing to launch or attach to")),
        };
        let breakpoints = self.breakpoints.clone();
        let workdir = self.workdir.clone();
        let program_text = match &launch {
            Some((p, _)) => self.rel(p),
            None => format!("port {}", attach.unwrap_or(0)),
        };
        let (pipes, guard, stderr) = match spawned {
            Some(s) => (Some((s.stdout, s.stdin)), Some(s.guard), s.stderr),
            None => (None, None, Default::default()),
        };
        let started = Instant::now();
        let ttl = self.ttl;
        ctx.run_later(ttl, move |_act, ctx| {
            ctx.notify(Expire { started });
        });
        let work = async move {
            let (client, mut events) = match (port, pipes) {
                (None, Some((stdout, stdin))) => DapClient::connect(&name, stdout, stdin),
                (None, None) => return (Err("no adapter to talk to".to_string()), guard, shared),
                (Some(port), _) => match connect_tcp(port).await {
                    Ok(stream) => {
                        let (r, w) = stream.into_split();
                        DapClient::connect(&name, r, w)
                    }
                    Err(e) => {
                        return (
                            Err(format!(
                                "could not connect to {name} on port {port}: {e}; stderr: {}",
                                stderr.lines().join(" | ")
                            )),
                            guard,
                            shared,
                        );
                    }
                },
            };
            let pump = shared.clone();
            tokio::spawn(async move {
                while let Some(ev) = events.recv().await {
                    pump.apply(ev);
                }
            });
            let result =
                handshake(&client, &shared, adapter_id, launch, attach, &breakpoints, &workdir).await;
            match result {
                Ok(reply) => (Ok((client, reply)), guard, shared),
                Err(e) => {
                    let tail = stderr.lines();
                    let e = if tail.is_empty() {
                        e
                    } else {
                        format!(
                            "{e}; adapter stderr: {}",
                            tail.iter().rev().take(3).rev().cloned().collect::<Vec<_>>().join(" | ")
                        )
                    };
                    (Err(e), guard, shared)
                }
            }
        };
        AtomicResponse::new(Box::pin(work.into_actor(self).map(move |(result, guard, shared), act, _ctx| {
            match result {
                Ok((client, reply)) => {
                    act.expired = None;
                    act.ended = None;
                    act.session = Some(Session {
                        adapter: adapter_id,
                        program: program_text,
                        client,
                        shared,
                        guard,
                        started,
                    });
                    reply
                }
                Err(e) => {
                    if let Some(pid) = shared.state.lock().debuggee_pid {
                        process::kill_group(pid);
                    }
                    drop(guard);
                    DebugReply::err(format!("{adapter_id} could not start the session: {e}"))
                }
            }
        })))
    }
}

/// initialize → launch/attach (not awaited: debugpy answers it only after
/// configurationDone) → `initialized` → breakpoints → configurationDone →
/// the launch answer → the first stop or exit.
async fn handshake(
    client: &DapClient,
    shared: &Arc<Shared>,
    adapter: &'static str,
    launch: Option<(PathBuf, Vec<String>)>,
    attach: Option<u16>,
    breakpoints: &BTreeMap<PathBuf, Vec<u32>>,
    workdir: &Path,
) -> Result<DebugReply, String> {
    let init = json!({
        "clientID": "tether", "clientName": "tether", "adapterID": adapter, "locale": "en",
        "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path",
        "supportsRunInTerminalRequest": false, "supportsVariableType": true,
    });
    client
        .request("initialize", init, REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("initialize failed: {e}"))?;
    let (command, args) = match (&launch, attach) {
        (Some((program, args)), _) => {
            let program_s = program.display().to_string();
            let a = match adapter {
                "debugpy" => {
                    json!({"name": "tether", "type": "python", "request": "launch", "program": program_s, "args": args, "cwd": workdir, "console": "internalConsole", "justMyCode": true, "redirectOutput": true})
                }
                "delve" => {
                    let dir = program.parent().unwrap_or(workdir);
                    json!({"name": "tether", "request": "launch", "mode": "debug", "program": dir, "args": args, "cwd": dir})
                }
                _ => {
                    json!({"name": "tether", "request": "launch", "program": program_s, "args": args, "cwd": workdir, "stopOnEntry": false})
                }
            };
            ("launch", a)
        }
        (None, Some(port)) => (
            "attach",
            json!({"name": "tether", "type": "python", "request": "attach", "connect": {"host": "127.0.0.1", "port": port}, "justMyCode": true}),
        ),
        (None, None) => return Err("nothing to launch or attach to".into()),
    };
    let answer = client.request(command, args, RUN_WAIT);
    let answer = tokio::spawn(answer);
    if !shared.wait_for(INITIALIZED_WAIT, |s| s.initialized || s.closed.is_some()).await {
        return Err(format!(
            "the adapter did not send `initialized` within {} s",
            INITIALIZED_WAIT.as_secs()
        ));
    }
    if let Some(why) = shared.state.lock().closed.clone() {
        return Err(why);
    }
    for (file, lines) in breakpoints {
        let bps: Vec<Value> = lines.iter().map(|l| json!({"line": l})).collect();
        client
            .request("setBreakpoints", json!({"source": {"path": file}, "breakpoints": bps}), REQUEST_TIMEOUT)
            .await
            .map_err(|e| format!("setBreakpoints failed: {e}"))?;
    }
    let _ = client.request("setExceptionBreakpoints", json!({"filters": []}), REQUEST_TIMEOUT).await;
    client
        .request("configurationDone", json!({}), REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("configurationDone failed: {e}"))?;
    match answer.await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(format!("{command} failed: {e}")),
        Err(e) => return Err(format!("{command} failed: {e}")),
    }
    if attach.is_some() {
        return Ok(DebugReply::ok(
            format!("attached to the program listening on port {}", attach.unwrap_or(0)),
            json!({"state": "attached"}),
        ));
    }
    let reply = settle(shared, client, 0, workdir, RUN_WAIT).await;
    Ok(DebugReply { text: format!("launched; {}", reply.text), ..reply })
}

/// Ops that need a live session and only read or step it.
async fn inspect(
    op: DebugOp,
    adapter: &'static str,
    client: DapClient,
    shared: Arc<Shared>,
    workdir: PathBuf,
) -> DebugReply {
    let stopped_thread = || shared.state.lock().stop.as_ref().and_then(|s| s.thread);
    let thread_or = |t: Option<i64>| t.or_else(stopped_thread);
    let step = |command: &'static str, t: Option<i64>| {
        let client = client.clone();
        let shared = shared.clone();
        let workdir = workdir.clone();
        async move {
            let before = shared.state.lock().stops;
            let Some(thread) = t else {
                return DebugReply::err(format!(
                    "{command}: the program is not stopped on any thread; pass thread_id (see threads)"
                ));
            };
            if let Err(e) = client.request(command, json!({"threadId": thread}), REQUEST_TIMEOUT).await {
                return DebugReply::err(format!("{command} failed: {e}"));
            }
            {
                let mut s = shared.state.lock();
                s.running = true;
            }
            settle(&shared, &client, before, &workdir, RUN_WAIT).await
        }
    };
    match op {
        DebugOp::Continue { thread } => step("continue", thread_or(thread).or(Some(1))).await,
        DebugOp::StepOver { thread } => step("next", thread_or(thread)).await,
        DebugOp::StepIn { thread } => step("stepIn", thread_or(thread)).await,
        DebugOp::StepOut { thread } => step("stepOut", thread_or(thread)).await,
        DebugOp::Pause { thread } => {
            let before = shared.state.lock().stops;
            let thread = thread_or(thread).unwrap_or(1);
            if let Err(e) = client.request("pause", json!({"threadId": thread}), REQUEST_TIMEOUT).await {
                return DebugReply::err(format!("pause failed: {e}"));
            }
            settle(&shared, &client, before, &workdir, RUN_WAIT).await
        }
        DebugOp::Threads => match client.request("threads", json!({}), REQUEST_TIMEOUT).await {
            Ok(body) => {
                let threads: Vec<dap_types::Thread> = match parse_body("threads", &body, "threads") {
                    Ok(t) => t,
                    Err(reply) => return reply,
                };
                let text =
                    threads.iter().map(|t| format!("{} {}", t.id, t.name)).collect::<Vec<_>>().join("\n");
                DebugReply::ok(if text.is_empty() { "no threads".into() } else { text }, body)
            }
            Err(e) => DebugReply::err(format!("threads failed: {e}")),
        },
        DebugOp::Stack { thread } => {
            let Some(thread) = thread_or(thread) else {
                return DebugReply::err(
                    "stack: the program is not stopped; pass thread_id or pause it first",
                );
            };
            let args = json!({"threadId": thread, "startFrame": 0, "levels": MAX_FRAMES + 1});
            match client.request("stackTrace", args, REQUEST_TIMEOUT).await {
                Ok(body) => {
                    let frames: Vec<dap_types::StackFrame> = match parse_body("stack", &body, "stackFrames") {
                        Ok(f) => f,
                        Err(reply) => return reply,
                    };
                    let total = body["totalFrames"]
                        .as_u64()
                        .map(|t| t as usize)
                        .unwrap_or(frames.len())
                        .max(frames.len());
                    let mut text = String::new();
                    for (i, f) in frames.iter().take(MAX_FRAMES).enumerate() {
                        let path = f
                            .source
                            .as_ref()
                            .and_then(|s| s.path.as_deref())
                            .map(|p| display(&workdir, p))
                            .unwrap_or_else(|| "?".into());
                        text.push_str(&format!("#{i} frame_id={} {} at {path}:{}\n", f.id, f.name, f.line));
                    }
                    if total > MAX_FRAMES {
                        text.push_str(&format!(
                            "… {} more frames not shown (cap {MAX_FRAMES})\n",
                            total - MAX_FRAMES
                        ));
                    }
                    let shown: Vec<Value> = frames.iter().take(MAX_FRAMES).map(|f| json!({"id": f.id, "name": f.name, "line": f.line, "path": f.source.as_ref().and_then(|s| s.path.clone())})).collect();
                    DebugReply::ok(text.trim_end(), json!({"frames": shown, "total": total}))
                }
                Err(e) => DebugReply::err(format!("stack failed: {e}")),
            }
        }
        DebugOp::Scopes { frame } => {
            match client.request("scopes", json!({"frameId": frame}), REQUEST_TIMEOUT).await {
                Ok(body) => {
                    let scopes: Vec<dap_types::Scope> = match parse_body("scopes", &body, "scopes") {
                        Ok(s) => s,
                        Err(reply) => return reply,
                    };
                    let text = scopes
                        .iter()
                        .map(|s| format!("{} reference={}", s.name, s.variables_reference))
                        .collect::<Vec<_>>()
                        .join("\n");
                    DebugReply::ok(if text.is_empty() { "no scopes".into() } else { text }, body)
                }
                Err(e) => DebugReply::err(format!(
                    "scopes failed for frame_id {frame}: {e} (frame ids come from stack)"
                )),
            }
        }
        DebugOp::Variables { reference } => {
            match client.request("variables", json!({"variablesReference": reference}), REQUEST_TIMEOUT).await
            {
                Ok(body) => {
                    let vars: Vec<dap_types::Variable> = match parse_body("variables", &body, "variables") {
                        Ok(v) => v,
                        Err(reply) => return reply,
                    };
                    let mut text = String::new();
                    let mut data = Vec::new();
                    let mut cut_values = 0;
                    for v in vars.iter().take(MAX_CHILDREN) {
                        let (value, was_cut) = cut(&v.value, MAX_VALUE);
                        cut_values += usize::from(was_cut);
                        let ty = v.type_.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
                        let expand = if v.variables_reference > 0 {
                            format!(" [reference={}]", v.variables_reference)
                        } else {
                            String::new()
                        };
                        text.push_str(&format!("{} = {value}{ty}{expand}\n", v.name));
                        data.push(json!({"name": v.name, "value": value, "type": v.type_, "reference": v.variables_reference, "value_cut": was_cut}));
                    }
                    if vars.len() > MAX_CHILDREN {
                        text.push_str(&format!(
                            "… {} more children not shown (cap {MAX_CHILDREN})\n",
                            vars.len() - MAX_CHILDREN
                        ));
                    }
                    if cut_values > 0 {
                        text.push_str(&format!("({cut_values} value(s) cut at {MAX_VALUE} characters)\n"));
                    }
                    DebugReply::ok(
                        if text.is_empty() { "no children".into() } else { text.trim_end().to_string() },
                        json!({"variables": data, "total": vars.len()}),
                    )
                }
                Err(e) => DebugReply::err(format!(
                    "variables failed for reference {reference}: {e} (references come from scopes or variables)"
                )),
            }
        }
        DebugOp::Evaluate { expression, frame } => {
            let frame = match frame {
                Some(f) => Some(f),
                None => match stopped_thread() {
                    Some(t) => client
                        .request("stackTrace", json!({"threadId": t, "levels": 1}), REQUEST_TIMEOUT)
                        .await
                        .ok()
                        .and_then(|b| b["stackFrames"][0]["id"].as_i64()),
                    None => None,
                },
            };
            // lldb-dap and delve read "repl" input as their own commands
            // (`(int) $0 = 7`); "watch" evaluates the expression itself.
            let context = if adapter == "debugpy" { "repl" } else { "watch" };
            let mut args = json!({"expression": expression, "context": context});
            if let Some(f) = frame {
                args["frameId"] = json!(f);
            }
            match client.request("evaluate", args, REQUEST_TIMEOUT).await {
                Ok(body) => {
                    let (value, was_cut) = cut(body["result"].as_str().unwrap_or(""), MAX_VALUE);
                    let ty = body["type"].as_str().map(|t| format!(" ({t})")).unwrap_or_default();
                    let note = if was_cut {
                        format!(
                            "\n(value cut at {MAX_VALUE} characters; evaluate a slice or a part of it to see more)"
                        )
                    } else {
                        String::new()
                    };
                    DebugReply::ok(format!("{expression} = {value}{ty}{note}"), body)
                }
                Err(e) => DebugReply::err(format!("evaluate `{expression}` failed: {e}")),
            }
        }
        _ => DebugReply::err("unsupported op"),
    }
}

impl Handler<Describe> for DebugSessionActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let node = match &self.session {
            Some(s) => {
                let mut n = ActorNode::new(
                    "debug-session",
                    &self.conversation,
                    &format!("{} on {}", s.adapter, s.program),
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
                    n.last_error = Some(why.clone());
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
