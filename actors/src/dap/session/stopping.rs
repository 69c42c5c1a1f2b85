//! The ops that decide where the program stops: `breakpoints` (by line
//! and by function), `exceptions` and `run_to`. Before a launch they are kept and applied at
//! configuration; during a session they go to the adapter at once, checked
//! against its capabilities, and answer where each breakpoint bound.

use std::path::PathBuf;

use actix::prelude::*;
use serde_json::Value;

use super::bindings::{Bindings, BoundView};
use super::breakpoints::{BreakpointSpec, unsupported};
use super::functions::{functions_unsupported, send_functions};
use super::ops::{Resume, dap_id, request_failed, settle};
use super::{
    Answer, DebugReply, DebugSessionActor, ExceptionsSet, Failure, FunctionsSet, Lead, LinesSet, RUN_WAIT,
    RunState,
};
use crate::dap::adapters::filters::{UNCAUGHT, choose_filters, exception_arguments, offered_filters};

type Reply = AtomicResponse<DebugSessionActor, DebugReply>;

/// An answer still to come, to chain with another (`breakpoints` with
/// both `file` and `functions`).
type Pending = ResponseActFuture<DebugSessionActor, DebugReply>;

fn ready(r: DebugReply) -> Reply {
    AtomicResponse::new(Box::pin(fut::ready(r)))
}

fn now(r: DebugReply) -> Pending {
    Box::pin(fut::ready(r))
}

impl DebugSessionActor {
    /// `breakpoints`: a file's, the functions', or both in one answer.
    pub(super) fn breakpoints(
        &mut self,
        lines: Option<(PathBuf, Vec<BreakpointSpec>)>,
        functions: Option<Vec<String>>,
    ) -> Reply {
        self.asked_anew(lines.as_ref().map(|(file, _)| file.as_path()), functions.is_some());
        match (lines, functions) {
            (Some((file, specs)), None) => AtomicResponse::new(self.set_breakpoints(file, specs)),
            (None, Some(names)) => AtomicResponse::new(self.set_functions(names)),
            (Some((file, specs)), Some(names)) => {
                AtomicResponse::new(Box::pin(self.set_breakpoints(file, specs).then(move |lines, act, _| {
                    act.set_functions(names).map(move |functions, _, _| both(lines, functions))
                })))
            }
            (None, None) => ready(DebugReply::failed(Failure::NothingToSet)),
        }
    }

    pub(super) fn set_breakpoints(&mut self, file: PathBuf, specs: Vec<BreakpointSpec>) -> Pending {
        let rel = self.rel(&file);
        let Some(s) = &self.session else {
            if specs.is_empty() {
                self.breakpoints.remove(&file);
                return now(DebugReply::found(Answer::Lines(LinesSet::Cleared { file: rel })));
            }
            self.breakpoints.insert(file, specs.clone());
            return now(DebugReply::found(Answer::Lines(LinesSet::Held { file: rel, specs })));
        };
        if let Some(why) = unsupported(s.adapter.id, &s.caps, &specs) {
            return now(DebugReply::failed(Failure::Refused { op: "breakpoints", why }));
        }
        let (client, shared, workdir) =
            (s.shared.target_or(&s.client), s.shared.clone(), self.workdir.clone());
        if specs.is_empty() {
            self.breakpoints.remove(&file);
        } else {
            self.breakpoints.insert(file.clone(), specs.clone());
        }
        // The processes a session follows from here get them too.
        s.shared.targets.lock().breakpoints = self.breakpoints.clone();
        Box::pin(
            async move {
                // The other processes of a followed run take them too; the
                // answer is the one ops go to.
                let between = shared.to_others(&client, |other| {
                    let (file, bps) = (file.clone(), BreakpointSpec::all_to_dap(&specs));
                    async move { other.set_breakpoints(&file, bps).await }
                });
                if between {
                    return DebugReply::found(Answer::Lines(LinesSet::Between { file: rel, specs }));
                }
                let body = match client.set_breakpoints(&file, BreakpointSpec::all_to_dap(&specs)).await {
                    Ok(body) => body,
                    Err(e) => return DebugReply::failed(request_failed("setBreakpoints", e)),
                };
                shared.state.lock().bindings.record(&file, &specs, &body);
                if specs.is_empty() {
                    return DebugReply::found(Answer::Lines(LinesSet::Cleared { file: rel }));
                }
                let mut one = Bindings::default();
                one.record(&file, &specs, &body);
                DebugReply::found(Answer::Lines(LinesSet::Bound(one.view(&workdir))))
            }
            .into_actor(self),
        )
    }

