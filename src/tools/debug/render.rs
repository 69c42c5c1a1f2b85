//! Debug answers as text a model reads: what an op found — where a run op
//! left the program (a stop's snapshot, still running, ended, gone), the
//! threads, a stack, scopes, children, a value — after what the op said
//! and before its notes, with the structured form beside it. The stop
//! snapshot is written by `snapshot`, the listings by `listing`, the
//! breakpoints by `bound` (its sibling modules).

use serde_json::{Value, json};
use tether_actors::dap::session::{
    Answer, Blind, BoundView, DebugReply, ExceptionsSet, Lead, MAX_OUTPUT, NotSet, Note, SessionNow, Settled,
};

use super::attach::attach_forms;
use super::failure::{self, failure, unfit};
use super::snapshot::{reason, snapshot};
use super::{bound, listing};
use crate::result::ToolResult;

/// What the model reads of `reply`: its text, what it found, its notes.
pub fn reply(reply: DebugReply) -> ToolResult {
    let is_error = reply.is_error();
    let DebugReply { lead, data: extra, answer, notes, bound, .. } = reply;
    let mut text = lead.as_ref().map(|lead| format!("{}; ", self::lead(lead))).unwrap_or_default();
    let (said, mut data) = self::answer(&answer);
    text.push_str(&said);
    if let (Value::Object(data), Value::Object(extra)) = (&mut data, extra) {
        data.extend(extra);
    }
    // A start's answer: where every breakpoint bound.
    if let (Some(view), Value::Object(data)) = (&bound, &mut data) {
        data.insert("breakpoints".into(), bound::lines_data(view));
        if !view.functions.is_empty() {
            data.insert("functions".into(), bound::functions_data(view));
        }
    }
    for said in notes.iter().filter_map(note) {
        text = format!("{text}\n{said}");
    }
    ToolResult { is_error, text, data: Some(data), images: Vec::new() }
}

/// A line after an answer (none for breakpoints with nothing to say).
fn note(note: &Note) -> Option<String> {
    let not_set = |why: &NotSet| match why {
        NotSet::Refused(refusal) => failure::refusal(refusal),
        NotSet::Failed(error) => error.clone(),
    };
    Some(match note {
        Note::Bound(view) => return bound::summary(view),
        Note::LinesNotSet { file, why } => {
            format!("the breakpoints of {file} were not set: {}", not_set(why))
        }
        Note::FunctionsNotSet { names, why } => {
            let names = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            format!("the function breakpoints {names} were not set: {}", not_set(why))
        }
        Note::FiltersDefaulted(why) => {
            format!("exception filters: {}; the default was set", failure::refusal(why))
        }
        Note::AssertionsOff(filters) => format!(
            "a failed assertion does not stop this run: the exception filters {filters:?} leave out `assertions`"
        ),
        Note::FiltersNotSet(error) => format!("exception filters could not be set: {error}"),
        Note::Kept { files, functions } => {
            let mut kept: Vec<String> = files
                .iter()
                .map(|(file, lines)| {
                    let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
                    format!("{file} line{} {}", tether_actors::text::plural(lines.len()), lines.join(", "))
                })
                .collect();
            kept.extend(functions.iter().map(|f| format!("function `{f}`")));
            format!(
                "kept from before this session (counted above): {}; `breakpoints` with a file and no lines clears that file's, `functions: []` the functions",
                kept.join("; ")
            )
        }
        Note::NotFollowed { name, why } => {
            format!(
                "tether could not follow {name}, a process the program started: {}; its stops are not seen",
                super::failure::start_step(why)
            )
        }
    })
}

/// What an op did, said before what it found.
fn lead(lead: &Lead) -> String {
    match lead {
        Lead::Launched => "launched".into(),
        Lead::Attached(to) => format!("attached to {}", super::attach::attached_to(to)),
        Lead::RunToMissed { target } => {
            format!("run_to: {target} was not reached (its temporary breakpoint is removed)")
        }
        Lead::RunToEarly { target } => format!("run_to: stopped before reaching {target}"),
        Lead::RunToMoved { file, line, bound_line } => {
            format!("run_to: line {line} of {file} bound at line {bound_line}")
        }
    }
}

