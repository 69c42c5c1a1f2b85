//! Why a debug op failed, in words: each says what went wrong and what to
//! give or do instead.

use tether_actors::dap::session::{Failure, Refusal, SessionEnd, Unfit};
use tether_actors::dap::start_failure::{Handshake, StartFailure, Step};
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
            super::attach::debuggee(&head.program),
            head.up.as_secs()
        ),
        Failure::CancelledBeforeRun => {
            "the call was cancelled while it waited for the session, so the op did not run".into()
        }
        Failure::Start(why) => start_failure(why),
        Failure::UnknownOp => "unsupported op".into(),
    }
}

/// Why a session could not start, and what to do about it.
fn start_failure(failure: &StartFailure) -> String {
    match failure {
        StartFailure::NothingToStart => "nothing to launch: give `program` or `module`".into(),
        StartFailure::NoAdapterAttaches { form } => format!(
            "no adapter in the table attaches this way ({}); `debug adapters` lists how each attaches",
            super::attach::attach_forms(std::slice::from_ref(form))
        ),
        StartFailure::NoAdapterFor { file, missing: Some(why) } => {
            format!("no debug adapter handles `{file}`: {why}")
        }
        StartFailure::NoAdapterFor { file, missing: None } => format!("no debug adapter handles `{file}`"),
        StartFailure::Table(why) => why.clone(),
        StartFailure::Unavailable(why) => {
            format!("adapter unavailable: {}", crate::tools::unusable::sentence(why))
        }
        StartFailure::AttachesByPortOnly { adapter } => format!("{adapter} attaches by `port` only"),
        StartFailure::LaunchesFileOnly { adapter, extension } => {
            format!("{adapter} launches a `program` (a .{extension} file)")
        }
        StartFailure::NoPort { adapter, error } => format!("no free loopback port for {adapter}: {error}"),
        StartFailure::NotSpawned { binary, error } => format!("{binary} did not start: {error}"),
        StartFailure::NoServerOnPort { adapter, port, waited, error } => format!(
            "{adapter} could not start the session: nothing accepted a connection on 127.0.0.1:{port} within {} s ({error}); start the program under the debugger's server there first (`python -m debugpy --listen {port} --wait-for-client prog.py`, `dlv --headless --listen 127.0.0.1:{port}`), or check the port",
            waited.as_secs()
        ),
        StartFailure::NotConnected { adapter, port, error, stderr } => {
            let said = match stderr.is_empty() {
                true => "; it wrote nothing on stderr".to_string(),
                false => format!("; stderr: {}", stderr.join(" | ")),
            };
            format!(
                "could not start the session: could not connect to {adapter} on port {port}: {error}{said}"
            )
        }
        StartFailure::Handshake(h) => {
            let Handshake { adapter, step, program_said, adapter_said, stderr } = h.as_ref();
            let mut text = format!("{adapter} could not start the session: {}", start_step(step));
            if let Some(said) = program_said {
                text.push_str(&format!("; {} said: {}", said.by, said.lines.join(" | ")));
            }
            if !adapter_said.is_empty() {
                text.push_str(&format!("; the adapter said: {}", adapter_said.join(" | ")));
            }
            if !stderr.is_empty() {
                text.push_str(&format!("; adapter stderr: {}", stderr.join(" | ")));
            }
            text
        }
    }
}

/// The step of a start that failed, as a clause.
pub(super) fn start_step(step: &Step) -> String {
    match step {
        Step::Request { request, error } => format!("{request} failed: {error}"),
        Step::NoEvent { event, waited } => {
            format!("the adapter sent no `{event}` within {}", human_duration(*waited))
        }
        Step::ClosedBefore { event } => format!("the adapter closed the connection before `{event}`"),
        Step::EndedBefore { event } => format!("the run ended before `{event}`"),
        Step::AdapterEnded(how) => how.clone(),
        Step::NoCompiledOutput { program } => format!(
            "no compiled output of `{program}` was found (no `.js.map` under the project names it as a source), and the project has no TypeScript loader: compile it with source maps (`tsc --sourceMap`), add one (`npm install -D tsx`), or launch the `.js`"
        ),
        Step::ChildWithoutConfiguration { asked } => {
            format!("the adapter asked for a child session without a configuration: {asked}")
        }
        Step::ChildNotConnected { port, error } => {
            format!("could not connect the child session on port {port}: {error}")
        }
        Step::Interrupted(why) => format!("interrupted: {why}"),
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
        let program = tether_actors::dap::session::Debuggee::Launched("prog.py".into());
        let head = SessionHead { adapter: "debugpy", program, up: Duration::from_secs(3) };
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

    #[test]
    fn a_failed_start_says_the_step_then_what_was_said() {
        use tether_actors::dap::start_failure::Said;
        let h = Handshake {
            adapter: "js-debug",
            step: Step::Request { request: "launch", error: "exited with 9".into() },
            program_said: Some(Said { by: "node", lines: vec!["bad option: --x".into()] }),
            adapter_said: vec!["refused".into()],
            stderr: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            failure(&Failure::Start(StartFailure::Handshake(Box::new(h)))),
            "js-debug could not start the session: launch failed: exited with 9; node said: bad option: --x; the adapter said: refused; adapter stderr: a | b"
        );
        let step = Step::NoEvent { event: "initialized", waited: Duration::from_secs(30) };
        assert_eq!(start_step(&step), "the adapter sent no `initialized` within 30 s");
        let rdbg = StartFailure::LaunchesFileOnly { adapter: "rdbg", extension: "rb" };
        assert_eq!(failure(&Failure::Start(rdbg)), "rdbg launches a `program` (a .rb file)");
    }
}
