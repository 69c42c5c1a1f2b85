//! What the reader task learns from a server, shared with the actor and
//! with callers waiting on it: published diagnostics (with the version and
//! arrival order of each), work-done progress (announced, running, and
//! rust-analyzer's `experimental/serverStatus`), the settings the server
//! asks for, the files it asked to hear about, and which changed files it
//! is still re-indexing.
//!
//! It also holds what the server holds of each open document — the
//! version and text last sent — changed only together with the sending of
//! the notification that changed it, under one lock: a request built under
//! that lock ([`ServerState::with_held`]) is computed on exactly the text the
//! server will have when it reads the request, whatever the watcher syncs
//! meanwhile.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lsp_types::{Diagnostic, PublishDiagnosticsParams};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::Notify;

use super::reported::{Reported, error_summary};
use super::watched::WatchedFiles;
use crate::watch::ChangeKind;
use crate::wire::client::PeerEvents;
use crate::wire::jsonrpc::{METHOD_NOT_FOUND, RpcError};
use crate::wire::pending::RequestError;
pub use applied::AppliedEdits;

/// How long a progress token the server created counts as running before
/// its `begin` arrives: the server sends `begin` once it has our answer to
/// `window/workDoneProgress/create`, so the gap is one round trip — long
/// on a loaded machine, never seconds. A token never begun stops counting
/// after this, so a server that creates and abandons one cannot hold
/// every query for its whole wait.
pub const CREATED_PROGRESS_GRACE: Duration = Duration::from_secs(5);

/// How long after it starts a server that indexes its workspace in the
/// background ([`crate::lsp::config::ServerConfig::indexes_at_start`])
/// counts as indexing before its first progress has begun: intelephense
/// searches the folders before it reports anything, and answers from the
/// part read so far meanwhile. A server that never reports stops counting
/// after this, so it cannot hold every query for good.
pub const FIRST_INDEX_GRACE: Duration = Duration::from_secs(30);

/// The prefix of the work-done tokens tether gives its own requests:
/// progress on them is about that request, not the server's own work.
pub const OWN_TOKEN_PREFIX: &str = "tether/request/";

/// Ends a server that said it can no longer answer, given the line it logged.
pub type EndServer = Box<dyn Fn(String) + Send + Sync>;

/// What the server holds of one open document.
#[derive(Debug, Clone)]
pub struct Held {
    /// The version last sent.
    pub version: i32,
    /// The text last sent.
    pub text: Arc<String>,
}

/// The diagnostics last published for one document.
#[derive(Debug, Clone)]
pub struct DiagEntry {
    /// The document version they are for, when the server says.
    pub version: Option<i32>,
    /// Arrival order among all publications.
    pub seq: u64,
    /// The diagnostics.
    pub items: Vec<Diagnostic>,
}

/// One running work-done progress.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// What the server is doing.
    pub title: String,
    /// Percent done, when reported.
    pub percentage: Option<u32>,
}

impl Progress {
    /// What follows "indexing" in a sentence: ` 40% (Loading workspace)`,
    /// with the parts the server gave (pyright's background analysis has
    /// no title).
    pub fn detail(&self) -> String {
        let pct = self.percentage.map(|n| format!(" {n}%")).unwrap_or_default();
        let title = if self.title.trim().is_empty() { String::new() } else { format!(" ({})", self.title) };
        format!("{pct}{title}")
    }
}

