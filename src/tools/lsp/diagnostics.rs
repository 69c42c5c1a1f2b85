//! Diagnostics: waiting for the server's answer about the content now on
//! disk, labelling it truthfully — **fresh** only when it is about that
//! content; **pending** when nothing is known for it yet; **stale since**
//! when the list is about older content — rendering it, and the
//! after-write hook (S3.1) that reports only what a write introduced —
//! keyed by file, severity, code and message, position deliberately
//! excluded, so a diagnostic that merely moved is not new — and what it
//! resolved, against the diagnostics of the content the write replaced
//! (asked for before the write, whoever wrote that content; when none
//! can be had in time the report says the delta is unknown).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use actix::Addr;
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use tether_actors::lsp::server::{BARRIER_WAIT, Open, Opened};
use tether_actors::lsp::shared::ServerState;
use tether_actors::lsp::supervisor::{LspSupervisor, Route, SyncDisk, Unavailable};

use super::reach::Reach;
use crate::handler::{AfterWrite, WriteBaseline};

/// How long a write waits for the server's diagnostics of the new content
/// (a cold server's start is included).
pub const AFTER_WRITE_WAIT: Duration = Duration::from_secs(15);
/// How long the `diagnostics` action waits for fresh diagnostics.
pub const DIAGNOSTICS_WAIT: Duration = Duration::from_secs(15);
/// How long a check that may have been cancelled by the server's own
/// restart waits, once the server is idle, for the restarted check to
/// begin (rust-analyzer debounces a restart by 50 ms, then spawns cargo).
pub const CHECK_RESTART_GRACE: Duration = Duration::from_millis(1500);
/// How long, after its check of a saved version ended, a checker server
/// may take to publish that version's list. rust-analyzer sends the
/// check's end as it happens and the list at the end of its loop turn, or
/// a later one: seen 16 ms after the end and after the answer to a
/// request sent behind it, on a busy machine. A publication after the
/// save is waited for; none within it means the last list stands (the
/// server publishes only a list that changed: an empty one that stays
/// empty is not sent again).
pub const CHECK_PUBLISH_GRACE: Duration = Duration::from_millis(400);
/// The turns of its loop a checker server may take, after a check's end,
/// to publish the list: the grace is at least this many times the time it
/// took to answer a request sent behind the end. The hunt on semver once
/// found two fresh empty lists for a file holding an error on a loaded
/// machine: most likely a list that came later than
/// [`CHECK_PUBLISH_GRACE`].
pub const CHECK_PUBLISH_TURNS: u32 = 4;
/// How long a server that publishes without versions must stay quiet
/// about a file before its last list is taken as the whole list.
pub const UNVERSIONED_SETTLE: Duration = Duration::from_millis(1000);
/// Most diagnostics listed per file.
pub const MAX_LISTED: usize = 100;

/// Whether the diagnostics are about the content now on disk.
#[derive(Debug, Clone, PartialEq)]
pub enum Freshness {
    /// Published for this content.
    Fresh,
    /// Published after this content was sent, by a server that does not
    /// say which content its lists are about; the text says so.
    Unconfirmed(String),
    /// Nothing is known about this content yet; the text says why.
    Pending(String),
    /// The list is about older content: the file has differed from it
    /// since `since`; `why` says why no newer list came.
    Stale {
        /// When the content the list is not about arrived.
        since: SystemTime,
        /// Why there is no list for it.
        why: String,
    },
}

impl Freshness {
    /// `fresh`, `pending` or `stale`, for structured results.
    pub fn word(&self) -> &'static str {
        match self {
            Freshness::Fresh => "fresh",
            Freshness::Unconfirmed(_) => "unconfirmed",
            Freshness::Pending(_) => "pending",
            Freshness::Stale { .. } => "stale",
        }
    }
}

