//! The ops on a live session — steps, threads, stack, scopes, variables,
//! evaluate — and waiting for the program to stop, exit or go away.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use dap_types::EvaluateArgumentsContext;

use crate::dap::adapters::Adapter;

use super::snapshot::snapshot;
use super::state::{AdapterState, Parent};
use super::{
    Answer, DebugOp, DebugReply, EXIT_REPORT_WAIT, Evaluated, Failure, MAX_CHILDREN, MAX_FRAMES, MAX_THREADS,
    MAX_VALUE, REQUEST_TIMEOUT, RUN_WAIT, ScopeAt, Settled, ShownVariable, StackFrameAt, Unfit,
};
use crate::wire::dap::{DapClient, Ended, SendError};
use dap_types::requests;

use super::replies::{NotRead, display, typed};
use crate::text::cut;

/// Waits for the next stop, exit or closure after `before` stops; the
/// answer's notes say what went wrong out of sight meanwhile.
pub(super) async fn settle(
    shared: &AdapterState,
    client: &DapClient,
    before: u64,
    workdir: &Path,
    wait: Duration,
) -> DebugReply {
    let mut reply = DebugReply::settled(settle_once(shared, client, before, workdir, wait).await);
    reply.notes = std::mem::take(&mut shared.state.lock().notes);
    reply
}

async fn settle_once(
    shared: &AdapterState,
    client: &DapClient,
    mut before: u64,
    workdir: &Path,
    wait: Duration,
) -> Settled {
    let cancel = shared.op_cancel.lock().clone();
    let deadline = std::time::Instant::now() + wait;
    let mut ran_on = false;
    let done = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let until_settled = shared.wait_for(left, |s| {
            s.stops > before || s.terminated || s.exit_code.is_some() || s.closed.is_some()
        });
        let done = tokio::select! {
            done = until_settled => done,
            () = cancel.cancelled() => return Settled::Cancelled,
        };
        // A stop the program ran on from before it could be read (js-debug
        // pausing a TypeScript loader's file as it loads, then resuming it;
        // another thread's step) is not where it settled: the next stop or
        // end is waited for within the same bound.
        let s = shared.state.lock();
        let gone = s.stop.is_none() && !s.terminated && s.exit_code.is_none() && s.closed.is_none();
        if done && s.stops > before && gone {
            ran_on = true;
            before = s.stops;
            continue;
        }
        break done;
    };
    if !done && ran_on {
        return Settled::RanOn;
    }
    // js-debug: the program's last output (a test runner's verdict) comes
    // on the parent connection, which says the run ended after the child.
    let ended_before_parent = {
        let s = shared.state.lock();
        s.parent == Parent::Open && s.stops == before && s.terminated
    };
    if ended_before_parent {
        shared.wait_for(EXIT_REPORT_WAIT, |s| s.parent != Parent::Open).await;
    }
    // The adapter's pipe closes before its exit status is known; wait a moment for the cause.
    if shared.state.lock().closed.is_some() {
        shared.wait_for(EXIT_REPORT_WAIT, |s| s.closed.as_ref().is_some_and(Ended::is_exit)).await;
    }
    let (stop, exit, terminated, closed, stops) = {
        let s = shared.state.lock();
        (s.stop.clone(), s.exit_code, s.terminated, s.closed.clone(), s.stops)
    };
    if !done {
        return Settled::Running { waited: Some(wait) };
    }
    if stops > before {
        return match stop {
            // The stop may be another process's than the one resumed (the
            // next test file of a followed run).
            Some(stop) => snapshot(&shared.target_or(client), &stop, workdir).await,
            // Stopped, then continued (by the adapter, or another thread's
            // step) before tether could look.
            None => Settled::RanOn,
        };
    }
    // A run that ended with breakpoints none of which bound says so: the
    // likeliest reason it never stopped.
    let none_bound = shared.state.lock().bindings.none_bound(workdir);
    if let Some(code) = exit {
        return Settled::Exited { code, none_bound };
    }
    if terminated {
        return Settled::Terminated { none_bound };
    }
    match closed {
        Some(why) => Settled::AdapterGone(why.reason().to_string()),
        None => Settled::Running { waited: None },
    }
}

