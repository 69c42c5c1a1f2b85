//! Breakpoints in words: where each bound (at the line asked, elsewhere,
//! or not, in the adapter's words), what a start's answer says of them,
//! and what `breakpoints` did — held for the launch, cleared, set.

use serde_json::{Value, json};
use tether_actors::dap::session::breakpoints::{Binding, BreakpointSpec};
use tether_actors::dap::session::{BoundView, FunctionBinding, FunctionFound, FunctionsSet, LinesSet};
use tether_actors::text::plural;

/// How a breakpoint as asked reads: `line 7 if i == 3`.
fn asked(spec: &BreakpointSpec) -> String {
    let mut out = format!("line {}", spec.line);
    if let Some(c) = &spec.condition {
        out.push_str(&format!(" if {c}"));
    }
    if let Some(h) = &spec.hit_condition {
        out.push_str(&format!(" on hit {h}"));
    }
    if let Some(m) = &spec.log_message {
        out.push_str(&format!(" logging \"{m}\""));
    }
    out
}

/// `prog.py: line 3 bound at line 2, not at the line asked for`.
fn line(b: &Binding, file: &str) -> String {
    let asked = asked(&b.spec);
    match (b.verified, b.bound_line) {
        (true, Some(l)) if l != b.spec.line => {
            format!("{file}: {asked} bound at line {l}, not at the line asked for")
        }
        (true, _) => match &b.note {
            Some(note) => format!("{file}: {asked} set, but {note}"),
            None => format!("{file}: {asked} bound"),
        },
        (false, _) => {
            let why = b.message.as_deref().unwrap_or("the adapter gave no reason");
            format!("{file}: {asked} not bound: {why}")
        }
    }
}

/// Where a function breakpoint bound, `demo.c:3`.
fn place(b: &FunctionBinding) -> Option<String> {
    match (&b.path, b.line) {
        (Some(p), Some(l)) => Some(format!("{p}:{l}")),
        (Some(p), None) => Some(p.clone()),
        (None, Some(l)) => Some(format!("line {l}")),
        (None, None) => None,
    }
}

/// What tether found of a function breakpoint, as a note on where it
/// bound or as why it did not.
fn found(found: &FunctionFound, name: &str) -> String {
    match found {
        FunctionFound::NotInReply => "the adapter's answer lists no breakpoint for it (it may not set function breakpoints); give `file` + `lines` instead".into(),
        FunctionFound::Dotted { bare } => {
            format!("debugpy matches a function by its bare name, never a dotted one; give `{bare}`")
        }
        FunctionFound::NoDef => format!(
            "no `def {name}` in the working directory's Python files; debugpy took the name without saying where, and stops only if a function of that name runs (in an installed package, say)"
        ),
        FunctionFound::AtDef { more, .. } if more.is_empty() => "its `def`; debugpy does not say where".into(),
        FunctionFound::AtDef { more, left: 0 } => {
            format!("its first `def`; it stops in each, also at {}", more.join(", "))
        }
        FunctionFound::AtDef { more, left } => {
            format!("its first `def`; it stops in each, also at {} and {left} more", more.join(", "))
        }
    }
}

/// `function `square` bound at demo.c:3`.
fn function(b: &FunctionBinding) -> String {
    let name = &b.name;
    let found = b.found.as_ref().map(|f| found(f, name));
    match (b.verified, place(b)) {
        (true, Some(place)) => match found {
            Some(note) => format!("function `{name}` bound at {place} ({note})"),
            None => format!("function `{name}` bound at {place}"),
        },
        // debugpy accepts any name and says where only when it stops.
        (true, None) => format!(
            "function `{name}` set; the adapter says neither where it binds nor whether the function exists (it stops there when the function is called)"
        ),
        (false, _) => {
            let why = found.or_else(|| b.message.clone());
            let why = why.as_deref().unwrap_or("the adapter gave no reason");
            format!("function `{name}` not bound: {why}")
        }
    }
}

/// One line per breakpoint: the files', then the functions'.
pub fn report(view: &BoundView) -> Vec<String> {
    let lines = view.files.iter().flat_map(|(file, bs)| bs.iter().map(move |b| line(b, file)));
    lines.chain(view.functions.iter().map(function)).collect()
}

/// What a start's answer says of the breakpoints: the line breakpoints
/// worth a word — not bound, or bound elsewhere than asked — or that all
/// bound where asked, then where each function breakpoint bound (the
/// place the caller did not know).
pub fn summary(view: &BoundView) -> Option<String> {
    let lines: usize = view.files.iter().map(|(_, bs)| bs.len()).sum();
    let mut said: Vec<String> = view
        .files
        .iter()
        .flat_map(|(file, bs)| {
            bs.iter()
                .filter(|b| !b.verified || b.note.is_some() || b.bound_line.is_some_and(|l| l != b.spec.line))
                .map(move |b| line(b, file))
        })
        .collect();
    if said.is_empty() && lines > 0 {
        said.push(format!("{lines} bound where asked"));
    }
    said.extend(view.functions.iter().map(function));
    (!said.is_empty()).then(|| format!("breakpoints: {}", said.join("; ")))
}

/// "none of your 2 breakpoints bound: …", each with why.
pub fn none_bound(view: &BoundView) -> String {
    let total = view.total();
    format!("none of your {total} breakpoint{} bound: {}", plural(total), report(view).join("; "))
}

/// The line breakpoints' structured form: `[{file, line, verified, bound_line, message, …}]`.
pub fn lines_data(view: &BoundView) -> Value {
    let rows = view.files.iter().flat_map(|(file, bs)| {
        bs.iter().map(move |b| {
            let mut v = serde_json::to_value(b).unwrap_or(Value::Null);
            v["file"] = json!(file);
            v
        })
    });
    Value::Array(rows.collect())
}