/// Waits (at most `wait`) for diagnostics about the document the session
/// synced, and labels them by the evidence the server gave:
/// - **fresh**: published for this version (or newer), and — for a
///   server whose first list may be partial — after the analysis it
///   announced has ended, both read behind a barrier so that what the
///   server announced with the publication is known;
/// - **unconfirmed**: the server publishes without versions, so the list
///   is the first one published after the content was sent, about it or
///   about an analysis of older content still in flight;
/// - **pending** / **stale**: nothing came for this content in time.
pub async fn fresh(session: &Opened, wait: Duration) -> (Vec<Diagnostic>, Freshness) {
    let Some(doc) = &session.doc else { return (Vec::new(), Freshness::Pending("no document".into())) };
    let uri = doc.uri.to_string();
    let (version, seq_before) = (doc.version, doc.seq_before);
    let started = std::time::Instant::now();
    let current = |e: &tether_actors::lsp::shared::DiagEntry| match e.version {
        Some(v) => v >= version,
        None => e.seq > seq_before,
    };
    if session.shared.has_checker() {
        return checked(session, wait).await;
    }
    if session.tsserver_requests {
        return asked_of_tsserver(session, wait).await;
    }
    let got = session.shared.wait_until(wait, |s| s.diagnostics(&uri).filter(|e| current(e))).await;
    if let Some(entry) = got {
        let left = wait.saturating_sub(started.elapsed());
        // Whatever the server wrote together with this publication (a
        // further phase of its analysis, announced) is read by now.
        let answered = session.barrier(left.min(BARRIER_WAIT)).await;
        if !answered {
            let why = format!(
                "{} published for this content but stopped answering before it said whether more analysis follows",
                session.key.server
            );
            return (entry.items, Freshness::Pending(why));
        }
        if session.phased_diagnostics {
            // The complete list follows the analysis the server announced.
            let left = wait.saturating_sub(started.elapsed());
            if let Some(p) = session.wait_idle(left).await {
                let latest = session.shared.diagnostics(&uri).map(|e| e.items).unwrap_or(entry.items);
                let why = format!(
                    "{} is still analysing{} after {} s; these are what it had found so far",
                    session.key.server,
                    p.detail(),
                    wait.as_secs()
                );
                return (latest, Freshness::Pending(why));
            }
        }
        let mut latest = session.shared.diagnostics(&uri).filter(|e| current(e)).unwrap_or(entry);
        if latest.version.is_none() {
            // Such a server may publish a file's list in passes
            // (typescript-language-server: errors first, then tsserver's
            // suggestions such as deprecations): the list stands once no
            // other came for a moment.
            loop {
                let left = wait.saturating_sub(started.elapsed()).min(UNVERSIONED_SETTLE);
                let seen = latest.seq;
                let newer = |s: &ServerState| s.diagnostics(&uri).filter(|e| e.seq > seen);
                match session.shared.wait_until(left, newer).await {
                    Some(next) if !left.is_zero() => latest = next,
                    _ => break,
                }
            }
            let why = format!(
                "{} publishes diagnostics without saying which version of the file they are about; this is its last list after the content was sent, once it was quiet for {} ms",
                session.key.server,
                UNVERSIONED_SETTLE.as_millis()
            );
            return (latest.items, Freshness::Unconfirmed(why));
        }
        return (latest.items, Freshness::Fresh);
    }
    let why = match (session.shared.closed(), session.shared.indexing()) {
        (Some(closed), _) => closed,
        (None, Some(p)) => format!(
            "{} is still indexing{} and has not published for it within {} s",
            session.key.server,
            p.detail(),
            wait.as_secs()
        ),
        (None, None) => format!(
            "{} has not published diagnostics for the content now on disk within {} s",
            session.key.server,
            wait.as_secs()
        ),
    };
    match session.shared.diagnostics(&uri) {
        Some(old) => (old.items, Freshness::Stale { since: doc.changed_at, why }),
        None => (Vec::new(), Freshness::Pending(why)),
    }
}

