//! What an op answers: a `DebugReply` — what it found as typed data (an
//! [`Answer`]: where a run op [`Settled`], a stop's [`Snapshot`], the
//! listings, where breakpoints bound, a [`Failure`]), which the `debug`
//! tool writes out, and where the op left the program as a typed
//! `RunState`, which the session decides by.

use std::time::Duration;

use serde_json::{Value, json};

use super::bindings::BoundView;
use super::breakpoints::BreakpointSpec;
use super::ending::SessionEnd;
use super::failure::{Failure, Refusal, SessionHead, Unfit};

/// An op's answer.
#[derive(Debug, Clone)]
pub struct DebugReply {
    /// What the op found (or why it failed).
    pub answer: Answer,
    /// What the op did, before what it found (`launched`).
    pub lead: Option<Lead>,
    /// Keys the op adds to its answer's data (`exception_filters`).
    pub data: Value,
    /// Lines after the answer: what went wrong out of sight meanwhile,
    /// where breakpoints bound.
    pub notes: Vec<Note>,
    /// Where the breakpoints bound, in a start's answer (its data).
    pub bound: Option<BoundView>,
}

/// What an op did, said before what it found.
#[derive(Debug, Clone, PartialEq)]
pub enum Lead {
    /// A launch.
    Launched,
    /// An attach, to what.
    Attached(crate::dap::asked::AttachSpec),
    /// `run_to` never reached `target` (`prog.py:7`).
    RunToMissed { target: String },
    /// `run_to` stopped elsewhere before reaching `target`.
    RunToEarly { target: String },
    /// `run_to`'s line of `file` bound at another line.
    RunToMoved { file: String, line: u32, bound_line: u64 },
}

/// A line after an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Where the breakpoints bound: the ones worth a word, then where each
    /// function breakpoint bound.
    Bound(BoundView),
    /// A file's breakpoints were not set at the start.
    LinesNotSet { file: String, why: NotSet },
    /// The function breakpoints were not set at the start.
    FunctionsNotSet { names: Vec<String>, why: NotSet },
    /// The exception filters asked for are not offered; the default was set.
    FiltersDefaulted(Refusal),
    /// A node:test run whose exception filters leave out `assertions`.
    AssertionsOff(Vec<String>),
    /// The exception filters could not be set, and why.
    FiltersNotSet(String),
    /// A process the program started could not be followed: its name,
    /// and why.
    NotFollowed { name: String, why: crate::dap::start_failure::Step },
    /// Breakpoints set before this session and not given with its start,
    /// which it keeps: each file with its lines, and the functions.
    Kept { files: Vec<(String, Vec<u32>)>, functions: Vec<String> },
}

/// Why breakpoints asked for were not set.
#[derive(Debug, Clone, PartialEq)]
pub enum NotSet {
    /// The adapter does not offer them.
    Refused(Refusal),
    /// The request failed.
    Failed(String),
}

/// Where an op left the program.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    /// Stopped; the frame shown, when the stack could be read.
    Stopped(Option<FrameAt>),
    /// Running.
    Running,
    /// The program exited (with its code, when the adapter said it).
    Exited(Option<i64>),
    /// The session ended without an exit code.
    Terminated,
}

/// The frame a stop is shown at: its id (good while the stop lasts) and
/// where it is, as the reply shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameAt {
    /// The adapter's frame id.
    pub id: u64,
    /// Its file, relative to the working directory when inside it.
    pub path: Option<String>,
    /// Its 1-based line.
    pub line: u64,
}

impl RunState {
    /// Its name in `data.state`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunState::Stopped(_) => "stopped",
            RunState::Running => "running",
            RunState::Exited(_) => "exited",
            RunState::Terminated => "terminated",
        }
    }
}