/// What an op found, in words and as data; `data.state` says where it
/// left the program, when it says (a failure's data is null).
fn answer(answer: &Answer) -> (String, Value) {
    let (text, mut data) = match answer {
        Answer::Settled(s) => settled(s),
        Answer::Status { head, now } => {
            let on = super::attach::debuggee(&head.program);
            let head = format!("{} session on {on} (up {} s)", head.adapter, head.up.as_secs());
            match now.as_ref() {
                SessionNow::Exited(code) => {
                    (format!("{head}: the program exited with code {code}"), json!({}))
                }
                SessionNow::Terminated => (format!("{head}: the program terminated"), json!({})),
                SessionNow::Stopped(s) => {
                    let (text, data) = settled(s);
                    (format!("{head}: {text}"), data)
                }
                SessionNow::Running => (format!("{head}: running"), json!({})),
            }
        }
        Answer::NoSession { last, held_breakpoints } => {
            let mut text = "no debug session is running".to_string();
            if let Some(end) = last {
                text.push_str(&format!("; the last one ended: {}", super::failure::session_end(end)));
            }
            if *held_breakpoints > 0 {
                text.push_str(&format!("; {held_breakpoints} breakpoint(s) set for the next launch"));
            }
            (text, json!({"running": false}))
        }
        Answer::Ended { detached: true } => {
            ("detached from the program, which keeps running; the session is over".into(), json!({}))
        }
        Answer::Ended { detached: false } => {
            ("terminated the session: adapter and program were killed".into(), json!({}))
        }
        Answer::AlreadyEnded(end) => {
            let why = super::failure::session_end(end);
            (format!("no debug session is running; the last one already ended: {why}"), json!({}))
        }
        Answer::Output { text, dropped } => {
            let mut text = text.clone();
            if *dropped > 0 {
                // What is kept starts on a whole line: the rest of the
                // line the cut fell in is counted with what was dropped.
                let partial = text.find('\n').map_or(0, |i| i + 1);
                let partial = if partial < text.len() { partial } else { 0 };
                let dropped = *dropped as usize + partial;
                text = format!(
                    "… {dropped} earlier bytes dropped (the last {} KiB are kept, from a line's start)\n{}",
                    MAX_OUTPUT / 1024,
                    &text[partial..]
                );
            }
            if text.is_empty() {
                text = "(no output yet)".into();
            }
            (text, json!({"dropped": dropped}))
        }
        Answer::Adapters(rows) => {
            let mut text = String::new();
            for row in rows {
                match row.attach.as_deref().map(attach_forms) {
                    None => text.push_str(&format!("{}: not usable — {}\n", row.id, row.detail)),
                    Some(attach) => text.push_str(&format!(
                        "{}: {} — {}; {attach}\n",
                        row.id,
                        if row.usable { "usable" } else { "not usable" },
                        row.detail
                    )),
                }
            }
            let data: Vec<Value> = rows
                .iter()
                .map(|row| match row.attach.as_deref().map(attach_forms) {
                    // A language no adapter serves is no adapter id to pass.
                    None => json!({"language": row.id, "usable": false, "detail": row.detail}),
                    Some(attach) => {
                        json!({"adapter": row.id, "usable": row.usable, "detail": row.detail, "attach": attach})
                    }
                })
                .collect();
            (text.trim_end().to_string(), Value::Array(data))
        }
        Answer::Failed(why) => (failure(why), Value::Null),
        Answer::Lines(set) => bound::lines_set(set),
        Answer::Exceptions(set) => exceptions(set),
        Answer::Functions(set) => bound::functions_set(set),
        Answer::Pair(first, other) => {
            let (a, first) = self::answer(first);
            let (b, other) = self::answer(other);
            let data = match (first, other) {
                (Value::Object(mut first), Value::Object(other)) => {
                    first.extend(other);
                    Value::Object(first)
                }
                (first, Value::Null) => first,
                (_, other) => other,
            };
            (format!("{a}\n{b}"), data)
        }
        Answer::Threads { listed, total } => listing::threads(listed, *total),
        Answer::Stack { frames, total } => listing::stack(frames, *total),
        Answer::Scopes(scopes) => listing::scopes(scopes),
        Answer::Variables { listed, total } => listing::variables(listed, *total),
        Answer::Evaluated(value) => listing::evaluated(value),
    };
    if let (Some(state), Value::Object(data)) = (answer.state(), &mut data) {
        data.insert("state".into(), json!(state.as_str()));
    }
    (text, data)
}