/// The function breakpoints' structured form: `[{function, verified, file, line, message}]`.
pub fn functions_data(view: &BoundView) -> Value {
    let rows = view.functions.iter().map(|b| {
        let found_words = b.found.as_ref().map(|f| found(f, &b.name));
        json!({
            "function": b.name,
            "id": b.id,
            "verified": b.verified,
            "file": b.path,
            "line": b.line,
            // tether's word is why it did not bind, or a note on where it did.
            "message": if b.verified { b.message.clone() } else { found_words.clone().or_else(|| b.message.clone()) },
            "note": found_words.filter(|_| b.verified),
        })
    });
    Value::Array(rows.collect())
}

/// `` `a`, `b` ``.
fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// What `breakpoints` did with a file's.
pub fn lines_set(set: &LinesSet) -> (String, Value) {
    match set {
        LinesSet::Held { file, specs } => (
            format!(
                "{} breakpoint{} in {file} will be set when the session starts: {}; the launch (or attach) answer says where each bound",
                specs.len(),
                plural(specs.len()),
                specs.iter().map(asked).collect::<Vec<_>>().join(", ")
            ),
            json!({"file": file, "breakpoints": specs, "bound": null}),
        ),
        LinesSet::Cleared { file } => {
            (format!("cleared the breakpoints of {file}"), json!({"file": file, "breakpoints": []}))
        }
        LinesSet::Between { file, specs } => (
            format!(
                "{file}: the program is between processes; its breakpoints are set in the next one it starts"
            ),
            json!({"file": file, "breakpoints": specs, "bound": null}),
        ),
        LinesSet::Bound(view) => {
            let file = view.files.first().map(|(f, _)| f.as_str()).unwrap_or_default();
            (report(view).join("\n"), json!({"file": file, "breakpoints": lines_data(view)}))
        }
    }
}

/// What `breakpoints` did with the function breakpoints.
pub fn functions_set(set: &FunctionsSet) -> (String, Value) {
    match set {
        FunctionsSet::Held(names) => (
            format!(
                "{} function breakpoint{} will be set when the session starts: {}; the launch (or attach) answer says where each bound",
                names.len(),
                plural(names.len()),
                quoted(names)
            ),
            json!({"functions": names, "bound": null}),
        ),
        FunctionsSet::Cleared => ("cleared the function breakpoints".into(), json!({"functions": []})),
        FunctionsSet::Between(names) => (
            format!(
                "the program is between processes; the function breakpoints {} are set in the next one it starts",
                quoted(names)
            ),
            json!({"functions": names, "bound": null}),
        ),
        FunctionsSet::Bound(view) => (report(view).join("\n"), json!({"functions": functions_data(view)})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(line: u32, verified: bool, bound_line: Option<u32>, message: Option<&str>) -> Binding {
        Binding {
            spec: BreakpointSpec::at(line),
            id: None,
            verified,
            bound_line,
            message: message.map(str::to_string),
            note: None,
        }
    }

    fn one_file(bindings: Vec<Binding>) -> BoundView {
        BoundView { files: vec![("main.go".into(), bindings)], functions: Vec::new() }
    }

    #[test]
    fn a_moved_breakpoint_says_where_and_an_unbound_one_says_why() {
        let view = one_file(vec![
            binding(3, true, Some(2), None),
            binding(5, true, Some(5), None),
            binding(9, false, None, Some("could not find statement at main.go:9")),
        ]);
        assert_eq!(
            report(&view),
            [
                "main.go: line 3 bound at line 2, not at the line asked for",
                "main.go: line 5 bound",
                "main.go: line 9 not bound: could not find statement at main.go:9",
            ]
        );
        assert_eq!(
            summary(&view).as_deref(),
            Some(
                "breakpoints: main.go: line 3 bound at line 2, not at the line asked for; main.go: line 9 not bound: could not find statement at main.go:9"
            )
        );
        let fine = one_file(vec![binding(5, true, Some(5), None)]);
        assert_eq!(summary(&fine).as_deref(), Some("breakpoints: 1 bound where asked"));
    }

    #[test]
    fn a_condition_and_a_note_read_in_the_line() {
        let mut b = binding(7, true, None, None);
        b.spec.condition = Some("i == 3".into());
        b.note = Some("line 7 is blank".into());
        assert_eq!(line(&b, "a.rb"), "a.rb: line 7 if i == 3 set, but line 7 is blank");
    }

    #[test]
    fn none_bound_lists_each_with_the_adapters_words() {
        let view = one_file(vec![binding(1, false, None, None)]);
        assert_eq!(
            none_bound(&view),
            "none of your 1 breakpoint bound: main.go: line 1 not bound: the adapter gave no reason"
        );
    }

    #[test]
    fn function_breakpoints_say_where_they_bound() {
        let f = FunctionBinding {
            name: "add".into(),
            id: Some(1),
            verified: true,
            path: Some("a.py".into()),
            line: Some(1),
            message: None,
            found: Some(FunctionFound::AtDef { more: Vec::new(), left: 0 }),
        };
        let view = BoundView { files: Vec::new(), functions: vec![f] };
        assert_eq!(report(&view), ["function `add` bound at a.py:1 (its `def`; debugpy does not say where)"]);
        assert_eq!(functions_data(&view)[0]["file"], "a.py");
        let (text, data) = functions_set(&FunctionsSet::Held(vec!["add".into(), "sub".into()]));
        assert!(
            text.starts_with("2 function breakpoints will be set when the session starts: `add`, `sub`;"),
            "{text}"
        );
        assert_eq!(data["bound"], Value::Null);
    }
}
