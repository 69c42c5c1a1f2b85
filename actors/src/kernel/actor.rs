//! `KernelActor`: one interpreter, one cell at a time.
//!
//! `RunCell` runs atomically — the mailbox takes nothing else until the
//! cell is done — which is the serialisation. While a cell runs the actor
//! relays the driver's bridge requests (`tool(name, args)`) to the host
//! through a [`Bridge`] callback and keeps the idle budget: time without
//! progress (output, displays, bridge answers), suspended while a bridge
//! call is pending. When the budget runs out the cell is interrupted and
//! the interpreter kept; only if the interrupt does not take within
//! [`INTERRUPT_GRACE`] is the process killed. A dead interpreter is
//! reported with its cause and replaced on the next cell.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::{KernelLang, command};
use crate::describe::{ActorNode, Describe};
use crate::process::{self, ExitInfo, KillGuard, StderrTail};

/// How long a kernel may take to start and say it is ready.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an interrupt may take before the kernel is killed.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// The idle budget when the run sets none.
pub const DEFAULT_IDLE_BUDGET: Duration = Duration::from_secs(300);
/// The longest a cell runs, progress or not (a loop that prints for ever;
/// a thread an earlier cell left, whose output keeps the idle clock
/// going): then it is interrupted as an idle cell is.
pub const MAX_CELL_TIME: Duration = Duration::from_secs(60 * 60);
/// Most output bytes kept per cell (the driver also caps what it forwards).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// Most display items kept per cell.
const MAX_DISPLAYS: usize = 50;
/// Output that arrived between cells is quoted up to this many bytes.
const MAX_LATE_OUTPUT: usize = 2_000;

/// A host tool called from inside a cell: name and arguments in, the
/// tool's answer out.
pub type Bridge =
    Arc<dyn Fn(String, Value) -> Pin<Box<dyn Future<Output = BridgeAnswer> + Send>> + Send + Sync>;

/// A bridge call's answer.
#[derive(Debug, Clone, Serialize)]
pub struct BridgeAnswer {
    /// Whether the tool reported an error (raised in the cell).
    pub is_error: bool,
    /// Its text.
    pub text: String,
    /// Its structured data.
    pub data: Option<Value>,
}

/// Run one cell.
pub struct RunCell {
    /// The code.
    pub code: String,
    /// Discard the interpreter first.
    pub reset: bool,
    /// Time without progress after which the cell is interrupted.
    pub idle_budget: Duration,
    /// How `tool(...)` calls reach the host.
    pub bridge: Bridge,
    /// Cancelled when the caller stops waiting: the cell is interrupted
    /// (the kernel and its state are kept), or skipped if not yet started.
    pub cancel: tokio_util::sync::CancellationToken,
}

impl Message for RunCell {
    type Result = Result<CellOutcome, KernelError>;
}

/// Why a cell could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// The interpreter did not start.
    #[error("the {lang} kernel did not start: {reason}")]
    Start {
        /// Which language.
        lang: &'static str,
        /// Why.
        reason: String,
    },
}

/// How a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    /// Ran to the end.
    Ok,
    /// Raised an exception.
    Error,
    /// Interrupted after the idle budget ran out; the interpreter and its state are kept.
    Interrupted,
    /// Killed after the interrupt did not take; state is lost.
    Killed,
    /// The interpreter died; state is lost.
    Died,
}

/// An exception from a cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CellError {
    /// The exception's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its message.
    pub message: String,
    /// The traceback, trimmed to the cell's own lines.
    pub traceback: String,
}

/// Something `display()` showed (or a figure left open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Display {
    /// Text form.
    pub text: String,
    /// HTML form (DataFrames).
    pub html: Option<String>,
    /// A PNG image, base64.
    pub png: Option<String>,
}

/// The result of a cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellOutcome {
    /// How it ended.
    pub status: CellStatus,
    /// stdout and stderr, in order (head kept; see `dropped_bytes` and `tail`).
    pub output: String,
    /// Output bytes left out.
    pub dropped_bytes: u64,
    /// The last output bytes when some were left out.
    pub tail: String,
    /// The last expression's value, as text.
    pub echo: Option<String>,
    /// Displays and figures.
    pub displays: Vec<Display>,
    /// The exception, if any.
    pub error: Option<CellError>,
    /// Notes about the kernel (restarted, interrupted, killed, died).
    pub notes: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}

