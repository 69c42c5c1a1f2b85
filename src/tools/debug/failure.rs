//! Why a debug op failed, in words: each says what went wrong and what to
//! give or do instead.

use tether_actors::dap::session::{Failure, Refusal, SessionEnd, Unfit};
use tether_actors::text::human_duration;

/// `failure` as the model reads it.
pub(super) fn failure(failure: &Failure) -> String {
    match failure {
        Failure::Request { during: None, request, error } => format!("{request} failed: {error}"),
        Failure::Request { during: Some(op), request, error } => format!("{op}: {request} failed: {error}"),
        Failure::Scopes { frame, error } => {
            format!("scopes failed for frame_id {frame}: {error} (frame ids come from stack)")
        }
        Failure::Variables { reference, error } => format!(
            "variables failed for reference {reference}: {error} (references come from scopes or variables)"
        ),
        Failure::Evaluate { expression, error } => format!("evaluate `{expression}` failed: {error}"),
        Failure::Unfit(reply) => unfit(reply),
        Failure::NotStopped { op } => {
            format!("{op}: the program is not stopped on any thread; pass thread_id (see threads)")
        }
        Failure::StackNotStopped => {
            "stack: the program is not stopped; pass thread_id or pause it first".into()
        }
        Failure::NoFrameShown => {
            "debug scopes: no stop has shown a frame yet; pass `frame_id` (from stack)".into()
        }
        Failure::NeedsFrame => "debug scopes: pass `frame_id` (from stack)".into(),
        Failure::NothingToSet => {
            "debug breakpoints: give `file` with `lines` (or `breakpoints`), or `functions`".into()
        }
        Failure::Refused { op, why } => format!("debug {op}: {}", refusal(why)),
        Failure::RunToUnbound { file, line, why } => {
            format!("run_to: line {line} of {file} does not bind: {why}")
        }
        Failure::NoSession { last: Some(end), unheard: true } => {
            format!("no debug session: {}. Launch again to start a new one", session_end(end))
        }
        Failure::NoSession { last: Some(end), unheard: false } => {
            format!(
                "no debug session is running (the last one ended: {}); launch one first",
                session_end(end)
            )
        }
        Failure::NoSession { last: None, .. } => {
            "no debug session is running; set breakpoints and launch a program first".into()
        }
        Failure::AlreadyRunning(head) => format!(
            "a debug session ({}) on {} is already running (up {} s); terminate it first — a second launch never replaces the first",
            head.adapter,
            head.program,
            head.up.as_secs()
        ),
        Failure::CancelledBeforeRun => {
            "the call was cancelled while it waited for the session, so the op did not run".into()
        }
        Failure::Start(why) => why.clone(),
        Failure::UnknownOp => "unsupported op".into(),
    }
}

/// Why a session is over, as a clause.
pub(super) fn session_end(end: &SessionEnd) -> String {
    match end {
        SessionEnd::Requested => "terminated on request".into(),
        SessionEnd::Expired { ttl } => format!(
            "the session expired after its {} time-to-live; adapter and program were killed",
            human_duration(*ttl)
        ),
        SessionEnd::Exited(code) => format!("the program exited with code {code}"),
        SessionEnd::Terminated => "the program terminated".into(),
        SessionEnd::AdapterGone(why) => format!("the debug adapter went away: {}", why.reason()),
    }
}

/// What the adapter does not offer, and what to give instead.
pub(super) fn refusal(refusal: &Refusal) -> String {
    match refusal {
        Refusal::Kind { adapter, what, capability, field } => format!(
            "{adapter} does not support breakpoint {what} (it does not declare `{capability}`); drop `{field}` or set a plain breakpoint"
        ),
        Refusal::Functions { adapter } => format!(
            "function breakpoints are not offered by {adapter} (it does not declare `supportsFunctionBreakpoints`); give `file` + `lines` instead (the function's first line)"
        ),
        Refusal::Filters { unknown, offered, assertions } => {
            let offered = if offered.is_empty() {
                "none".to_string()
            } else {
                offered.iter().map(|(id, label)| format!("`{id}` ({label})")).collect::<Vec<_>>().join(", ")
            };
            let tests_only = if *assertions {
                " (`assertions` is tether's, offered in a js-debug `module: \"node:test\"` launch)"
            } else {
                ""
            };
            format!("unknown exception filter(s) {unknown:?}; this adapter offers: {offered}{tests_only}")
        }
    }
}

/// A reply that does not fit DAP's types, quoting its start: such a reply
/// is never read as an empty list.
pub(super) fn unfit(reply: &Unfit) -> String {
    format!(
        "{}: the adapter's reply does not fit DAP's `{}` ({}); it began: {}",
        reply.op, reply.field, reply.error, reply.began
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tether_actors::dap::session::SessionHead;

    #[test]
    fn failures_say_what_to_do_next() {
        let during = Failure::Request {
            during: Some("run_to"),
            request: "continue".into(),
            error: "no answer".into(),
        };
        assert_eq!(failure(&during), "run_to: continue failed: no answer");
        let step = Failure::Request { during: None, request: "next".into(), error: "gone".into() };
        assert_eq!(failure(&step), "next failed: gone");
        let head = SessionHead { adapter: "debugpy", program: "prog.py".into(), up: Duration::from_secs(3) };
        assert!(
            failure(&Failure::AlreadyRunning(head))
                .starts_with("a debug session (debugpy) on prog.py is already running (up 3 s)")
        );
        let end = SessionEnd::Expired { ttl: Duration::from_secs(600) };
        let expired = Failure::NoSession { last: Some(end.clone()), unheard: true };
        assert_eq!(
            failure(&expired),
            "no debug session: the session expired after its 10 min time-to-live; adapter and program were killed. Launch again to start a new one"
        );
        let told = Failure::NoSession { last: Some(end), unheard: false };
        assert!(
            failure(&told)
                .starts_with("no debug session is running (the last one ended: the session expired")
        );
        let filters = Refusal::Filters {
            unknown: vec!["uncought".into()],
            offered: vec![("uncaught".into(), "Uncaught Exceptions".into())],
            assertions: false,
        };
        assert_eq!(
            failure(&Failure::Refused { op: "exceptions", why: filters }),
            "debug exceptions: unknown exception filter(s) [\"uncought\"]; this adapter offers: `uncaught` (Uncaught Exceptions)"
        );
        let reply = Unfit {
            op: "threads".into(),
            field: "threads".into(),
            error: "invalid type".into(),
            began: "{\"x\":1}".into(),
        };
        assert_eq!(
            failure(&Failure::Unfit(reply)),
            "threads: the adapter's reply does not fit DAP's `threads` (invalid type); it began: {\"x\":1}"
        );
    }
}
