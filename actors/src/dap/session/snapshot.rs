//! The stop snapshot: what every op that ends in a stop answers with, so
//! that "where is it and what are the values" is never a second call.
//!
//! Read here as a [`Snapshot`]: the reason (an exception with its type and
//! message from `exceptionInfo`), the frame in the user's code, the source
//! around its line, its locals (names, short types, values cut, a capped
//! count), and the call chain with every frame's id and which frames are
//! the user's. The `debug` tool writes it out within a size budget.

use std::path::{Component, Path};

use serde_json::json;

use super::replies::{NotRead, display, typed};
use super::state::Stop;
use super::{
    Blind, ChainFrame, Locals, NoLocals, REQUEST_TIMEOUT, Settled, ShownVariable, Snapshot, StopWhy,
};
use crate::text::cut;
use crate::wire::dap::DapClient;
use dap_types::requests;

/// Frames asked for; the chain shows the user's and folds the rest.
pub const SNAPSHOT_FRAMES: usize = 40;
/// Lines of source shown on each side of the current line.
const CONTEXT_LINES: u64 = 2;
/// Locals shown at most.
pub const MAX_LOCALS: usize = 25;
/// A local's value is cut at this many characters.
pub const MAX_LOCAL_VALUE: usize = 120;
/// A source line is cut at this many characters.
const MAX_SOURCE_LINE: usize = 160;
/// A local's type is cut at this many characters.
const MAX_TYPE: usize = 40;
/// A frame's or a local's name is cut at this many characters (C++
/// template instantiations run to thousands).
const MAX_NAME: usize = 120;
/// The exception message is cut at this many characters.
const MAX_EXCEPTION: usize = 300;

/// Directories whose code is not the user's even inside the working
/// directory: installed packages and virtual environments.
const LIBRARY_DIRS: &[&str] = &["site-packages", "dist-packages", "node_modules", ".venv", "venv", "vendor"];

/// Scope groups debugpy adds to a frame's locals (not variables).
fn is_group(name: &str) -> bool {
    matches!(name, "special variables" | "function variables" | "class variables" | "protected variables")
}

/// Whether a frame is in the user's code: a source file inside the working
/// directory, outside installed packages.
fn is_user(path: Option<&str>, workdir: &Path) -> bool {
    let Some(path) = path else { return false };
    let Ok(rel) = Path::new(path).strip_prefix(workdir) else { return false };
    !rel.components().any(|c| matches!(c, Component::Normal(n) if LIBRARY_DIRS.iter().any(|d| n == *d)))
}

/// Where the stop `stop` is, as the tool shows it.
pub(super) async fn snapshot(client: &DapClient, stop: &Stop, workdir: &Path) -> Settled {
    let thread = stop.thread.unwrap_or(1);
    let why = reason(client, stop, thread).await;
    let frames = match typed("stack", "stackFrames", client.stack_trace(thread, SNAPSHOT_FRAMES).await) {
        Ok(trace) => trace.stack_frames,
        Err(NotRead::Unfit(error)) => {
            return Settled::StoppedBlind {
                why,
                kind: stop.reason.clone(),
                thread,
                trouble: Blind::BadReply(error),
            };
        }
        Err(NotRead::Failed(e)) => {
            return Settled::StoppedBlind {
                why,
                kind: stop.reason.clone(),
                thread,
                trouble: Blind::Unreadable(e.to_string()),
            };
        }
    };
    let frames_capped = frames.len() >= SNAPSHOT_FRAMES;
    let frames: Vec<(ChainFrame, Option<String>)> = frames
        .into_iter()
        .map(|f| {
            let path = f.source.and_then(|s| s.path);
            let user = is_user(path.as_deref(), workdir);
            let label = matches!(f.presentation_hint, Some(dap_types::StackFramePresentationHint::Label));
            // rdbg names a C method's frame `[C] Hash#fetch` and gives it
            // its caller's file and line: the runtime's code.
            let native = f.name.starts_with("[C] ");
            let frame = ChainFrame {
                id: f.id,
                name: frame_name(&f.name),
                path: path.as_deref().map(|p| display(workdir, p)),
                line: f.line,
                user: user && !label && !native,
                label,
            };
            (frame, path)
        })
        .collect();
    let Some((top, _)) = frames.first() else {
        return Settled::StoppedBlind { why, kind: stop.reason.clone(), thread, trouble: Blind::NoFrames };
    };
    let (why, kind) = match postmortem(client, stop, top.id).await {
        Some(exception) => (StopWhy::Uncaught(exception), "exception".to_string()),
        None => (why, stop.reason.clone()),
    };
    // The frame shown: the top one, or when that is library code (a crash
    // inside libc, an exception raised in a package), the first of the
    // user's — where the question usually is.
    let focus = if top.user { 0 } else { frames.iter().position(|(f, _)| f.user).unwrap_or(0) };
    let (shown, raw_path) = &frames[focus];
    let source = source_lines(raw_path.as_deref(), shown.line);
    let locals = locals(client, shown.id).await;
    Settled::Stopped(Box::new(Snapshot {
        why,
        kind,
        thread,
        focus,
        source,
        locals,
        frames_capped,
        frames: frames.into_iter().map(|(f, _)| f).collect(),
    }))
}

