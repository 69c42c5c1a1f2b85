//! `LspServerActor`: one language server process for one (server, root).
//!
//! The actor owns the process (killed with its whole process group when the
//! actor stops), the client, and the documents it has opened. Its `Open`
//! handler runs atomically — start the server if needed (with backoff after
//! a crash), then bring the file up to date (`didOpen`, or `didChange` when
//! the disk content changed, and `didSave` when asked) — and hands back a
//! [`Session`]; the caller then sends its request outside the mailbox, so
//! queries run concurrently while starts and syncs are serialised.
//!
//! Files changed on disk arrive as [`FilesChanged`] batches from the run's
//! watcher, through the supervisor, before any query that came after the
//! change. The server hears `workspace/didChangeWatchedFiles` for what it
//! registered (or, if it registered nothing, for its languages); an open
//! document is re-synced (`didChange`, or `didClose` when deleted); and
//! the changes a server only learns of from open documents (its table
//! entry's `reopen`) get a brief open of the file — tracked until the
//! server has published for it, so a query can wait for, or name, what is
//! still being re-read.
//!
//! A crash arrives as an [`Exited`] message: every waiter has already been
//! failed with the exit status and the last stderr lines; the next `Open`
//! restarts the server (a restart is the same start, from the same spawn
//! arguments) and the tree counts it.
//!
//! A root whose build the server could not import is served through a
//! project of tether's own ([`fallback`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use actix::prelude::*;
use serde_json::{Value, json};

mod fallback;

use super::discovery::Usable;
pub use super::session::{
    BARRIER_FLOOR, BARRIER_WAIT, CONTENT_MODIFIED_RETRY, OnError, Serves, Session, SyncedDoc,
};
use super::shared::{DiagEntry, Held, Shared};
use super::unmanaged;
use crate::describe::{ActorNode, Describe};
use crate::process::{self, ExitInfo, KillGuard};
use crate::watch::{Batch, ChangeKind};
use crate::wire::client::Client;
use crate::wire::pending::RequestError;
use fallback::ImportFailed;

/// How long `initialize` may take (a cold pyright or clangd answers in well under a second).
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `shutdown` may take before `exit` is sent anyway.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long after `exit` the process may linger before it is killed.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(1);
/// First restart delay after a crash; doubled per crash in a row.
const BACKOFF_START: Duration = Duration::from_millis(200);
/// Longest restart delay.
const BACKOFF_MAX: Duration = Duration::from_secs(8);
/// A server up this long is no longer "crashing in a row".
const STABLE_AFTER: Duration = Duration::from_secs(60);
/// Largest file synced to a server.
pub const MAX_SYNC_BYTES: u64 = 8 * 1024 * 1024;
/// How long a file opened for re-reading waits for the server's
/// diagnostics (its sign of having parsed it) before it is closed anyway.
pub const REINDEX_WAIT: Duration = Duration::from_secs(10);
/// Most files re-read by opening them, per batch; a larger batch (a
/// checkout of another branch) restarts the server, which reads
/// everything anew.
pub const REOPEN_MAX: usize = 64;
/// Most files kept open after a re-read (`keep_reopened`); past it the
/// oldest is closed — by then long taken into the server's project.
pub const MAX_KEPT_OPEN: usize = 512;

/// The pid of every running server process, by server: what a host that
/// stops the run from its own actor thread — where no message can be
/// handled before it returns — kills at once.
pub type ServerPids = Arc<parking_lot::Mutex<std::collections::BTreeMap<ServerKey, u32>>>;

/// Identifies a server instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey {
    /// The table entry's id.
    pub server: String,
    /// The project root.
    pub root: PathBuf,
}