enum Event {
    Line(Value),
    Exited(ExitInfo),
}

struct Proc {
    stdin: mpsc::UnboundedSender<String>,
    events: Option<mpsc::UnboundedReceiver<Event>>,
    guard: KillGuard,
    stderr: StderrTail,
    started: Instant,
}

/// One interpreter.
pub struct KernelActor {
    lang: KernelLang,
    workdir: PathBuf,
    enclosure: Vec<String>,
    proc: Option<Proc>,
    next_cell: u64,
    cells: u64,
    restarts: u32,
    /// Why the last interpreter is gone, told to the next cell.
    lost: Option<String>,
    /// Why the last interpreter was lost, kept for the supervision tree.
    last_error: Option<String>,
    created: Instant,
    busy: bool,
}

impl KernelActor {
    /// A kernel of `lang` in `workdir`, started through `enclosure` if not empty.
    pub fn new(lang: KernelLang, workdir: PathBuf, enclosure: Vec<String>) -> Self {
        Self {
            lang,
            workdir,
            enclosure,
            proc: None,
            next_cell: 0,
            cells: 0,
            restarts: 0,
            lost: None,
            last_error: None,
            created: Instant::now(),
            busy: false,
        }
    }

    fn spawn(&self) -> Result<Proc, KernelError> {
        let (program, args) = command(self.lang, &self.workdir, &self.enclosure);
        let (tx_events, rx_events) = mpsc::unbounded_channel();
        let exit_tx = tx_events.clone();
        let spawned = process::spawn(&program, &args, &self.workdir, move |info| {
            let _ = exit_tx.send(Event::Exited(info));
        })
        .map_err(|e| KernelError::Start {
            lang: self.lang.as_str(),
            reason: format!("{}: {e}", program.display()),
        })?;
        let (stdin_tx, mut stdin_rx) = mpsc::unbounded_channel::<String>();
        let mut stdin = spawned.stdin;
        tokio::spawn(async move {
            while let Some(line) = stdin_rx.recv().await {
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let stdout = spawned.stdout;
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx_events.send(Event::Line(read_line(&line))).is_err() {
                    break;
                }
            }
        });
        Ok(Proc {
            stdin: stdin_tx,
            events: Some(rx_events),
            guard: spawned.guard,
            stderr: spawned.stderr,
            started: Instant::now(),
        })
    }
}

fn send(stdin: &mpsc::UnboundedSender<String>, v: Value) -> bool {
    stdin.send(format!("{v}\n")).is_ok()
}

fn death_words(lang: KernelLang, info: &ExitInfo) -> String {
    let cause = if info.status == "killed by signal 9" {
        "killed by signal 9 (out of memory, or killed from outside)".to_string()
    } else if info.status == "killed by signal 11" {
        "killed by signal 11 (a segmentation fault)".to_string()
    } else {
        info.status.clone()
    };
    let mut text = format!("the {} interpreter died ({cause})", lang.as_str());
    let lines = crash_lines(&info.stderr_tail);
    if !lines.is_empty() {
        text.push_str(&format!("; last stderr: {}", lines.join(" | ")));
    }
    text
}

/// What of the stderr tail says where it died: a fatal error's own line
/// and the cell's frames when the tail holds a crash report (Python's
/// faulthandler), else its last three lines.
fn crash_lines(tail: &[String]) -> Vec<&str> {
    let telling: Vec<&str> = tail
        .iter()
        .map(|l| l.trim())
        .filter(|l| l.starts_with("Fatal Python error") || l.contains("File \"<cell "))
        .collect();
    if !telling.is_empty() {
        return telling;
    }
    let from = tail.len().saturating_sub(3);
    tail[from..].iter().map(String::as_str).collect()
}

/// What the cell loop needs, moved out of the actor while the cell runs.
struct CellRun {
    lang: KernelLang,
    stdin: mpsc::UnboundedSender<String>,
    events: mpsc::UnboundedReceiver<Event>,
    id: u64,
    msg: RunCell,
    notes: Vec<String>,
}

/// What the loop hands back: the outcome, the event receiver (if the
/// process lives on), and whether the process must be dropped.
struct CellEnd {
    outcome: CellOutcome,
    events: Option<mpsc::UnboundedReceiver<Event>>,
    kill: bool,
    lost: Option<String>,
}

