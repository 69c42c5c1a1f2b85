//! The built-in tools, one handler per file, plus what they share
//! (`structural`: what `ast_grep`, `ast_edit` and `resolve` say of a
//! scan's scope and of a failure; `unusable`: why a server or an adapter
//! cannot serve a file).

pub mod apply_patch;
pub mod ask_user;
pub mod ast_edit;
pub mod ast_grep;
pub mod debug;
pub mod edit;
pub mod eval;
mod held_line;
pub mod lsp;
pub mod patch;
pub mod read;
pub mod resolve;
pub mod resources;
pub mod structural;
pub mod unusable;
pub mod vibe;
pub mod write;

use std::sync::Arc;

use crate::handler::{CallContext, ToolHandler};

/// The built-in host tools (`read`, `write`, `edit`, `apply_patch`).
pub fn host_file_tools() -> Vec<Arc<dyn ToolHandler>> {
    vec![
        Arc::new(read::Read),
        Arc::new(write::Write),
        Arc::new(edit::Edit),
        Arc::new(apply_patch::ApplyPatch),
    ]
}

/// The largest file `edit` and `apply_patch` change: they hold it (and
/// its new content) in memory; past it, `write` replaces a file whole.
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// Refuses a file past [`MAX_EDIT_BYTES`], naming the tool and the path.
pub(crate) fn editable_size(tool: &str, path: &std::path::Path, rel: &str) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_EDIT_BYTES => Err(format!(
            "{tool}: `{rel}` holds {} bytes; {tool} changes files of up to {MAX_EDIT_BYTES} bytes — use write to replace it whole",
            meta.len()
        )),
        _ => Ok(()),
    }
}

pub(crate) use tether_actors::text::plural;

/// The note a write adds for names it wrote that share their content with
/// other hard links (`linked`: each path, relative to the root, and how
/// many others): a write goes through a new file renamed over the name,
/// so those links keep the old content. `None` when there are none.
pub(crate) fn linked_note(linked: &[(String, u64)]) -> Option<String> {
    if linked.is_empty() {
        return None;
    }
    let each: Vec<String> = linked
        .iter()
        .map(|(rel, n)| format!("`{rel}` had {n} other hard link{}", plural(*n as usize)))
        .collect();
    Some(format!(
        "note: {}; {} the old content (tether writes a new file and renames it over the name)",
        each.join(", "),
        if linked.iter().map(|(_, n)| n).sum::<u64>() == 1 { "it keeps" } else { "they keep" }
    ))
}

/// [`linked_note`] for a commit's paths, relative to `root`.
pub(crate) fn committed_note(
    root: &std::path::Path,
    committed: &tether_actors::fs::Committed,
) -> Option<String> {
    let linked: Vec<(String, u64)> =
        committed.linked.iter().map(|(p, n)| (tether_actors::fs::relative(root, p), *n)).collect();
    linked_note(&linked)
}

/// `text`, and `note` on a line of its own when there is one.
/// When `path` (holding `now` before this call's write) changed since
/// this call's conversation last saw it: a note saying when it saw it, who
/// changed it since, and what changed (a short diff, when the text seen
/// was kept).
pub(crate) fn moved_note(ctx: &CallContext, path: &std::path::Path, rel: &str, now: &[u8]) -> Option<String> {
    let moved = ctx.views.moved(&ctx.conversation, path, now)?;
    let mut note = format!(
        "note: `{rel}` changed since you last saw it at {} ({}); your edit was applied to it as it is now",
        crate::views::clock(moved.seen.at),
        moved.who.phrase()
    );
    match crate::views::what_moved(&moved.seen, now) {
        Some(diff) if !diff.is_empty() => {
            note.push_str(", and what changed was:\n");
            note.push_str(&diff);
        }
        _ => note.push_str(" (what changed is not known: the text seen was not kept)"),
    }
    Some(note)
}

pub(crate) fn with_note(text: String, note: Option<String>) -> String {
    match note {
        Some(note) => format!("{text}\n{note}"),
        None => text,
    }
}

/// Runs blocking file work off the actor threads.
pub(crate) async fn blocking<F>(tool: &'static str, work: F) -> crate::result::ToolResult
where
    F: FnOnce() -> crate::result::ToolResult + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) => crate::result::ToolResult::error(format!(
            "{tool}: the worker stopped unexpectedly ({e}); nothing is known to have changed, check and retry"
        )),
    }
}