/// The requests that set a stopped program running.
#[derive(Debug, Clone, Copy)]
pub(super) enum Resume {
    Continue,
    Next,
    StepIn,
    StepOut,
}

impl Resume {
    /// Its DAP command.
    fn command(self) -> &'static str {
        match self {
            Resume::Continue => "continue",
            Resume::Next => "next",
            Resume::StepIn => "stepIn",
            Resume::StepOut => "stepOut",
        }
    }

    /// Sends it for `thread`. Once the adapter said yes the program runs,
    /// whatever the answer's body holds: the body is not read.
    pub(super) async fn send(self, client: &DapClient, thread_id: u64) -> Result<(), SendError> {
        let (single_thread, granularity) = (None, None);
        let sent = match self {
            Resume::Continue => {
                let arguments = dap_types::ContinueArguments { thread_id, single_thread };
                client.send::<requests::Continue>(&arguments, REQUEST_TIMEOUT).await.map(drop)
            }
            Resume::Next => {
                let arguments = dap_types::NextArguments { thread_id, single_thread, granularity };
                client.send::<requests::Next>(&arguments, REQUEST_TIMEOUT).await
            }
            Resume::StepIn => {
                let arguments =
                    dap_types::StepInArguments { thread_id, single_thread, target_id: None, granularity };
                client.send::<requests::StepIn>(&arguments, REQUEST_TIMEOUT).await
            }
            Resume::StepOut => {
                let arguments = dap_types::StepOutArguments { thread_id, single_thread, granularity };
                client.send::<requests::StepOut>(&arguments, REQUEST_TIMEOUT).await
            }
        };
        acted(sent)
    }
}