async fn wait_ready(events: &mut mpsc::UnboundedReceiver<Event>, stderr: &StderrTail) -> Result<(), String> {
    let ready = async {
        while let Some(ev) = events.recv().await {
            match ev {
                Event::Line(v) if v["ev"] == "ready" => return Ok(()),
                Event::Line(_) => {}
                Event::Exited(info) => return Err(info.describe("the interpreter")),
            }
        }
        Err("the interpreter closed its output".to_string())
    };
    match tokio::time::timeout(START_TIMEOUT, ready).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no ready signal within {} s; last stderr: {}",
            START_TIMEOUT.as_secs(),
            stderr.lines().join(" | ")
        )),
    }
}

/// A line of the driver's protocol. A string the cell made may hold a
/// lone UTF-16 surrogate (`"😀".slice(0, 1)` in JavaScript), which the
/// drivers' JSON writers escape as `\ud83d` and a strict reader refuses:
/// such escapes read as U+FFFD, so the line — perhaps the cell's `done` —
/// is not lost. A line that still does not read is a `garbled` event.
fn read_line(line: &str) -> Value {
    serde_json::from_str(line).or_else(|_| serde_json::from_str(&mend_surrogates(line))).unwrap_or_else(
        |_| {
            let shown: String = line.chars().take(200).collect();
            json!({"ev": "garbled", "text": shown})
        },
    )
}