impl DebugReply {
    /// What an op found, nothing before it; where it left the program
    /// when the answer says.
    pub(super) fn found(answer: Answer) -> Self {
        Self { answer, lead: None, data: json!({}), notes: Vec::new(), bound: None }
    }
    /// Why an op failed.
    pub(super) fn failed(failure: Failure) -> Self {
        Self::found(Answer::Failed(failure))
    }
    /// Whether the op failed.
    pub fn is_error(&self) -> bool {
        self.answer.is_error()
    }
    /// Where the op left the program, when it says (`data.state` is
    /// written from it): what the session decides by, never read back
    /// from the JSON.
    pub fn state(&self) -> Option<RunState> {
        self.answer.state()
    }
    /// A run op's answer: where it settled, nothing before it yet.
    pub(super) fn settled(settled: Settled) -> Self {
        Self::found(Answer::Settled(settled))
    }
    /// The answer with `lead` before what it found.
    pub(super) fn led(mut self, lead: Lead) -> Self {
        self.lead = Some(lead);
        self
    }

    /// Where a run op settled, when it did.
    pub fn as_settled(&self) -> Option<&Settled> {
        match &self.answer {
            Answer::Settled(s) => Some(s),
            _ => None,
        }
    }
}

/// What an op found, as the tool writes it out.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Where a run op left the program.
    Settled(Settled),
    /// The first threads (id, name cut) and how many there are.
    Threads { listed: Vec<(u64, String)>, total: usize },
    /// The first frames of a stack, and how many there are.
    Stack { frames: Vec<StackFrameAt>, total: usize },
    /// A frame's scopes.
    Scopes(Vec<ScopeAt>),
    /// The first children of a reference, and how many there are.
    Variables { listed: Vec<ShownVariable>, total: usize },
    /// What an expression evaluated to.
    Evaluated(Evaluated),
    /// What `breakpoints` did with a file's breakpoints.
    Lines(LinesSet),
    /// What `breakpoints` did with the function breakpoints.
    Functions(FunctionsSet),
    /// What `exceptions` found or did.
    Exceptions(ExceptionsSet),
    /// Two answers in one (a file's breakpoints and the functions').
    Pair(Box<Answer>, Box<Answer>),
    /// Why the op failed.
    Failed(Failure),
    /// Which adapters are usable here, and the languages none serves.
    Adapters(Vec<AdapterRow>),
    /// The debuggee's output kept, and how many earlier bytes were dropped.
    Output { text: String, dropped: u64 },
    /// `terminate` ended the session: detached from an attached program
    /// (which runs on), or adapter and program killed.
    Ended { detached: bool },
    /// `terminate` found the session already over, for this reason.
    AlreadyEnded(SessionEnd),
    /// `status` with no session: how the last one ended, and the
    /// breakpoints held for the next launch.
    NoSession { last: Option<SessionEnd>, held_breakpoints: usize },
    /// `status` of a running session.
    Status { head: SessionHead, now: Box<SessionNow> },
}

/// What `breakpoints` did with a file's (`file`: relative to the
/// working directory when inside it).
#[derive(Debug, Clone)]
pub enum LinesSet {
    /// No session yet: held for the launch.
    Held { file: String, specs: Vec<BreakpointSpec> },
    /// Cleared.
    Cleared { file: String },
    /// The program is between processes: set in the next one.
    Between { file: String, specs: Vec<BreakpointSpec> },
    /// Set: where each bound (the one file).
    Bound(BoundView),
}

/// What `breakpoints` did with the function breakpoints.
#[derive(Debug, Clone)]
pub enum FunctionsSet {
    /// No session yet: held for the launch.
    Held(Vec<String>),
    /// Cleared.
    Cleared,
    /// The program is between processes: set in the next one.
    Between(Vec<String>),
    /// Set: where each bound.
    Bound(BoundView),
}