/// Why a server could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    /// The process did not start.
    #[error("{server} did not start: {reason}")]
    Spawn {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// `initialize` failed.
    #[error("{server} failed to initialize: {reason}")]
    Initialize {
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
    /// The file could not be read or synced.
    #[error("{0}")]
    File(String),
    /// A request failed.
    #[error("{0}")]
    Request(String),
}

impl From<RequestError> for LspError {
    fn from(e: RequestError) -> Self {
        LspError::Request(e.to_string())
    }
}

/// Start (if needed) and sync `file` (if given); `save` also sends `didSave`.
pub struct Open {
    /// The file to bring up to date.
    pub file: Option<PathBuf>,
    /// Send `didSave` after syncing.
    pub save: bool,
}

impl Message for Open {
    type Result = Result<Session, LspError>;
}

/// Restart the server now.
pub struct Reload;

impl Message for Reload {
    type Result = Result<(), LspError>;
}

/// The process of generation `generation` exited.
pub struct Exited {
    generation: u64,
    info: ExitInfo,
}

impl Message for Exited {
    type Result = ();
}

/// Sent to the supervisor when a server crashes.
#[derive(Debug, Clone)]
pub struct ServerCrashed {
    /// Which server.
    pub key: ServerKey,
    /// How it ended.
    pub info: ExitInfo,
}

impl Message for ServerCrashed {
    type Result = ();
}

struct Running {
    client: Client,
    guard: KillGuard,
    shared: Arc<Shared>,
    started: Instant,
    capabilities: Arc<Value>,
}

struct Doc {
    version: i32,
    text: Arc<String>,
    /// The version it was opened at, and the publication number then:
    /// the server has loaded it once it has published for it since.
    opened_version: i32,
    opened_seq: u64,
    /// The publication number when this content was sent.
    synced_seq: u64,
    /// When this content was sent.
    changed_at: SystemTime,
    /// The fresh diagnostics of the content before this one, if known.
    previous: Option<DiagEntry>,
    /// Opened only so the server re-reads a file changed on disk; closed
    /// once it has published for it (unless a query opens it meanwhile).
    transient: bool,
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq)]
enum State {
    NotStarted,
    Running,
    Crashed(ExitInfo),
}

/// A server's arguments with `{cache}` read as a directory of its own for
/// this root (jdtls's Eclipse workspace: two roots must not share one),
/// or `workspace` when given (the unmanaged project's).
fn expand_args(args: &[String], server: &str, root: &Path, workspace: Option<&Path>) -> Vec<String> {
    if !args.iter().any(|a| a.contains("{cache}")) {
        return args.to_vec();
    }
    let cache = workspace.map_or_else(|| crate::tools_prefix::cache_for(server, root), Path::to_path_buf);
    if let Err(e) = std::fs::create_dir_all(&cache) {
        tracing::warn!("cannot create {}: {e}", cache.display());
    }
    let cache = cache.display().to_string();
    args.iter().map(|a| a.replace("{cache}", &cache)).collect()
}

/// The actor for one language server process.
pub struct LspServerActor {
    key: ServerKey,
    usable: Usable,
    workdir: PathBuf,
    running: Option<Running>,
    docs: HashMap<PathBuf, Doc>,
    /// The last version sent for each file, whichever opening it was.
    versions: HashMap<PathBuf, i32>,
    state: State,
    generation: u64,
    restarts: u32,
    crashes_in_row: u32,
    crashed_at: Option<Instant>,
    /// How the last process ended unasked (or why its start failed).
    last_crash: Option<ExitInfo>,
    created: Instant,
    supervisor: Option<Recipient<ServerCrashed>>,
    pids: ServerPids,
    /// The project the server serves the root through since it could
    /// not import the root's build, and what it reported then.
    unmanaged: Option<(unmanaged::Project, String)>,
    /// Which files are its: its languages' under its root.
    serves: Serves,
}

impl LspServerActor {
    /// An actor for `usable`, not started until first used.
    pub fn new(
        usable: Usable,
        workdir: PathBuf,
        supervisor: Option<Recipient<ServerCrashed>>,
        pids: ServerPids,
    ) -> Self {
        let key = ServerKey { server: usable.config.id.clone(), root: usable.root.clone() };
        let serves = Serves::new(usable.root.clone(), usable.languages.clone(), &usable.config.languages);
        Self {
            key,
            usable,
            workdir,
            running: None,
            docs: HashMap::new(),
            versions: HashMap::new(),
            state: State::NotStarted,
            generation: 0,
            restarts: 0,
            crashes_in_row: 0,
            crashed_at: None,
            last_crash: None,
            created: Instant::now(),
            supervisor,
            pids,
            unmanaged: None,
            serves,
        }
    }

    fn name(&self) -> String {
        format!("{} ({})", self.key.server, crate::fs::relative(&self.workdir, &self.key.root))
    }

