//! The edits a server asks the client to apply (`workspace/applyEdit`).
//!
//! A server sends one while it runs a command the client asked it to run
//! (`workspace/executeCommand`: typescript-language-server's organize
//! imports, rust-analyzer's and clangd's fixes behind commands). Such an
//! edit is the answer to that call, taken and written by it with the
//! same checks as any other; an edit a server sends at any other time is
//! refused and counted: nobody asked for it, and nobody would check it.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use serde_json::{Value, json};

/// Edits taken while a command runs, and those refused otherwise.
#[derive(Debug, Default)]
pub struct AppliedEdits {
    /// Held by the call whose command runs: one command at a time per
    /// server, so the edits it sends are that call's alone.
    pub running: tokio::sync::Mutex<()>,
    /// The edits sent while a command a call asked for runs; `None` when none runs.
    taking: Mutex<Option<Vec<Value>>>,
    /// Edits sent while no command ran, refused.
    refused: AtomicU64,
    /// Where the server asked its client to start a rename while a
    /// command ran (a name it made up for what it extracted).
    hints: Mutex<Vec<Value>>,
}

impl AppliedEdits {
    /// From now on the edits the server sends are taken, not refused.
    pub fn take_from_now(&self) {
        *self.taking.lock() = Some(Vec::new());
        self.hints.lock().clear();
    }

    /// The rename hints sent since [`take_from_now`](Self::take_from_now):
    /// each `{textDocument, position}` in the document after the edit.
    pub fn hints(&self) -> Vec<Value> {
        std::mem::take(&mut self.hints.lock())
    }

    /// A server asked its client to start a rename at `params`.
    pub(super) fn rename_hinted(&self, params: &Value) {
        if self.taking.lock().is_some() {
            self.hints.lock().push(params.clone());
        }
    }

    /// The edits sent since [`take_from_now`](Self::take_from_now), and
    /// refusing again from now on.
    pub fn taken(&self) -> Vec<Value> {
        self.taking.lock().take().unwrap_or_default()
    }

    /// How many edits were refused because no command was running.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// The answer to a `workspace/applyEdit` with `params`.
    pub(super) fn offered(&self, params: &Value) -> Value {
        let mut taking = self.taking.lock();
        match taking.as_mut() {
            Some(edits) => {
                edits.push(params["edit"].clone());
                json!({"applied": true})
            }
            None => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    label = params["label"].as_str().unwrap_or(""),
                    "workspace/applyEdit outside a command a call ran: refused"
                );
                json!({"applied": false, "failureReason": "no command the client ran asked for this edit, so it was not applied"})
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_taken_only_while_a_command_runs() {
        let applied = AppliedEdits::default();
        let edit = json!({"edit": {"changes": {}}, "label": "x"});
        assert_eq!(applied.offered(&edit)["applied"], false, "nobody asked for it");
        assert_eq!(applied.refused(), 1);
        applied.take_from_now();
        assert_eq!(applied.offered(&edit)["applied"], true);
        applied.rename_hinted(&json!({"position": {"line": 3, "character": 9}}));
        assert_eq!(applied.taken(), vec![json!({"changes": {}})]);
        assert_eq!(applied.hints().len(), 1);
        assert_eq!(applied.offered(&edit)["applied"], false, "the command ended");
        applied.rename_hinted(&json!({}));
        assert!(applied.hints().is_empty(), "a hint outside a command is dropped");
    }
}
