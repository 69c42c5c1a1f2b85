//! The ops that decide where the program stops: `breakpoints` (by line
//! and by function), `exceptions` and `run_to`. Before a launch they are kept and applied at
//! configuration; during a session they go to the adapter at once, checked
//! against its capabilities, and answer where each breakpoint bound.

use std::path::PathBuf;

use actix::prelude::*;
use serde_json::{Value, json};

use super::breakpoints::{Bindings, BoundView, BreakpointSpec, unsupported};
use super::failure::Refusal;
use super::functions::{functions_unsupported, send_functions};
use super::ops::{request_failed, settle};
use super::{
    Answer, DebugReply, DebugSessionActor, ExceptionsSet, Failure, FunctionsSet, Lead, LinesSet,
    REQUEST_TIMEOUT, RUN_WAIT, RunState,
};

/// The exception filters a new session gets: stop on uncaught exceptions,
/// where the adapter offers that, so "run it and see where it breaks" is
/// one `launch`. Each adapter names the filter its own way (debugpy
/// `uncaught`, dart `Unhandled`); only those the adapter offers are set.
/// In a `node:test` run, failed assertions too ([`ASSERTIONS`]): the
/// runner catches them, so a failing test would otherwise run to its end.
pub(super) const DEFAULT_EXCEPTION_FILTERS: &[&str] = &[UNCAUGHT, "Unhandled", ASSERTIONS];

/// tether's own filter in a js-debug `node:test` run: stop where an
/// assertion fails (node:assert's `ERR_ASSERTION`, or an error whose name
/// ends in `AssertionError`: chai, jest's `expect`), caught or not. It is
/// js-debug's `all` filter with [`ASSERTION_CONDITION`]. Only test runs
/// offer it: js-debug never stops in a file it skips, so they skip node's
/// `assert` no more (see `js_debug::SKIPPED_IN_TESTS`), and a program's
/// `pause` could then land in node's code.
pub(super) const ASSERTIONS: &str = "assertions";

/// The filter of exceptions nothing catches, in debugpy's and js-debug's
/// name, which tether gives rdbg too.
pub(super) const UNCAUGHT: &str = "uncaught";

/// rdbg's `uncaught`: the `debug` gem offers only filters that stop where
/// an exception is raised, rescued or not (`any`, `RuntimeError`); an
/// exception nothing rescues is its postmortem mode, which the program is
/// started in (`RUBY_DEBUG_POSTMORTEM`), so it is chosen at launch.
const RDBG_UNCAUGHT: &str =
    "uncaught exceptions, where they were raised (postmortem: no stepping on; set at launch)";

/// The condition js-debug evaluates, with the thrown value as `error`, for
/// [`ASSERTIONS`].
const ASSERTION_CONDITION: &str = "error !== null && typeof error === 'object' && (error.code === 'ERR_ASSERTION' || /AssertionError$/.test(String(error.name)))";

/// The adapter's exception filters: `(filter, label)`, and tether's
/// [`ASSERTIONS`] in a js-debug test run (`test_run`) where js-debug takes
/// a condition on its `all` filter.
pub(super) fn offered_filters(adapter: &str, caps: &Value, test_run: bool) -> Vec<(String, String)> {
    let filters = caps["exceptionBreakpointFilters"].as_array().cloned().unwrap_or_default();
    let mut offered: Vec<(String, String)> = filters
        .iter()
        .filter_map(|f| {
            let id = f["filter"].as_str()?.to_string();
            let label = f["label"].as_str().unwrap_or(&id).to_string();
            Some((id, label))
        })
        .collect();
    if adapter == "rdbg" {
        offered.insert(0, (UNCAUGHT.into(), RDBG_UNCAUGHT.into()));
    }
    let conditional_all = filters.iter().any(|f| f["filter"] == "all" && f["supportsCondition"] == true);
    if adapter == "js-debug" && test_run && conditional_all && caps["supportsExceptionFilterOptions"] == true
    {
        offered.push((ASSERTIONS.into(), "Failed assertions, even when a test runner catches them".into()));
    }
    offered
}

/// The `setExceptionBreakpoints` arguments for `chosen`: tether's
/// [`ASSERTIONS`] is js-debug's `all` with a condition (left out when `all`
/// itself is on: it stops there anyway); rdbg's [`UNCAUGHT`] is no filter
/// of the adapter's.
pub(super) fn exception_arguments(adapter: &str, chosen: &[String]) -> Value {
    let filters: Vec<&String> =
        chosen.iter().filter(|f| *f != ASSERTIONS && !(adapter == "rdbg" && *f == UNCAUGHT)).collect();
    let options: Vec<Value> = if chosen.iter().any(|f| f == ASSERTIONS) && !chosen.iter().any(|f| f == "all")
    {
        vec![json!({"filterId": "all", "condition": ASSERTION_CONDITION})]
    } else {
        Vec::new()
    };
    if options.is_empty() {
        json!({"filters": filters})
    } else {
        json!({"filters": filters, "filterOptions": options})
    }
}