    /// How long to wait before restarting after the last crash.
    fn backoff(&self) -> Duration {
        let Some(at) = self.crashed_at else {
            return Duration::ZERO;
        };
        let exp = self.crashes_in_row.saturating_sub(1).min(6);
        let delay = (BACKOFF_START * 2u32.pow(exp)).min(BACKOFF_MAX);
        delay.saturating_sub(at.elapsed())
    }

    /// Spawns the process and connects the client; `initialize` follows.
    fn spawn(&mut self, ctx: &mut Context<Self>) -> Result<(Client, Arc<Shared>, KillGuard), LspError> {
        self.generation += 1;
        let generation = self.generation;
        let me = ctx.address();
        let config = &self.usable.config;
        let name = self.name();
        // The exit report reaches the waiters straight from the process
        // monitor — not through the mailbox, which an `initialize` in
        // flight may hold — so they learn the status and stderr, not "EOF".
        let slot: Arc<std::sync::OnceLock<(Client, Arc<Shared>)>> = Arc::default();
        let on_exit = slot.clone();
        let workspace = self.unmanaged.as_ref().map(|(p, _)| p.workspace.as_path());
        let args = expand_args(&config.args, &config.id, &self.key.root, workspace);
        let spawned = process::spawn(&self.usable.binary, &args, &self.key.root, move |info| {
            if let Some((client, shared)) = on_exit.get() {
                let why = info.describe(&name);
                client.close(&why);
                shared.close(&why);
            }
            me.do_send(Exited { generation, info });
        })
        .map_err(|e| LspError::Spawn {
            server: config.id.clone(),
            reason: format!("{}: {e}", self.usable.binary.display()),
        })?;
        let shared = Arc::new(Shared::with_checker(config.settings.clone(), config.check_progress.clone()));
        let client = Client::connect(&self.name(), spawned.stdout, spawned.stdin, shared.clone());
        let _ = slot.set((client.clone(), shared.clone()));
        if config.indexes_at_start {
            shared.awaits_first_index();
        }
        if let Some(text) = &config.fatal_log {
            let (fatal_client, pgid, who) = (client.clone(), spawned.guard.pid(), self.name());
            shared.on_fatal_log(
                text.clone(),
                Box::new(move |line| {
                    tracing::warn!(server = %who, "{line}; ending it");
                    fatal_client.close(&format!(
                        "{who} can no longer answer (it logged: {line}); tether restarts it on the next call"
                    ));
                    process::kill_group(pgid);
                }),
            );
        }
        match (&self.unmanaged, &config.unmanaged_fallback) {
            (Some((project, why)), _) => shared.note_reported(format!(
                "it serves the root as an unmanaged folder, source folders {} (what the build would fetch is missing), because the build import failed: {why}",
                project.sources.join(", ")
            )),
            (None, Some(text)) => {
                let me = ctx.address();
                shared.on_import_failed(text.clone(), Box::new(move |_| me.do_send(ImportFailed { generation })));
            }
            (None, None) => {}
        }
        Ok((client, shared, spawned.guard))
    }

