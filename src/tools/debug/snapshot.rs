//! A stop in words: the reason, `file:line in function`, the source
//! around the line with the line marked, the locals of the frame in the
//! user's code (the caps stated), and the call chain with every frame's
//! id, library frames folded into one line per run. The whole has a size
//! budget; what it leaves out it names, with the op that shows it.

use serde_json::{Value, json};
use tether_actors::dap::session::snapshot::{MAX_LOCAL_VALUE, MAX_LOCALS, SNAPSHOT_FRAMES};
use tether_actors::dap::session::{ChainFrame, MAX_FRAMES, MAX_VALUE, NoLocals, Snapshot, StopWhy};
use tether_actors::text::{cut, plural};

/// The snapshot's text budget, about 1,500 tokens.
pub const SNAPSHOT_BUDGET: usize = 6_000;

/// Why it stopped, in words.
pub(super) fn reason(why: &StopWhy) -> String {
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
pub(super) fn snapshot(s: &Snapshot) -> (String, Value) {
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
        NoLocals::BadReply(reply) => super::failure::unfit(reply),
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
}