/// What `exceptions` found or did.
#[derive(Debug, Clone)]
pub enum ExceptionsSet {
    /// No session yet: the filters the launch will set (none chosen: the
    /// adapter's default).
    AtLaunch(Option<Vec<String>>),
    /// No session yet: these filters held for the launch.
    Held(Vec<String>),
    /// What `adapter` offers (id, label) and which are on.
    /// `stops_by_itself`: with none offered, it stops on an unrecovered
    /// panic anyway (delve).
    Offered { adapter: &'static str, on: Vec<String>, offered: Vec<(String, String)>, stops_by_itself: bool },
    /// Set now; `next_launch` when part of it (rdbg's `uncaught`) takes
    /// effect only then.
    Applied { filters: Vec<String>, next_launch: bool },
}

/// A usable adapter, or a language no adapter serves.
#[derive(Debug, Clone)]
pub struct AdapterRow {
    /// The adapter's id, or the language's name.
    pub id: String,
    pub usable: bool,
    /// What it runs on, or why it is not usable.
    pub detail: String,
    /// The ways it attaches; none for a language no adapter serves.
    pub attach: Option<Vec<crate::dap::asked::AttachForm>>,
}

/// Where a running session's program is, as `status` says it.
#[derive(Debug, Clone)]
pub enum SessionNow {
    /// It exited with this code.
    Exited(i64),
    /// It terminated without an exit code.
    Terminated,
    /// It is stopped: the stop's snapshot again.
    Stopped(Settled),
    /// It runs.
    Running,
}

impl Answer {
    /// Where the answer leaves the program, when it says.
    pub fn state(&self) -> Option<RunState> {
        match self {
            Answer::Settled(s) => s.state(),
            Answer::Ended { .. } | Answer::AlreadyEnded(_) => Some(RunState::Terminated),
            Answer::Pair(first, other) => other.state().or_else(|| first.state()),
            Answer::Status { now, .. } => match now.as_ref() {
                SessionNow::Exited(code) => Some(RunState::Exited(Some(*code))),
                SessionNow::Terminated => Some(RunState::Terminated),
                SessionNow::Stopped(s) => s.state(),
                SessionNow::Running => Some(RunState::Running),
            },
            _ => None,
        }
    }

    /// Whether it is a failure.
    pub fn is_error(&self) -> bool {
        match self {
            Answer::Settled(s) => s.is_error(),
            Answer::Status { now, .. } => matches!(now.as_ref(), SessionNow::Stopped(s) if s.is_error()),
            Answer::Pair(first, other) => first.is_error() || other.is_error(),
            Answer::Failed(_) => true,
            _ => false,
        }
    }
}

/// A frame as `stack` lists it.
#[derive(Debug, Clone)]
pub struct StackFrameAt {
    pub id: u64,
    pub name: String,
    /// As the adapter named it.
    pub path: Option<String>,
    /// Relative to the working directory when inside it.
    pub shown_path: Option<String>,
    pub line: u64,
}

/// A scope of a frame.
#[derive(Debug, Clone)]
pub struct ScopeAt {
    /// Cut at [`super::MAX_VALUE`] characters.
    pub name: String,
    /// What `variables` lists it with.
    pub reference: u64,
    /// Whether the adapter says listing it is expensive.
    pub expensive: bool,
}

/// An expression's value.
#[derive(Debug, Clone)]
pub struct Evaluated {
    pub expression: String,
    /// Cut at [`super::MAX_VALUE`] characters.
    pub value: String,
    /// Whether the value was cut.
    pub cut: bool,
    pub ty: Option<String>,
    /// What `variables` expands it with (0: nothing to expand).
    pub reference: i64,
}

/// Where a run op left the program, as the tool writes it out: a stop
/// with its snapshot, still running, ended, or gone.
#[derive(Debug, Clone)]
pub enum Settled {
    /// Stopped, with what the stop shows.
    Stopped(Box<Snapshot>),
    /// Stopped, but the stack could not be shown.
    StoppedBlind { why: StopWhy, kind: String, thread: i64, trouble: Blind },
    /// Still running after `waited` (none: the wait ended without saying).
    Running { waited: Option<Duration> },
    /// Running, not waited for: an attach without breakpoints.
    Attached,
    /// It stopped and ran on before the stop could be read.
    RanOn,
    /// The program exited; `none_bound` when breakpoints were set and
    /// none bound — the likeliest reason it never stopped.
    Exited { code: i64, none_bound: Option<BoundView> },
    /// The session ended without an exit code.
    Terminated { none_bound: Option<BoundView> },
    /// The call was cancelled, so the wait stopped; the program runs on.
    Cancelled,
    /// The adapter went away, for this reason.
    AdapterGone(String),
}

/// Why the stack of a stop could not be shown.
#[derive(Debug, Clone)]
pub enum Blind {
    /// The `stackTrace` reply did not fit DAP's frames.
    BadReply(Unfit),
    /// The `stackTrace` request failed.
    Unreadable(String),
    /// The adapter listed no frames.
    NoFrames,
}

/// Why the program stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum StopWhy {
    /// An exception: its type and message.
    Exception(String),
    /// An exception nothing caught (rdbg's postmortem stop).
    Uncaught(String),
    /// What the adapter said, as it is (a signal, `pause`, `step`,
    /// "debugger statement", the reason).
    Plain(String),
    /// The reason and the adapter's description of it.
    Described { reason: String, description: String },
}