    fn initialize_params(&self) -> Value {
        // The unmanaged project links the root: the server is given it.
        let folder = self.unmanaged.as_ref().map_or(&self.key.root, |(p, _)| &p.dir);
        let root_uri = lsp_types::Url::from_directory_path(folder).map(|u| u.to_string()).unwrap_or_default();
        let name = self.key.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "tether", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": folder,
            "workspaceFolders": [{"uri": root_uri, "name": name}],
            "initializationOptions": self.usable.config.initialization_options.clone().unwrap_or(Value::Null),
            "capabilities": client_capabilities(),
        })
    }

    /// Reads `file` as text, within the size a server is sent.
    fn read_text(&self, file: &Path) -> Result<String, LspError> {
        let rel = crate::fs::relative(&self.workdir, file);
        let meta =
            std::fs::metadata(file).map_err(|e| LspError::File(format!("cannot read `{rel}`: {e}")))?;
        if meta.is_dir() {
            return Err(LspError::File(format!("`{rel}` is a directory; give a file")));
        }
        if meta.len() > MAX_SYNC_BYTES {
            return Err(LspError::File(format!(
                "`{rel}` is larger than {} MiB; too large to send to a language server",
                MAX_SYNC_BYTES >> 20
            )));
        }
        std::fs::read_to_string(file).map_err(|e| LspError::File(format!("cannot read `{rel}` as text: {e}")))
    }

    /// Brings `file` up to date on the server.
    fn sync(
        &mut self,
        file: &Path,
        save: bool,
        client: &Client,
        shared: &Shared,
    ) -> Result<SyncedDoc, LspError> {
        let rel = crate::fs::relative(&self.workdir, file);
        let text = self.read_text(file)?;
        let uri = lsp_types::Url::from_file_path(file)
            .map_err(|()| LspError::File(format!("`{rel}` has no file URI")))?;
        if let Some(doc) = self.docs.get_mut(file) {
            // A query's document from now on: it stays open.
            doc.transient = false;
        }
        let opened = !self.docs.contains_key(file);
        let changed = self.put(file, &uri, text, false, client, shared)?;
        // A server with an on-save checker is saved by the caller that
        // waits for the check (`Session::save_for_check`), so the check it
        // waits for is known to have begun after the save.
        if save && self.usable.config.check_progress.is_none() {
            client.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}}))?;
        }
        let doc = &self.docs[file];
        Ok(SyncedDoc {
            uri,
            version: doc.version,
            text: doc.text.clone(),
            seq_before: doc.synced_seq,
            opened_version: doc.opened_version,
            opened_seq: doc.opened_seq,
            changed,
            opened,
            changed_at: doc.changed_at,
            previous: doc.previous.clone(),
        })
    }

    /// Sends `text` as `file`'s content — `didOpen`, or `didChange` when
    /// it differs from what the server has; returns whether it sent anything.
    fn put(
        &mut self,
        file: &Path,
        uri: &lsp_types::Url,
        text: String,
        transient: bool,
        client: &Client,
        shared: &Shared,
    ) -> Result<bool, LspError> {
        let seq = shared.seq();
        match self.docs.get_mut(file) {
            Some(doc) if *doc.text == text => Ok(false),
            Some(doc) => {
                // What the server said about the content being replaced,
                // if it was about that content: the previous fresh state.
                let fresh = shared.diagnostics(uri.as_str()).filter(|e| match e.version {
                    Some(v) => v == doc.version,
                    None => e.seq > doc.synced_seq,
                });
                if fresh.is_some() {
                    doc.previous = fresh;
                }
                doc.version += 1;
                self.versions.insert(file.to_path_buf(), doc.version);
                doc.text = Arc::new(text);
                doc.synced_seq = seq;
                doc.changed_at = SystemTime::now();
                let held = Held { version: doc.version, text: doc.text.clone() };
                shared.send_held(uri.as_str(), Some(held), || {
                    client.notify(
                        "textDocument/didChange",
                        json!({"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [{"text": *doc.text}]}),
                    )
                })?;
                Ok(true)
            }
            None => {
                // Versions keep rising across a close and a reopen, so a
                // publication about an earlier opening (an empty list sent
                // at its close, say) can never pass for this content.
                let version = self.versions.get(file).map_or(1, |v| v + 1);
                self.versions.insert(file.to_path_buf(), version);
                let text = Arc::new(text);
                let held = Held { version, text: text.clone() };
                shared.send_held(uri.as_str(), Some(held), || {
                    client.notify(
                        "textDocument/didOpen",
                        json!({"textDocument": {"uri": uri, "languageId": self.usable.languages.document_language_id(file), "version": version, "text": *text}}),
                    )
                })?;
                self.docs.insert(
                    file.to_path_buf(),
                    Doc {
                        version,
                        text,
                        opened_version: version,
                        opened_seq: seq,
                        synced_seq: seq,
                        changed_at: SystemTime::now(),
                        previous: None,
                        transient,
                    },
                );
                Ok(true)
            }
        }
    }

    /// Whether `path` is this server's: its language, under its root.
    fn serves(&self, path: &Path) -> bool {
        self.serves.file(path)
    }

    /// Opens `path` for a moment so the server re-reads it (with no text
    /// when it was deleted, so the server drops what it knew of it), and
    /// closes it once the server has published for it.
    fn reread(
        &mut self,
        path: &Path,
        deleted: bool,
        client: &Client,
        shared: &Arc<Shared>,
        ctx: &mut Context<Self>,
    ) {
        let text = if deleted {
            String::new()
        } else {
            match self.read_text(path) {
                Ok(text) => text,
                Err(_) => return,
            }
        };
        let Ok(uri) = lsp_types::Url::from_file_path(path) else { return };
        if self.put(path, &uri, text, true, client, shared).is_err() {
            return;
        }
        self.await_reread(path, &uri, shared, ctx);
    }

    /// After a re-read: a transient document is closed once the server has
    /// published for its current version (its sign of having parsed it);
    /// for a server that indexes only after parsing, queries wait for that
    /// publication too (the file is tracked as being re-read until then).
    fn await_reread(
        &mut self,
        path: &Path,
        uri: &lsp_types::Url,
        shared: &Arc<Shared>,
        ctx: &mut Context<Self>,
    ) {
        let Some(doc) = self.docs.get(path) else { return };
        let (version, seq, transient) = (doc.version, doc.synced_seq, doc.transient);
        let tracked = self.usable.config.index_after_parse;
        if transient && self.usable.config.keep_reopened {
            self.close_oldest_kept(shared);
        }
        if tracked {
            shared.begin_reindex(path, version);
        } else if !transient || self.usable.config.keep_reopened {
            return;
        }
        let waiter = shared.clone();
        let key = uri.to_string();
        let path = path.to_path_buf();
        let wait = async move {
            waiter
                .wait_until(REINDEX_WAIT, |s| {
                    s.diagnostics(&key)
                        .filter(|e| e.version.map_or(e.seq > seq, |v| v >= version))
                        .map(|_| ())
                })
                .await
        };
        ctx.spawn(wait.into_actor(self).map(move |_, act, _ctx| act.reread_done(&path, version)));
    }

    /// Past [`MAX_KEPT_OPEN`] documents kept open after a re-read, closes
    /// the one kept longest.
    fn close_oldest_kept(&mut self, shared: &Shared) {
        let kept = self.docs.values().filter(|d| d.transient).count();
        if kept <= MAX_KEPT_OPEN {
            return;
        }
        let Some(oldest) = self
            .docs
            .iter()
            .filter(|(_, d)| d.transient)
            .min_by_key(|(_, d)| d.changed_at)
            .map(|(p, _)| p.clone())
        else {
            return;
        };
        if let (Some(running), Ok(uri)) = (&self.running, lsp_types::Url::from_file_path(&oldest)) {
            close_doc(&running.client, &running.shared, &uri);
        }
        if let Some(doc) = self.docs.remove(&oldest) {
            shared.end_reindex(&oldest, doc.version);
        }
    }

    fn reread_done(&mut self, path: &Path, version: i32) {
        let Some(running) = &self.running else { return };
        let (client, shared) = (running.client.clone(), running.shared.clone());
        if let Some(doc) = self.docs.get(path)
            && doc.version == version
            && doc.transient
        {
            if let Ok(uri) = lsp_types::Url::from_file_path(path) {
                close_doc(&client, &shared, &uri);
            }
            self.docs.remove(path);
        }
        shared.end_reindex(path, version);
    }

    fn session(&self, doc: Option<SyncedDoc>) -> Option<Session> {
        let running = self.running.as_ref()?;
        Some(Session {
            key: self.key.clone(),
            client: running.client.clone(),
            shared: running.shared.clone(),
            doc,
            capabilities: running.capabilities.clone(),
            phased_diagnostics: self.usable.config.phased_diagnostics,
            omits_unresolved: self.usable.config.omits_unresolved,
            serves: self.serves.clone(),
        })
    }

    fn state_words(&self) -> String {
        match (&self.state, &self.running) {
            (State::Running, Some(r)) => match r.shared.indexing() {
                Some(p) => format!("indexing{}", p.detail()),
                None => "ready".to_string(),
            },
            (State::Running, None) => "starting".to_string(),
            (State::Crashed(info), _) => format!("crashed: {}", info.status),
            (State::NotStarted, _) => "not started (starts on first use)".to_string(),
        }
    }
}

/// Closes `uri` on the server, and records that it no longer holds it.
fn close_doc(client: &Client, shared: &Shared, uri: &lsp_types::Url) {
    let _ = shared.send_held(uri.as_str(), None, || {
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}))
    });
}