/// [`fresh`] for typescript-language-server: tsserver is asked for the
/// file's diagnostics behind the change that synced it, so the answer is
/// about that content (or newer, when another caller synced since). When
/// tsserver does not answer in time, the last published list is given,
/// labelled by what is known of it.
async fn asked_of_tsserver(session: &Opened, wait: Duration) -> (Vec<Diagnostic>, Freshness) {
    let Some(doc) = &session.doc else { return (Vec::new(), Freshness::Pending("no document".into())) };
    let uri = doc.uri.to_string();
    let error = match tether_actors::lsp::tsserver::diagnostics(session, &uri, wait).await {
        Ok(items) => return (items, Freshness::Fresh),
        Err(e) => e,
    };
    let why = match session.shared.closed() {
        Some(closed) => closed,
        None => format!("{}'s tsserver did not give this content's diagnostics: {error}", session.key.server),
    };
    match session.shared.diagnostics(&uri) {
        Some(old) if old.version.is_some_and(|v| v >= doc.version) => (old.items, Freshness::Fresh),
        Some(old) if old.version.is_none() && old.seq > doc.seq_before => (
            old.items,
            Freshness::Unconfirmed(format!(
                "{why}; this is the list it published after the content was sent"
            )),
        ),
        Some(old) => (old.items, Freshness::Stale { since: doc.changed_at, why }),
        None => (Vec::new(), Freshness::Pending(why)),
    }
}

/// Whether a diagnostic of `items` starts past the last line of `text`.
fn past_the_end(items: &[Diagnostic], text: &str) -> bool {
    let lines = text.split('\n').count() as u32;
    items.iter().any(|d| d.range.start.line >= lines)
}

