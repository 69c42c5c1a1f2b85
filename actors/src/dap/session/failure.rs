//! Why an op failed, as typed data the `debug` tool writes out: a request
//! the adapter refused or never answered, a reply that does not fit DAP's
//! types, an op the program's state does not allow, what the adapter does
//! not offer. A session that could not start says why in the handshake's
//! own words. Also which session `status` speaks of ([`SessionHead`]),
//! which a refused second launch names.

use std::time::Duration;

impl From<crate::dap::adapters::filters::UnknownFilters> for Refusal {
    fn from(u: crate::dap::adapters::filters::UnknownFilters) -> Self {
        Refusal::Filters { unknown: u.unknown, offered: u.offered, assertions: u.assertions }
    }
}

/// Why an op failed.
#[derive(Debug, Clone)]
pub enum Failure {
    /// A request failed: its command, and during which op when that is
    /// not the request's own (`run_to`).
    Request { during: Option<&'static str>, request: String, error: String },
    /// `scopes` failed for `frame`.
    Scopes { frame: i64, error: String },
    /// `variables` failed for `reference`.
    Variables { reference: i64, error: String },
    /// `evaluate` of `expression` failed.
    Evaluate { expression: String, error: String },
    /// A reply did not fit DAP's types.
    Unfit(Unfit),
    /// `op` needs a stopped thread and none is.
    NotStopped { op: String },
    /// `stack` without a stopped thread.
    StackNotStopped,
    /// `scopes` without `frame_id` where no stop showed a frame.
    NoFrameShown,
    /// `scopes` without `frame_id`.
    NeedsFrame,
    /// `breakpoints` with neither a file's nor functions.
    NothingToSet,
    /// What `op` asked for is not what the adapter offers.
    Refused { op: &'static str, why: Refusal },
    /// `run_to`'s line does not bind, in the adapter's words.
    RunToUnbound { file: String, line: u32, why: String },
    /// No session: how the last one ended, and whether the caller hears
    /// of that end for the first time (an expiry, which no answer told).
    NoSession { last: Option<super::ending::SessionEnd>, unheard: bool },
    /// A launch or attach while a session runs.
    AlreadyRunning(SessionHead),
    /// The call was cancelled while it waited for the session.
    CancelledBeforeRun,
    /// The session could not start.
    Start(crate::dap::start_failure::StartFailure),
    /// An op the session has no answer for.
    UnknownOp,
}

/// What the adapter does not offer, with what to give instead.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// A kind of breakpoint (`what`: conditions, hit conditions,
    /// logpoints) whose `capability` the adapter does not declare, asked
    /// by the argument `field`.
    Kind { adapter: String, what: &'static str, capability: &'static str, field: &'static str },
    /// Function breakpoints.
    Functions { adapter: String },
    /// Exception filters it does not have; those it does (id, label);
    /// whether tether's `assertions`, offered only in a node:test run, was
    /// among those asked.
    Filters { unknown: Vec<String>, offered: Vec<(String, String)>, assertions: bool },
}

/// A reply that does not fit DAP's types: the op, the field read, the
/// parser's error and the reply's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Unfit {
    pub op: String,
    pub field: String,
    pub error: String,
    pub began: String,
}

/// Which session `status` speaks of.
#[derive(Debug, Clone)]
pub struct SessionHead {
    pub adapter: &'static str,
    /// What runs: the program (with its arguments) or what was attached.
    pub program: Debuggee,
    pub up: Duration,
}

/// What a session debugs.
#[derive(Debug, Clone, PartialEq)]
pub enum Debuggee {
    /// A program it launched, as a command line reads it (`prog.py`,
    /// `-m pkg`, `node --test tests`, `npm run test`).
    Launched(String),
    /// A running program it attached to.
    Attached(crate::dap::asked::AttachSpec),
}
