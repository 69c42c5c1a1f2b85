//! What the adapter's events tell, shared by the event pump and the ops,
//! and the session's targets ([`Targets`]: its connections, and what a new
//! one is configured with).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use dap_types::Capabilities;

use super::MAX_OUTPUT;
use super::bindings::Bindings;
use super::breakpoints::BreakpointSpec;
use crate::wire::dap::{DapClient, DapEvent, Delivery, Ended};

/// The adapter's console (and output) lines told of a failed start, and
/// their length.
const CONSOLE_TAIL_LINES: usize = 6;
const CONSOLE_LINE_MAX: usize = 300;

#[derive(Debug, Clone, Default)]
pub(super) struct Stop {
    pub(super) thread: Option<i64>,
    pub(super) reason: String,
    pub(super) description: Option<String>,
    /// Whether the adapter answers `exceptionInfo` (rdbg drops the
    /// connection at a request it does not know).
    pub(super) exception_info: bool,
    /// Whether a `pause` was asked for since the program last resumed
    /// (js-debug reports a pause and a step the same way).
    pub(super) asked_pause: bool,
}

/// The connection a session was launched on when the program runs as a
/// child session on another (js-debug): the program's last output comes
/// there, possibly after the child's `terminated`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Parent {
    /// No parent connection.
    #[default]
    None,
    /// It has not said the run ended.
    Open,
    /// It said the run ended.
    Ended,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) stop: Option<Stop>,
    pub(super) stops: u64,
    pub(super) initialized: bool,
    pub(super) exit_code: Option<i64>,
    pub(super) terminated: bool,
    pub(super) parent: Parent,
    /// How the adapter went away, once it has.
    pub(super) closed: Option<Ended>,
    pub(super) output: VecDeque<u8>,
    pub(super) dropped: u64,
    /// The adapter's own last console lines (a build error, why an attach
    /// was refused), for a start that fails.
    pub(super) console: VecDeque<String>,
    pub(super) debuggee_pid: Option<u32>,
    pub(super) running: bool,
    /// The thread of the last stop shown, kept while the program runs (the
    /// default of `pause`).
    pub(super) last_thread: Option<i64>,
    /// Where each breakpoint bound, by the adapter's replies and events.
    pub(super) bindings: Bindings,
    /// The adapter's `supportsExceptionInfoRequest`.
    pub(super) exception_info: bool,
    /// Whether the last op that moved the program was `pause`.
    pub(super) pausing: bool,
    /// What went wrong out of sight since the last answer (a process of a
    /// followed run that could not be connected), for the next one to say.
    pub(super) notes: Vec<super::Note>,
}

/// The program tether started, to kill when the session ends.
pub(super) struct Debuggee {
    pid: u32,
    /// Whether it is known to have exited: its pid may since name another
    /// process, so only its group (which keeps the pid from reuse while any
    /// member lives) is signalled.
    exited: bool,
}

impl Debuggee {
    pub(super) fn kill(&self) {
        crate::process::kill_group(self.pid);
        if !self.exited {
            // SAFETY: SIGKILL to the debuggee, which has not exited (a
            // debuggee that is not its group's leader, as under lldb).
            unsafe {
                libc::kill(self.pid as i32, libc::SIGKILL);
            }
        }
    }
}

impl State {
    /// The debuggee to kill, if its pid is known.
    pub(super) fn debuggee(&self) -> Option<Debuggee> {
        let pid = self.debuggee_pid?;
        Some(Debuggee { pid, exited: self.exit_code.is_some() })
    }

    /// The program was resumed, unless it already stopped again since
    /// `before` stops: the last stop is over.
    pub(super) fn resumed(&mut self, before: u64) {
        if self.stops == before {
            self.running = true;
            self.stop = None;
        }
    }

