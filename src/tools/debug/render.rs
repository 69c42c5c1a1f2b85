//! Debug answers as text a model reads: what an op found — where a run op
//! left the program (a stop's snapshot, still running, ended, gone), the
//! threads, a stack, scopes, children, a value — after what the op said
//! and before its notes, with the structured form beside it.
//!
//! The snapshot is one bounded answer: the reason, `file:line in
//! function`, the source around the line with the line marked, the locals
//! of the frame in the user's code (the caps stated), and the call chain
//! with every frame's id, library frames folded into one line per run. The
//! whole has a size budget; what it leaves out it names, with the op that
//! shows it.

use serde_json::{Value, json};
use tether_actors::dap::session::snapshot::{MAX_LOCAL_VALUE, MAX_LOCALS, SNAPSHOT_FRAMES};
use tether_actors::dap::session::{
    Answer, Blind, BoundView, ChainFrame, DebugReply, ExceptionsSet, Lead, MAX_CHILDREN, MAX_FRAMES,
    MAX_OUTPUT, MAX_THREADS, MAX_VALUE, NoLocals, Note, SessionNow, Settled, Snapshot, StopWhy,
};

use super::bound;
use tether_actors::text::{cut, plural};

use crate::result::ToolResult;

/// The snapshot's text budget, about 1,500 tokens.
pub const SNAPSHOT_BUDGET: usize = 6_000;

/// What the model reads of `reply`: its text, what it found, its notes.
pub fn reply(reply: DebugReply) -> ToolResult {
    let DebugReply { is_error, text, lead, data, answer, notes, bound, .. } = reply;
    let mut text = match &lead {
        Some(lead) => format!("{}; {text}", self::lead(lead)),
        None => text,
    };
    let mut data = match answer {
        Some(found) => {
            let (said, mut shown) = self::answer(&found);
            text.push_str(&said);
            if let (Value::Object(shown), Value::Object(extra)) = (&mut shown, data) {
                shown.extend(extra);
            }
            shown
        }
        None => data,
    };
    // A start's answer: where every breakpoint bound.
    if let (Some(view), Value::Object(data)) = (&bound, &mut data) {
        data.insert("breakpoints".into(), bound::lines_data(view));
        if !view.functions.is_empty() {
            data.insert("functions".into(), bound::functions_data(view));
        }
    }
    for note in notes {
        let said = match note {
            Note::Said(said) => said,
            Note::Bound(view) => match bound::summary(&view) {
                Some(summary) => summary,
                None => continue,
            },
        };
        text = format!("{text}\n{said}");
    }
    ToolResult { is_error, text, data: Some(data), images: Vec::new() }
}