/// A request the adapter acted on once it said yes (`pause`, the steps):
/// an answer whose body does not fit is still a yes.
fn acted<T>(sent: Result<T, SendError>) -> Result<(), SendError> {
    match sent {
        Ok(_) | Err(SendError::Unfit { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// An id of the adapter's as DAP's types hold it; none for a negative
/// one, which no adapter gives (the tool refuses it before it gets here).
pub(super) fn dap_id(id: i64) -> Result<u64, String> {
    u64::try_from(id).map_err(|_| format!("{id} is not an id the adapter gave (they are not negative)"))
}

/// A typed request for `op` failed: on the wire, or with an answer that
/// does not fit.
fn send_failed(op: &str, error: SendError) -> Failure {
    match error {
        SendError::Request(e) => request_failed(op, e),
        SendError::Unfit { command, error, began } => {
            Failure::Unfit(Unfit { op: op.to_string(), field: command.to_string(), error, began })
        }
    }
}

/// `request` failed with `error`.
pub(super) fn request_failed(request: &str, error: impl std::fmt::Display) -> Failure {
    Failure::Request { during: None, request: request.to_string(), error: error.to_string() }
}

/// Ops that need a live session and only read or step it.
pub(super) async fn inspect(
    op: DebugOp,
    adapter: Adapter,
    client: DapClient,
    shared: Arc<AdapterState>,
    workdir: PathBuf,
) -> DebugReply {
    let stopped_thread = || shared.state.lock().stop.as_ref().and_then(|s| s.thread);
    let thread_or = |t: Option<i64>| t.or_else(stopped_thread);
    let step = |resume: Resume, t: Option<i64>| {
        let client = client.clone();
        let shared = shared.clone();
        let workdir = workdir.clone();
        async move {
            let command = resume.command();
            let before = shared.state.lock().stops;
            let Some(thread) = t else {
                return DebugReply::failed(Failure::NotStopped { op: command.to_string() });
            };
            let thread = match dap_id(thread) {
                Ok(id) => id,
                Err(why) => return DebugReply::failed(request_failed(command, why)),
            };
            shared.state.lock().pausing = false;
            if let Err(e) = resume.send(&client, thread).await {
                return DebugReply::failed(request_failed(command, e));
            }
            shared.state.lock().resumed(before);
            settle(&shared, &client, before, &workdir, RUN_WAIT).await
        }
    };
    match op {
        DebugOp::Continue { thread } => {
            let last = shared.state.lock().last_thread;
            step(Resume::Continue, thread_or(thread).or(last).or(Some(1))).await
        }
        DebugOp::StepOver { thread } => step(Resume::Next, thread_or(thread)).await,
        DebugOp::StepIn { thread } => step(Resume::StepIn, thread_or(thread)).await,
        DebugOp::StepOut { thread } => step(Resume::StepOut, thread_or(thread)).await,
        DebugOp::Pause { thread } => {
            let before = shared.state.lock().stops;
            let thread = thread_or(thread).or(shared.state.lock().last_thread).unwrap_or(1);
            shared.state.lock().pausing = true;
            let thread_id = match dap_id(thread) {
                Ok(id) => id,
                Err(why) => return DebugReply::failed(request_failed("pause", why)),
            };
            let pause = dap_types::PauseArguments { thread_id };
            if let Err(e) = acted(client.send::<requests::Pause>(&pause, REQUEST_TIMEOUT).await) {
                return DebugReply::failed(request_failed("pause", e));
            }
            settle(&shared, &client, before, &workdir, RUN_WAIT).await
        }
        DebugOp::Threads => match client.send::<requests::Threads>(&(), REQUEST_TIMEOUT).await {
            Ok(dap_types::ThreadsResponse { threads }) => {
                let listed =
                    threads.iter().take(MAX_THREADS).map(|t| (t.id, cut(&t.name, MAX_VALUE).0)).collect();
                DebugReply::found(Answer::Threads { listed, total: threads.len() })
            }
            Err(e) => DebugReply::failed(send_failed("threads", e)),
        },
        DebugOp::Stack { thread } => {
            let Some(thread) = thread_or(thread) else {
                return DebugReply::failed(Failure::StackNotStopped);
            };
            match typed("stack", "stackFrames", client.stack_trace(thread, MAX_FRAMES + 1).await) {
                Ok(trace) => {
                    let frames = trace.stack_frames;
                    let total =
                        trace.total_frames.map(|t| t as usize).unwrap_or(frames.len()).max(frames.len());
                    let frames = frames
                        .into_iter()
                        .take(MAX_FRAMES)
                        .map(|f| {
                            let path = f.source.and_then(|s| s.path);
                            StackFrameAt {
                                id: f.id,
                                name: f.name,
                                shown_path: path.as_deref().map(|p| display(&workdir, p)),
                                path,
                                line: f.line,
                            }
                        })
                        .collect();
                    DebugReply::found(Answer::Stack { frames, total })
                }
                Err(NotRead::Unfit(unfit)) => DebugReply::failed(Failure::Unfit(unfit)),
                Err(NotRead::Failed(e)) => DebugReply::failed(request_failed("stack", e)),
            }
        }
        DebugOp::Scopes { frame: None } => DebugReply::failed(Failure::NeedsFrame),
        DebugOp::Scopes { frame: Some(frame) } => {
            let frame_id = match dap_id(frame) {
                Ok(id) => id,
                Err(error) => return DebugReply::failed(Failure::Scopes { frame, error }),
            };
            let arguments = dap_types::ScopesArguments { frame_id };
            match client.send::<requests::Scopes>(&arguments, REQUEST_TIMEOUT).await {
                Ok(dap_types::ScopesResponse { scopes }) => {
                    let scopes = scopes
                        .iter()
                        .map(|s| ScopeAt {
                            name: cut(&s.name, MAX_VALUE).0,
                            reference: s.variables_reference,
                            expensive: s.expensive,
                        })
                        .collect();
                    DebugReply::found(Answer::Scopes(scopes))
                }
                Err(SendError::Request(e)) => {
                    DebugReply::failed(Failure::Scopes { frame, error: e.to_string() })
                }
                Err(unfit) => DebugReply::failed(send_failed("scopes", unfit)),
            }
        }
        DebugOp::Variables { reference } => {
            let variables_reference = match dap_id(reference) {
                Ok(id) => id,
                Err(error) => return DebugReply::failed(Failure::Variables { reference, error }),
            };
            let arguments = dap_types::VariablesArguments {
                variables_reference,
                filter: None,
                start: None,
                count: None,
                format: None,
            };
            match client.send::<requests::Variables>(&arguments, REQUEST_TIMEOUT).await {
                Ok(dap_types::VariablesResponse { variables: vars }) => {
                    let total = vars.len();
                    let listed = vars
                        .into_iter()
                        .take(MAX_CHILDREN)
                        .map(|v| {
                            let (value, was_cut) = cut(&v.value, MAX_VALUE);
                            ShownVariable {
                                name: v.name,
                                value,
                                cut: was_cut,
                                ty: v.type_,
                                reference: v.variables_reference,
                            }
                        })
                        .collect();
                    DebugReply::found(Answer::Variables { listed, total })
                }
                Err(SendError::Request(e)) => {
                    DebugReply::failed(Failure::Variables { reference, error: e.to_string() })
                }
                Err(unfit) => DebugReply::failed(send_failed("variables", unfit)),
            }
        }
        DebugOp::Evaluate { expression, frame } => {
            let frame = match frame {
                Some(f) => dap_id(f).ok(),
                None => match stopped_thread() {
                    Some(t) => {
                        client.stack_trace(t, 1).await.ok().and_then(|t| t.stack_frames.first().map(|f| f.id))
                    }
                    None => None,
                },
            };
            // lldb-dap and delve read "repl" input as their own commands
            // (`(int) $0 = 7`); "watch" evaluates the expression itself.
            let context = if adapter.quirks.evaluate_in_repl {
                EvaluateArgumentsContext::Repl
            } else {
                EvaluateArgumentsContext::Watch
            };
            let arguments = dap_types::EvaluateArguments {
                expression: expression.clone(),
                frame_id: frame,
                context: Some(context),
                format: None,
            };
            match client.send::<requests::Evaluate>(&arguments, REQUEST_TIMEOUT).await {
                Ok(answer) => {
                    let (value, was_cut) = cut(&answer.result, MAX_VALUE);
                    DebugReply::found(Answer::Evaluated(Evaluated {
                        value,
                        cut: was_cut,
                        ty: answer.type_.as_deref().map(|t| cut(t, MAX_VALUE).0),
                        reference: i64::try_from(answer.variables_reference).unwrap_or(0),
                        expression,
                    }))
                }
                Err(e) => DebugReply::failed(Failure::Evaluate { expression, error: e.to_string() }),
            }
        }
        _ => DebugReply::failed(Failure::UnknownOp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::pending::RequestError;

    #[test]
    fn a_resume_the_adapter_said_yes_to_is_done_whatever_its_body() {
        let odd =
            SendError::Unfit { command: "next", error: "expected unit".into(), began: "{\"x\":1}".into() };
        assert!(acted::<()>(Err(odd)).is_ok());
        let refused = SendError::Request(RequestError::Closed("gone".into()));
        assert!(acted::<()>(Err(refused)).is_err());
    }

    #[test]
    fn a_negative_id_is_never_sent() {
        assert_eq!(dap_id(7), Ok(7));
        assert_eq!(dap_id(-1), Err("-1 is not an id the adapter gave (they are not negative)".into()));
    }
}
