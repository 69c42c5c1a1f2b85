//! Which exception filters a session gets, and how each adapter's are
//! sent: the default (uncaught exceptions, where the adapter offers that),
//! rdbg's postmortem mode standing in for a filter it lacks, and tether's
//! own `assertions` filter in a js-debug test run.

use dap_types::{Capabilities, ExceptionFilterOptions, SetExceptionBreakpointsArguments};

use super::Quirks;

/// Filters asked for that the adapter does not offer.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownFilters {
    /// Those asked for and not offered.
    pub unknown: Vec<String>,
    /// What the adapter offers: `(filter, label)`.
    pub offered: Vec<(String, String)>,
    /// Whether tether's own `assertions` was among the unknown (it is
    /// offered only in a js-debug test run).
    pub assertions: bool,
}

/// The exception filters a new session gets: stop on uncaught exceptions,
/// where the adapter offers that, so "run it and see where it breaks" is
/// one `launch`. Each adapter names the filter its own way (debugpy
/// `uncaught`, dart `Unhandled`); only those the adapter offers are set.
/// In a `node:test` run, failed assertions too ([`ASSERTIONS`]): the
/// runner catches them, so a failing test would otherwise run to its end.
pub(crate) const DEFAULT_EXCEPTION_FILTERS: &[&str] = &[UNCAUGHT, "Unhandled", ASSERTIONS];

/// tether's own filter in a js-debug `node:test` run: stop where an
/// assertion fails (node:assert's `ERR_ASSERTION`, or an error whose name
/// ends in `AssertionError`: chai, jest's `expect`), caught or not. It is
/// js-debug's `all` filter with [`ASSERTION_CONDITION`]. Only test runs
/// offer it: js-debug never stops in a file it skips, so they skip node's
/// `assert` no more (see `arguments::SKIPPED_IN_TESTS`), and a program's
/// `pause` could then land in node's code.
pub(crate) const ASSERTIONS: &str = "assertions";

/// The filter of exceptions nothing catches, in debugpy's and js-debug's
/// name, which tether gives rdbg too.
pub(crate) const UNCAUGHT: &str = "uncaught";

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
pub(crate) fn offered_filters(quirks: Quirks, caps: &Capabilities, test_run: bool) -> Vec<(String, String)> {
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
pub(crate) fn exception_arguments(quirks: Quirks, chosen: &[String]) -> SetExceptionBreakpointsArguments {
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
pub(crate) fn choose_filters(
    asked: Option<&[String]>,
    offered: &[(String, String)],
) -> Result<Vec<String>, UnknownFilters> {
    let known = |f: &str| offered.iter().any(|(id, _)| id == f);
    match asked {
        None => Ok(DEFAULT_EXCEPTION_FILTERS.iter().filter(|f| known(f)).map(|f| f.to_string()).collect()),
        Some(asked) => {
            let unknown: Vec<&str> = asked.iter().map(String::as_str).filter(|f| !known(f)).collect();
            if unknown.is_empty() {
                Ok(asked.to_vec())
            } else {
                Err(UnknownFilters {
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
    use super::*;
    use serde_json::json;

    /// An `initialize` answer, as the client reads it.
    fn caps(body: serde_json::Value) -> Capabilities {
        serde_json::from_value(body).unwrap()
    }

    /// rdbg's: no filter for uncaught exceptions, its postmortem mode instead.
    const POSTMORTEM: Quirks = Quirks { uncaught_at_launch: true, ..PLAIN };
    /// js-debug's: tether's `assertions` filter in a test run.
    const ASSERTING: Quirks = Quirks { assertions_filter: true, ..PLAIN };
    /// An adapter's with no filter quirks (debugpy's).
    const PLAIN: Quirks = Quirks {
        launch: crate::dap::adapters::LaunchArgs::Native,
        child_sessions: false,
        child_adapter_id: None,
        evaluate_in_repl: false,
        function_replies_reordered: false,
        functions_placed_by_defs: false,
        uncaught_at_launch: false,
        assertions_filter: false,
        program_is_adapter: false,
        runs_modules: false,
        runs_test_scripts: false,
        stops_on_panic: false,
    };

    /// The arguments as they go on the wire.
    fn wire(args: SetExceptionBreakpointsArguments) -> serde_json::Value {
        let mut v = serde_json::to_value(args).unwrap();
        v.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        v
    }

    fn debugpy() -> Vec<(String, String)> {
        offered_filters(
            PLAIN,
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
        let offered = offered_filters(POSTMORTEM, &caps, false);
        assert_eq!(offered[0].0, UNCAUGHT);
        // Not the gem's own default: `RuntimeError` stops at every raise,
        // rescued or not.
        assert_eq!(choose_filters(None, &offered).unwrap(), ["uncaught"]);
        let chosen = vec![UNCAUGHT.to_string(), "any".to_string()];
        assert_eq!(wire(exception_arguments(POSTMORTEM, &chosen)), json!({"filters": ["any"]}));
        assert_eq!(wire(exception_arguments(PLAIN, &chosen)), json!({"filters": ["uncaught", "any"]}));
    }

    #[test]
    fn a_node_test_run_stops_on_failed_assertions_by_default_through_a_conditional_all() {
        let caps = caps(json!({"supportsExceptionFilterOptions": true, "exceptionBreakpointFilters": [
            {"filter": "all", "label": "Caught Exceptions", "supportsCondition": true},
            {"filter": "uncaught", "label": "Uncaught Exceptions", "supportsCondition": true},
        ]}));
        let offered = offered_filters(ASSERTING, &caps, true);
        let chosen = choose_filters(None, &offered).unwrap();
        assert_eq!(chosen, ["uncaught", "assertions"]);
        let args = wire(exception_arguments(ASSERTING, &chosen));
        assert_eq!(args["filters"], json!(["uncaught"]));
        assert_eq!(args["filterOptions"][0]["filterId"], "all");
        assert!(args["filterOptions"][0]["condition"].as_str().unwrap().contains("ERR_ASSERTION"));
        // `all` stops at every throw already: no second `all` with a condition.
        let all = wire(exception_arguments(ASSERTING, &["all".to_string(), "assertions".to_string()]));
        assert_eq!(all, json!({"filters": ["all"]}));
        // Another adapter with the same filters, or a run of a program,
        // gets no tether filter.
        assert!(!offered_filters(PLAIN, &caps, true).iter().any(|(id, _)| id == ASSERTIONS));
        assert_eq!(choose_filters(None, &offered_filters(ASSERTING, &caps, false)).unwrap(), ["uncaught"]);
    }

    #[test]
    fn unknown_filters_are_refused_naming_what_is_offered() {
        let UnknownFilters { unknown, offered, assertions } =
            choose_filters(Some(&["uncought".to_string()]), &debugpy()).unwrap_err();
        assert_eq!(unknown, ["uncought"]);
        assert!(offered.iter().any(|(id, _)| id == "userUnhandled") && !assertions);
        assert_eq!(choose_filters(Some(&["raised".to_string()]), &debugpy()).unwrap(), ["raised"]);
    }
}
