//! Cross-file answers held against what changed on disk while the server
//! computed them.
//!
//! Another program's write is not atomic: `open(O_TRUNC)` then `write`.
//! A file the server re-read in between was empty to it, and an answer
//! computed then (`references`, workspace symbols) leaves that file out
//! while reading as complete. The write's own event comes after the
//! read, so a sync point taken once the answer is in shows it: the
//! question is then asked again once the change has reached the server
//! (and, for a server that re-reads through a brief open, once it has
//! re-read the file), and an answer still overtaken after [`MAX_REASKS`]
//! says so.

use std::path::{Path, PathBuf};

use actix::Addr;

use tether_actors::lsp::server::Opened;
use tether_actors::lsp::supervisor::{ChangedBetween, LspSupervisor};
use tether_actors::watch::Synced;

use super::sync_disk;

/// How many times a cross-file question is asked again because files of
/// its server changed on disk while it was being answered.
pub const MAX_REASKS: usize = 2;

/// What changed on disk since a sync point, as far as one server goes.
pub(crate) enum Since {
    /// None of its files.
    Nothing,
    /// These of its files.
    Changed(Vec<PathBuf>),
    /// The watcher no longer remembers that far back (or could not
    /// confirm the new sync point): anything may have.
    Unknown,
}

/// Takes a sync point and tells which of `session`'s files changed since
/// `since`; the new sync point replaces `since`.
pub(crate) async fn changed_since(sup: &Addr<LspSupervisor>, session: &Opened, since: &mut Synced) -> Since {
    let now = sync_disk(sup).await;
    let changes = sup.send(ChangedBetween { after: since.seq, upto: now.seq }).await.ok().flatten();
    let confirmed = now.note.is_none();
    *since = now;
    let Some(changes) = changes.filter(|_| confirmed) else { return Since::Unknown };
    let mut mine: Vec<PathBuf> =
        changes.into_iter().map(|c| c.path).filter(|p| session.serves.file(p)).collect();
    mine.sort();
    mine.dedup();
    if mine.is_empty() { Since::Nothing } else { Since::Changed(mine) }
}

/// The note for an answer that files changed under, still, on its last ask.
pub(crate) fn overtaken_note(server: &str, root: &Path, since: &Since) -> Option<String> {
    match since {
        Since::Nothing => None,
        Since::Unknown => Some(format!(
            "note: files may have changed on disk while {server} computed this answer (the file watcher could not say which), so it may be incomplete — ask again"
        )),
        Since::Changed(files) => {
            let shown: Vec<String> =
                files.iter().take(5).map(|p| format!("`{}`", tether_actors::fs::relative(root, p))).collect();
            let more = files.len().saturating_sub(shown.len());
            Some(format!(
                "note: {} changed on disk while {server} computed this answer, {} times running, so it may be incomplete about {} — ask again",
                shown.join(", ") + &if more > 0 { format!(" and {more} more") } else { String::new() },
                MAX_REASKS + 1,
                if files.len() == 1 { "it" } else { "them" },
            ))
        }
    }
}
