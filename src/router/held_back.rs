//! "Held back": in a checkout its user has not trusted ([`crate::trust`]),
//! the first answer each conversation gets from a tool that starts
//! programs (language servers, kernels, debug adapters, workers) says, in
//! one line, what of the checkout's own was not run and how to trust it —
//! so an answer from a built-in server is never read as one from the
//! server the checkout names.

use std::collections::HashSet;

use parking_lot::Mutex;

use crate::result::ToolResult;

/// The tools whose answers a held-back program would have served.
fn starts_programs(tool: &str) -> bool {
    tool.starts_with("lsp") || tool.starts_with("vibe_") || matches!(tool, "eval" | "debug")
}

/// The note, and the conversations already told.
pub struct HeldBack {
    line: String,
    told: Mutex<HashSet<String>>,
}

impl HeldBack {
    /// The note for a restricted checkout at `workdir` holding `held`
    /// (see [`tether_actors::trust::held_back`]); `None` when it holds
    /// nothing of its own.
    pub fn new(held: Vec<String>) -> Option<Self> {
        (!held.is_empty()).then(|| Self {
            line: format!(
                "note: this checkout is not trusted, so its own programs do not run: {} held back (built-in servers and PATH serve instead). `tether trust` (or `--trusted` for one run) lets them run",
                held.join(", ")
            ),
            told: Mutex::new(HashSet::new()),
        })
    }

    /// `result`, with the note when `tool` starts programs and
    /// `conversation` has not been told yet.
    pub fn add(&self, conversation: &str, tool: &str, mut result: ToolResult) -> ToolResult {
        if starts_programs(tool) && self.told.lock().insert(conversation.to_string()) {
            result.append(&self.line);
        }
        result
    }
}
