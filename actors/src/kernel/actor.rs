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
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::cell::{CellRun, death_words, run_loop};
use super::protocol::{Event, read_line, wait_ready};
use super::{KernelLang, command};
use crate::describe::{ActorNode, Describe};
use crate::process::{self, KillGuard, StderrTail};

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
    /// Host tools the cell may not reach through the bridge: a call of one
    /// would wait for the very mailbox this cell holds while it runs, so
    /// it is refused at once rather than left to hang the cell.
    pub reentrant: &'static [&'static str],
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
        let lang = self.lang.as_str();
        let spawned = process::spawn(&program, &args, &self.workdir, move |info| {
            tracing::debug!(
                target: "tether_actors::kernel",
                lang, status = %info.status, "interpreter exited"
            );
            let _ = exit_tx.send(Event::Exited(info));
        })
        .map_err(|e| KernelError::Start {
            lang: self.lang.as_str(),
            reason: format!("{}: {e}", program.display()),
        })?;
        tracing::debug!(
            target: "tether_actors::kernel",
            pid = spawned.guard.pid(), lang, "interpreter started"
        );
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
            tracing::debug!(
                target: "tether_actors::kernel",
                lang = self.lang.as_str(), restarts = self.restarts, "interpreter restarted: reset"
            );
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
                        tracing::debug!(
                            target: "tether_actors::kernel",
                            lang = self.lang.as_str(), restarts = self.restarts,
                            "interpreter restarted: the last one was lost"
                        );
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