    /// Sets the function breakpoints to `names` (all of them; empty clears
    /// them): held until a session starts, else sent at once where the
    /// adapter offers them, answering where each bound.
    pub(super) fn set_functions(&mut self, names: Vec<String>) -> Pending {
        let cleared = || DebugReply::found(Answer::Functions(FunctionsSet::Cleared));
        let Some(s) = &self.session else {
            if names.is_empty() {
                self.functions.clear();
                return now(cleared());
            }
            self.functions = names.clone();
            return now(DebugReply::found(Answer::Functions(FunctionsSet::Held(names))));
        };
        if let Some(why) = functions_unsupported(s.adapter.id, &s.caps) {
            // None can have been set: there is nothing to clear.
            if names.is_empty() {
                self.functions.clear();
                return now(cleared());
            }
            return now(DebugReply::failed(Failure::Refused { op: "breakpoints", why }));
        }
        let (quirks, client, shared, workdir) =
            (s.adapter.quirks, s.shared.target_or(&s.client), s.shared.clone(), self.workdir.clone());
        self.functions = names.clone();
        // The processes a session follows from here get them too.
        s.shared.targets.lock().functions = names.clone();
        Box::pin(
            async move {
                let between = shared.to_others(&client, |other| {
                    let names = names.clone();
                    async move { send_functions(&other, quirks, &names).await }
                });
                if between {
                    return DebugReply::found(Answer::Functions(FunctionsSet::Between(names)));
                }
                let body = match send_functions(&client, quirks, &names).await {
                    Ok(body) => body,
                    Err(e) => return DebugReply::failed(request_failed("setFunctionBreakpoints", e)),
                };
                let mut st = shared.state.lock();
                st.bindings.record_functions(quirks, &workdir, &names, &body);
                if names.is_empty() {
                    return cleared();
                }
                let view = BoundView { files: Vec::new(), functions: st.bindings.view(&workdir).functions };
                DebugReply::found(Answer::Functions(FunctionsSet::Bound(view)))
            }
            .into_actor(self),
        )
    }