/// What tether tells servers it can do; the raw client of `benches/lsp.rs`
/// sends the same, so servers do the same work for both.
pub fn client_capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-16"]},
        // rust-analyzer then says, with `quiescent`, when loading is done.
        "experimental": {"serverStatusNotification": true},
        "window": {"workDoneProgress": true},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "didChangeWatchedFiles": {"dynamicRegistration": true, "relativePatternSupport": true},
            "symbol": {"dynamicRegistration": false},
            "workspaceEdit": {"documentChanges": true, "resourceOperations": []},
        },
        "textDocument": {
            "synchronization": {"didSave": true, "dynamicRegistration": false},
            "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "typeDefinition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "callHierarchy": {"dynamicRegistration": false},
            "typeHierarchy": {"dynamicRegistration": false},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports"]}}},
            "rename": {"prepareSupport": false},
        },
    })
}

/// Starts the server if it is not running: spawn, `initialize`,
/// `initialized`, settings. Runs inside the actor's atomic `Open`.
fn start(
    act: &mut LspServerActor,
    ctx: &mut Context<LspServerActor>,
) -> ResponseActFuture<LspServerActor, Result<(), LspError>> {
    // A server whose client closed — it exited, or said it can no longer
    // answer — and whose exit report has not been handled yet is crashed:
    // the call that finds it so starts it afresh instead of failing.
    if let Some(running) = act.running.take_if(|r| r.client.is_closed()) {
        // Its exit report, when it comes, is of an older generation: the
        // crash is counted and reported here instead.
        act.generation += 1;
        act.pids.lock().remove(&act.key);
        act.docs.clear();
        if running.started.elapsed() > STABLE_AFTER {
            act.crashes_in_row = 0;
        }
        let status = running.shared.closed().unwrap_or_else(|| format!("{} stopped answering", act.name()));
        let info = ExitInfo { status, code: None, stderr_tail: Vec::new() };
        act.last_crash = Some(info.clone());
        act.state = State::Crashed(info.clone());
        act.crashes_in_row += 1;
        act.crashed_at = Some(Instant::now());
        if let Some(supervisor) = &act.supervisor {
            supervisor.do_send(ServerCrashed { key: act.key.clone(), info });
        }
        drop(running.guard);
    }
    if act.running.is_some() {
        return Box::pin(fut::ready(Ok(())));
    }
    let backoff = act.backoff();
    if !backoff.is_zero() {
        // Wait out the backoff *before* spawning, so a crash-looping
        // binary is not restarted at once; then start as usual.
        return Box::pin(fut::wrap_future::<_, LspServerActor>(tokio::time::sleep(backoff)).then(
            |(), act, ctx| {
                act.crashed_at = None;
                start(act, ctx)
            },
        ));
    }
    let was_crashed = matches!(act.state, State::Crashed(_));
    let spawned = act.spawn(ctx);
    let (client, shared, guard) = match spawned {
        Ok(parts) => parts,
        Err(e) => return Box::pin(fut::ready(Err(e))),
    };
    let params = act.initialize_params();
    let server = act.key.server.clone();
    let settings = act.usable.config.settings.clone();
    let init_client = client.clone();
    let work = async move {
        let caps = init_client.request("initialize", params, INITIALIZE_TIMEOUT).await;
        let caps =
            caps.map_err(|e| LspError::Initialize { server: server.clone(), reason: e.to_string() })?;
        init_client.notify("initialized", json!({}))?;
        if let Some(settings) = settings {
            init_client.notify("workspace/didChangeConfiguration", json!({"settings": settings}))?;
        }
        Ok(caps.get("capabilities").cloned().unwrap_or(Value::Null))
    };
    Box::pin(work.into_actor(act).map(move |caps: Result<Value, LspError>, act, ctx| {
        let caps = match caps {
            Ok(caps) => caps,
            Err(e) => {
                // A start that failed is a crash: counted, backed off, and
                // the process (if it still runs) killed with its guard.
                drop(guard);
                act.generation += 1;
                act.crashes_in_row += 1;
                act.crashed_at = Some(Instant::now());
                let info = ExitInfo { status: e.to_string(), code: None, stderr_tail: Vec::new() };
                act.last_crash = Some(info.clone());
                act.state = State::Crashed(info);
                return Err(e);
            }
        };
        if was_crashed {
            act.restarts += 1;
        }
        act.docs.clear();
        act.state = State::Running;
        act.pids.lock().insert(act.key.clone(), guard.pid());
        act.running =
            Some(Running { client, guard, shared, started: Instant::now(), capabilities: Arc::new(caps) });
        act.schedule_import_check(0, ctx);
        Ok(())
    }))
}

