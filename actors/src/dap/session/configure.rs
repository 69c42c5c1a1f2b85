//! One way to configure a target: what it should hold — the breakpoints
//! by file, the function breakpoints, the exception filters — sent in
//! DAP's order once the adapter said `initialized`, on a session's first
//! connection ([`super::start`]) and on each further process a run follows
//! ([`super::targets`]: js-debug's child sessions). What a target should
//! hold is read from [`super::targets::Targets`] as it is sent, so a change
//! made meanwhile reaches it too; where each breakpoint bound is recorded
//! in the session's bindings, and what could not be set comes back as
//! notes. Also here: which exception filters a session gets.
//!
//! A change during a session (`breakpoints`, `exceptions`) goes to every
//! live target through the same typed requests ([`super::stopping`]).

use dap_types::{Capabilities, ExceptionFilterOptions, SetExceptionBreakpointsArguments};

use super::breakpoints::{BreakpointSpec, unsupported};
use super::failure::Refusal;
use super::functions::{functions_unsupported, send_functions};
use super::state::AdapterState;
use super::{NotSet, Note};
use crate::dap::adapters::{Adapter, Quirks};
use crate::wire::dap::DapClient;

/// Whose answers a target's are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// The session's first: its answers say where the breakpoints bound.
    First,
    /// Another process of a run of several (each test file's own): a
    /// breakpoint that bound in one stays bound, though a process that
    /// never loads its file says it did not.
    More,
}

/// Sends `client` the breakpoints, function breakpoints and exception
/// filters the session wants (after `initialized`, before
/// `configurationDone`), records where each bound, and says what could
/// not be set.
pub(super) async fn configure(
    client: &DapClient,
    shared: &AdapterState,
    adapter: Adapter,
    caps: &Capabilities,
    target: Target,
) -> Vec<Note> {
    let mut notes = Vec::new();
    let (files, workdir) = {
        let t = shared.targets.lock();
        (t.breakpoints.keys().cloned().collect::<Vec<_>>(), t.workdir.clone())
    };
    for file in &files {
        // Read as it is sent: a change meanwhile went to this target too.
        let Some(specs) = shared.targets.lock().breakpoints.get(file).cloned() else { continue };
        let rel = || crate::fs::relative(&workdir, file);
        if let Some(why) = unsupported(adapter.id, caps, &specs) {
            notes.push(Note::LinesNotSet { file: rel(), why: NotSet::Refused(why) });
            continue;
        }
        // One file the adapter will not take (a Python file's breakpoints
        // left from an earlier session, under delve) costs that file's
        // breakpoints, said in the answer, not the launch.
        match client.set_breakpoints(file, BreakpointSpec::all_to_dap(&specs)).await {
            Ok(bound) => {
                let bindings = &mut shared.state.lock().bindings;
                match target {
                    Target::First => bindings.record(file, &specs, &bound),
                    Target::More => bindings.record_more(file, &specs, &bound),
                }
            }
            Err(e) => notes.push(Note::LinesNotSet { file: rel(), why: NotSet::Failed(e.to_string()) }),
        }
    }
    let functions = shared.targets.lock().functions.clone();
    if !functions.is_empty() {
        if let Some(why) = functions_unsupported(adapter.id, caps) {
            notes.push(Note::FunctionsNotSet { names: functions, why: NotSet::Refused(why) });
        } else {
            match send_functions(client, adapter.quirks, &functions).await {
                Ok(bound) => {
                    let bindings = &mut shared.state.lock().bindings;
                    match target {
                        Target::First => {
                            bindings.record_functions(adapter.quirks, &workdir, &functions, &bound)
                        }
                        Target::More => {
                            bindings.record_functions_more(adapter.quirks, &workdir, &functions, &bound)
                        }
                    }
                }
                Err(e) => {
                    notes.push(Note::FunctionsNotSet { names: functions, why: NotSet::Failed(e.to_string()) })
                }
            }
        }
    }
    let exceptions = shared.targets.lock().exceptions.clone();
    if let Err(e) = client.set_exception_breakpoints(&exception_arguments(adapter.quirks, &exceptions)).await
    {
        notes.push(Note::FiltersNotSet(e.to_string()));
    }
    notes
}

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
pub(super) fn offered_filters(quirks: Quirks, caps: &Capabilities, test_run: bool) -> Vec<(String, String)> {
    let filters = caps.exception_breakpoint_filters.as_deref().unwrap_or_default();
    let mut offered: Vec<(String, String)> =
        filters.iter().map(|f| (f.filter.clone(), f.label.clone())).collect();
    if quirks.uncaught_at_launch {
        offered.insert(0, (UNCAUGHT.into(), RDBG_UNCAUGHT.into()));
    }
    let conditional_all = filters.iter().any(|f| f.filter == "all" && f.supports_condition == Some(true));
    if quirks.assertions_filter
        && test_run
        && conditional_all
        && caps.supports_exception_filter_options == Some(true)
    {
        offered.push((ASSERTIONS.into(), "Failed assertions, even when a test runner catches them".into()));
    }
    offered
}