/// What the server told us — diagnostics, progress, status, the files it
/// re-reads, the errors it reported — updated from the reader task and
/// read by every session (the DAP side's counterpart is
/// `dap::session::state::AdapterState`).
pub struct ServerState {
    settings: Option<Value>,
    closed: Mutex<Option<String>>,
    diags: Mutex<HashMap<String, DiagEntry>>,
    progress: Mutex<HashMap<String, Progress>>,
    /// Progress tokens created (`window/workDoneProgress/create`) and not
    /// yet begun, with when: pyright announces more analysis this way in
    /// the same breath as the publication it follows.
    created: Mutex<HashMap<String, Instant>>,
    /// rust-analyzer's `experimental/serverStatus`: whether it is
    /// quiescent (project loaded, nothing queued), and its message.
    status: Mutex<Option<(bool, String)>>,
    held: Mutex<HashMap<String, Held>>,
    /// The token prefix of the server's on-save checker, if it has one.
    check_prefix: Option<String>,
    /// For a server that indexes its workspace in the background: when it
    /// started, until a progress of its own has ended (its first index).
    first_index: Mutex<Option<Instant>>,
    /// What the server logs when its first index has ended.
    first_index_logs: std::sync::OnceLock<Vec<String>>,
    /// What the server logs when an answer it is sending is partial.
    partial_logs: std::sync::OnceLock<Vec<String>>,
    /// How many such errors it has logged.
    partial_seq: AtomicU64,
    /// What the server logs when it can no longer answer, and what ends it then.
    fatal: std::sync::OnceLock<(String, EndServer)>,
    /// What the server reports when it could not import the build, and
    /// what is called then (once: taken when it fires).
    import_failed: Mutex<Option<(String, EndServer)>>,
    /// Set when tether replaced the process on purpose (a restart): a
    /// request that failed because this one went is worth asking again.
    superseded: std::sync::atomic::AtomicBool,
    /// The last errors the server reported of itself (logged as errors,
    /// or jdtls's `language/status` of type Error), newest last.
    reported: Reported,
    /// Progress events counted in order (a begin's place in that order
    /// tells whether it came after a save).
    progress_seq: AtomicU64,
    /// Running checks: token → the place of its begin.
    checks: Mutex<HashMap<String, u64>>,
    /// The latest begin place among checks that have ended.
    check_done: AtomicU64,
    /// The place of the latest progress event of the server's own work
    /// (loading, indexing: anything but a check).
    work_place: AtomicU64,
    /// Whether the check whose end [`Self::check_done`] counts may have
    /// been cancelled rather than finished (see [`Self::check_may_restart`]).
    check_suspect: std::sync::atomic::AtomicBool,
    /// For a server with an on-save checker: the version last saved of
    /// each document, and the progress mark taken when it was.
    saved: Mutex<HashMap<String, (i32, u64)>>,
    /// Documents whose first publication a caller waited out in vain: a
    /// server that never publishes for a file does not cost every later
    /// call the whole wait (the first answer said it may be incomplete).
    unpublished: Mutex<std::collections::HashSet<String>>,
    /// The mark of the latest save of any document: a save restarts the
    /// checker, cancelling the run begun before it.
    last_save: AtomicU64,
    seq: AtomicU64,
    changed: Notify,
    watched: Mutex<WatchedFiles>,
    /// Files changed on disk that the server is re-reading (opened for a
    /// moment, for servers that ignore watched-file events), by path, with
    /// the version opened.
    rereading: Mutex<BTreeMap<PathBuf, i32>>,
    /// The edits it asks the client to apply (`workspace/applyEdit`).
    pub applied: AppliedEdits,
    /// The root whose files' formatting options are answered when asked
    /// (`formattingOptions`), `.editorconfig` read no higher than it.
    formatting_root: std::sync::OnceLock<PathBuf>,
}

impl ServerState {
    /// State for a server answering `workspace/configuration` from `settings`.
    pub fn new(settings: Option<Value>) -> Self {
        Self::with_checker(settings, None)
    }

    /// The same, for a server whose on-save checker reports progress on
    /// tokens starting with `check_prefix`.
    pub fn with_checker(settings: Option<Value>, check_prefix: Option<String>) -> Self {
        Self {
            settings,
            closed: Mutex::new(None),
            diags: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            created: Mutex::new(HashMap::new()),
            status: Mutex::new(None),
            held: Mutex::new(HashMap::new()),
            check_prefix,
            first_index: Mutex::new(None),
            first_index_logs: std::sync::OnceLock::new(),
            partial_logs: std::sync::OnceLock::new(),
            partial_seq: AtomicU64::new(0),
            fatal: std::sync::OnceLock::new(),
            import_failed: Mutex::new(None),
            superseded: std::sync::atomic::AtomicBool::new(false),
            reported: Reported::default(),
            progress_seq: AtomicU64::new(0),
            checks: Mutex::new(HashMap::new()),
            check_done: AtomicU64::new(0),
            work_place: AtomicU64::new(0),
            check_suspect: std::sync::atomic::AtomicBool::new(false),
            saved: Mutex::new(HashMap::new()),
            last_save: AtomicU64::new(0),
            unpublished: Mutex::new(std::collections::HashSet::new()),
            seq: AtomicU64::new(0),
            changed: Notify::new(),
            watched: Mutex::new(WatchedFiles::default()),
            rereading: Mutex::new(BTreeMap::new()),
            applied: AppliedEdits::default(),
            formatting_root: std::sync::OnceLock::new(),
        }
    }

    /// Answers a server asking for the formatting options of a file under
    /// `root` with the file's own ([`super::formatting::options_for`]).
    pub fn formats_under(&self, root: &Path) {
        let _ = self.formatting_root.set(root.to_path_buf());
    }