/// [`fresh`] for a server with an on-save checker (rust-analyzer and
/// `cargo check`): the content is saved — it is what is on disk — and the
/// list is the one standing once a check begun after that save has ended
/// and the server has said it is idle. Such a server publishes only when
/// a file's list changes, so no publication for this version after a
/// finished check means the last list stands.
async fn checked(session: &Opened, wait: Duration) -> (Vec<Diagnostic>, Freshness) {
    let Some(doc) = &session.doc else { return (Vec::new(), Freshness::Pending("no document".into())) };
    let uri = doc.uri.to_string();
    let started = std::time::Instant::now();
    let left = || wait.saturating_sub(started.elapsed());
    let Some(mark) = session.save_for_check(left()).await else {
        let why = format!("the file changed again while {} was checking it; ask again", session.key.server);
        let items = session.shared.diagnostics(&uri).map(|e| e.items).unwrap_or_default();
        return (items, Freshness::Stale { since: doc.changed_at, why });
    };
    // Publications from here on may be the check's (the server's own
    // analysis of this version came with the change, before the save).
    let published_before = session.shared.seq();
    // A check begun after the save has ended, and none runs — behind a
    // barrier, so a restart announced with that end (rust-analyzer
    // restarts its check when it sees a file change) is seen and awaited.
    let mut done = None;
    let mut unconfirmed = None;
    // How long the server took to answer behind the check's end: one turn
    // of its loop, on this machine now.
    let mut turn = Duration::ZERO;
    while !left().is_zero() {
        let settled = |s: &ServerState| (s.checked_since(mark) && !s.checking()).then_some(());
        if session.shared.wait_until(left(), settled).await.is_none() {
            break;
        }
        let asked = std::time::Instant::now();
        session.barrier(left()).await;
        turn = asked.elapsed();
        if settled(&session.shared).is_none() {
            continue;
        }
        // The check that ended ran while the server worked on its own, so
        // it may have been cancelled by a restart (its end reads the
        // same): once the server is idle, a restart's check begins within
        // the grace, and that one is waited for.
        if session.shared.check_may_restart() {
            let ended = session.shared.check_done_mark();
            session.wait_idle(left()).await;
            let moved = |s: &ServerState| (s.checking() || s.check_done_mark() != ended).then_some(());
            if session.shared.wait_until(left().min(CHECK_RESTART_GRACE), moved).await.is_some() {
                continue;
            }
            // No restart came: the list is very likely the check's, but
            // the end may still have been a cancel whose restart is late.
            session.shared.clear_check_suspect(ended);
            unconfirmed = Some(format!(
                "{}'s check ended while it was loading, and no restarted check began within {} ms: it may have been cancelled; ask again to be sure",
                session.key.server,
                CHECK_RESTART_GRACE.as_millis()
            ));
        }
        done = Some(());
        break;
    }
    let working = match done {
        None if session.shared.closed().is_some() => session.shared.closed(),
        None => Some(format!("its on-save check had not finished within {} s", wait.as_secs())),
        Some(()) => session.wait_idle(left()).await.map(|p| format!("it is still working{}", p.detail())),
    };
    if done.is_some() {
        let version = doc.version;
        let published = |s: &ServerState| {
            s.diagnostics(&uri)
                .filter(|e| e.seq > published_before && e.version.is_none_or(|v| v >= version))
                .map(|_| ())
        };
        // The list may come a few turns after the end: on a loaded
        // machine a turn is long, and the grace with it.
        let grace = CHECK_PUBLISH_GRACE.max(turn * CHECK_PUBLISH_TURNS);
        session.shared.wait_until(left().min(grace), published).await;
        // A standing list that names a line past the end of this content
        // is about older content, whatever the grace said: its update is
        // late (a loaded machine), and is waited for within the bound.
        if session.shared.diagnostics(&uri).is_some_and(|e| past_the_end(&e.items, &doc.text)) {
            session.shared.wait_until(left(), published).await;
        }
    }
    let items = session.shared.diagnostics(&uri).map(|e| e.items).unwrap_or_default();
    if done.is_some() && past_the_end(&items, &doc.text) {
        let why = format!(
            "its list names a line past the end of the file — a list about the content before — and no newer one came within {} s",
            wait.as_secs()
        );
        return (items, Freshness::Stale { since: doc.changed_at, why });
    }
    match working {
        Some(why) => (
            items,
            Freshness::Pending(format!("{}: {why}; these are what it had found so far", session.key.server)),
        ),
        None => (items, unconfirmed.map_or(Freshness::Fresh, Freshness::Unconfirmed)),
    }
}

/// `freshness`, unless the file on disk no longer holds `text` (it
/// changed while the server was at work): then the list is stale since
/// the file's modification time.
pub fn still_on_disk(path: &Path, text: &str, freshness: Freshness, server: &str) -> Freshness {
    let on_disk = std::fs::read_to_string(path).ok();
    if on_disk.as_deref() == Some(text) {
        return freshness;
    }
    let since = std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or_else(|_| SystemTime::now());
    let why = match on_disk {
        Some(_) => format!("the file changed on disk while {server} was computing them; ask again"),
        None => "the file is no longer on disk".to_string(),
    };
    Freshness::Stale { since, why }
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
        Freshness::Unconfirmed(why) => format!("unconfirmed: {why}"),
        Freshness::Pending(why) => format!("pending: {why}"),
        Freshness::Stale { since, why } => {
            format!(
                "stale since {}, about the content before then, because {why}",
                crate::views::clock(*since)
            )
        }
    };
    if items.is_empty() {
        let _ = write!(
            out,
            "{} for `{rel}` ({label})",
            if matches!(freshness, Freshness::Fresh | Freshness::Unconfirmed(_)) {
                "no diagnostics"
            } else {
                "no diagnostics known"
            }
        );
        return out;
    }
    let errors = items.iter().filter(|d| severity(d) == "error").count();
    let _ = writeln!(out, "{} diagnostic(s) for `{rel}`, {errors} error(s) ({label}):", items.len());
    let (lines, more) = in_order(rel, text, items, MAX_LISTED);
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    if more > 0 {
        let _ = writeln!(out, "… {more} more not shown");
    }
    out.trim_end().to_string()
}