    pub(super) fn set_exceptions(&mut self, filters: Option<Vec<String>>) -> Reply {
        let Some(s) = &self.session else {
            return match filters {
                None => ready(DebugReply::found(Answer::Exceptions(ExceptionsSet::AtLaunch(
                    self.exception_filters.clone(),
                )))),
                Some(f) => {
                    self.exception_filters = Some(f.clone());
                    ready(DebugReply::found(Answer::Exceptions(ExceptionsSet::Held(f))))
                }
            };
        };
        let offered = offered_filters(s.adapter.quirks, &s.caps, s.test_run);
        let Some(asked) = filters else {
            let on = s.exceptions.clone();
            return ready(DebugReply::found(Answer::Exceptions(ExceptionsSet::Offered {
                adapter: s.adapter.id,
                stops_by_itself: s.adapter.quirks.stops_on_panic,
                on,
                offered,
            })));
        };
        let chosen = match choose_filters(Some(&asked), &offered) {
            Ok(c) => c,
            Err(why) => {
                return ready(DebugReply::failed(Failure::Refused { op: "exceptions", why: why.into() }));
            }
        };
        let client = s.shared.target_or(&s.client);
        s.shared.targets.lock().exceptions = chosen.clone();
        let quirks = s.adapter.quirks;
        // The postmortem mode is the program's, chosen when it started.
        let uncaught = |f: &[String]| f.iter().any(|f| f == UNCAUGHT);
        let next_launch = quirks.uncaught_at_launch && uncaught(&chosen) != uncaught(&s.exceptions);
        self.exception_filters = Some(chosen.clone());
        let shared = s.shared.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let args = exception_arguments(quirks, &chosen);
                shared.to_others(&client, |other| {
                    let args = args.clone();
                    async move { other.set_exception_breakpoints(&args).await }
                });
                match client.set_exception_breakpoints(&args).await {
                    Ok(_) => {
                        let applied = ExceptionsSet::Applied { filters: chosen.clone(), next_launch };
                        (DebugReply::found(Answer::Exceptions(applied)), Some(chosen))
                    }
                    Err(e) => (DebugReply::failed(request_failed("setExceptionBreakpoints", e)), None),
                }
            }
            .into_actor(self)
            .map(|(reply, applied), act, _| {
                if let (Some(applied), Some(s)) = (applied, act.session.as_mut()) {
                    s.exceptions = applied;
                }
                reply
            }),
        ))
    }

    /// Continues to `file:line` once: a temporary breakpoint joins the
    /// file's own for the run and leaves after it, whatever the stop.
    pub(super) fn run_to(&mut self, file: PathBuf, line: u32, thread: Option<i64>) -> Reply {
        let Some(s) = &self.session else {
            return ready(DebugReply::failed(self.no_session()));
        };
        let rel = self.rel(&file);
        let (client, shared, workdir) =
            (s.shared.target_or(&s.client), s.shared.clone(), self.workdir.clone());
        // The file's own breakpoints ride along — unless the adapter could
        // not take them at launch (a kind it does not support): then they
        // are not set now either.
        let own = self
            .breakpoints
            .get(&file)
            .cloned()
            .filter(|specs| unsupported(s.adapter.id, &s.caps, specs).is_none())
            .unwrap_or_default();
        // The file's own plain breakpoint on the line serves; one with a
        // condition, hit count or log message would not stop every time.
        let mut with_target = own.clone();
        let plain = |b: &BreakpointSpec| {
            b.line == line && b.condition.is_none() && b.hit_condition.is_none() && b.log_message.is_none()
        };
        let target_at = match own.iter().position(plain) {
            Some(at) => at,
            None => {
                with_target.push(BreakpointSpec::at(line));
                with_target.len() - 1
            }
        };
        let set = move |client: crate::wire::dap::DapClient, specs: Vec<BreakpointSpec>, file: PathBuf| async move {
            client.set_breakpoints(&file, BreakpointSpec::all_to_dap(&specs)).await
        };
        AtomicResponse::new(Box::pin(
            async move {
                let body = match set(client.clone(), with_target.clone(), file.clone()).await {
                    Ok(b) => b,
                    Err(e) => return DebugReply::failed(run_to_failed("setBreakpoints", e)),
                };
                let target = body.get(target_at);
                let bound = target.is_some_and(|t| t.verified);
                let bound_line = target.and_then(|t| t.line).unwrap_or(u64::from(line));
                let restore = |reply: DebugReply| async {
                    if let Ok(body) = set(client.clone(), own.clone(), file.clone()).await {
                        shared.state.lock().bindings.record(&file, &own, &body);
                    }
                    reply
                };
                if !bound {
                    let why =
                        target.and_then(|t| t.message.as_deref()).unwrap_or("the adapter gave no reason");
                    let why = why.to_string();
                    return restore(DebugReply::failed(Failure::RunToUnbound { file: rel, line, why })).await;
                }
                let (before, stopped) = {
                    let st = shared.state.lock();
                    (st.stops, st.stop.as_ref().and_then(|s| s.thread))
                };
                let thread = thread.or(stopped).unwrap_or(1);
                let sent = match dap_id(thread) {
                    Ok(thread) => Resume::Continue.send(&client, thread).await.map_err(|e| e.to_string()),
                    Err(why) => Err(why),
                };
                if let Err(e) = sent {
                    return restore(DebugReply::failed(run_to_failed("continue", e))).await;
                }
                shared.state.lock().resumed(before);
                let mut reply = settle(&shared, &client, before, &workdir, RUN_WAIT).await;
                let at_target = matches!(&reply.state(), Some(RunState::Stopped(Some(at)))
                    if at.path.as_deref() == Some(rel.as_str()) && at.line == bound_line);
                if reply.state() == Some(RunState::Running) {
                    reply = reply.led(Lead::RunToMissed { target: format!("{rel}:{bound_line}") });
                } else if matches!(reply.state(), Some(RunState::Stopped(_))) && !at_target {
                    reply = reply.led(Lead::RunToEarly { target: format!("{rel}:{bound_line}") });
                } else if bound_line != u64::from(line) {
                    reply = reply.led(Lead::RunToMoved { file: rel, line, bound_line });
                }
                restore(reply).await
            }
            .into_actor(self)
            .map(|reply, act, _| {
                act.remember(&reply);
                reply
            }),
        ))
    }
}

/// Two answers as one: line after line, the data merged (`other`'s keys
/// win), an error if either is.
fn both(first: DebugReply, other: DebugReply) -> DebugReply {
    let data = match (first.data, other.data) {
        (Value::Object(mut a), Value::Object(b)) => {
            a.extend(b);
            Value::Object(a)
        }
        (Value::Null, b) => b,
        (a, Value::Null) => a,
        (_, b) => b,
    };
    DebugReply {
        answer: Answer::Pair(Box::new(first.answer), Box::new(other.answer)),
        lead: first.lead.or(other.lead),
        data,
        notes: [first.notes, other.notes].concat(),
        bound: other.bound.or(first.bound),
    }
}

/// `request`, sent by `run_to`, failed with `error`.
fn run_to_failed(request: &str, error: impl std::fmt::Display) -> Failure {
    Failure::Request { during: Some("run_to"), request: request.to_string(), error: error.to_string() }
}
