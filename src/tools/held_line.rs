//! A line a write tool is given, held against what its caller last read
//! of the file ([`crate::views::LineNow`]): another conversation, or a
//! program outside tether, may have shifted the file since, and the number
//! the caller gives then names something else. The line is followed to
//! where it stands now (and the answer says so), or the edit is refused
//! naming who changed it — never applied to whatever stands at the number.

use std::path::Path;

use crate::handler::CallContext;
use crate::views::{LineNow, clock, what_moved};

/// A line to use, and what to say of it.
pub(crate) struct Held {
    /// The line as it stands now.
    pub line: u32,
    /// Said when it moved.
    pub note: Option<String>,
}

/// Where `line` of `path`, as this call's conversation read it, stands now;
/// an error (nothing written) when that line was changed since.
pub(crate) fn hold(ctx: &CallContext, path: &Path, line: u32) -> Result<Held, String> {
    let Ok(now) = std::fs::read(path) else { return Ok(Held { line, note: None }) };
    let rel = tether_actors::fs::relative(ctx.root(), path);
    match ctx.views.line_now(&ctx.conversation, path, line, &now) {
        LineNow::AsSeen => Ok(Held { line, note: None }),
        LineNow::Moved { now: at, moved } if at == line => Ok(Held {
            line,
            note: Some(format!(
                "note: `{rel}` was changed since you read it at {} ({}); line {line} is where it was",
                clock(moved.seen.at),
                moved.who.phrase()
            )),
        }),
        LineNow::Moved { now: at, moved } => Ok(Held {
            line: at,
            note: Some(format!(
                "note: line {line} as you read `{rel}` at {} is line {at} now: the file was changed since ({}), and the edit was made where that line is now",
                clock(moved.seen.at),
                moved.who.phrase()
            )),
        }),
        LineNow::Changed { moved } => {
            let diff =
                what_moved(&moved.seen, &now).map(|d| format!("; what changed:\n{d}")).unwrap_or_default();
            Err(format!(
                "line {line} of `{rel}` as you read it at {} was changed since ({}), so it may no longer be what you named; nothing was written. Read the file again and give the line as it is now{diff}",
                clock(moved.seen.at),
                moved.who.phrase()
            ))
        }
    }
}