impl Actor for LspServerActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        // Dropping the guard kills the process group.
        self.running = None;
        self.pids.lock().remove(&self.key);
    }
}

impl Handler<Open> for LspServerActor {
    type Result = AtomicResponse<Self, Result<Session, LspError>>;

    fn handle(&mut self, msg: Open, ctx: &mut Self::Context) -> Self::Result {
        let started = start(self, ctx);
        AtomicResponse::new(Box::pin(started.map(move |ok, act, _ctx| {
            ok?;
            let Some(running) = &act.running else {
                return Err(LspError::Request(format!("{} is not running", act.name())));
            };
            let (client, shared) = (running.client.clone(), running.shared.clone());
            let doc = match &msg.file {
                Some(file) => Some(act.sync(file, msg.save, &client, &shared)?),
                None => None,
            };
            act.session(doc).ok_or_else(|| LspError::Request(format!("{} is not running", act.name())))
        })))
    }
}

impl LspServerActor {
    /// Stops the server (`shutdown`, `exit`, then the kill) and starts it
    /// afresh; its documents are reopened as queries name them.
    fn restart(&mut self) -> ResponseActFuture<Self, Result<(), LspError>> {
        let old = self.running.take();
        if let Some(old) = &old {
            old.shared.supersede();
        }
        self.pids.lock().remove(&self.key);
        // A deliberate stop is not a crash: the old generation's exit is ignored.
        self.generation += 1;
        self.docs.clear();
        self.crashed_at = None;
        self.crashes_in_row = 0;
        if old.is_some() || matches!(self.state, State::Crashed(_)) {
            self.restarts += 1;
        }
        self.state = State::NotStarted;
        let stop = async move {
            if let Some(old) = old {
                let _ = old.client.request("shutdown", Value::Null, SHUTDOWN_TIMEOUT).await;
                let _ = old.client.notify("exit", Value::Null);
                tokio::time::sleep(EXIT_TIMEOUT.min(Duration::from_millis(200))).await;
                drop(old.guard);
            }
        };
        Box::pin(stop.into_actor(self).then(|(), act, ctx| start(act, ctx)))
    }
}

