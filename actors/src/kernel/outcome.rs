//! A cell as it is asked ([`RunCell`], with the [`Bridge`] that answers
//! the host tools it calls) and as it ended ([`CellOutcome`]), and the
//! bounds on both: what the kernel's actor, a cell's run and the driver
//! protocol share, below all three.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde::Serialize;
use serde_json::Value;

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
/// Something about the kernel a cell's answer says besides its output.
/// `why` is how an interpreter was lost, as its process report says it
/// (the exit status, the telling stderr lines).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "note", rename_all = "snake_case")]
pub enum CellNote {
    /// `reset` started a fresh interpreter.
    Reset,
    /// The interpreter was lost between cells: this cell runs on a fresh one.
    LostWhileIdle { why: String },
    /// The call was cancelled before the cell started; it did not run.
    CancelledBeforeStart,
    /// The interpreter died before the cell ran.
    DiedBeforeRun { why: String },
    /// Output that came after the previous cell ended, not this cell's.
    StrayOutput { shown: String },
    /// The interpreter died (or closed its output) during the cell.
    Died { why: String },
    /// The kernel sent a line that could not be read: its start.
    Garbled { began: String },
    /// The call was cancelled: the cell was interrupted, the kernel kept.
    CancelledDuringRun,
    /// The cell ran for `limit`, the most a cell may, and was interrupted.
    Walled { limit: std::time::Duration },
    /// The cell made no progress for `budget` and was interrupted.
    Idle { budget: std::time::Duration },
    /// Tool calls the cell started and did not wait for, cancelled.
    CallsCancelled { count: usize },
    /// The interrupted cell did not stop: the kernel was killed.
    Killed { why: String },
    /// What the kernel's driver said of the cell (a rejection nothing
    /// handled, in JavaScript), in its words.
    Said(String),
}

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
    pub notes: Vec<CellNote>,
    /// Wall time.
    pub elapsed_ms: u64,
}