/// `line` with each unpaired surrogate escape replaced by `\ufffd`.
fn mend_surrogates(line: &str) -> String {
    let unit = |at: usize| -> Option<u32> {
        let escape = line.get(at..at + 6)?;
        let hex = escape.strip_prefix("\\u")?;
        u32::from_str_radix(hex, 16).ok()
    };
    let is_high = |u: u32| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u32| (0xDC00..0xE000).contains(&u);
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while let Some(c) = line[i..].chars().next() {
        if c != '\\' {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        match unit(i) {
            Some(high) if is_high(high) && unit(i + 6).is_some_and(is_low) => {
                out.push_str(&line[i..i + 12]);
                i += 12;
            }
            Some(u) if is_high(u) || is_low(u) => {
                out.push_str("\\ufffd");
                i += 6;
            }
            // Any other escape: the backslash and the character it escapes.
            _ => {
                out.push('\\');
                i += 1;
                if let Some(next) = line[i..].chars().next() {
                    out.push(next);
                    i += next.len_utf8();
                }
            }
        }
    }
    out
}

/// When the cell's wait next wakes: the idle deadline (stopped while a
/// bridge call is pending), never past the wall limit; once interrupted,
/// the interrupt's grace.
fn wake_at(idle: Instant, wall: Instant, interrupted_at: Option<Instant>, bridge_pending: bool) -> Instant {
    match (interrupted_at, bridge_pending) {
        (Some(at), false) => at + INTERRUPT_GRACE,
        // The cell may be blocked on the bridge call; its grace starts no
        // sooner than the wall.
        (Some(at), true) => at.max(wall) + INTERRUPT_GRACE,
        (None, false) => idle.min(wall),
        (None, true) => wall,
    }
}

async fn run_loop(mut run: CellRun) -> CellEnd {
    let started = Instant::now();
    let mut outcome = CellOutcome {
        status: CellStatus::Ok,
        output: String::new(),
        dropped_bytes: 0,
        tail: String::new(),
        echo: None,
        displays: Vec::new(),
        error: None,
        notes: std::mem::take(&mut run.notes),
        elapsed_ms: 0,
    };
    let cancel = run.msg.cancel.clone();
    if cancel.is_cancelled() {
        outcome.status = CellStatus::Interrupted;
        outcome.notes.push("the call was cancelled before the cell started; it did not run".into());
        return CellEnd { outcome, events: Some(run.events), kill: false, lost: None };
    }
    // What came between cells belongs to no cell: output from a thread,
    // timer or child an earlier cell left, a tool call such a thread made.
    // Said apart, never mixed into this cell's output.
    let mut late = String::new();
    while let Ok(ev) = run.events.try_recv() {
        match ev {
            Event::Exited(info) => {
                let why = death_words(run.lang, &info);
                outcome.status = CellStatus::Died;
                outcome
                    .notes
                    .push(format!("{why} before the cell ran; the next cell starts on a fresh kernel"));
                return CellEnd { outcome, events: None, kill: true, lost: Some(why) };
            }
            Event::Line(v) => match v["ev"].as_str() {
                Some("out") => late.push_str(v["text"].as_str().unwrap_or("")),
                Some("tool") => {
                    let text =
                        "the cell that made this tool call had already ended; call it from a running cell";
                    send(
                        &run.stdin,
                        json!({"op": "tool_result", "id": v["id"], "is_error": true, "text": text, "data": null}),
                    );
                }
                _ => {}
            },
        }
    }
    if !late.is_empty() {
        let (shown, _) = crate::ast::search::cut(&late, MAX_LATE_OUTPUT);
        outcome.notes.push(format!(
            "output that arrived after the previous cell ended (from a thread, timer or child it left), not this cell's: {shown}"
        ));
    }
    send(&run.stdin, json!({"op": "run", "id": run.id, "code": run.msg.code}));
    let mut cancelled = false;
    let budget = run.msg.idle_budget;
    let mut deadline = Instant::now() + budget;
    let mut bridges: tokio::task::JoinSet<(u64, BridgeAnswer)> = tokio::task::JoinSet::new();
    let mut interrupted_at: Option<Instant> = None;
    // Whether the interrupt was for running past MAX_CELL_TIME.
    let mut walled = false;
    loop {
        // The idle clock stops while a bridge call is pending.
        let until = wake_at(deadline, started + MAX_CELL_TIME, interrupted_at, !bridges.is_empty());
        let idle_sleep = tokio::time::sleep_until(until.into());
        tokio::select! {
            ev = run.events.recv() => {
                let Some(ev) = ev else {
                    outcome.status = CellStatus::Died;
                    let why = format!("the {} interpreter closed its output", run.lang.as_str());
                    outcome.notes.push(format!("{why}; the next cell starts a fresh kernel (state is lost)"));
                    outcome.elapsed_ms = started.elapsed().as_millis() as u64;
                    return CellEnd { outcome, events: None, kill: true, lost: Some(why) };
                };
                match ev {
                    Event::Exited(info) => {
                        let why = death_words(run.lang, &info);
                        outcome.status = CellStatus::Died;
                        outcome.notes.push(format!("{why}; the next cell starts on a fresh kernel (state is lost)"));
                        outcome.elapsed_ms = started.elapsed().as_millis() as u64;
                        return CellEnd { outcome, events: None, kill: true, lost: Some(why) };
                    }
                    Event::Line(v) => {
                        deadline = Instant::now() + budget;
                        match v["ev"].as_str() {
                            Some("out") => {
                                let text = v["text"].as_str().unwrap_or("");
                                let room = MAX_OUTPUT.saturating_sub(outcome.output.len());
                                if text.len() <= room {
                                    outcome.output.push_str(text);
                                } else {
                                    let mut end = room;
                                    while !text.is_char_boundary(end) { end -= 1; }
                                    outcome.output.push_str(&text[..end]);
                                    outcome.dropped_bytes += (text.len() - end) as u64;
                                }
                            }
                            Some("garbled") => outcome.notes.push(format!(
                                "the kernel sent a line tether could not read (it began: {}); what it held is missing here",
                                v["text"].as_str().unwrap_or("")
                            )),
                            Some("display") if outcome.displays.len() < MAX_DISPLAYS => {
                                outcome.displays.push(Display {
                                    text: v["text"].as_str().unwrap_or("").to_string(),
                                    html: v["html"].as_str().map(str::to_string),
                                    png: v["png"].as_str().map(str::to_string),
                                });
                            }
                            Some("tool") => {
                                let id = v["id"].as_u64().unwrap_or(0);
                                let name = v["name"].as_str().unwrap_or("").to_string();
                                let args = v["args"].clone();
                                if matches!(name.as_str(), "eval" | "debug") {
                                    let answer = BridgeAnswer {
                                        is_error: true,
                                        text: format!("`{name}` cannot be called from inside a cell: it would wait for the very mailbox this cell holds. Call it directly instead"),
                                        data: None,
                                    };
                                    send(&run.stdin, json!({"op": "tool_result", "id": id, "is_error": true, "text": answer.text, "data": null}));
                                } else {
                                    let call = (run.msg.bridge)(name, args);
                                    bridges.spawn(async move { (id, call.await) });
                                }
                            }
                            // A `done` of another cell — written by a process a cell
                            // forked, which carried the driver on — is not this
                            // cell's answer.
                            Some("done") if v["id"].as_u64() != Some(run.id) => {}
                            Some("done") => {
                                outcome.echo = v["echo"].as_str().map(str::to_string);
                                outcome.error = serde_json::from_value(v["error"].clone()).ok();
                                outcome.dropped_bytes += v["dropped"].as_u64().unwrap_or(0);
                                outcome.tail = v["tail"].as_str().unwrap_or("").to_string();
                                let status = v["status"].as_str().unwrap_or("ok");
                                outcome.status = match (status, interrupted_at) {
                                    ("ok", _) => CellStatus::Ok,
                                    (_, Some(_)) => CellStatus::Interrupted,
                                    ("interrupted", None) => CellStatus::Interrupted,
                                    _ => CellStatus::Error,
                                };
                                if cancelled {
                                    outcome.notes.push(
                                        "the call was cancelled: the cell was interrupted; the kernel and its state are kept".into(),
                                    );
                                } else if walled {
                                    outcome.notes.push(format!(
                                        "interrupted after running for {}, the most a cell may; the kernel and its state are kept",
                                        crate::question::human_duration(MAX_CELL_TIME)
                                    ));
                                } else if interrupted_at.is_some() {
                                    outcome.notes.push(format!(
                                        "interrupted after {} without progress (the idle budget); the kernel and its state are kept",
                                        crate::question::human_duration(budget)
                                    ));
                                }
                                if !bridges.is_empty() {
                                    // The cell did not wait for them (an un-awaited JS
                                    // `tool(...)`, a call from a thread): they end with it.
                                    outcome.notes.push(format!(
                                        "{} tool call(s) the cell started were still running when it ended and were cancelled; what they would have done may or may not have happened — check, or await them in the cell",
                                        bridges.len()
                                    ));
                                }
                                outcome.elapsed_ms = started.elapsed().as_millis() as u64;
                                return CellEnd { outcome, events: Some(run.events), kill: false, lost: None };
                            }
                            _ => {}
                        }
                    }
                }
            }
            Some(joined) = bridges.join_next(), if !bridges.is_empty() => {
                deadline = Instant::now() + budget;
                if let Ok((id, answer)) = joined {
                    send(&run.stdin, json!({"op": "tool_result", "id": id, "is_error": answer.is_error, "text": answer.text, "data": answer.data}));
                }
            }
            () = cancel.cancelled(), if interrupted_at.is_none() => {
                cancelled = true;
                interrupted_at = Some(Instant::now());
                send(&run.stdin, json!({"op": "interrupt", "id": run.id}));
            }
            () = idle_sleep => {
                if interrupted_at.is_none() {
                    interrupted_at = Some(Instant::now());
                    walled = started.elapsed() >= MAX_CELL_TIME;
                    send(&run.stdin, json!({"op": "interrupt", "id": run.id}));
                } else {
                    let why = if cancelled {
                        format!(
                            "the call was cancelled and the cell did not stop within {} s of an interrupt, so the kernel was killed",
                            INTERRUPT_GRACE.as_secs()
                        )
                    } else if walled {
                        format!(
                            "the cell ran for {}, the most a cell may, and did not stop within {} s of an interrupt, so the kernel was killed",
                            crate::question::human_duration(MAX_CELL_TIME),
                            INTERRUPT_GRACE.as_secs()
                        )
                    } else {
                        format!(
                            "the cell made no progress for {} s and did not stop within {} s of an interrupt, so the kernel was killed",
                            budget.as_secs(),
                            INTERRUPT_GRACE.as_secs()
                        )
                    };
                    outcome.status = CellStatus::Killed;
                    outcome.notes.push(format!("{why}; its state is lost, the next cell starts a fresh kernel"));
                    outcome.elapsed_ms = started.elapsed().as_millis() as u64;
                    return CellEnd { outcome, events: None, kill: true, lost: Some(why) };
                }
            }
        }
    }
}

impl Actor for KernelActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.proc = None;
    }
}

