//! The built-in tools, one handler per file, plus what they share
//! (`structural`: what `ast_grep` and `ast_edit` say of a scan's scope).

pub mod apply_patch;
pub mod ask_user;
pub mod ast_edit;
pub mod ast_grep;
pub mod debug;
pub mod edit;
pub mod eval;
pub mod lsp;
pub mod patch;
pub mod read;
pub mod resolve;
pub mod resources;
pub mod structural;
pub mod vibe;
pub mod write;

use std::sync::Arc;

use crate::handler::ToolHandler;

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