/// `items` in file order as [`line_for`] renders them, at most `max`, and
/// how many more there are.
fn in_order(rel: &str, text: &str, items: &[Diagnostic], max: usize) -> (Vec<String>, usize) {
    let mut sorted: Vec<&Diagnostic> = items.iter().collect();
    sorted.sort_by_key(|d| (d.range.start.line, d.range.start.character));
    let lines = sorted.iter().take(max).map(|d| line_for(rel, text, d)).collect();
    (lines, items.len().saturating_sub(max))
}

/// The diagnostics of the content a write replaced, the baseline its
/// report is taken against.
#[derive(Debug, Clone)]
pub enum Baseline {
    /// The server's list for that content (or none: a new file).
    Known {
        /// The content they are about.
        text: String,
        /// The diagnostics.
        items: Vec<Diagnostic>,
        /// Why the list is only unconfirmed (a server that publishes
        /// without versions), if it is.
        unconfirmed: Option<String>,
    },
    /// No list about that content could be had; the text says why.
    Unknown(String),
}

/// Each written file's [`Baseline`], by path: what
/// [`LspAfterWrite::before_write`] hands to `after_write`.
#[derive(Default)]
pub struct Baselines {
    files: HashMap<PathBuf, Baseline>,
    /// Each server's lists of every file, for the write's reach.
    reach: Vec<Reach>,
}

/// What a write introduced and resolved, comparing the diagnostics
/// `before` (of the text `was`) with those `after` (of the text `now`) by
/// file, severity, code and message — position deliberately excluded, so
/// a diagnostic that merely moved is neither — each key counted as often
/// as it occurs. Where a key occurs more than once, a diagnostic is paired
/// first with one on the same line carried over unchanged by the write,
/// so the one that is new is the one the write put there.
pub fn delta_of(
    rel: &str,
    was: &str,
    before: &[Diagnostic],
    now: &str,
    after: &[Diagnostic],
) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let kept = tether_actors::text::kept_lines(was, now);
    let moved_to = |d: &Diagnostic| kept.get(d.range.start.line as usize).copied().flatten();
    let keys_before: Vec<Key> = before.iter().map(|d| key(rel, d)).collect();
    let keys_after: Vec<Key> = after.iter().map(|d| key(rel, d)).collect();
    let mut paired_before = vec![false; before.len()];
    let mut paired_after = vec![false; after.len()];
    // Same key, on a line the write carried over, landing where it is now.
    for (i, d) in after.iter().enumerate() {
        let same_place = (0..before.len()).find(|&j| {
            !paired_before[j]
                && keys_before[j] == keys_after[i]
                && moved_to(&before[j]) == Some(d.range.start.line as usize)
        });
        if let Some(j) = same_place {
            paired_before[j] = true;
            paired_after[i] = true;
        }
    }
    // Then the same key anywhere: the line itself was edited, or moved.
    for i in 0..after.len() {
        if paired_after[i] {
            continue;
        }
        if let Some(j) = (0..before.len()).find(|&j| !paired_before[j] && keys_before[j] == keys_after[i]) {
            paired_before[j] = true;
            paired_after[i] = true;
        }
    }
    let new = after.iter().zip(&paired_after).filter(|(_, p)| !**p).map(|(d, _)| d.clone()).collect();
    let resolved = before.iter().zip(&paired_before).filter(|(_, p)| !**p).map(|(d, _)| d.clone()).collect();
    (new, resolved)
}

/// The after-write hook backed by the language servers.
pub struct LspAfterWrite {
    /// The supervisor.
    pub supervisor: Addr<LspSupervisor>,
    /// The working directory.
    pub workdir: PathBuf,
}