/// The filters to set: those asked for (or the default), each checked
/// against what the adapter offers. `Err` names the unknown ones.
pub(super) fn choose_filters(
    asked: Option<&[String]>,
    offered: &[(String, String)],
) -> Result<Vec<String>, Refusal> {
    let known = |f: &str| offered.iter().any(|(id, _)| id == f);
    match asked {
        None => Ok(DEFAULT_EXCEPTION_FILTERS.iter().filter(|f| known(f)).map(|f| f.to_string()).collect()),
        Some(asked) => {
            let unknown: Vec<&str> = asked.iter().map(String::as_str).filter(|f| !known(f)).collect();
            if unknown.is_empty() {
                Ok(asked.to_vec())
            } else {
                Err(Refusal::Filters {
                    assertions: unknown.contains(&ASSERTIONS),
                    unknown: unknown.into_iter().map(str::to_string).collect(),
                    offered: offered.to_vec(),
                })
            }
        }
    }
}

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
        if let Some(why) = unsupported(s.adapter, &s.caps, &specs) {
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
                let bps: Vec<Value> = specs.iter().map(BreakpointSpec::to_dap).collect();
                let args = json!({"source": {"path": file}, "breakpoints": bps});
                // The other processes of a followed run take them too; the
                // answer is the one ops go to.
                let (others, between) = {
                    let t = shared.targets.lock();
                    (t.others(&client), t.between())
                };
                for other in others {
                    tokio::spawn(other.request("setBreakpoints", args.clone(), REQUEST_TIMEOUT));
                }
                if between {
                    return DebugReply::found(Answer::Lines(LinesSet::Between { file: rel, specs }));
                }
                let body = match client.request("setBreakpoints", args, REQUEST_TIMEOUT).await {
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
        if let Some(why) = functions_unsupported(s.adapter, &s.caps) {
            // None can have been set: there is nothing to clear.
            if names.is_empty() {
                self.functions.clear();
                return now(cleared());
            }
            return now(DebugReply::failed(Failure::Refused { op: "breakpoints", why }));
        }
        let (adapter, client, shared, workdir) =
            (s.adapter, s.shared.target_or(&s.client), s.shared.clone(), self.workdir.clone());
        self.functions = names.clone();
        // The processes a session follows from here get them too.
        s.shared.targets.lock().functions = names.clone();
        Box::pin(
            async move {
                let (others, between) = {
                    let t = shared.targets.lock();
                    (t.others(&client), t.between())
                };
                for other in others {
                    let names = names.clone();
                    tokio::spawn(
                        async move { send_functions(&other, adapter, &names, REQUEST_TIMEOUT).await },
                    );
                }
                if between {
                    return DebugReply::found(Answer::Functions(FunctionsSet::Between(names)));
                }
                let body = match send_functions(&client, adapter, &names, REQUEST_TIMEOUT).await {
                    Ok(body) => body,
                    Err(e) => return DebugReply::failed(request_failed("setFunctionBreakpoints", e)),
                };
                let mut st = shared.state.lock();
                st.bindings.record_functions(adapter, &workdir, &names, &body);
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
        let offered = offered_filters(s.adapter, &s.caps, s.test_run);
        let Some(asked) = filters else {
            let on = s.exceptions.clone();
            return ready(DebugReply::found(Answer::Exceptions(ExceptionsSet::Offered {
                adapter: s.adapter,
                on,
                offered,
            })));
        };
        let chosen = match choose_filters(Some(&asked), &offered) {
            Ok(c) => c,
            Err(why) => return ready(DebugReply::failed(Failure::Refused { op: "exceptions", why })),
        };
        let client = s.shared.target_or(&s.client);
        s.shared.targets.lock().exceptions = chosen.clone();
        let adapter = s.adapter;
        // The postmortem mode is the program's, chosen when it started.
        let uncaught = |f: &[String]| f.iter().any(|f| f == UNCAUGHT);
        let next_launch = adapter == "rdbg" && uncaught(&chosen) != uncaught(&s.exceptions);
        self.exception_filters = Some(chosen.clone());
        let others = s.shared.targets.lock().others(&client);
        AtomicResponse::new(Box::pin(
            async move {
                for other in others {
                    let args = exception_arguments(adapter, &chosen);
                    tokio::spawn(other.request("setExceptionBreakpoints", args, REQUEST_TIMEOUT));
                }
                match client
                    .request(
                        "setExceptionBreakpoints",
                        exception_arguments(adapter, &chosen),
                        REQUEST_TIMEOUT,
                    )
                    .await
                {
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
            .filter(|specs| unsupported(s.adapter, &s.caps, specs).is_none())
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
            let bps: Vec<Value> = specs.iter().map(BreakpointSpec::to_dap).collect();
            client
                .request(
                    "setBreakpoints",
                    json!({"source": {"path": file}, "breakpoints": bps}),
                    REQUEST_TIMEOUT,
                )
                .await
        };
        AtomicResponse::new(Box::pin(
            async move {
                let body = match set(client.clone(), with_target.clone(), file.clone()).await {
                    Ok(b) => b,
                    Err(e) => return DebugReply::failed(run_to_failed("setBreakpoints", e)),
                };
                let target = &body["breakpoints"][target_at];
                let bound = target["verified"].as_bool() == Some(true);
                let bound_line = target["line"].as_u64().unwrap_or(u64::from(line));
                let restore = |reply: DebugReply| async {
                    if let Ok(body) = set(client.clone(), own.clone(), file.clone()).await {
                        shared.state.lock().bindings.record(&file, &own, &body);
                    }
                    reply
                };
                if !bound {
                    let why = target["message"].as_str().unwrap_or("the adapter gave no reason");
                    let why = why.to_string();
                    return restore(DebugReply::failed(Failure::RunToUnbound { file: rel, line, why })).await;
                }
                let (before, stopped) = {
                    let st = shared.state.lock();
                    (st.stops, st.stop.as_ref().and_then(|s| s.thread))
                };
                let thread = thread.or(stopped).unwrap_or(1);
                if let Err(e) = client.request("continue", json!({"threadId": thread}), REQUEST_TIMEOUT).await
                {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn debugpy() -> Vec<(String, String)> {
        offered_filters(
            "debugpy",
            &json!({"exceptionBreakpointFilters": [
                {"filter": "raised", "label": "Raised Exceptions"},
                {"filter": "uncaught", "label": "Uncaught Exceptions", "default": true},
                {"filter": "userUnhandled", "label": "User Uncaught Exceptions"},
            ]}),
            false,
        )
    }

    #[test]
    fn the_default_is_uncaught_where_offered_and_nothing_elsewhere() {
        assert_eq!(choose_filters(None, &debugpy()).unwrap(), ["uncaught"]);
        assert!(choose_filters(None, &[]).unwrap().is_empty());
    }

    #[test]
    fn rdbg_gets_uncaught_as_its_postmortem_mode_never_sent_as_a_filter() {
        let caps = json!({"exceptionBreakpointFilters": [
            {"filter": "any", "label": "rescue any exception"},
            {"filter": "RuntimeError", "label": "rescue RuntimeError", "default": true},
        ]});
        let offered = offered_filters("rdbg", &caps, false);
        assert_eq!(offered[0].0, UNCAUGHT);
        // Not the gem's own default: `RuntimeError` stops at every raise,
        // rescued or not.
        assert_eq!(choose_filters(None, &offered).unwrap(), ["uncaught"]);
        let chosen = vec![UNCAUGHT.to_string(), "any".to_string()];
        assert_eq!(exception_arguments("rdbg", &chosen), json!({"filters": ["any"]}));
        assert_eq!(exception_arguments("debugpy", &chosen), json!({"filters": ["uncaught", "any"]}));
    }

    #[test]
    fn a_node_test_run_stops_on_failed_assertions_by_default_through_a_conditional_all() {
        let caps = json!({"supportsExceptionFilterOptions": true, "exceptionBreakpointFilters": [
            {"filter": "all", "label": "Caught Exceptions", "supportsCondition": true},
            {"filter": "uncaught", "label": "Uncaught Exceptions", "supportsCondition": true},
        ]});
        let offered = offered_filters("js-debug", &caps, true);
        let chosen = choose_filters(None, &offered).unwrap();
        assert_eq!(chosen, ["uncaught", "assertions"]);
        let args = exception_arguments("js-debug", &chosen);
        assert_eq!(args["filters"], json!(["uncaught"]));
        assert_eq!(args["filterOptions"][0]["filterId"], "all");
        assert!(args["filterOptions"][0]["condition"].as_str().unwrap().contains("ERR_ASSERTION"));
        // `all` stops at every throw already: no second `all` with a condition.
        let all = exception_arguments("js-debug", &["all".to_string(), "assertions".to_string()]);
        assert_eq!(all, json!({"filters": ["all"]}));
        // Another adapter with the same filters, or a run of a program,
        // gets no tether filter.
        assert!(!offered_filters("other", &caps, true).iter().any(|(id, _)| id == ASSERTIONS));
        assert_eq!(choose_filters(None, &offered_filters("js-debug", &caps, false)).unwrap(), ["uncaught"]);
    }

    #[test]
    fn unknown_filters_are_refused_naming_what_is_offered() {
        let Refusal::Filters { unknown, offered, assertions } =
            choose_filters(Some(&["uncought".to_string()]), &debugpy()).unwrap_err()
        else {
            panic!("a filter refusal")
        };
        assert_eq!(unknown, ["uncought"]);
        assert!(offered.iter().any(|(id, _)| id == "userUnhandled") && !assertions);
        assert_eq!(choose_filters(Some(&["raised".to_string()]), &debugpy()).unwrap(), ["raised"]);
    }
}