impl Handler<Reload> for LspServerActor {
    type Result = AtomicResponse<Self, Result<(), LspError>>;

    fn handle(&mut self, _msg: Reload, _ctx: &mut Self::Context) -> Self::Result {
        // A reload tries the build import again (the network may be back).
        self.unmanaged = None;
        AtomicResponse::new(self.restart())
    }
}

impl Handler<Exited> for LspServerActor {
    type Result = ();

    fn handle(&mut self, msg: Exited, _ctx: &mut Self::Context) {
        if msg.generation != self.generation {
            return;
        }
        let name = self.name();
        self.pids.lock().remove(&self.key);
        if let Some(running) = self.running.take() {
            running.client.close(&msg.info.describe(&name));
            if running.started.elapsed() > STABLE_AFTER {
                self.crashes_in_row = 0;
            }
        }
        tracing::warn!(server = %self.key.server, root = %self.key.root.display(), "{}", msg.info.describe(&name));
        self.crashes_in_row += 1;
        self.crashed_at = Some(Instant::now());
        self.docs.clear();
        self.last_crash = Some(msg.info.clone());
        self.state = State::Crashed(msg.info.clone());
        if let Some(supervisor) = &self.supervisor {
            supervisor.do_send(ServerCrashed { key: self.key.clone(), info: msg.info });
        }
    }
}

/// Stop the actor (and with it the server process).
pub struct Stop;

impl Message for Stop {
    type Result = ();
}

impl Handler<Stop> for LspServerActor {
    type Result = ();

