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
//!
//! A write that stalls between its truncation and its content (a busy
//! machine deschedules the writer) can outlast that: the server read the
//! file empty, and the sync point after the answer saw only the
//! truncation, already taken in. So a `references` answer is also held
//! against the text of the files written around the call
//! ([`HALF_WRITTEN_WINDOW`]): when one now holds the name as a word more
//! often than the answer lists uses in it, the question is asked once
//! more — the sync point before it hands the server the finished write.
//! A file that still falls short then says so only if it was written again
//! meanwhile ([`Shortfall`]); one that held still was read whole, and the
//! words it holds are not the symbol's uses (a local of the same name).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use actix::Addr;

use tether_actors::lsp::server::Opened;
use tether_actors::lsp::supervisor::{ChangedBetween, ChangedSinceTime, LspSupervisor};
use tether_actors::watch::Synced;

use super::sync_disk;

/// How many times a cross-file question is asked again because files of
/// its server changed on disk while it was being answered.
pub const MAX_REASKS: usize = 2;

/// How long before a call the writes whose files its answer is held
/// against may have been taken in. A write's truncation is delivered
/// within the watcher's debounce ([`tether_actors::watch::DEBOUNCE`], 50
/// ms) of it, or at the call's own sync point; only a burst of writes
/// without pause holds a batch back longer (up to
/// [`tether_actors::watch::BATCH_MAX_DELAY`]). A second covers a writer
/// descheduled for many turns of a busy machine.
pub const HALF_WRITTEN_WINDOW: Duration = Duration::from_secs(1);
/// Files named in a shortfall note.
const SHORTFALLS_NAMED: usize = 3;

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

/// A file written around a call that holds a name as a word more often
/// than the answer lists uses of it there.
#[derive(Debug, PartialEq)]
pub(crate) struct Shortfall {
    /// The file, relative to the working directory.
    pub file: String,
    /// Times it holds the name as a word on a line that is not a comment.
    pub holds: usize,
    /// Uses the answer lists in it.
    pub listed: usize,
    /// Its content's hash when it was read, to tell whether it changed
    /// between two checks.
    pub content: u64,
}

/// The files of `session`'s server written from `since` up to the sync
/// point `upto` that hold `word` more often than `answer` lists it there.
pub(crate) async fn shortfalls(
    sup: &Addr<LspSupervisor>,
    session: &Opened,
    root: &Path,
    since: SystemTime,
    upto: u64,
    word: &str,
    answer: &serde_json::Value,
) -> Vec<Shortfall> {
    let changes = sup.send(ChangedSinceTime { since, upto }).await.unwrap_or_default();
    let mut written: Vec<PathBuf> =
        changes.into_iter().map(|c| c.path).filter(|p| session.serves.file(p)).collect();
    if written.is_empty() {
        return Vec::new();
    }
    written.sort();
    written.dedup();
    let mut listed: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for (uri, _) in super::render::locations(answer) {
        if let Ok(path) = uri.to_file_path() {
            *listed.entry(path).or_default() += 1;
        }
    }
    let (root, word) = (root.to_path_buf(), word.to_string());
    tokio::task::spawn_blocking(move || {
        written
            .into_iter()
            .filter_map(|path| {
                // A file deleted since holds nothing: the vanished check covers it.
                let text = super::crosscheck::read_written(&path, HALF_WRITTEN_WINDOW)?;
                let holds = super::crosscheck::count_in_code(&text, word.as_bytes());
                let listed = listed.get(&path).copied().unwrap_or(0);
                let content = {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    text.hash(&mut h);
                    h.finish()
                };
                (holds > listed).then(|| Shortfall {
                    file: tether_actors::fs::relative(&root, &path),
                    holds,
                    listed,
                    content,
                })
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// The note for an answer that files written around it still fall short of.
pub(crate) fn shortfall_note(server: &str, word: &str, short: &[Shortfall]) -> Option<String> {
    if short.is_empty() {
        return None;
    }
    let named: Vec<String> = short
        .iter()
        .take(SHORTFALLS_NAMED)
        .map(|s| format!("`{}`: {}, listed {}", s.file, s.holds, s.listed))
        .collect();
    let more = short.len().saturating_sub(SHORTFALLS_NAMED);
    Some(format!(
        "note: {} file(s) written on disk while {server} computed this answer hold `{word}` as a word more often than it lists uses there ({}{}); the server may have read them half-written, so this answer may be incomplete about them — ask again",
        short.len(),
        named.join("; "),
        if more > 0 { format!("; and {more} more") } else { String::new() },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortfall_note_names_the_files_and_their_counts() {
        assert_eq!(shortfall_note("pyright", "target", &[]), None);
        let short = vec![Shortfall { file: "pkg/m0.py".into(), holds: 2, listed: 0, content: 7 }];
        let note = shortfall_note("pyright", "target", &short).unwrap();
        assert!(note.contains("1 file(s) written on disk while pyright computed this answer hold"), "{note}");
        assert!(note.contains("(`pkg/m0.py`: 2, listed 0)"), "{note}");
        assert!(note.contains("may be incomplete"), "{note}");
    }
}
