//! Why a debug session could not start, as typed data the `debug` tool
//! words: which adapter, which step of reaching it or of its handshake,
//! and what the adapter and its program said meanwhile (their own words,
//! quoted). Below the adapters' own modules, which fail their steps with
//! it, and the session, which adds what the adapter said.

use std::time::Duration;

use crate::dap::asked::AttachForm;
use crate::locate::Unusable;

/// Why a session could not start.
#[derive(Debug, Clone, PartialEq)]
pub enum StartFailure {
    /// Neither a program, a module nor a target to attach to was given.
    NothingToStart,
    /// No adapter in the table attaches this way.
    NoAdapterAttaches { form: AttachForm },
    /// No adapter in the table handles `file` (relative to the working
    /// directory); `missing`: why, for a language tether knows and no
    /// installed adapter serves.
    NoAdapterFor { file: String, missing: Option<&'static str> },
    /// The adapter table could not be read (`tether.toml`), as its reader
    /// said.
    Table(String),
    /// The adapter for it cannot be used here: why.
    Unavailable(Unusable),
    /// The adapter is the program itself and reaches a running one by its
    /// port only (rdbg).
    AttachesByPortOnly { adapter: &'static str },
    /// The adapter launches a program file only, of this extension (rdbg:
    /// no module).
    LaunchesFileOnly { adapter: &'static str, extension: &'static str },
    /// No loopback port was free for a TCP adapter.
    NoPort { adapter: &'static str, error: String },
    /// The adapter's program did not start.
    NotSpawned { binary: String, error: String },
    /// Nothing accepted a connection on the caller's `port` within
    /// `waited`, where `adapter` was to be reached.
    NoServerOnPort { adapter: &'static str, port: u16, waited: Duration, error: String },
    /// The adapter tether started could not be connected to; its stderr.
    NotConnected { adapter: String, port: u16, error: String, stderr: Vec<String> },
    /// A step of the handshake failed.
    Handshake(Box<Handshake>),
}

/// A handshake that failed: the step, what the program the adapter runs
/// said meanwhile, what the adapter said (its output events: delve's
/// build errors, why an attach was refused), and its last stderr lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Handshake {
    pub adapter: &'static str,
    pub step: Step,
    pub program_said: Option<Said>,
    pub adapter_said: Vec<String>,
    pub stderr: Vec<String>,
}

/// The step of reaching an adapter, or of its handshake, that failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A request failed (`initialize`, `launch`, `attach`,
    /// `configurationDone`): its command and the error.
    Request { request: &'static str, error: String },
    /// An event did not come within `waited` (`initialized`,
    /// `startDebugging`).
    NoEvent { event: &'static str, waited: Duration },
    /// The connection closed before `event`.
    ClosedBefore { event: &'static str },
    /// The run ended before `event`.
    EndedBefore { event: &'static str },
    /// The adapter's connection ended: how, as the transport saw it (the
    /// exit status and last stderr lines of a process of ours).
    AdapterEnded(String),
    /// A TypeScript `program` (relative to the project) has no compiled
    /// output naming it in a source map, and the project no loader.
    NoCompiledOutput { program: String },
    /// The adapter asked for a child session and gave no configuration:
    /// what it asked.
    ChildWithoutConfiguration { asked: String },
    /// The child session could not be connected on `port`.
    ChildNotConnected { port: u16, error: String },
    /// A task of the start was interrupted (the runtime is stopping).
    Interrupted(String),
}

/// The last lines a program printed, and its name (`node`).
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    pub by: &'static str,
    pub lines: Vec<String>,
}

/// A failed step, with what the program said meanwhile (node's `bad
/// option: …` is said there, and nowhere else).
#[derive(Debug, Clone, PartialEq)]
pub struct Stuck {
    pub step: Step,
    pub said: Option<Said>,
}

impl From<Step> for Stuck {
    fn from(step: Step) -> Self {
        Stuck { step, said: None }
    }
}