    /// The adapter's console lines and the last output lines, for a start
    /// that failed: where adapters put why (delve's build errors arrive as
    /// `stderr` output before the failed launch answer).
    pub(super) fn said_at_start(&self) -> Vec<String> {
        let output = String::from_utf8_lossy(&self.output.iter().copied().collect::<Vec<u8>>()).into_owned();
        let mut lines: Vec<String> = output
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| crate::text::cut(l, CONSOLE_LINE_MAX).0)
            .collect();
        lines = lines.split_off(lines.len().saturating_sub(CONSOLE_TAIL_LINES));
        self.console.iter().cloned().chain(lines).collect()
    }
}

/// What the adapter's events told, shared by the event pumps and the ops
/// (the DAP side's counterpart of `lsp::shared::ServerState`), and the wake-up
/// for whoever waits on it.
pub(super) struct AdapterState {
    pub(super) state: Mutex<State>,
    /// The processes a js-debug launch follows.
    pub(super) targets: Mutex<Targets>,
    pub(super) changed: Notify,
    /// The running op's cancellation: a wait for the next stop is
    /// abandoned when it fires (the program keeps running).
    pub(super) op_cancel: Mutex<CancellationToken>,
}

impl AdapterState {
    pub(super) async fn wait_for(&self, timeout: Duration, mut done: impl FnMut(&State) -> bool) -> bool {
        crate::waiting::until(&self.changed, timeout, timeout, || done(&self.state.lock()).then_some(()))
            .await
            .is_some()
    }

    /// What one delivery of the connection does to the state (a child
    /// session asked for is the pump's to follow, not the state's).
    pub(super) fn deliver(&self, delivery: Delivery) {
        match delivery {
            Delivery::Event(ev) => self.apply(ev),
            Delivery::Ended(ended) => self.ended(ended),
            Delivery::StartDebugging(_) => {}
        }
    }

    /// The adapter went away. A known exit is kept over the stream's end
    /// that came first or after: it says how.
    pub(super) fn ended(&self, ended: Ended) {
        tracing::debug!(target: "tether_actors::dap", "adapter connection ended: {}", ended.reason());
        let mut s = self.state.lock();
        if !s.closed.as_ref().is_some_and(Ended::is_exit) {
            s.closed = Some(ended);
        }
        drop(s);
        self.changed.notify_waiters();
    }

    /// The parent connection of a child session ended (its `terminated`,
    /// or its stream).
    pub(super) fn parent_ended(&self) {
        self.state.lock().parent = Parent::Ended;
        self.changed.notify_waiters();
    }

    pub(super) fn apply(&self, ev: DapEvent) {
        let mut s = self.state.lock();
        match ev.event.as_str() {
            "initialized" => s.initialized = true,
            "stopped" => {
                let thread = ev.body["threadId"].as_i64();
                // Threads that stop together each get an event (lldb-dap),
                // the others marked `preserveFocusHint`: the stop shown, and
                // the thread ops default to, stays the focused one.
                let beside = ev.body["preserveFocusHint"].as_bool() == Some(true) && s.stop.is_some();
                if !beside {
                    s.stop = Some(Stop {
                        thread,
                        reason: ev.body["reason"].as_str().unwrap_or("stopped").to_string(),
                        description: ev.body["text"]
                            .as_str()
                            .or(ev.body["description"].as_str())
                            .map(str::to_string),
                        exception_info: s.exception_info,
                        asked_pause: s.pausing,
                    });
                    s.last_thread = thread.or(s.last_thread);
                }
                let hit: Vec<i64> = ev.body["hitBreakpointIds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(serde_json::Value::as_i64)
                    .collect();
                s.bindings.hit(&hit);
                tracing::debug!(
                    target: "tether_actors::dap",
                    reason = ev.body["reason"].as_str().unwrap_or("stopped"),
                    thread = ?thread,
                    "stopped"
                );
                s.stops += 1;
                s.running = false;
            }
            "continued" => {
                s.running = true;
                s.stop = None;
            }
            "breakpoint" => s.bindings.event(&ev.body),
            "exited" => {
                s.exit_code = ev.body["exitCode"].as_i64();
                tracing::debug!(target: "tether_actors::dap", code = ?s.exit_code, "debuggee exited");
            }
            "terminated" => {
                s.terminated = true;
                tracing::debug!(target: "tether_actors::dap", "session terminated");
            }
            "process" => s.debuggee_pid = ev.body["systemProcessId"].as_u64().map(|p| p as u32),
            "output" => {
                let category = ev.body["category"].as_str().unwrap_or("console");
                if category == "console" {
                    let text = ev.body["output"].as_str().unwrap_or("");
                    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
                        s.console.push_back(crate::text::cut(line, CONSOLE_LINE_MAX).0);
                        if s.console.len() > CONSOLE_TAIL_LINES {
                            s.console.pop_front();
                        }
                    }
                } else if matches!(category, "stdout" | "stderr") {
                    let text = ev.body["output"].as_str().unwrap_or("");
                    s.output.extend(text.bytes());
                    let over = s.output.len().saturating_sub(MAX_OUTPUT);
                    if over > 0 {
                        s.output.drain(..over);
                        s.dropped += over as u64;
                    }
                }
            }
            _ => {}
        }
        drop(s);
        self.changed.notify_waiters();
    }
}