/// What an op did, said before what it found.
fn lead(lead: &Lead) -> String {
    match lead {
        Lead::Launched => "launched".into(),
        Lead::Attached(to) => format!("attached to {to}"),
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
        Answer::Session { head, now } => {
            let head = format!("{} session on {} (up {} s)", head.adapter, head.program, head.up.as_secs());
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
            if let Some(why) = last {
                text.push_str(&format!("; the last one ended: {why}"));
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
        Answer::AlreadyEnded(why) => {
            (format!("no debug session is running; the last one already ended: {why}"), json!({}))
        }
        Answer::Output { text, dropped } => {
            let mut text = text.clone();
            if *dropped > 0 {
                text = format!(
                    "… {dropped} earlier bytes dropped (the last {} KiB are kept)\n{text}",
                    MAX_OUTPUT / 1024
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
                match row.attach {
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
                .map(|row| match row.attach {
                    // A language no adapter serves is no adapter id to pass.
                    None => json!({"language": row.id, "usable": false, "detail": row.detail}),
                    Some(attach) => {
                        json!({"adapter": row.id, "usable": row.usable, "detail": row.detail, "attach": attach})
                    }
                })
                .collect();
            (text.trim_end().to_string(), Value::Array(data))
        }
        listing => self::listing(listing),
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
        Settled::Stopped(snapshot) => self::snapshot(snapshot),
        Settled::StoppedBlind { why, kind, thread, trouble } => {
            let head = format!("stopped ({}), thread {thread}", reason(why));
            let data = json!({"reason": kind, "thread": thread});
            match trouble {
                Blind::BadReply(error) => (format!("{head}; {error}"), Value::Null),
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

/// What an inspecting op found, in words and as data.
fn listing(answer: &Answer) -> (String, Value) {
    match answer {
        Answer::Threads { listed, total } => {
            let mut text =
                listed.iter().map(|(id, name)| format!("{id} {name}")).collect::<Vec<_>>().join("\n");
            if *total > listed.len() {
                text.push_str(&format!(
                    "\n… {} more threads (listed at most {MAX_THREADS})",
                    total - listed.len()
                ));
            }
            let data = json!({
                "threads": listed.iter().map(|(id, name)| json!({"id": id, "name": name})).collect::<Vec<_>>(),
                "total": total,
            });
            (if text.is_empty() { "no threads".into() } else { text }, data)
        }
        Answer::Stack { frames, total } => {
            let mut text = String::new();
            for (i, f) in frames.iter().enumerate() {
                let path = f.shown_path.as_deref().unwrap_or("?");
                text.push_str(&format!("#{i} frame_id={} {} at {path}:{}\n", f.id, f.name, f.line));
            }
            if *total > MAX_FRAMES {
                text.push_str(&format!(
                    "… {} more frames not shown (cap {MAX_FRAMES})\n",
                    total - MAX_FRAMES
                ));
            }
            let shown: Vec<Value> = frames
                .iter()
                .map(|f| json!({"id": f.id, "name": f.name, "line": f.line, "path": f.path}))
                .collect();
            (text.trim_end().to_string(), json!({"frames": shown, "total": total}))
        }
        Answer::Scopes(scopes) => {
            let text = scopes
                .iter()
                .map(|s| format!("{} reference={}", s.name, s.reference))
                .collect::<Vec<_>>()
                .join("\n");
            let data = json!({"scopes": scopes
                .iter()
                .map(|s| json!({"name": s.name, "reference": s.reference, "expensive": s.expensive}))
                .collect::<Vec<_>>()});
            (if text.is_empty() { "no scopes".into() } else { text }, data)
        }
        Answer::Variables { listed, total } => {
            let mut text = String::new();
            for v in listed {
                let ty = v.ty.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
                let expand =
                    if v.reference > 0 { format!(" [reference={}]", v.reference) } else { String::new() };
                text.push_str(&format!("{} = {}{ty}{expand}\n", v.name, v.value));
            }
            if *total > listed.len() {
                text.push_str(&format!(
                    "… {} more children not shown (cap {MAX_CHILDREN})\n",
                    total - listed.len()
                ));
            }
            let cut_values = listed.iter().filter(|v| v.cut).count();
            if cut_values > 0 {
                text.push_str(&format!("({cut_values} value(s) cut at {MAX_VALUE} characters)\n"));
            }
            let data: Vec<Value> = listed
                .iter()
                .map(|v| json!({"name": v.name, "value": v.value, "type": v.ty, "reference": v.reference, "value_cut": v.cut}))
                .collect();
            let text = if text.is_empty() { "no children".into() } else { text.trim_end().to_string() };
            (text, json!({"variables": data, "total": total}))
        }
        Answer::Evaluated(e) => {
            let ty = e.ty.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
            let note = if e.cut {
                format!(
                    "\n(value cut at {MAX_VALUE} characters; evaluate a slice or a part of it to see more)"
                )
            } else {
                String::new()
            };
            let data = json!({
                "expression": e.expression,
                "result": e.value,
                "type": e.ty,
                "cut": e.cut,
                "reference": e.reference,
            });
            (format!("{} = {}{ty}{note}", e.expression, e.value), data)
        }
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
        other => self::answer(other),
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
        ExceptionsSet::Offered { adapter, on, offered } => {
            let rows: Vec<String> = offered
                .iter()
                .map(|(id, label)| {
                    format!("{} `{id}` ({label})", if on.contains(id) { "[on]" } else { "[off]" })
                })
                .collect();
            let text = if rows.is_empty() {
                let by_itself =
                    if *adapter == "delve" { "; it stops on an unrecovered panic by itself" } else { "" };
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

/// Why it stopped, in words.
fn reason(why: &StopWhy) -> String {
    match why {
        StopWhy::Exception(what) => format!("exception {what}"),
        StopWhy::Uncaught(what) => format!("uncaught exception {what}"),
        StopWhy::Plain(what) => what.clone(),
        StopWhy::Described { reason, description } => format!("{reason} ({description})"),
    }
}

fn place(frame: &ChainFrame) -> String {
    format!("{}:{}", frame.path.as_deref().unwrap_or("?"), frame.line)
}

/// The stop's snapshot, within [`SNAPSHOT_BUDGET`].
fn snapshot(s: &Snapshot) -> (String, Value) {
    let reason = reason(&s.why);
    let (top, focus) = (&s.frames[0], &s.frames[s.focus]);
    let mut text = format!("stopped ({reason}) at {} in {}, thread {}", place(focus), focus.name, s.thread);
    match s.focus {
        0 => {}
        1 => text.push_str(&format!("; the top frame ({} at {}) is library code", top.name, place(top))),
        n => text.push_str(&format!(
            "; the top {n} frames (from {} at {}) are library code",
            top.name,
            place(top)
        )),
    }
    text.push('\n');
    for (n, line) in &s.source {
        let mark = if *n == focus.line { '>' } else { ' ' };
        let row = format!("{mark}{n:>4} | {line}");
        text.push_str(row.trim_end());
        text.push('\n');
    }

    let mut left_out = Vec::new();
    let mut shown_locals = Vec::new();
    let head = format!("locals of {} [frame_id={}]", focus.name, focus.id);
    let total = match &s.locals {
        Err(why) => {
            text.push_str(&format!("{head}: {}\n", no_locals(why)));
            0
        }
        Ok(locals) if locals.total == 0 => {
            text.push_str(&format!("{head}: none\n"));
            0
        }
        Ok(locals) => {
            let mut listed = String::new();
            for local in &locals.listed {
                let line = match &local.ty {
                    Some(t) if !t.is_empty() => format!("  {} = {} ({t})\n", local.name, local.value),
                    _ => format!("  {} = {}\n", local.name, local.value),
                };
                if text.len() + listed.len() + line.len() > SNAPSHOT_BUDGET {
                    break;
                }
                listed.push_str(&line);
                shown_locals.push(json!({
                    "name": local.name, "value": local.value, "type": local.ty, "reference": local.reference,
                }));
            }
            text.push_str(&format!("{head}:\n{listed}"));
            if shown_locals.len() < locals.total {
                left_out.push(format!(
                    "{} more locals (shown at most {MAX_LOCALS}, values cut at {MAX_LOCAL_VALUE} characters; scopes and variables list them all)",
                    locals.total - shown_locals.len()
                ));
            }
            if locals.listed.iter().any(|l| l.cut) {
                left_out.push(format!(
                    "values cut at {MAX_LOCAL_VALUE} characters (evaluate shows up to {MAX_VALUE})"
                ));
            }
            locals.total
        }
    };

    let chain_line = format!("call chain (innermost first): {}\n", chain(&s.frames));
    if text.len() + chain_line.len() <= SNAPSHOT_BUDGET {
        text.push_str(&chain_line);
    } else {
        left_out.push("the call chain (stack lists it)".into());
    }
    if s.frames_capped {
        left_out
            .push(format!("frames past the first {SNAPSHOT_FRAMES} (stack lists {MAX_FRAMES} at a time)"));
    }
    if !left_out.is_empty() {
        text.push_str(&format!("left out: {}\n", left_out.join("; ")));
    }
    let frames: Vec<Value> = s
        .frames
        .iter()
        .map(|f| json!({"id": f.id, "name": f.name, "path": f.path, "line": f.line, "user": f.user}))
        .collect();
    let data = json!({
        "reason": s.kind,
        "description": reason,
        "thread": s.thread,
        "frame": {"id": focus.id, "name": focus.name, "path": focus.path, "line": focus.line, "index": s.focus},
        "source": s.source.iter().map(|(n, l)| json!({"line": n, "text": l})).collect::<Vec<_>>(),
        "locals": shown_locals,
        "locals_total": total,
        "frames": frames,
        "left_out": left_out,
    });
    (within_budget(text.trim_end()), data)
}

/// Why a frame shows no locals, in words.
fn no_locals(why: &NoLocals) -> String {
    match why {
        NoLocals::BadReply(error) => error.clone(),
        NoLocals::Unreadable { what, error } => format!("the {what} could not be read: {error}"),
        NoLocals::NoScope(scopes) => {
            format!("the adapter names no locals scope (scopes: {})", scopes.join(", "))
        }
    }
}

/// The chain as one line, innermost first, each run of library frames
/// folded into one.
fn chain(frames: &[ChainFrame]) -> String {
    let mut parts = Vec::new();
    let mut folded = 0;
    let fold = |parts: &mut Vec<String>, folded: &mut usize| {
        if *folded > 0 {
            parts.push(format!("… {folded} library frame{}", plural(*folded)));
            *folded = 0;
        }
    };
    for f in frames {
        if f.label {
            fold(&mut parts, &mut folded);
            parts.push(format!("[{}]", f.name));
        } else if f.user {
            fold(&mut parts, &mut folded);
            parts.push(format!("{} at {} [frame_id={}]", f.name, place(f), f.id));
        } else {
            folded += 1;
        }
    }
    fold(&mut parts, &mut folded);
    parts.join(" ← ")
}

/// The text, held to [`SNAPSHOT_BUDGET`] whatever the adapter's names and
/// paths ran to; a cut says so.
fn within_budget(text: &str) -> String {
    if text.chars().count() <= SNAPSHOT_BUDGET {
        return text.to_string();
    }
    const NOTE: &str = "\n… cut at the snapshot's budget; stack, scopes and variables show the rest";
    let (kept, _) = cut(text, SNAPSHOT_BUDGET - NOTE.chars().count() - 1);
    format!("{}{NOTE}", kept.trim_end_matches('…'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_actors::dap::session::breakpoints::{Binding, BreakpointSpec};
    use tether_actors::dap::session::{Child, Evaluated, Local, Locals, StackFrameAt};

    fn frame(name: &str, path: Option<&str>, user: bool) -> ChainFrame {
        ChainFrame { id: 1, name: name.into(), path: path.map(str::to_string), line: 3, user, label: false }
    }

    #[test]
    fn library_frames_fold_into_one_line_per_run() {
        let frames = [
            frame("strlen", None, false),
            frame("f", Some("a.c"), true),
            frame("g", Some("/usr/lib/x.py"), false),
            frame("h", Some("/usr/lib/y.py"), false),
            frame("main", Some("a.c"), true),
        ];
        assert_eq!(
            chain(&frames),
            "… 1 library frame ← f at a.c:3 [frame_id=1] ← … 2 library frames ← main at a.c:3 [frame_id=1]"
        );
    }

    #[test]
    fn the_text_never_passes_its_budget() {
        let long = "x".repeat(SNAPSHOT_BUDGET * 2);
        let held = within_budget(&long);
        assert!(held.chars().count() <= SNAPSHOT_BUDGET, "{}", held.len());
        assert!(held.ends_with("stack, scopes and variables show the rest"));
        assert_eq!(within_budget("short"), "short");
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
        let local =
            Local { name: "x".into(), value: "1".into(), cut: false, ty: Some("int".into()), reference: 0 };
        let snap = stop(Ok(Locals { listed: vec![local], total: 3 }));
        let reply = reply(DebugReply {
            is_error: false,
            text: String::new(),
            lead: Some(Lead::Launched),
            data: json!({"exception_filters": []}),
            state: None,
            answer: Some(Answer::Settled(Settled::Stopped(Box::new(snap)))),
            notes: vec![Note::Said("2 breakpoints bound".into())],
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
        assert!(text.ends_with("\n2 breakpoints bound"), "{text}");
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
    fn listings_state_their_caps_and_what_they_left_out() {
        let (text, data) = listing(&Answer::Threads { listed: vec![(1, "MainThread".into())], total: 101 });
        assert_eq!(text, "1 MainThread\n… 100 more threads (listed at most 100)");
        assert_eq!(data["total"], 101);
        let frame = StackFrameAt {
            id: 7,
            name: "main".into(),
            path: Some("/w/prog.py".into()),
            shown_path: Some("prog.py".into()),
            line: 4,
        };
        let (text, data) = listing(&Answer::Stack { frames: vec![frame], total: 31 });
        assert_eq!(text, "#0 frame_id=7 main at prog.py:4\n… 1 more frames not shown (cap 30)");
        assert_eq!(data["frames"][0]["path"], "/w/prog.py", "the data keeps the adapter's path");
        let child = Child {
            name: "xs".into(),
            value: "[1, …".into(),
            cut: true,
            ty: Some("list".into()),
            reference: 9,
        };
        let (text, data) = listing(&Answer::Variables { listed: vec![child], total: 1 });
        assert_eq!(text, "xs = [1, … (list) [reference=9]\n(1 value(s) cut at 400 characters)");
        assert_eq!(data["variables"][0]["value_cut"], true);
        assert_eq!(listing(&Answer::Variables { listed: vec![], total: 0 }).0, "no children");
        assert_eq!(listing(&Answer::Scopes(vec![])).0, "no scopes");
        let value = Evaluated {
            expression: "n + 1".into(),
            value: "8".into(),
            cut: false,
            ty: Some("int".into()),
            reference: 0,
        };
        let (text, data) = listing(&Answer::Evaluated(value));
        assert_eq!(text, "n + 1 = 8 (int)");
        assert_eq!(data["result"], "8");
    }
}