/// Where a run op left the program, in words and as data (null for a
/// failure).
fn settled(settled: &Settled) -> (String, Value) {
    const RUNS_ON: &str = "it keeps running — use pause to stop it, or status";
    let ended = |what: String, none_bound: &Option<BoundView>| match none_bound {
        Some(view) => format!("{what}; {}", bound::none_bound(view)),
        None => what,
    };
    match settled {
        Settled::Stopped(stop) => snapshot(stop),
        Settled::StoppedBlind { why, kind, thread, trouble } => {
            let head = format!("stopped ({}), thread {thread}", reason(why));
            let data = json!({"reason": kind, "thread": thread});
            match trouble {
                Blind::BadReply(reply) => (format!("{head}; {}", unfit(reply)), Value::Null),
                Blind::Unreadable(error) => (format!("{head}; the stack could not be read: {error}"), data),
                Blind::NoFrames => (format!("{head}; the adapter lists no frames"), data),
            }
        }
        Settled::Running { waited: Some(wait) } => {
            (format!("still running after {} s; {RUNS_ON}", wait.as_secs()), json!({}))
        }
        Settled::Running { waited: None } => (format!("still running; {RUNS_ON}"), json!({})),
        Settled::Attached => ("it runs — set breakpoints, pause, or continue".into(), json!({})),
        Settled::RanOn => (format!("it stopped and ran on before the stop could be read; {RUNS_ON}"), json!({})),
        Settled::Exited { code, none_bound } => {
            (ended(format!("the program exited with code {code}"), none_bound), json!({"exit_code": code}))
        }
        Settled::Terminated { none_bound } => {
            (ended("the debug session ended (the program terminated)".into(), none_bound), json!({}))
        }
        Settled::Cancelled => (
            "the call was cancelled, so tether stopped waiting; the program keeps running — use pause to stop it, or status".into(),
            Value::Null,
        ),
        Settled::AdapterGone(why) => (format!("the debug adapter went away: {why}"), Value::Null),
    }
}