/// A frame's name as shown: without debugpy's " (Current frame)" on the
/// frame an exception stopped in, or js-debug's `global.` before a
/// script's functions, cut at [`MAX_NAME`].
fn frame_name(raw: &str) -> String {
    // js-debug names a script's functions `global.name`.
    let raw = raw.strip_suffix(" (Current frame)").unwrap_or(raw);
    cut(raw.strip_prefix("global.").unwrap_or(raw), MAX_NAME).0
}

/// Why it stopped; an exception's type and message from `exceptionInfo`
/// when the adapter has them.
async fn reason(client: &DapClient, stop: &Stop, thread: i64) -> StopWhy {
    if stop.reason == "exception"
        && stop.exception_info
        && let Ok(info) = client.request("exceptionInfo", json!({"threadId": thread}), REQUEST_TIMEOUT).await
    {
        let id = info["exceptionId"].as_str().unwrap_or("");
        let description = info["description"].as_str().or(info["details"]["message"].as_str()).unwrap_or("");
        let what = match (id.is_empty(), description.is_empty()) {
            (false, false) if !description.starts_with(id) => format!("{id}: {description}"),
            (false, true) => id.to_string(),
            _ => description.to_string(),
        };
        let what = plain_message(&what);
        // lldb reports a signal as an exception whose text says so.
        if what.starts_with("signal ") {
            return StopWhy::Plain(cut(&what, MAX_EXCEPTION).0);
        }
        if !what.is_empty() {
            return StopWhy::Exception(cut(&what, MAX_EXCEPTION).0);
        }
    }
    // rdbg has no `exceptionInfo`; its description holds the exception.
    if let Some(what) =
        stop.description.as_deref().filter(|_| stop.reason == "exception").and_then(ruby_exception)
    {
        return StopWhy::Exception(what);
    }
    // js-debug reports a `pause` as it reports a step: a "step" stop
    // described "Paused". Which one it was, tether knows.
    if stop.reason == "step" && stop.description.as_deref() == Some("Paused") {
        return StopWhy::Plain(if stop.asked_pause { "pause" } else { "step" }.into());
    }
    let reason = stop.reason.to_ascii_lowercase();
    // js-debug names what paused it: "Paused on debugger statement" is a
    // `pause` stop no `pause` asked for.
    if let Some(what) = stop.description.as_deref().and_then(|d| d.strip_prefix("Paused on "))
        && !what.eq_ignore_ascii_case(&reason)
        && !what.is_empty()
    {
        return StopWhy::Plain(cut(what, MAX_EXCEPTION).0);
    }
    match &stop.description {
        // lldb says "breakpoint 1.1" for a breakpoint, js-debug "Paused
        // on breakpoint", rdbg " BP - Line  /abs/path.rb:5 (line)": nothing
        // to add (the place follows).
        Some(d)
            if !d.is_empty()
                && !d.trim_start().starts_with("BP - ")
                && !d.to_ascii_lowercase().starts_with(&reason)
                && d.to_ascii_lowercase() != format!("paused on {reason}") =>
        {
            StopWhy::Described { reason: stop.reason.clone(), description: cut(d, MAX_EXCEPTION).0 }
        }
        _ => StopWhy::Plain(stop.reason.clone()),
    }
}