/// The `setExceptionBreakpoints` arguments for `chosen`: tether's
/// [`ASSERTIONS`] is js-debug's `all` with a condition (left out when `all`
/// itself is on: it stops there anyway); rdbg's [`UNCAUGHT`] is no filter
/// of the adapter's.
pub(super) fn exception_arguments(quirks: Quirks, chosen: &[String]) -> SetExceptionBreakpointsArguments {
    let filters: Vec<String> = chosen
        .iter()
        .filter(|f| *f != ASSERTIONS && !(quirks.uncaught_at_launch && *f == UNCAUGHT))
        .cloned()
        .collect();
    let assertions = chosen.iter().any(|f| f == ASSERTIONS) && !chosen.iter().any(|f| f == "all");
    let filter_options = assertions.then(|| {
        vec![ExceptionFilterOptions {
            filter_id: "all".into(),
            condition: Some(ASSERTION_CONDITION.into()),
            mode: None,
        }]
    });
    SetExceptionBreakpointsArguments { filters, filter_options, exception_options: None }
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

#[cfg(test)]
mod tests {
    use super::super::breakpoints::tests::caps;
    use super::*;
    use serde_json::json;

    /// The table's quirks of adapter `id` (none for one it lacks).
    fn quirks(id: &'static str) -> Quirks {
        crate::dap::adapters::known(id).quirks
    }

    /// The arguments as they go on the wire.
    fn wire(args: SetExceptionBreakpointsArguments) -> serde_json::Value {
        let mut v = serde_json::to_value(args).unwrap();
        v.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        v
    }

    fn debugpy() -> Vec<(String, String)> {
        offered_filters(
            quirks("debugpy"),
            &caps(json!({"exceptionBreakpointFilters": [
                {"filter": "raised", "label": "Raised Exceptions"},
                {"filter": "uncaught", "label": "Uncaught Exceptions", "default": true},
                {"filter": "userUnhandled", "label": "User Uncaught Exceptions"},
            ]})),
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
        let caps = caps(json!({"exceptionBreakpointFilters": [
            {"filter": "any", "label": "rescue any exception"},
            {"filter": "RuntimeError", "label": "rescue RuntimeError", "default": true},
        ]}));
        let offered = offered_filters(quirks("rdbg"), &caps, false);
        assert_eq!(offered[0].0, UNCAUGHT);
        // Not the gem's own default: `RuntimeError` stops at every raise,
        // rescued or not.
        assert_eq!(choose_filters(None, &offered).unwrap(), ["uncaught"]);
        let chosen = vec![UNCAUGHT.to_string(), "any".to_string()];
        assert_eq!(wire(exception_arguments(quirks("rdbg"), &chosen)), json!({"filters": ["any"]}));
        assert_eq!(
            wire(exception_arguments(quirks("debugpy"), &chosen)),
            json!({"filters": ["uncaught", "any"]})
        );
    }

    #[test]
    fn a_node_test_run_stops_on_failed_assertions_by_default_through_a_conditional_all() {
        let caps = caps(json!({"supportsExceptionFilterOptions": true, "exceptionBreakpointFilters": [
            {"filter": "all", "label": "Caught Exceptions", "supportsCondition": true},
            {"filter": "uncaught", "label": "Uncaught Exceptions", "supportsCondition": true},
        ]}));
        let offered = offered_filters(quirks("js-debug"), &caps, true);
        let chosen = choose_filters(None, &offered).unwrap();
        assert_eq!(chosen, ["uncaught", "assertions"]);
        let args = wire(exception_arguments(quirks("js-debug"), &chosen));
        assert_eq!(args["filters"], json!(["uncaught"]));
        assert_eq!(args["filterOptions"][0]["filterId"], "all");
        assert!(args["filterOptions"][0]["condition"].as_str().unwrap().contains("ERR_ASSERTION"));
        // `all` stops at every throw already: no second `all` with a condition.
        let all =
            wire(exception_arguments(quirks("js-debug"), &["all".to_string(), "assertions".to_string()]));
        assert_eq!(all, json!({"filters": ["all"]}));
        // Another adapter with the same filters, or a run of a program,
        // gets no tether filter.
        assert!(!offered_filters(quirks("other"), &caps, true).iter().any(|(id, _)| id == ASSERTIONS));
        assert_eq!(
            choose_filters(None, &offered_filters(quirks("js-debug"), &caps, false)).unwrap(),
            ["uncaught"]
        );
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