/// What `exceptions` found or did.
fn exceptions(set: &ExceptionsSet) -> (String, Value) {
    match set {
        ExceptionsSet::AtLaunch(filters) => {
            let now = match filters {
                Some(f) if f.is_empty() => "no exception stops the program".to_string(),
                Some(f) => format!("the filters {f:?}"),
                None => "uncaught exceptions stop the program, where the adapter offers that (debugpy's `uncaught`, dart's `Unhandled`), and in a node:test run failed assertions".to_string(),
            };
            (
                format!(
                    "no session yet; at launch {now}. Each adapter's filters: debugpy `raised`, `uncaught`, `userUnhandled`; js-debug `all`, `uncaught`, and in a node:test run `assertions` (tether's: failed assertions, caught or not); lldb `cpp_throw`, `cpp_catch` and others; dart `All`, `Unhandled`; delve none (it stops on an unrecovered panic by itself)"
                ),
                json!({"filters": filters}),
            )
        }
        ExceptionsSet::Held(f) if f.is_empty() => {
            ("at launch no exception will stop the program".into(), json!({"filters": f}))
        }
        ExceptionsSet::Held(f) => (
            format!(
                "at launch these exception filters will be set: {f:?} (checked against the adapter's then)"
            ),
            json!({"filters": f}),
        ),
        ExceptionsSet::Offered { adapter, on, offered, stops_by_itself } => {
            let rows: Vec<String> = offered
                .iter()
                .map(|(id, label)| {
                    format!("{} `{id}` ({label})", if on.contains(id) { "[on]" } else { "[off]" })
                })
                .collect();
            let text = if rows.is_empty() {
                let by_itself =
                    if *stops_by_itself { "; it stops on an unrecovered panic by itself" } else { "" };
                format!("{adapter} offers no exception filters{by_itself}")
            } else {
                format!("{adapter} exception filters: {}", rows.join(", "))
            };
            let offered: Vec<Value> =
                offered.iter().map(|(id, l)| json!({"filter": id, "label": l})).collect();
            (text, json!({"filters": on, "offered": offered}))
        }
        ExceptionsSet::Applied { filters, next_launch } => {
            let later = if *next_launch {
                "; rdbg's `uncaught` changes at the next launch (the program runs in postmortem mode or not from its start)"
            } else {
                ""
            };
            let text = if filters.is_empty() {
                format!("no exception stops the program now{later}")
            } else {
                format!("exceptions now stop the program for: {filters:?}{later}")
            };
            (text, json!({"filters": filters}))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_actors::dap::session::breakpoints::{Binding, BreakpointSpec};
    use tether_actors::dap::session::{
        ChainFrame, Failure, LinesSet, Locals, NoLocals, ShownVariable, Snapshot, StopWhy,
    };

    fn frame(name: &str, path: Option<&str>, user: bool) -> ChainFrame {
        ChainFrame { id: 1, name: name.into(), path: path.map(str::to_string), line: 3, user, label: false }
    }

    fn stop(locals: Result<Locals, NoLocals>) -> Snapshot {
        Snapshot {
            why: StopWhy::Plain("breakpoint".into()),
            kind: "breakpoint".into(),
            thread: 1,
            frames: vec![
                frame("<module>", Some("/usr/lib/runpy.py"), false),
                frame("main", Some("prog.py"), true),
            ],
            focus: 1,
            source: vec![(2, "x = 1".into()), (3, "y = x + 1".into())],
            locals,
            frames_capped: false,
        }
    }

    #[test]
    fn a_stop_reads_as_place_source_locals_and_chain_with_its_data() {
        let local = ShownVariable {
            name: "x".into(),
            value: "1".into(),
            cut: false,
            ty: Some("int".into()),
            reference: 0,
        };
        let snap = stop(Ok(Locals { listed: vec![local], total: 3 }));
        let reply = reply(DebugReply {
            lead: Some(Lead::Launched),
            data: json!({"exception_filters": []}),
            answer: Answer::Settled(Settled::Stopped(Box::new(snap))),
            notes: vec![Note::FiltersNotSet("no answer within 15000 ms".into())],
            bound: None,
        });
        let text = &reply.text;
        assert!(!reply.is_error);
        assert!(
            text.starts_with(
                "launched; stopped (breakpoint) at prog.py:3 in main, thread 1; the top frame (<module> at /usr/lib/runpy.py:3) is library code\n    2 | x = 1\n>   3 | y = x + 1\nlocals of main [frame_id=1]:\n  x = 1 (int)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("call chain (innermost first): … 1 library frame ← main at prog.py:3 [frame_id=1]")
        );
        assert!(text.contains("left out: 2 more locals (shown at most 25"), "{text}");
        let data = reply.data.unwrap();
        assert_eq!(data["state"], "stopped");
        assert_eq!(data["locals_total"], 3);
        assert_eq!(data["frame"]["index"], 1);
        assert_eq!(data["frames"].as_array().map(Vec::len), Some(2));
        assert_eq!(data["exception_filters"], json!([]), "the op's own keys join the stop's");
        assert!(text.ends_with("\nexception filters could not be set: no answer within 15000 ms"), "{text}");
    }

    #[test]
    fn missing_locals_say_why() {
        let (text, data) =
            answer(&Answer::Settled(Settled::Stopped(Box::new(stop(Err(NoLocals::NoScope(vec![
                "Globals".into(),
                "Registers".into(),
            ])))))));
        assert!(
            text.contains(
                "locals of main [frame_id=1]: the adapter names no locals scope (scopes: Globals, Registers)"
            ),
            "{text}"
        );
        assert_eq!(data["locals_total"], 0);
    }

    #[test]
    fn failures_carry_no_data_and_ends_name_unbound_breakpoints() {
        let (text, data) = answer(&Answer::Settled(Settled::AdapterGone("exited with status 7".into())));
        assert_eq!(text, "the debug adapter went away: exited with status 7");
        assert!(data.is_null());
        let (text, data) = answer(&Answer::Settled(Settled::Cancelled));
        assert!(text.ends_with("the program keeps running — use pause to stop it, or status"), "{text}");
        assert!(data.is_null());
        let unbound = Binding {
            spec: BreakpointSpec::at(4),
            id: None,
            verified: false,
            bound_line: None,
            message: None,
            note: None,
        };
        let none_bound =
            Some(BoundView { files: vec![("a.go".into(), vec![unbound])], functions: Vec::new() });
        let (text, data) = answer(&Answer::Settled(Settled::Exited { code: 3, none_bound }));
        assert_eq!(
            text,
            "the program exited with code 3; none of your 1 breakpoint bound: a.go: line 4 not bound: the adapter gave no reason"
        );
        assert_eq!(data, json!({"exit_code": 3, "state": "exited"}));
    }

    #[test]
    fn a_pair_reads_line_after_line_and_fails_if_either_part_does() {
        let lines = Answer::Lines(LinesSet::Cleared { file: "a.py".into() });
        let functions = Answer::Failed(Failure::Request {
            during: None,
            request: "setFunctionBreakpoints".into(),
            error: "gone".into(),
        });
        let pair = Answer::Pair(Box::new(lines), Box::new(functions));
        assert!(pair.is_error());
        let (text, data) = answer(&pair);
        assert_eq!(text, "cleared the breakpoints of a.py\nsetFunctionBreakpoints failed: gone");
        assert_eq!(data, json!({"file": "a.py", "breakpoints": []}), "a failure's part adds no data");
    }

    #[test]
    fn kept_output_starts_on_a_whole_line() {
        let answer = Answer::Output { text: "f line 7\nline 8\n".into(), dropped: 100 };
        let (text, _) = super::answer(&answer);
        assert!(text.starts_with("… 109 earlier bytes dropped"), "{text}");
        assert!(text.ends_with(")\nline 8\n"), "{text}");
    }
}