/// The exception of rdbg's postmortem stop: a `step` stop whose top frame
/// holds the exception as `_raised` (the `debug` gem shows `_raised` only
/// at a stop on an exception; a step over a line that raises one nothing
/// rescues ends in postmortem too). Its `Type: message`. Only adapters
/// without `exceptionInfo` are asked (rdbg is one).
async fn postmortem(client: &DapClient, stop: &Stop, top: u64) -> Option<String> {
    if stop.reason != "step" || stop.exception_info {
        return None;
    }
    let locals = locals(client, top).await.ok()?;
    let raised = locals.listed.iter().find(|l| l.name == "_raised")?;
    Some(ruby_exception(&raised.value).unwrap_or_else(|| raised.value.clone()))
}

/// `Type: message` of the `debug` gem's `#<KeyError: key not found:
/// "kiwi">` (and of its stop description, which adds ` is raised.`).
fn ruby_exception(text: &str) -> Option<String> {
    let text = text.trim().strip_suffix(" is raised.").unwrap_or(text.trim());
    let inner = text.strip_prefix("#<")?.strip_suffix('>')?;
    Some(cut(inner, MAX_EXCEPTION).0)
}

/// An exception message on one line, without debugpy's note that the
/// trace goes on past the frame it stopped in (the chain says that).
fn plain_message(message: &str) -> String {
    let mut text = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(start) = text.find("(note: full exception trace is shown")
        && let Some(len) = text[start..].find(')')
    {
        let after = text[start + len + 1..].to_string();
        text = format!("{}{after}", text[..start].trim_end());
    }
    text
}

/// `line` and the lines around it, read from disk.
fn source_lines(path: Option<&str>, line: u64) -> Vec<(u64, String)> {
    let Some(text) = path.and_then(|p| std::fs::read_to_string(p).ok()) else { return Vec::new() };
    let first = line.saturating_sub(CONTEXT_LINES).max(1);
    text.lines()
        .enumerate()
        .map(|(i, l)| (i as u64 + 1, l))
        .filter(|(n, _)| (first..=line.saturating_add(CONTEXT_LINES)).contains(n))
        .map(|(n, l)| (n, cut(l.trim_end(), MAX_SOURCE_LINE).0))
        .collect()
}