    /// Whether the server asked to hear about `kind` at `path` (`None`:
    /// it registered no file watchers).
    pub fn wants(&self, path: &Path, root: &Path, kind: ChangeKind) -> Option<bool> {
        self.watched.lock().wants(path, root, kind)
    }

    /// File watchers the server registered.
    pub fn watchers(&self) -> usize {
        self.watched.lock().watchers()
    }

    /// `path` (opened at `version`) is being re-read by the server.
    pub fn begin_reread(&self, path: &Path, version: i32) {
        self.rereading.lock().insert(path.to_path_buf(), version);
    }

    /// The server has taken in `path` at `version` (or gave up on it).
    pub fn end_reread(&self, path: &Path, version: i32) {
        let mut rereading = self.rereading.lock();
        if rereading.get(path) == Some(&version) {
            rereading.remove(path);
        }
        drop(rereading);
        self.changed.notify_waiters();
    }

    /// Forgets every re-read (the server restarted: it reads everything anew).
    pub fn clear_rereads(&self) {
        self.rereading.lock().clear();
        self.changed.notify_waiters();
    }

    /// Files changed on disk that the server has not taken in yet.
    pub fn rereading(&self) -> Vec<PathBuf> {
        self.rereading.lock().keys().cloned().collect()
    }

    /// The latest publication number; a publication after a sync has a larger one.
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }

    /// The work the server said it is doing and has not said it ended:
    /// progress running (the least advanced first), progress announced
    /// and not yet begun, or a server status that is not quiescent.
    pub fn indexing(&self) -> Option<Progress> {
        if let Some(p) = self.progress.lock().values().min_by_key(|p| p.percentage.unwrap_or(0)) {
            return Some(p.clone());
        }
        let announced = {
            let mut created = self.created.lock();
            created.retain(|_, at| at.elapsed() < CREATED_PROGRESS_GRACE);
            !created.is_empty()
        };
        if announced {
            return Some(Progress { title: "announced".into(), percentage: None });
        }
        if self.first_index.lock().is_some_and(|since| since.elapsed() < FIRST_INDEX_GRACE) {
            return Some(Progress { title: "about to index the workspace".into(), percentage: None });
        }
        match &*self.status.lock() {
            Some((false, message)) => {
                let title =
                    if message.is_empty() { "loading the project".to_string() } else { message.clone() };
                Some(Progress { title, percentage: None })
            }
            _ => None,
        }
    }

    /// A mark in the order of progress events: a check whose begin comes
    /// after it began after whatever was sent before taking the mark.
    pub fn progress_mark(&self) -> u64 {
        self.progress_seq.load(Ordering::SeqCst)
    }

    /// The errors the server reported of itself, oldest first (at most
    /// [`super::reported::MAX_REPORTED`]). They last as long as the
    /// process: a failed build import is not undone by a later "ready".
    pub fn reported_errors(&self) -> Vec<String> {
        self.reported.list()
    }

    /// The server indexes its workspace in the background, on its own
    /// schedule: it counts as indexing from now until a progress of its
    /// own has ended, or it logs a line holding one of `logged` (or
    /// [`FIRST_INDEX_GRACE`] has passed without either).
    pub fn awaits_first_index(&self, logged: Vec<String>) {
        let _ = self.first_index_logs.set(logged);
        *self.first_index.lock() = Some(Instant::now());
    }

    /// An error the server logs holding one of `texts` means an answer
    /// it is sending is partial (see [`Self::partial_mark`]).
    pub fn on_partial_logs(&self, texts: Vec<String>) {
        let _ = self.partial_logs.set(texts);
    }

    /// How many errors meaning a partial answer the server has logged: a
    /// request answered while this changed may be answered in part.
    pub fn partial_mark(&self) -> u64 {
        self.partial_seq.load(Ordering::SeqCst)
    }

    /// When the server logs an error holding `text`, `end` is called with
    /// the line: the server can no longer answer although it runs.
    pub fn on_fatal_log(&self, text: String, end: EndServer) {
        let _ = self.fatal.set((text, end));
    }

    /// When the server reports an error holding `text`, `then` is called
    /// with it, the first time: it could not import the project's build.
    pub fn on_import_failed(&self, text: String, then: EndServer) {
        *self.import_failed.lock() = Some((text, then));
    }

    /// Keeps an error the server reported of itself.
    fn report(&self, line: String) {
        let fired = {
            let mut hook = self.import_failed.lock();
            match hook.as_ref() {
                Some((text, _)) if line.contains(text.as_str()) => hook.take(),
                _ => None,
            }
        };
        if let Some((_, then)) = fired {
            then(line.clone());
        }
        self.reported.push(line);
    }

    /// Keeps a line tether reports about the server, beside what it
    /// reported of itself (why it serves the root as an unmanaged
    /// folder): shown by `status`, and explaining an empty answer.
    pub fn note_reported(&self, line: String) {
        self.reported.push(line);
    }

    /// Marks this process as replaced on purpose by tether.
    pub fn supersede(&self) {
        self.superseded.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether tether replaced this process on purpose: a request that
    /// failed because it went is asked again of the new one.
    pub fn superseded(&self) -> bool {
        self.superseded.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether a caller already waited out the first publication of `uri`.
    pub fn waited_out(&self, uri: &str) -> bool {
        self.unpublished.lock().contains(&doc_key(uri))
    }

    /// A caller waited out the first publication of `uri`.
    pub fn wait_was_in_vain(&self, uri: &str) {
        self.unpublished.lock().insert(doc_key(uri));
    }

    /// Whether the server reports its status (`experimental/serverStatus`):
    /// then "quiescent" is its own word that all loading is done.
    pub fn reports_status(&self) -> bool {
        self.status.lock().is_some()
    }

    /// Sends, through `send`, the notification that makes the server hold
    /// `now` for `uri` (`None`: it no longer holds the document), and
    /// records it — under the lock [`ServerState::with_held`] builds requests under.
    pub fn send_held(
        &self,
        uri: &str,
        now: Option<Held>,
        send: impl FnOnce() -> Result<(), RequestError>,
    ) -> Result<(), RequestError> {
        let mut held = self.held.lock();
        send()?;
        let key = doc_key(uri);
        match now {
            Some(doc) => held.insert(key, doc),
            None => held.remove(&key),
        };
        Ok(())
    }

    /// Runs `f` on what the server holds of `uri`, with no change to it
    /// sent meanwhile: a request `f` sends goes out behind exactly that content.
    pub fn with_held<T>(&self, uri: &str, f: impl FnOnce(Option<&Held>) -> T) -> T {
        let held = self.held.lock();
        f(held.get(&doc_key(uri)))
    }

    /// The diagnostics last published for `uri`. Keys are file paths, not
    /// URI strings: servers escape characters like `[`, `(` or `+` in
    /// their URIs where `Url::from_file_path` does not.
    pub fn diagnostics(&self, uri: &str) -> Option<DiagEntry> {
        self.diags.lock().get(&doc_key(uri)).cloned()
    }

    /// Every file's last published list, by path: what a write's reach
    /// is measured against.
    pub fn published(&self) -> HashMap<PathBuf, DiagEntry> {
        self.diags.lock().iter().map(|(path, entry)| (PathBuf::from(path), entry.clone())).collect()
    }

    /// The files open in the server, by path.
    pub fn open_files(&self) -> Vec<PathBuf> {
        self.held.lock().keys().map(PathBuf::from).collect()
    }

    /// The server is gone: waiters stop waiting.
    pub fn close(&self, reason: &str) {
        self.closed.lock().get_or_insert_with(|| reason.to_string());
        self.changed.notify_waiters();
    }

    /// Why the server is gone, if it is.
    pub fn closed(&self) -> Option<String> {
        self.closed.lock().clone()
    }

    /// Waits until `ready` holds or `timeout` passes; `ready` is re-checked
    /// whenever the server publishes something.
    pub async fn wait_until<T>(
        &self,
        timeout: Duration,
        mut ready: impl FnMut(&Self) -> Option<T>,
    ) -> Option<T> {
        // Nothing is published when an announced token's grace runs out:
        // look again by then at the latest. A closed server ends the wait.
        crate::waiting::until(&self.changed, timeout, CREATED_PROGRESS_GRACE, || match ready(self) {
            Some(value) => Some(Some(value)),
            None if self.closed.lock().is_some() => Some(None),
            None => None,
        })
        .await
        .flatten()
    }

    /// One item a server asks for by `workspace/configuration`: from the
    /// settings, but a file's `formattingOptions`, which no settings hold,
    /// from the file itself — `.editorconfig`, else its own indentation.
    fn configuration(&self, item: &Value) -> Value {
        let section = item["section"].as_str();
        let said = self.section(section);
        if !said.is_null() || section != Some("formattingOptions") {
            return said;
        }
        let file = item["scopeUri"].as_str().and_then(|u| lsp_types::Url::parse(u).ok()?.to_file_path().ok());
        let (Some(file), Some(root)) = (file, self.formatting_root.get()) else {
            return said;
        };
        if !file.starts_with(root) {
            return said;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let options = super::formatting::options_for(root, &file, &text);
        serde_json::json!({"tabSize": options.tab_size, "insertSpaces": options.insert_spaces})
    }

    fn section(&self, section: Option<&str>) -> Value {
        let Some(settings) = &self.settings else {
            return Value::Null;
        };
        let Some(section) = section else {
            return settings.clone();
        };
        section.split('.').try_fold(settings, |v, key| v.get(key)).cloned().unwrap_or(Value::Null)
    }
}

impl PeerEvents for ServerState {
    fn notification(&self, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => {
                let Ok(p) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
                    return;
                };
                let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
                let entry = DiagEntry { version: p.version, seq, items: p.diagnostics };
                self.diags.lock().insert(doc_key(p.uri.as_str()), entry);
            }
            "$/progress" => {
                let token = match &params["token"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let value = &params["value"];
                if token.starts_with(OWN_TOKEN_PREFIX) {
                    return;
                }
                self.created.lock().remove(&token);
                let place = self.progress_seq.fetch_add(1, Ordering::SeqCst) + 1;
                self.check_progress(&token, value["kind"].as_str(), place);
                let mut progress = self.progress.lock();
                match value["kind"].as_str() {
                    Some("begin") => {
                        let title = value["title"].as_str().unwrap_or("working").to_string();
                        let percentage = value["percentage"].as_u64().map(|p| p as u32);
                        progress.insert(token, Progress { title, percentage });
                    }
                    Some("report") => {
                        if let Some(p) = progress.get_mut(&token)
                            && let Some(pct) = value["percentage"].as_u64()
                        {
                            p.percentage = Some(pct as u32);
                        }
                    }
                    Some("end") => {
                        progress.remove(&token);
                        if !self.is_check(&token) {
                            *self.first_index.lock() = None;
                        }
                    }
                    _ => {}
                }
            }
            "window/logMessage" | "window/showMessage" => {
                let error = params["type"].as_u64() == Some(1);
                let message = params["message"].as_str().unwrap_or("");
                if error {
                    self.report(error_summary(message));
                    if self.partial_logs.get().is_some_and(|texts| texts.iter().any(|t| message.contains(t)))
                    {
                        self.partial_seq.fetch_add(1, Ordering::SeqCst);
                    }
                }
                if self
                    .first_index_logs
                    .get()
                    .is_some_and(|ends| ends.iter().any(|end| message.contains(end)))
                {
                    *self.first_index.lock() = None;
                }
                if error
                    && let Some((text, end)) = self.fatal.get()
                    && message.contains(text.as_str())
                    && self.closed().is_none()
                {
                    let line = message.lines().next().unwrap_or(message).to_string();
                    self.close(&format!("it can no longer answer (it logged: {line})"));
                    end(line);
                }
                return;
            }
            // jdtls: "Failed to import projects" when a build import fails.
            "language/status" if params["type"] == "Error" => {
                self.report(params["message"].as_str().unwrap_or("").to_string());
                return;
            }
            "experimental/serverStatus" => {
                let quiescent = params["quiescent"].as_bool().unwrap_or(true);
                let message =
                    params["message"].as_str().unwrap_or("").lines().next().unwrap_or("").to_string();
                *self.status.lock() = Some((quiescent, message));
            }
            _ => {
                tracing::trace!(method, "server notification ignored");
                return;
            }
        }
        self.changed.notify_waiters();
    }

    fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "workspace/configuration" => {
                let items = params["items"].as_array().cloned().unwrap_or_default();
                Ok(Value::Array(items.iter().map(|i| self.configuration(i)).collect()))
            }
            "client/registerCapability" => {
                let added = self.watched.lock().register(params);
                tracing::debug!(added, "file watchers registered");
                Ok(Value::Null)
            }
            "client/unregisterCapability" => {
                self.watched.lock().unregister(params);
                Ok(Value::Null)
            }
            "window/workDoneProgress/create" => {
                let token = match &params["token"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                self.created.lock().insert(token, Instant::now());
                self.changed.notify_waiters();
                Ok(Value::Null)
            }
            "window/showMessageRequest"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Ok(Value::Null),
            "workspace/applyEdit" => Ok(self.applied.offered(params)),
            // typescript-language-server, after an extraction, asks its
            // client to start renaming the name it made up; its command
            // fails unless answered. Kept as a hint for the answer.
            "_typescript.rename" => {
                self.applied.rename_hinted(params);
                Ok(Value::Null)
            }
            _ => Err(RpcError {
                code: METHOD_NOT_FOUND,
                message: format!("{method} is not supported"),
                data: None,
            }),
        }
    }
}

/// A document's key: its file path when the URI is a file URI.
fn doc_key(uri: &str) -> String {
    lsp_types::Url::parse(uri)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| uri.to_string())
}

mod applied;
mod checks;
#[cfg(test)]
mod tests;
