//! Background workers for vibe mode (S10): the [`WorkerBackend`] trait a
//! host implements with its own sub-agent runtime, the built-in
//! [`command::CommandBackend`] (a command per tier from `tether.toml`), and
//! the [`pool::WorkerPoolActor`] that holds the workers of a run.

pub mod command;
pub mod pool;

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;

/// How capable a worker must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Mechanical work with a clear spec.
    Fast,
    /// Design, judgement, or reviewing a fast worker's result.
    Good,
}

impl Tier {
    /// Both tiers.
    pub const ALL: [Tier; 2] = [Tier::Fast, Tier::Good];

    /// The tier's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Fast => "fast",
            Tier::Good => "good",
        }
    }
}

impl std::str::FromStr for Tier {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fast" => Ok(Tier::Fast),
            "good" => Ok(Tier::Good),
            other => Err(format!("`{other}` is not a tier; use `fast` or `good`")),
        }
    }
}

/// One run of a worker's brief.
#[derive(Debug, Clone)]
pub struct Job {
    /// The worker's id (`w1`, …).
    pub worker_id: String,
    /// Its tier.
    pub tier: Tier,
    /// The whole brief, with every message sent so far appended.
    pub brief: String,
}

/// What a finished run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput {
    /// The result (a command's stdout).
    pub result: String,
    /// Diagnostics kept alongside (a command's last stderr lines).
    pub stderr_tail: Vec<String>,
}

/// The work of one run; dropping it stops the run and everything it started.
pub type RunFuture = Pin<Box<dyn Future<Output = Result<RunOutput, String>> + Send>>;

/// A started run.
pub struct Run {
    /// The OS process doing the work, when there is one.
    pub pid: Option<u32>,
    /// Resolves when the run ends; `Err` says why it failed.
    pub done: RunFuture,
}

/// Runs briefs. Hosts plug in their own sub-agent runtime; tether ships
/// [`command::CommandBackend`].
pub trait WorkerBackend: Send + Sync + 'static {
    /// Starts `job`. `Err` at once when it cannot start at all (the tier
    /// has no command, the command does not exist).
    fn start(&self, job: &Job) -> Result<Run, String>;

    /// What the backend is, for the supervision tree.
    fn name(&self) -> String;
}