/// How long a write waits, before writing, for the server's diagnostics of
/// the content it replaces (a cold server's start is included).
pub const BASELINE_WAIT: Duration = Duration::from_secs(15);

impl LspAfterWrite {
    /// The baseline of one file about to be written; `None` for a file no
    /// server serves.
    /// With the baseline, the lists its server holds of every file.
    async fn baseline(supervisor: Addr<LspSupervisor>, path: PathBuf) -> Option<(Baseline, Option<Reach>)> {
        if !path.exists() {
            return Some((
                Baseline::Known { text: String::new(), items: Vec::new(), unconfirmed: None },
                None,
            ));
        }
        let routed = match supervisor.send(Route { file: path.clone() }).await.ok()? {
            Ok(routed) => routed,
            Err(Unavailable::NoLanguage(_) | Unavailable::NotConfigured(_)) => return None,
            Err(e) => {
                return Some((
                    Baseline::Unknown(format!(
                        "its server is unavailable ({})",
                        crate::tools::unusable::unavailable(&e)
                    )),
                    None,
                ));
            }
        };
        let open = routed.addr.send(Open { file: Some(path.clone()), save: false });
        let session = match tokio::time::timeout(BASELINE_WAIT, open).await {
            Ok(Ok(Ok(session))) => session,
            Ok(Ok(Err(e))) => {
                return Some((Baseline::Unknown(format!("its server is unavailable ({e})")), None));
            }
            Ok(Err(e)) => return Some((Baseline::Unknown(format!("its server is unavailable ({e})")), None)),
            Err(_) => {
                return Some((
                    Baseline::Unknown(format!(
                        "{} did not start within {} s",
                        routed.key.server,
                        BASELINE_WAIT.as_secs()
                    )),
                    None,
                ));
            }
        };
        let reach = Reach::taken(&session.key.server, routed.addr.clone(), session.shared.clone());
        let (items, freshness) = fresh(&session, BASELINE_WAIT).await;
        let text = session.doc.as_ref().map(|d| d.text.to_string()).unwrap_or_default();
        let freshness = still_on_disk(&path, &text, freshness, &session.key.server);
        let baseline = match freshness {
            Freshness::Fresh => Baseline::Known { text, items, unconfirmed: None },
            Freshness::Unconfirmed(why) => Baseline::Known { text, items, unconfirmed: Some(why) },
            Freshness::Pending(why) | Freshness::Stale { why, .. } => Baseline::Unknown(why),
        };
        Some((baseline, Some(reach)))
    }

