//! Diagnostics: waiting for the server's answer about the content just
//! synced, rendering it, and the after-write hook (S3.1) that reports only
//! what a write introduced — keyed by file, severity, code and message,
//! position deliberately excluded, so a diagnostic that merely moved is not
//! new — and what it resolved.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use parking_lot::Mutex;
use tether_actors::lsp::server::{Open, Session};
use tether_actors::lsp::supervisor::{LspSupervisor, Route, Unavailable};

use crate::handler::AfterWrite;

/// How long a write waits for the server's diagnostics of the new content
/// (a cold server's start is included).
pub const AFTER_WRITE_WAIT: Duration = Duration::from_secs(15);
/// How long the `diagnostics` action waits for fresh diagnostics.
pub const DIAGNOSTICS_WAIT: Duration = Duration::from_secs(15);
/// How long after the first publication for a version later ones are awaited.
pub const DIAGNOSTICS_SETTLE: Duration = Duration::from_millis(300);
/// Most diagnostics listed per file.
pub const MAX_LISTED: usize = 100;

/// Whether the diagnostics are about the content just synced.
#[derive(Debug, Clone, PartialEq)]
pub enum Freshness {
    /// Published for this version.
    Fresh,
    /// Not (yet) published for this version; the text says why.
    Pending(String),
}

/// Waits (at most `wait`) for diagnostics about the document the session synced.
pub async fn fresh(session: &Session, wait: Duration) -> (Vec<Diagnostic>, Freshness) {
    let Some(doc) = &session.doc else { return (Vec::new(), Freshness::Pending("no document".into())) };
    let uri = doc.uri.to_string();
    let (version, seq_before, changed) = (doc.version, doc.seq_before, doc.changed);
    let got = session
        .shared
        .wait_until(wait, |s| {
            let entry = s.diagnostics(&uri)?;
            let current = match entry.version {
                Some(v) => v >= version,
                None => entry.seq > seq_before || !changed,
            };
            current.then_some(entry.items)
        })
        .await;
    match got {
        Some(items) => {
            // Servers publish in phases (syntax, then semantics; native,
            // then a checker): take whatever else arrives in a short settle.
            tokio::time::sleep(DIAGNOSTICS_SETTLE).await;
            let latest = session.shared.diagnostics(&uri).map(|e| e.items).unwrap_or(items);
            (latest, Freshness::Fresh)
        }
        None if session.shared.closed().is_some() => {
            let why = session.shared.closed().unwrap_or_default();
            (Vec::new(), Freshness::Pending(why))
        }
        None => {
            let last = session.shared.diagnostics(&uri).map(|e| e.items).unwrap_or_default();
            let why = match session.shared.indexing() {
                Some(p) => format!(
                    "{} is still indexing{} ({})",
                    session.key.server,
                    p.percentage.map(|n| format!(" {n}%")).unwrap_or_default(),
                    p.title
                ),
                None => format!(
                    "{} published nothing for this version within {} s",
                    session.key.server,
                    wait.as_secs()
                ),
            };
            (last, Freshness::Pending(why))
        }
    }
}

/// A diagnostic's identity for the registry: no position.
pub type Key = (String, String, String, String);

fn severity(d: &Diagnostic) -> &'static str {
    match d.severity {
        Some(DiagnosticSeverity::ERROR) | None => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        Some(_) => "note",
    }
}

fn code(d: &Diagnostic) -> String {
    match &d.code {
        Some(NumberOrString::Number(n)) => n.to_string(),
        Some(NumberOrString::String(s)) => s.clone(),
        None => String::new(),
    }
}

/// The registry key of `d` in the file `rel`.
pub fn key(rel: &str, d: &Diagnostic) -> Key {
    (rel.to_string(), severity(d).to_string(), code(d), d.message.trim().to_string())
}

