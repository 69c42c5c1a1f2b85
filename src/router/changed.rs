//! "Changed since your previous call": every answer to a conversation
//! names the files changed since that conversation's previous call — by
//! another conversation of the run, or outside tether — so an agent that
//! edits with its host's own tools learns that another touched the file it
//! is about to rewrite.
//!
//! The changes come from the run's file watcher (through the
//! language-server supervisor, which owns it): a sync point at the end of
//! each call, and the files changed between the conversation's previous
//! one and this. A file whose content is what the conversation last saw
//! or wrote (its own write, or one it read since) is not named — unless
//! its write replaced a change it had not seen, named "before your
//! write"; the
//! watcher leaves ignored files (`.gitignore`, build output) out. Nothing
//! is added when nothing changed.

use std::path::Path;
use std::sync::Arc;

use actix::Addr;
use serde_json::{Value, json};
use tether_actors::lsp::supervisor::{ChangedBetween, LspSupervisor, SyncDisk};
use tether_actors::watch::ChangeKind;

use crate::result::ToolResult;
use crate::views::{Digest, Views};

/// Files named in one note; the rest are counted.
pub const MAX_NAMED_CHANGES: usize = 10;
/// Changes looked at for one note (each read for its digest); past them
/// the count says "at least".
pub const MAX_CHANGES_READ: usize = 200;

/// Where the run's changes come from, and what each conversation saw.
pub struct ChangeNotes {
    /// The supervisor that owns the run's watcher.
    pub supervisor: Addr<LspSupervisor>,
    /// Each conversation's view, which keeps its previous call's sync point.
    pub views: Arc<Views>,
    /// The working directory, for relative paths.
    pub workdir: std::path::PathBuf,
}

/// One file another changed.
struct Noted {
    path: String,
    kind: ChangeKind,
    by: String,
}

impl ChangeNotes {
    /// `result`, with the files changed since `conversation`'s previous
    /// call named in its text and data.
    pub async fn add(&self, conversation: &str, mut result: ToolResult) -> ToolResult {
        let now = match self.supervisor.send(SyncDisk).await {
            Ok(synced) => synced.seq,
            Err(_) => return result,
        };
        let Some(previous) = self.views.swap_call_seq(conversation, now) else { return result };
        if previous >= now {
            return result;
        }
        let changes = match self.supervisor.send(ChangedBetween { after: previous, upto: now }).await {
            Ok(Some(changes)) => changes,
            Ok(None) => {
                result.append(
                    "note: so many changes were made since your previous call that tether no longer knows them all; read again what you rely on",
                );
                return result;
            }
            Err(_) => return result,
        };
        let mut noted = Vec::new();
        let mut unread = 0;
        // A file changed in several batches is one change: its latest.
        let mut changes = changes;
        changes.reverse();
        let mut once = std::collections::HashSet::new();
        changes.retain(|c| once.insert(c.path.clone()));
        changes.reverse();
        for change in changes.iter() {
            if noted.len() >= MAX_CHANGES_READ {
                unread += 1;
                continue;
            }
            if let Some(n) = self.note_of(conversation, &change.path, change.kind) {
                noted.push(n);
            }
        }
        if noted.is_empty() && unread == 0 {
            return result;
        }
        let shown: Vec<String> = noted
            .iter()
            .take(MAX_NAMED_CHANGES)
            .map(|n| {
                let what = if n.kind == ChangeKind::Deleted { "deleted, " } else { "" };
                format!("{} ({what}{})", n.path, n.by)
            })
            .collect();
        let more = noted.len().saturating_sub(MAX_NAMED_CHANGES) + unread;
        let mut note = format!("note: changed since your previous call: {}", shown.join(", "));
        if more > 0 {
            note.push_str(&format!(", and {}{more} more", if unread > 0 { "at least " } else { "" }));
        }
        result.append(&note);
        let listed: Vec<Value> = noted
            .iter()
            .take(MAX_NAMED_CHANGES)
            .map(|n| json!({"path": n.path, "kind": n.kind, "by": n.by}))
            .collect();
        let entry = json!({"files": listed, "more": more});
        match &mut result.data {
            Some(Value::Object(map)) => {
                map.insert("changed_since_previous_call".into(), entry);
            }
            None => result.data = Some(json!({"changed_since_previous_call": entry})),
            Some(_) => {}
        }
        result
    }

    /// The note for one changed file, unless it is what the conversation
    /// last saw (its own write, or read since).
    fn note_of(&self, conversation: &str, path: &Path, kind: ChangeKind) -> Option<Noted> {
        if ignored(&self.workdir, path) {
            return None;
        }
        let rel = tether_actors::fs::relative(&self.workdir, path);
        let seen = self.views.seen(conversation, path);
        let by = match std::fs::read(path) {
            Ok(bytes) => {
                let digest = Digest::of(&bytes);
                if seen.as_ref().is_some_and(|s| s.digest == digest) {
                    // Its own write, unless it wrote over another's change.
                    let who = self.views.take_replaced(conversation, path)?;
                    format!("{}, before your write", who.phrase())
                } else {
                    self.views.who_wrote(conversation, path, digest).phrase()
                }
            }
            // Gone: named only to a conversation that had seen it (its own
            // deletion took it out of its view).
            Err(_) => {
                seen.as_ref()?;
                self.views.who_wrote(conversation, path, Digest::DELETED).phrase()
            }
        };
        let kind = if path.exists() { kind } else { ChangeKind::Deleted };
        Some(Noted { path: rel, kind, by })
    }
}

/// Whether a `.gitignore` in `path`'s directory or one above it, up to the
/// working directory (or the repository's `info/exclude`), ignores it:
/// build output is no news.
fn ignored(workdir: &Path, path: &Path) -> bool {
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(workdir)) {
        for file in [d.join(".gitignore"), d.join(".git/info/exclude")] {
            if file.is_file() {
                // Rules are relative to the directory they govern.
                let mut builder = ignore::gitignore::GitignoreBuilder::new(d);
                builder.add(&file);
                if let Ok(rules) = builder.build()
                    && rules.matched_path_or_any_parents(path, false).is_ignore()
                {
                    return true;
                }
            }
        }
        if d == workdir {
            break;
        }
        dir = d.parent();
    }
    false
}