    async fn one(
        supervisor: Addr<LspSupervisor>,
        workdir: PathBuf,
        path: PathBuf,
        before: Option<Baseline>,
    ) -> Option<String> {
        let rel = tether_actors::fs::relative(&workdir, &path);
        // Changes made outside tether reach the server first.
        let synced = supervisor.send(SyncDisk).await.ok();
        let routed = match supervisor.send(Route { file: path.clone() }).await.ok()? {
            Ok(routed) => routed,
            Err(Unavailable::NoLanguage(_) | Unavailable::NotConfigured(_)) => return None,
            Err(e) => {
                return Some(format!(
                    "diagnostics unavailable for `{rel}`: {}",
                    crate::tools::unusable::unavailable(&e)
                ));
            }
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
        let mut label = match &freshness {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::Unconfirmed(why) => format!("unconfirmed: {why}"),
            Freshness::Pending(why) | Freshness::Stale { why, .. } => {
                return Some(format!("diagnostics pending for `{rel}`: {why} — not known to be clean"));
            }
        };
        let text = session.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        let before = before.unwrap_or_else(|| {
            Baseline::Unknown("no diagnostics were taken of the content before the write".to_string())
        });
        let mut block = match before {
            Baseline::Known { text: was, items: had, unconfirmed } => {
                if let (Some(why), true) = (unconfirmed, label == "fresh") {
                    label = format!("unconfirmed before the write: {why}");
                }
                let (new, resolved) = delta_of(&rel, &was, &had, &text, &items);
                delta(&rel, &text, &was, &new, &resolved, items.len(), &label)
            }
            Baseline::Unknown(why) => unknown_delta(&rel, &text, &items, &label, &why),
        };
        if let Some(note) = synced.and_then(|s| s.note) {
            block.push_str(&format!("\nnote: {note}"));
        }
        Some(block)
    }
}

/// Most diagnostics listed when what a write introduced is unknown.
pub const MAX_LISTED_UNKNOWN: usize = 20;

fn unknown_delta(rel: &str, text: &str, items: &[Diagnostic], label: &str, why: &str) -> String {
    let mut out = String::new();
    let errors = items.iter().filter(|d| severity(d) == "error").count();
    let _ = write!(
        out,
        "diagnostics ({label}) for `{rel}`: {} in the file now, {errors} error(s); which of them the write introduced is unknown: there was no list for the content before it ({why})",
        items.len()
    );
    let (lines, more) = in_order(rel, text, items, MAX_LISTED_UNKNOWN);
    for line in lines {
        let _ = write!(out, "\n  {line}");
    }
    if more > 0 {
        let _ = write!(out, "\n  … {more} more (`lsp diagnostics` lists them)");
    }
    out
}

impl AfterWrite for LspAfterWrite {
    fn before_write(
        &self,
        paths: Vec<PathBuf>,
    ) -> Pin<Box<dyn std::future::Future<Output = WriteBaseline> + Send>> {
        let supervisor = self.supervisor.clone();
        Box::pin(async move {
            // Changes made outside tether reach the servers first: the
            // baseline is the content the write replaces, whoever wrote it.
            let _ = supervisor.send(SyncDisk).await;
            let tasks: Vec<_> = paths
                .into_iter()
                .map(|path| {
                    let supervisor = supervisor.clone();
                    tokio::spawn(async move {
                        let baseline = Self::baseline(supervisor, path.clone()).await;
                        (path, baseline)
                    })
                })
                .collect();
            let mut baselines = Baselines::default();
            for task in tasks {
                if let Ok((path, Some((baseline, reach)))) = task.await {
                    baselines.files.insert(path, baseline);
                    if let Some(reach) = reach
                        && !baselines.reach.iter().any(|r| r.same_server(&reach))
                    {
                        baselines.reach.push(reach);
                    }
                }
            }
            Some(Box::new(baselines) as Box<dyn std::any::Any + Send>)
        })
    }

    fn after_write(
        &self,
        paths: Vec<PathBuf>,
        before: WriteBaseline,
    ) -> Pin<Box<dyn std::future::Future<Output = Option<String>> + Send>> {
        let supervisor = self.supervisor.clone();
        let workdir = self.workdir.clone();
        let Baselines { files: mut baselines, reach } =
            before.and_then(|b| b.downcast::<Baselines>().ok()).map(|b| *b).unwrap_or_default();
        Box::pin(async move {
            // Files are checked side by side (a patch may touch many, each
            // waiting up to AFTER_WRITE_WAIT), and reported in order.
            let tasks: Vec<_> = paths
                .iter()
                .map(|path| {
                    let before = baselines.remove(path);
                    tokio::spawn(Self::one(supervisor.clone(), workdir.clone(), path.clone(), before))
                })
                .collect();
            let mut blocks = Vec::new();
            for task in tasks {
                if let Ok(Some(block)) = task.await {
                    blocks.push(block);
                }
            }
            // Then what the write did to the files it did not write.
            for reach in reach {
                blocks.push(reach.report(&workdir, &paths).await);
            }
            (!blocks.is_empty()).then(|| blocks.join("\n"))
        })
    }
}

/// `+` each diagnostic the write introduced, at its place in the text
/// after, and `−` each it resolved, at its place in the text before.
fn delta(
    rel: &str,
    text: &str,
    was: &str,
    new: &[Diagnostic],
    resolved: &[Diagnostic],
    total: usize,
    label: &str,
) -> String {
    let mut out = String::new();
    if new.is_empty() && resolved.is_empty() {
        let _ = write!(out, "diagnostics ({label}) for `{rel}`: nothing new ({total} known in the file)");
        return out;
    }
    let _ = writeln!(
        out,
        "diagnostics ({label}) for `{rel}`: {} new, {} resolved{}",
        new.len(),
        resolved.len(),
        if resolved.is_empty() { "" } else { " (a resolved one at its line before the write)" }
    );
    for d in new.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "+ {}", line_for(rel, text, d));
    }
    for d in resolved.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "− {}", line_for(rel, was, d));
    }
    let cut = new.len().saturating_sub(MAX_LISTED) + resolved.len().saturating_sub(MAX_LISTED);
    if cut > 0 {
        let _ = writeln!(out, "… {cut} more not shown");
    }
    out.trim_end().to_string()
}