/// `path:line:col: severity [code] message`, then the source line.
pub fn line_for(rel: &str, text: &str, d: &Diagnostic) -> String {
    let src = text.lines().nth(d.range.start.line as usize).unwrap_or("");
    let col = tether_actors::lsp::edits::char_column(src, d.range.start.character);
    let code = code(d);
    let code = if code.is_empty() { String::new() } else { format!(" [{code}]") };
    let message = d.message.lines().next().unwrap_or("").trim();
    format!("{rel}:{}:{col}: {}{code} {message}\n    | {}", d.range.start.line + 1, severity(d), src.trim())
}

/// Renders a file's diagnostics for the `diagnostics` action.
pub fn listing(rel: &str, text: &str, items: &[Diagnostic], freshness: &Freshness) -> String {
    let mut out = String::new();
    let label = match freshness {
        Freshness::Fresh => "fresh".to_string(),
        Freshness::Pending(why) => format!("pending: {why}; these may be stale"),
    };
    if items.is_empty() {
        let _ = write!(
            out,
            "{} for `{rel}` ({label})",
            if matches!(freshness, Freshness::Fresh) { "no diagnostics" } else { "no diagnostics known" }
        );
        return out;
    }
    let errors = items.iter().filter(|d| severity(d) == "error").count();
    let _ = writeln!(out, "{} diagnostic(s) for `{rel}`, {errors} error(s) ({label}):", items.len());
    let mut sorted: Vec<&Diagnostic> = items.iter().collect();
    sorted.sort_by_key(|d| (d.range.start.line, d.range.start.character));
    for d in sorted.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "{}", line_for(rel, text, d));
    }
    if items.len() > MAX_LISTED {
        let _ = writeln!(out, "… {} more not shown", items.len() - MAX_LISTED);
    }
    out.trim_end().to_string()
}

/// What one run has already reported, and what each file had last time.
#[derive(Default)]
pub struct Registry {
    seen: Mutex<BTreeSet<Key>>,
    last: Mutex<HashMap<String, Vec<Key>>>,
}

impl Registry {
    /// Records `items` as the current state of `rel`; returns the ones not
    /// seen before in this run and the keys that disappeared since last time.
    pub fn update(&self, rel: &str, items: &[Diagnostic]) -> (Vec<Diagnostic>, Vec<Key>) {
        let keys: Vec<Key> = items.iter().map(|d| key(rel, d)).collect();
        let mut seen = self.seen.lock();
        let mut new = Vec::new();
        for (d, k) in items.iter().zip(&keys) {
            if seen.insert(k.clone()) {
                new.push(d.clone());
            }
        }
        let mut last = self.last.lock();
        let previous = last.insert(rel.to_string(), keys.clone()).unwrap_or_default();
        let resolved: Vec<Key> =
            previous.into_iter().filter(|k| !keys.contains(k)).collect::<BTreeSet<_>>().into_iter().collect();
        // A resolved diagnostic that comes back later is new again.
        for k in &resolved {
            seen.remove(k);
        }
        (new, resolved)
    }
}

/// The after-write hook backed by the language servers.
pub struct LspAfterWrite {
    /// The supervisor.
    pub supervisor: Addr<LspSupervisor>,
    /// The working directory.
    pub workdir: PathBuf,
    /// The run's registry.
    pub registry: Arc<Registry>,
}

