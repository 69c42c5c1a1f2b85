//! A write's reach beyond the files it wrote. A language server keeps a
//! diagnostics list for each file it checks — the files open in it, or
//! its whole workspace — and a change in one file can break another (a
//! decorator dropped, a caller's call no longer valid). After a write,
//! the other files open in the server are sent to it again, so that it
//! checks them against what was written and publishes for that version:
//! what is new or resolved there is the write's too. The answer names
//! the files checked and says that no other file was, so a clean delta
//! on the written file is never read as a clean project.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use lsp_types::Diagnostic;
use tether_actors::lsp::server::{LspServerActor, Recheck};
use tether_actors::lsp::shared::{DiagEntry, ServerState};

use super::diagnostics::{Freshness, MAX_LISTED, delta_of, fresh, line_for, rel_of};

/// The longest a write's answer waits for the server's lists of the other
/// files it checks again.
pub const REACH_WAIT: Duration = Duration::from_secs(5);
/// Most other open files checked again after one write; the rest are
/// named as not checked.
pub const MAX_RECHECKED: usize = 20;
/// Most files named in one part of the answer; the rest are counted.
pub const MAX_FILES_NAMED: usize = 10;

/// One server's lists for every file, taken before a write.
pub struct Reach {
    server: String,
    addr: Addr<LspServerActor>,
    shared: Arc<ServerState>,
    before: HashMap<PathBuf, DiagEntry>,
}

/// What became of one other file.
enum Checked {
    /// Its list for the content after the write.
    Listed(Vec<Diagnostic>),
    /// No list came in time: why.
    NotInTime(String),
}

impl Reach {
    /// The lists `shared` (the server at `addr`) holds now, before the write.
    pub fn taken(server: &str, addr: Addr<LspServerActor>, shared: Arc<ServerState>) -> Self {
        let before = shared.published();
        Self { server: server.to_string(), addr, shared, before }
    }

    /// Whether `other` is the same server's state.
    pub fn same_server(&self, other: &Reach) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// What the write did to the files it did not write. A server with
    /// an on-save checker (`cargo check`) checked its whole workspace for
    /// the written file's list, and published anew what changed: every
    /// other file's list is compared. Any other server is sent the other
    /// files open in it again (at most [`MAX_RECHECKED`], side by side,
    /// each within [`REACH_WAIT`]), and those are all it checked.
    pub async fn report(self, workdir: &Path, written: &[PathBuf]) -> String {
        let written: HashSet<PathBuf> = written
            .iter()
            .flat_map(|p| [p.clone(), p.canonicalize().unwrap_or_else(|_| p.clone())])
            .collect();
        if self.shared.has_checker() {
            return self.whole_workspace(workdir, &written);
        }
        let mut open: Vec<PathBuf> =
            self.shared.open_files().into_iter().filter(|p| !written.contains(p)).collect();
        open.sort();
        let server = &self.server;
        if open.is_empty() {
            return format!(
                "other files: not checked ({server} has none open; `lsp references` finds the uses)"
            );
        }
        let left_out = open.split_off(open.len().min(MAX_RECHECKED));
        let checks: Vec<_> = open
            .iter()
            .map(|path| {
                let addr = self.addr.clone();
                let file = path.clone();
                tokio::spawn(async move {
                    match addr.send(Recheck { file }).await {
                        Ok(Ok(Some(session))) => match fresh(&session, REACH_WAIT).await {
                            (items, Freshness::Fresh | Freshness::Unconfirmed(_)) => Checked::Listed(items),
                            (_, Freshness::Pending(why) | Freshness::Stale { why, .. }) => {
                                Checked::NotInTime(why)
                            }
                        },
                        Ok(Ok(None)) => Checked::NotInTime("it was closed meanwhile".into()),
                        Ok(Err(e)) => Checked::NotInTime(e.to_string()),
                        Err(e) => Checked::NotInTime(e.to_string()),
                    }
                })
            })
            .collect();
        let (mut checked, mut late) = (Vec::new(), Vec::new());
        let mut delta = Delta::default();
        for (path, check) in open.iter().zip(checks) {
            let rel = rel_of(workdir, path);
            match check.await.unwrap_or_else(|e| Checked::NotInTime(e.to_string())) {
                Checked::Listed(has) => {
                    delta.add(workdir, path, self.before.get(path), &has);
                    checked.push(format!("`{rel}`"));
                }
                Checked::NotInTime(why) => late.push(format!("`{rel}` ({why})")),
            }
        }
        let mut out = if checked.is_empty() {
            format!("other files: none checked in time — {server}'s lists of {} were not had", named(&late))
        } else {
            format!(
                "other files: {server} checked {} again ({}): {}",
                checked.len(),
                named(&checked),
                delta.counts()
            )
        };
        if !checked.is_empty() && !late.is_empty() {
            let _ = write!(out, "; not in time: {}", named(&late));
        }
        if !left_out.is_empty() {
            let names: Vec<String> = left_out.iter().map(|p| format!("`{}`", rel_of(workdir, p))).collect();
            let _ = write!(out, "; open but not checked again (at most {MAX_RECHECKED}): {}", named(&names));
        }
        out.push_str("; no other file was (`lsp references` finds the uses)");
        out.push_str(&delta.lines());
        out
    }