/// What a stop shows: the reason, the frame in the user's code with its
/// source and locals, and the call chain.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub why: StopWhy,
    /// The reason's kind in `data.reason` (`breakpoint`, `exception`, …).
    pub kind: String,
    pub thread: i64,
    /// The chain, innermost first.
    pub frames: Vec<ChainFrame>,
    /// The frame shown: the top one, or the first of the user's when the
    /// top is library code.
    pub focus: usize,
    /// Lines around the focus frame's line, numbered from 1.
    pub source: Vec<(u64, String)>,
    /// The focus frame's locals, or why there are none to show.
    pub locals: Result<Locals, NoLocals>,
    /// Whether the adapter gave as many frames as were asked for (there
    /// may be more).
    pub frames_capped: bool,
}

/// One frame of a stop's call chain.
#[derive(Debug, Clone)]
pub struct ChainFrame {
    pub id: u64,
    pub name: String,
    /// Relative to the working directory when inside it.
    pub path: Option<String>,
    pub line: u64,
    /// In the user's code (inside the working directory, outside
    /// installed packages).
    pub user: bool,
    /// A marker between frames, not code: js-debug's async boundary.
    pub label: bool,
}

/// The locals of a frame: the first few, and how many there are.
#[derive(Debug, Clone)]
pub struct Locals {
    /// The first few, as the adapter listed them.
    pub listed: Vec<ShownVariable>,
    pub total: usize,
}

/// A variable as an answer shows it: a stop's local, or a child
/// `variables` lists.
#[derive(Debug, Clone)]
pub struct ShownVariable {
    pub name: String,
    /// Cut: at [`super::snapshot::MAX_LOCAL_VALUE`] characters for a
    /// local, [`super::MAX_VALUE`] for a child.
    pub value: String,
    /// Whether the value was cut.
    pub cut: bool,
    pub ty: Option<String>,
    /// What `variables` expands it with (0: nothing to expand).
    pub reference: u64,
}

/// Why a frame shows no locals.
#[derive(Debug, Clone)]
pub enum NoLocals {
    /// A reply did not fit DAP's types.
    BadReply(Unfit),
    /// A request failed: which (`scopes`, `locals`) and how.
    Unreadable { what: &'static str, error: String },
    /// No scope is the locals; the scopes the adapter named.
    NoScope(Vec<String>),
}

impl Snapshot {
    /// Where the stop is shown.
    pub fn at(&self) -> FrameAt {
        let focus = &self.frames[self.focus];
        FrameAt { id: focus.id, path: focus.path.clone(), line: focus.line }
    }
}

impl Settled {
    /// Where the program is, for the session; none when it is not known.
    pub fn state(&self) -> Option<RunState> {
        match self {
            Settled::Stopped(s) => Some(RunState::Stopped(Some(s.at()))),
            Settled::StoppedBlind { trouble: Blind::BadReply(_), .. } => None,
            Settled::StoppedBlind { .. } => Some(RunState::Stopped(None)),
            Settled::Running { .. } | Settled::Attached | Settled::RanOn => Some(RunState::Running),
            Settled::Exited { code, .. } => Some(RunState::Exited(Some(*code))),
            Settled::Terminated { .. } => Some(RunState::Terminated),
            Settled::Cancelled | Settled::AdapterGone(_) => None,
        }
    }

    /// Whether it is a failure.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            Settled::Cancelled
                | Settled::AdapterGone(_)
                | Settled::StoppedBlind { trouble: Blind::BadReply(_), .. }
        )
    }

    /// The breakpoints that never bound, when that is what the end says.
    pub fn none_bound(&self) -> Option<&BoundView> {
        match self {
            Settled::Exited { none_bound, .. } | Settled::Terminated { none_bound } => none_bound.as_ref(),
            _ => None,
        }
    }
}