impl Handler<RunCell> for KernelActor {
    type Result = AtomicResponse<Self, Result<CellOutcome, KernelError>>;

    fn handle(&mut self, msg: RunCell, _ctx: &mut Self::Context) -> Self::Result {
        let mut notes = Vec::new();
        if msg.reset && self.proc.take().is_some() {
            self.restarts += 1;
            notes.push("reset: started a fresh interpreter; earlier state is gone".to_string());
        }
        // An interpreter that died between cells is replaced before this cell runs.
        if let Some(mut dead) = self.proc.take_if(|p| !process::is_running(p.guard.pid() as i32)) {
            let exit = std::iter::from_fn(|| dead.events.as_mut()?.try_recv().ok())
                .find_map(|ev| if let Event::Exited(info) = ev { Some(info) } else { None });
            let why = exit.map_or_else(
                || format!("the {} interpreter exited", self.lang.as_str()),
                |info| death_words(self.lang, &info),
            );
            self.last_error = Some(why.clone());
            self.lost = Some(format!("{why} while idle"));
        }
        if let Some(why) = self.lost.take() {
            notes.push(format!("{why}; this cell runs on a fresh kernel — earlier state was reset"));
        }
        let starting = self.proc.is_none();
        if starting {
            match self.spawn() {
                Ok(p) => {
                    if self.cells > 0 && !msg.reset {
                        self.restarts += 1;
                    }
                    self.proc = Some(p);
                }
                Err(e) => return AtomicResponse::new(Box::pin(fut::ready(Err(e)))),
            }
        }
        let proc = self.proc.as_mut().expect("started above");
        let mut events = proc.events.take().expect("events are returned after every cell");
        let stdin = proc.stdin.clone();
        let stderr = proc.stderr.clone();
        self.next_cell += 1;
        self.busy = true;
        let lang = self.lang;
        let id = self.next_cell;
        let work = async move {
            if starting && let Err(reason) = wait_ready(&mut events, &stderr).await {
                return Err(KernelError::Start { lang: lang.as_str(), reason });
            }
            Ok(run_loop(CellRun { lang, stdin, events, id, msg, notes }).await)
        };
        AtomicResponse::new(Box::pin(work.into_actor(self).map(|ended, act, _ctx| {
            act.busy = false;
            act.cells += 1;
            match ended {
                Err(e) => {
                    act.proc = None;
                    Err(e)
                }
                Ok(end) => {
                    if end.kill {
                        act.proc = None;
                        act.last_error.clone_from(&end.lost);
                        act.lost = end.lost;
                    } else if let Some(p) = act.proc.as_mut() {
                        p.events = end.events;
                    }
                    Ok(end.outcome)
                }
            }
        })))
    }
}