/// The frame's locals (the first scope the adapter marks as locals, or
/// names so), at most [`MAX_LOCALS`] with their total; or why there are
/// none.
async fn locals(client: &DapClient, frame: u64) -> Result<Locals, NoLocals> {
    let asked = client
        .send::<requests::Scopes>(&dap_types::ScopesArguments { frame_id: frame }, REQUEST_TIMEOUT)
        .await;
    let scopes = match typed("scopes", "scopes", asked) {
        Ok(answer) => answer.scopes,
        Err(NotRead::Unfit(unfit)) => return Err(NoLocals::BadReply(unfit)),
        Err(NotRead::Failed(e)) => return Err(NoLocals::Unreadable { what: "scopes", error: e.to_string() }),
    };
    let is_locals = |s: &dap_types::Scope| {
        serde_json::to_value(&s.presentation_hint)
            .ok()
            .and_then(|v| v.as_str().map(|h| h == "locals"))
            .unwrap_or(false)
            || s.name.to_ascii_lowercase().starts_with("local")
    };
    let Some(first) = scopes.iter().position(is_locals) else {
        return Err(NoLocals::NoScope(scopes.iter().map(|s| s.name.clone()).collect()));
    };
    // js-debug gives each block of the function a scope of its own
    // (`Block: total`, `Catch Block: f`, then `Local: total`): a loop's
    // counter, a caught error and the body's variables are locals as much
    // as the function's are. Innermost first; a shadowed name keeps the
    // innermost value.
    let block = |s: &dap_types::Scope| s.name.contains("Block");
    let mut taken = vec![&scopes[first]];
    if block(&scopes[first]) {
        for scope in &scopes[first + 1..] {
            if !(block(scope) || scope.name.starts_with("Local")) {
                break;
            }
            taken.push(scope);
            if scope.name.starts_with("Local") {
                break;
            }
        }
    }
    let mut vars: Vec<dap_types::Variable> = Vec::new();
    for scope in taken {
        let arguments = dap_types::VariablesArguments {
            variables_reference: scope.variables_reference,
            filter: None,
            start: None,
            count: None,
            format: None,
        };
        match typed(
            "variables",
            "variables",
            client.send::<requests::Variables>(&arguments, REQUEST_TIMEOUT).await,
        ) {
            Ok(answer) => vars.extend(answer.variables),
            Err(NotRead::Unfit(unfit)) => return Err(NoLocals::BadReply(unfit)),
            Err(NotRead::Failed(e)) => {
                return Err(NoLocals::Unreadable { what: "locals", error: e.to_string() });
            }
        }
    }
    // `this` of a plain function call in a script, the global object, and
    // rdbg's `%self` at a script's top level (`main`): noise.
    let mut seen = std::collections::HashSet::new();
    let vars: Vec<dap_types::Variable> = vars
        .into_iter()
        .filter(|v| {
            !(is_group(&v.name)
                || (v.name == "this" && v.value == "global")
                || (v.name == "%self" && v.value == "main"))
        })
        .filter(|v| seen.insert(v.name.clone()))
        .collect();
    let total = vars.len();
    let shown = vars
        .into_iter()
        .take(MAX_LOCALS)
        .map(|v| {
            let (value, cut_value) = cut(&v.value.replace('\n', " "), MAX_LOCAL_VALUE);
            let ty = v.type_.map(|t| cut(&t, MAX_TYPE).0);
            ShownVariable {
                name: cut(&v.name, MAX_NAME).0,
                value,
                cut: cut_value,
                ty,
                reference: v.variables_reference,
            }
        })
        .collect();
    Ok(Locals { listed: shown, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdbg_exceptions_read_as_type_and_message() {
        assert_eq!(
            ruby_exception("#<KeyError: key not found: \"kiwi\"> is raised.").as_deref(),
            Some("KeyError: key not found: \"kiwi\"")
        );
        assert_eq!(ruby_exception("#<RuntimeError: boom>").as_deref(), Some("RuntimeError: boom"));
        assert_eq!(ruby_exception("Paused on breakpoint"), None);
    }

    #[test]
    fn frame_names_are_cut_and_lose_the_adapters_decorations() {
        let template =
            format!("std::vector<{}>::push_back (Current frame)", "std::pair<int, int>, ".repeat(300));
        let name = frame_name(&template);
        assert!(name.chars().count() == MAX_NAME + 1 && name.ends_with('…'), "{name}");
        assert_eq!(frame_name("f (Current frame)"), "f");
        assert_eq!(frame_name("global.main"), "main");
    }

    #[test]
    fn user_code_is_inside_the_working_directory_and_outside_installed_packages() {
        let w = Path::new("/w");
        assert!(is_user(Some("/w/src/a.py"), w));
        assert!(!is_user(Some("/w/.venv/lib/python3.11/site-packages/pytest/main.py"), w));
        assert!(!is_user(Some("/usr/lib/python3.11/runpy.py"), w));
        assert!(!is_user(None, w));
    }

    #[test]
    fn exception_messages_lose_debugpys_note_and_line_breaks() {
        let raw = "AssertionError       (note: full exception trace is shown but execution is paused at: test_add): assert -1 == 5";
        assert_eq!(plain_message(raw), "AssertionError: assert -1 == 5");
        assert_eq!(plain_message("KeyError: 'kiwi'"), "KeyError: 'kiwi'");
    }

    #[test]
    fn source_lines_mark_around_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.py");
        std::fs::write(&p, "1\n2\n3\n4\n5\n6\n").unwrap();
        let lines = source_lines(p.to_str(), 1);
        assert_eq!(lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 2, 3]);
        let lines = source_lines(p.to_str(), 6);
        assert_eq!(lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [4, 5, 6]);
    }
}