/// The relative form of `path`, for keys and messages.
pub fn rel_of(workdir: &Path, path: &Path) -> String {
    tether_actors::fs::relative(workdir, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_past_the_last_line_is_about_older_content() {
        let at = |line: u32| Diagnostic {
            range: lsp_types::Range::new(
                lsp_types::Position::new(line, 0),
                lsp_types::Position::new(line, 1),
            ),
            ..Default::default()
        };
        let text = "pub fn g() -> u32 {\n    crate::f()\n}\n";
        assert!(!past_the_end(&[at(0), at(3)], text), "line 4 is the empty one after the final newline");
        assert!(past_the_end(&[at(5)], text), "line 6 of a 3-line file");
        assert!(!past_the_end(&[], text));
    }
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
    fn moved_diagnostics_are_not_new_and_each_copy_counts() {
        let was = "a\nb\nx\n";
        let (new, resolved) = delta_of(
            "a.py",
            was,
            &[diag(2, "x is undefined")],
            "1\n2\n3\n4\na\nb\nx\n",
            &[diag(6, "x is undefined")],
        );
        assert_eq!((new.len(), resolved.len()), (0, 0), "moved down four lines: not new");
        let (new, resolved) = delta_of("a.py", was, &[diag(2, "x is undefined")], "a\nb\n", &[]);
        assert_eq!((new.len(), resolved.len()), (0, 1));
        assert_eq!(resolved[0].range.start.line, 2, "a resolved one keeps its place");
        // A second copy of the same error, written above the first: the
        // new one is the one the write put there.
        let now = "x\na\nb\nx\n";
        let (new, _) = delta_of(
            "a.py",
            was,
            &[diag(2, "x is undefined")],
            now,
            &[diag(0, "x is undefined"), diag(3, "x is undefined")],
        );
        assert_eq!(
            new.iter().map(|d| d.range.start.line).collect::<Vec<_>>(),
            [0],
            "the written copy is new"
        );
    }

    #[test]
    fn the_delta_is_taken_against_the_content_the_write_replaced() {
        // Outside tether, E1 was fixed and E2 introduced; the server's list
        // for that content is the baseline of the next write, which adds E3.
        let (new, resolved) = delta_of("a.py", "", &[diag(2, "E2")], "", &[diag(2, "E2"), diag(3, "E3")]);
        assert_eq!(new.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(), ["E3"]);
        assert!(resolved.is_empty(), "E1 was resolved by the outside write, not this one: {resolved:?}");
        let shown = delta("a.py", "a\nb\nc\nd\n", "a\nb\nold\n", &new, &[diag(2, "E1")], 2, "fresh");
        assert!(shown.contains("+ a.py:4:1: error [E1] E3"), "{shown}");
        assert!(shown.contains("− a.py:3:1: error [E1] E1\n    | old"), "{shown}");
    }
}