impl Handler<Describe> for KernelActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let (state, uptime) = match &self.proc {
            Some(p) => {
                (if self.busy { "running a cell" } else { "idle" }, p.started.elapsed().as_millis() as u64)
            }
            None => ("not started (starts on the first cell)", self.created.elapsed().as_millis() as u64),
        };
        let mut node = ActorNode::new("kernel", self.lang.as_str(), state, uptime, u64::from(self.busy));
        node.pid = self.proc.as_ref().map(|p| p.guard.pid());
        node.restarts = Some(self.restarts);
        node.last_error.clone_from(&self.last_error);
        node = node.with_detail("cells", self.cells);
        if !self.enclosure.is_empty() {
            node = node.with_detail("enclosure", self.enclosure.join(" "));
        }
        MessageResult(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_read_as_replacement_characters_and_pairs_stay() {
        let v = read_line(r#"{"ev": "done", "id": 3, "error": {"message": "bad \ud83d here"}}"#);
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["message"], "bad \u{fffd} here");
        let v = read_line(r#"{"ev": "out", "text": "pair \ud83d\ude00, escaped \\ud83d, low \udc00"}"#);
        assert_eq!(v["text"], "pair 😀, escaped \\ud83d, low \u{fffd}");
        assert_eq!(read_line("not json é")["ev"], "garbled");
        assert_eq!(mend_surrogates("tail \\"), "tail \\", "a trailing backslash");
    }

    #[test]
    fn a_cell_wakes_at_its_idle_deadline_never_past_the_wall() {
        let now = Instant::now();
        let (idle, wall) = (now + Duration::from_secs(300), now + MAX_CELL_TIME);
        assert_eq!(wake_at(idle, wall, None, false), idle);
        // Output that keeps coming moves the idle deadline, never the wall.
        assert_eq!(wake_at(now + MAX_CELL_TIME * 2, wall, None, false), wall);
        // A pending bridge call stops the idle clock, not the wall.
        assert_eq!(wake_at(idle, wall, None, true), wall);
        assert_eq!(wake_at(idle, wall, Some(now), false), now + INTERRUPT_GRACE);
    }
}