impl LspAfterWrite {
    async fn one(
        supervisor: Addr<LspSupervisor>,
        workdir: PathBuf,
        registry: Arc<Registry>,
        path: PathBuf,
    ) -> Option<String> {
        let rel = tether_actors::fs::relative(&workdir, &path);
        let routed = match supervisor.send(Route { file: path.clone() }).await.ok()? {
            Ok(routed) => routed,
            Err(Unavailable::NoLanguage(_) | Unavailable::NotConfigured(_)) => return None,
            Err(e) => return Some(format!("diagnostics unavailable for `{rel}`: {e}")),
        };
        let open = routed.addr.send(Open { file: Some(path.clone()), save: true });
        let session = match tokio::time::timeout(AFTER_WRITE_WAIT, open).await {
            Ok(Ok(Ok(session))) => session,
            Ok(Ok(Err(e))) => return Some(format!("diagnostics unavailable for `{rel}`: {e}")),
            Ok(Err(e)) => return Some(format!("diagnostics unavailable for `{rel}`: {e}")),
            Err(_) => {
                return Some(format!(
                    "diagnostics pending for `{rel}`: {} did not start within {} s — not known to be clean",
                    routed.key.server,
                    AFTER_WRITE_WAIT.as_secs()
                ));
            }
        };
        let (items, freshness) = fresh(&session, AFTER_WRITE_WAIT).await;
        if let Freshness::Pending(why) = &freshness {
            return Some(format!("diagnostics pending for `{rel}`: {why} — not known to be clean"));
        }
        let text = session.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        let (new, resolved) = registry.update(&rel, &items);
        Some(delta(&rel, &text, &new, &resolved, items.len()))
    }
}

fn delta(rel: &str, text: &str, new: &[Diagnostic], resolved: &[Key], total: usize) -> String {
    let mut out = String::new();
    if new.is_empty() && resolved.is_empty() {
        let _ = write!(out, "diagnostics (fresh) for `{rel}`: nothing new ({total} known in the file)");
        return out;
    }
    let _ = writeln!(out, "diagnostics (fresh) for `{rel}`: {} new, {} resolved", new.len(), resolved.len());
    for d in new.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "+ {}", line_for(rel, text, d));
    }
    for (_, sev, code, message) in resolved.iter().take(MAX_LISTED) {
        let code = if code.is_empty() { String::new() } else { format!(" [{code}]") };
        let _ = writeln!(out, "− {rel}: {sev}{code} {message}");
    }
    out.trim_end().to_string()
}

impl AfterWrite for LspAfterWrite {
    fn after_write(
        &self,
        paths: Vec<PathBuf>,
    ) -> Pin<Box<dyn std::future::Future<Output = Option<String>> + Send>> {
        let supervisor = self.supervisor.clone();
        let workdir = self.workdir.clone();
        let registry = self.registry.clone();
        Box::pin(async move {
            // Files are checked side by side (a patch may touch many, each
            // waiting up to AFTER_WRITE_WAIT), and reported in order.
            let tasks: Vec<_> = paths
                .into_iter()
                .map(|path| {
                    tokio::spawn(Self::one(supervisor.clone(), workdir.clone(), registry.clone(), path))
                })
                .collect();
            let mut blocks = Vec::new();
            for task in tasks {
                if let Ok(Some(block)) = task.await {
                    blocks.push(block);
                }
            }
            (!blocks.is_empty()).then(|| blocks.join("\n"))
        })
    }
}

/// The relative form of `path`, for keys and messages.
pub fn rel_of(workdir: &Path, path: &Path) -> String {
    tether_actors::fs::relative(workdir, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diag(line: u32, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 1)),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String("E1".into())),
            message: message.into(),
            ..Default::default()
        }
    }

    #[test]
    fn moved_diagnostics_are_not_new_and_fixed_ones_are_resolved() {
        let r = Registry::default();
        let (new, resolved) = r.update("a.py", &[diag(2, "x is undefined")]);
        assert_eq!((new.len(), resolved.len()), (1, 0));
        let (new, resolved) = r.update("a.py", &[diag(6, "x is undefined")]);
        assert_eq!((new.len(), resolved.len()), (0, 0), "moved down four lines: not new");
        let (new, resolved) = r.update("a.py", &[]);
        assert_eq!((new.len(), resolved.len()), (0, 1));
        let (new, _) = r.update("a.py", &[diag(1, "x is undefined")]);
        assert_eq!(new.len(), 1, "reintroduced after being fixed: new again");
    }
}
