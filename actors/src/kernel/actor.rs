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

use std::path::PathBuf;
use std::time::Instant;

use actix::prelude::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::cell::{CellRun, death_words, run_loop};
pub use super::outcome::{
    Bridge, BridgeAnswer, CellError, CellNote, CellOutcome, CellStatus, DEFAULT_IDLE_BUDGET, Display,
    INTERRUPT_GRACE, KernelError, MAX_CELL_TIME, MAX_OUTPUT, RunCell, START_TIMEOUT,
};
use super::protocol::{Event, read_line, wait_ready};
use super::{KernelLang, command};
use crate::describe::{ActorNode, Describe};
use crate::process::{self, KillGuard, StderrTail};

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
            notes.push(CellNote::Reset);
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
            notes.push(CellNote::LostWhileIdle { why });
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