/// The targets of a session — its one connection, or every process a
/// js-debug launch follows (`super::targets`) — and what a new one is
/// configured with.
#[derive(Default)]
pub(super) struct Targets {
    /// Every target connection opened, oldest first (each is disconnected
    /// when the session ends).
    pub(super) all: Vec<DapClient>,
    /// The one ops go to: the target that stopped last, else the newest
    /// whose process runs.
    pub(super) current: Option<DapClient>,
    /// The targets whose process has not ended.
    pub(super) live: Vec<DapClient>,
    /// Targets announced and not yet connected (or given up).
    pub(super) pending: usize,
    /// Targets connected so far (names them, and tells a wait for the next
    /// one that it came).
    pub(super) opened: usize,
    /// The breakpoints a new target gets, kept current by `breakpoints`.
    pub(super) breakpoints: BTreeMap<PathBuf, Vec<BreakpointSpec>>,
    /// The function breakpoints a new target gets, kept current by `breakpoints`.
    pub(super) functions: Vec<String>,
    /// The run's working directory (where their answers are shown from).
    pub(super) workdir: PathBuf,
    /// The exception filters a new target gets, kept current by `exceptions`.
    pub(super) exceptions: Vec<String>,
    /// The adapter's capabilities (what a breakpoint may ask of it), once
    /// it answered `initialize`.
    pub(super) caps: Option<Capabilities>,
}

impl Targets {
    /// A target connected: the one ops go to unless another is stopped.
    pub(super) fn join(&mut self, client: &DapClient, stopped: bool) {
        self.all.push(client.clone());
        self.live.push(client.clone());
        if !stopped || self.current.is_none() {
            self.current = Some(client.clone());
        }
        self.opened += 1;
    }

    /// Whether the run is between processes: it had some, none runs now
    /// (a change of breakpoints waits for the next one).
    pub(super) fn between(&self) -> bool {
        !self.all.is_empty() && self.live.is_empty()
    }

    /// The live targets but `client`: where a change of breakpoints or
    /// exception filters goes besides.
    pub(super) fn others(&self, client: &DapClient) -> Vec<DapClient> {
        self.live.iter().filter(|c| !c.same(client)).cloned().collect()
    }
}

impl AdapterState {
    /// The target connection ops go to, `fallback` when there is none (an
    /// adapter with one connection).
    pub(super) fn target_or(&self, fallback: &DapClient) -> DapClient {
        self.targets.lock().current.clone().unwrap_or_else(|| fallback.clone())
    }

    /// Hands a change of breakpoints or exception filters to every live
    /// target but `client` (the one whose answer the op gives), each
    /// answering on its own; tells whether the run is between processes
    /// (the change then waits for the next one).
    pub(super) fn to_others<Fut>(&self, client: &DapClient, send: impl Fn(DapClient) -> Fut) -> bool
    where
        Fut: std::future::Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        let (others, between) = {
            let t = self.targets.lock();
            (t.others(client), t.between())
        };
        for other in others {
            tokio::spawn(send(other));
        }
        between
    }
}