    /// The reach as a server with an on-save checker saw it: every other
    /// file's list now against its list before the write.
    fn whole_workspace(&self, workdir: &Path, written: &HashSet<PathBuf>) -> String {
        let after = self.shared.published();
        let mut paths: Vec<&PathBuf> =
            after.keys().chain(self.before.keys()).filter(|p| !written.contains(*p)).collect();
        paths.sort();
        paths.dedup();
        let mut delta = Delta::default();
        for path in paths {
            let has = after.get(path).map(|e| e.items.as_slice()).unwrap_or_default();
            delta.add(workdir, path, self.before.get(path), has);
        }
        format!(
            "other files: {}'s check of its workspace after the write: {} in them{}",
            self.server,
            delta.counts(),
            delta.lines()
        )
    }
}

/// What is new and resolved in the other files, as lines of the answer.
#[derive(Default)]
struct Delta {
    new: Vec<String>,
    resolved: Vec<String>,
}

impl Delta {
    /// One file's list `had` before the write against `has` after it.
    fn add(&mut self, workdir: &Path, path: &Path, had: Option<&DiagEntry>, has: &[Diagnostic]) {
        let rel = rel_of(workdir, path);
        // The file did not change: its lines are where they were.
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let had = had.map(|e| e.items.as_slice()).unwrap_or_default();
        let (new, resolved) = delta_of(&rel, &text, had, &text, has);
        self.new.extend(new.iter().map(|d| line_for(&rel, &text, d)));
        self.resolved.extend(resolved.iter().map(|d| line_for(&rel, &text, d)));
    }

    fn counts(&self) -> String {
        if self.new.is_empty() && self.resolved.is_empty() {
            "nothing new".to_string()
        } else {
            format!("{} new, {} resolved", self.new.len(), self.resolved.len())
        }
    }

    /// `+` each new one, `−` each resolved one, each on a line of its own.
    fn lines(&self) -> String {
        let mut out = String::new();
        for line in self.new.iter().take(MAX_LISTED) {
            let _ = write!(out, "\n+ {line}");
        }
        for line in self.resolved.iter().take(MAX_LISTED) {
            let _ = write!(out, "\n− {line}");
        }
        let cut = self.new.len().saturating_sub(MAX_LISTED) + self.resolved.len().saturating_sub(MAX_LISTED);
        if cut > 0 {
            let _ = write!(out, "\n… {cut} more not shown");
        }
        out
    }
}

/// `names`, at most [`MAX_FILES_NAMED`] of them, the rest counted.
fn named(names: &[String]) -> String {
    let mut shown: Vec<&str> = names.iter().take(MAX_FILES_NAMED).map(String::as_str).collect();
    let more = names.len().saturating_sub(MAX_FILES_NAMED);
    let more = format!("{more} more");
    if names.len() > MAX_FILES_NAMED {
        shown.push(&more);
    }
    shown.join(", ")
}