    fn handle(&mut self, _msg: Stop, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

/// Files changed on disk: a batch from the run's watcher.
pub struct FilesChanged(pub Arc<Batch>);

impl Message for FilesChanged {
    type Result = ();
}

impl Handler<FilesChanged> for LspServerActor {
    type Result = ();

    fn handle(&mut self, msg: FilesChanged, ctx: &mut Self::Context) {
        // A server that is not running reads the disk as it is when it starts.
        let Some(running) = &self.running else { return };
        let (client, shared) = (running.client.clone(), running.shared.clone());
        let root = self.key.root.clone();
        let mine: Vec<_> = msg.0.changes.iter().filter(|c| c.path.starts_with(&root)).collect();
        if mine.is_empty() {
            return;
        }
        let reopen_kinds = self.usable.config.reopen.clone();
        let reopens = |kind| reopen_kinds.contains(&kind);
        let rereads: Vec<_> = mine
            .iter()
            .filter(|c| !self.docs.contains_key(&c.path) && reopens(c.kind) && self.serves(&c.path))
            .collect();
        if rereads.len() > REOPEN_MAX {
            // A checkout of another branch: cheaper and surer to start
            // over (the server reads, and re-indexes, everything) than to
            // open hundreds of files one by one.
            // The mailbox waits for the restart: a query sent after this
            // batch must reach the new server, not the one being stopped.
            tracing::info!(server = %self.key.server, files = rereads.len(), "restarting to take in a large batch of changed files");
            match self.unmanaged.take() {
                // The checkout may have moved source folders: written anew.
                Some((_, why)) => ctx.wait(self.serve_unmanaged(why, true)),
                None => ctx.wait(self.restart().map(|_, _, _| ())),
            }
            return;
        }
        // What the server registered to hear about (or, if it registered
        // nothing, its languages), first: a brief open below is then read
        // by a server that already knows the file exists.
        let events: Vec<Value> = mine
            .iter()
            .filter(|c| shared.wants(&c.path, &root, c.kind).unwrap_or_else(|| self.serves(&c.path)))
            .filter_map(|c| {
                let uri = lsp_types::Url::from_file_path(&c.path).ok()?;
                let kind = match c.kind {
                    ChangeKind::Created => 1,
                    ChangeKind::Changed => 2,
                    ChangeKind::Deleted => 3,
                };
                Some(json!({"uri": uri, "type": kind}))
            })
            .collect();
        if !events.is_empty() {
            let _ = client.notify("workspace/didChangeWatchedFiles", json!({"changes": events}));
        }
        for change in mine {
            let path = &change.path;
            let Ok(uri) = lsp_types::Url::from_file_path(path) else { continue };
            let deleted = change.kind == ChangeKind::Deleted;
            let reopen = reopens(change.kind);
            if self.docs.contains_key(path) {
                if deleted && !reopen {
                    close_doc(&client, &shared, &uri);
                    self.docs.remove(path);
                } else if deleted {
                    // Closing alone would leave its content in the index:
                    // empty it, then close it once the server has re-read it.
                    if let Some(doc) = self.docs.get_mut(path) {
                        doc.transient = true;
                    }
                    self.reread(path, true, &client, &shared, ctx);
                } else if let Ok(text) = self.read_text(path) {
                    let sent = self.put(path, &uri, text, false, &client, &shared).unwrap_or(false);
                    if sent && reopen {
                        self.await_reread(path, &uri, &shared, ctx);
                    }
                }
            } else if reopen && self.serves(path) {
                self.reread(path, deleted, &client, &shared, ctx);
            }
        }
    }
}

impl Handler<Describe> for LspServerActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let id = format!("{}@{}", self.key.server, crate::fs::relative(&self.workdir, &self.key.root));
        let (uptime, pending) = match &self.running {
            Some(r) => (r.started.elapsed().as_millis() as u64, r.client.pending() as u64),
            None => (self.created.elapsed().as_millis() as u64, 0),
        };
        let mut node = ActorNode::new("lsp-server", &id, &self.state_words(), uptime, pending);
        node.pid = self.running.as_ref().map(|r| r.guard.pid());
        node.restarts = Some(self.restarts);
        node = node.with_detail("open_documents", self.docs.len());
        if let Some(r) = &self.running {
            node = node.with_detail("file_watchers", r.shared.watchers());
            let rereading = r.shared.reindexing().len();
            if rereading > 0 {
                node = node.with_detail("rereading_changed_files", rereading);
            }
            let reported = r.shared.reported_errors();
            if !reported.is_empty() {
                node = node.with_detail("reported_errors", reported);
            }
        }
        node.last_error = self.last_crash.as_ref().map(|info| info.describe(&self.key.server));
        MessageResult(node)
    }
}
