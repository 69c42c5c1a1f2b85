//! What a caller holds after `Open`: a [`Opened`] — the server's client,
//! its shared state, the document as synced — and the waits and requests
//! made through it, outside the server actor's mailbox so that queries run
//! concurrently: until the server has loaded the document, until the work
//! it announced has ended (read behind a barrier request, never a quiet
//! period), until a checker run on save has ended; and requests whose
//! parameters are built on the text the server holds when it reads them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::in_use::Hold;
use super::key::ServerKey;
use super::languages::Languages;
use super::shared::{DiagEntry, Held, Progress, ServerState};
use crate::wire::client::{Client, InFlight};
use crate::wire::jsonrpc::CONTENT_MODIFIED;
use crate::wire::pending::RequestError;

/// How long a barrier request may take to be answered (it is answered
/// at once, behind whatever the server is doing on its message thread).
pub const BARRIER_WAIT: Duration = Duration::from_secs(10);
/// The least time a barrier is given, even when the caller's own bound is
/// nearly spent: a barrier given no time fails, and reads as a server
/// that stopped answering.
pub const BARRIER_FLOOR: Duration = Duration::from_secs(1);
/// The barrier's method: unknown to every server, which must answer it
/// "method not found" (the specification's rule for `$/` requests).
const BARRIER_METHOD: &str = "$/tether/barrier";
/// How long a request answered "content modified" is retried.
pub const CONTENT_MODIFIED_RETRY: Duration = Duration::from_secs(30);
/// How many times a request is asked again when the server, while it
/// answered, logged an error meaning the answer is partial
/// ([`crate::lsp::ServerConfig::partial_logs`]).
pub const PARTIAL_RETRIES: usize = 2;
/// What a caller gets after `Open`: a client to query, the shared state,
/// and what was synced.
#[derive(Clone)]
pub struct Opened {
    /// Which server.
    pub key: ServerKey,
    /// Its client.
    pub client: Client,
    /// Its published state.
    pub shared: Arc<ServerState>,
    /// The synced document, if a file was given.
    pub doc: Option<SyncedDoc>,
    /// What the server said it can do.
    pub capabilities: Arc<Value>,
    /// Whether its first diagnostics for new content may be partial, the
    /// full list following the analysis it reports as progress.
    pub phased_diagnostics: bool,
    /// Whether tsserver can be asked directly
    /// (`ServerConfig::tsserver_requests`).
    pub tsserver_requests: bool,
    /// Whether its workspace symbols leave members out
    /// (`ServerConfig::workspace_symbols_types_only`).
    pub workspace_symbols_types_only: bool,
    /// The file its root needs for project-wide answers to be whole
    /// (`ServerConfig::project_index_file`).
    pub project_index_file: Option<String>,
    /// Whether its `references` leave out what it cannot resolve, unsaid
    /// (`ServerConfig::omits_unresolved`).
    pub omits_unresolved: bool,
    /// Which files are the server's.
    pub serves: Serves,
    /// Set for the first call after the server was stopped to keep the
    /// run small and started again: what stopped it, to be said.
    pub restarted: Option<String>,
    /// Keeps the server from counting as idle while the caller holds this.
    pub(crate) _hold: Hold,
}

/// Which files a server reads: those of its languages under its root.
#[derive(Debug, Clone)]
pub struct Serves {
    root: PathBuf,
    languages: Languages,
    ids: Arc<[String]>,
}

impl Serves {
    /// The files of `ids` (language ids of `languages`) under `root`.
    pub fn new(root: PathBuf, languages: Languages, ids: &[String]) -> Self {
        Serves { root, languages, ids: ids.into() }
    }

    /// Whether `path` is one of them.
    pub fn file(&self, path: &Path) -> bool {
        path.starts_with(&self.root) && self.languages.of(path).is_some_and(|l| self.ids.contains(&l.id))
    }
}

/// A document as last synced.
#[derive(Debug, Clone)]
pub struct SyncedDoc {
    /// Its URI.
    pub uri: lsp_types::Url,
    /// Its version.
    pub version: i32,
    /// Its text as synced.
    pub text: Arc<String>,
    /// The publication number before the content was last synced: any
    /// later publication without a version is about this content or newer.
    pub seq_before: u64,
    /// The version it was opened at (by this call or an earlier one) and
    /// the publication number then: the server has loaded the document,
    /// and the project behind it, once it has published for it since.
    pub opened_version: i32,
    /// See `opened_version`.
    pub opened_seq: u64,
    /// Whether this call changed what the server has.
    pub changed: bool,
    /// Whether this call opened the document (`didOpen`).
    pub opened: bool,
    /// When the server was last given new content for it (by this call,
    /// by an earlier one, or because the file changed on disk).
    pub changed_at: SystemTime,
    /// The diagnostics the server had published for the content before
    /// that, if they were about it: the file's previous fresh state.
    pub previous: Option<DiagEntry>,
}

/// The capability a request needs the server to have announced (LSP 3.17
/// `ServerCapabilities`), for the requests tether sends.
fn capability_for(method: &str) -> Option<&'static str> {
    Some(match method {
        "textDocument/definition" => "definitionProvider",
        "textDocument/declaration" => "declarationProvider",
        "textDocument/typeDefinition" => "typeDefinitionProvider",
        "textDocument/implementation" => "implementationProvider",
        "textDocument/references" => "referencesProvider",
        "textDocument/hover" => "hoverProvider",
        "textDocument/documentSymbol" => "documentSymbolProvider",
        "workspace/symbol" => "workspaceSymbolProvider",
        "textDocument/rename" | "textDocument/prepareRename" => "renameProvider",
        "textDocument/codeAction" => "codeActionProvider",
        "textDocument/formatting" => "documentFormattingProvider",
        "textDocument/rangeFormatting" => "documentRangeFormattingProvider",
        "workspace/executeCommand" => "executeCommandProvider",
        "textDocument/diagnostic" => "diagnosticProvider",
        "textDocument/prepareCallHierarchy" => "callHierarchyProvider",
        "textDocument/prepareTypeHierarchy" => "typeHierarchyProvider",
        _ => return None,
    })
}

/// What a request is for, in the words of the `lsp` tool's answers.
fn asked_for(method: &str) -> &str {
    match method {
        "workspace/symbol" => "workspace symbols",
        "textDocument/documentSymbol" => "a file's symbols",
        other => other.rsplit('/').next().unwrap_or(other),
    }
}

impl Opened {
    /// Whether the server announced the capability `method` needs (true
    /// for requests tether knows no capability of).
    pub fn offers(&self, method: &str) -> bool {
        capability_for(method).is_none_or(|cap| match self.capabilities.get(cap) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(_) => true,
        })
    }

    /// Waits, at most `timeout`, until every message the server wrote
    /// before it read this point has been read here: a request it must
    /// answer (with "method not found" — any answer will do), queued
    /// behind everything sent so far. What a server announces together
    /// with a publication (pyright's next analysis pass, say) is then
    /// known. Returns whether the server answered.
    pub async fn barrier(&self, timeout: Duration) -> bool {
        let timeout = timeout.clamp(BARRIER_FLOOR, BARRIER_WAIT);
        match self.client.request(BARRIER_METHOD, json!({}), timeout).await {
            Ok(_) | Err(RequestError::Rpc(_) | RequestError::Refused(_) | RequestError::Partial(_)) => true,
            Err(RequestError::TimedOut(_) | RequestError::Closed(_) | RequestError::Unsupported(_)) => false,
        }
    }

    /// Waits, at most `timeout`, until the server has published for the
    /// session's document since it was opened — whoever opened it: the one
    /// sign every server gives that it has loaded the file and the project
    /// behind it (pyright answers an early `references` from a workspace
    /// it has not loaded with a short, plausible and wrong list). Every
    /// caller waits for it, not only the one whose call opened the file.
    pub async fn wait_loaded(&self, timeout: Duration) -> bool {
        let Some(doc) = &self.doc else { return true };
        let key = doc.uri.to_string();
        if self.shared.waited_out(&key) {
            return true;
        }
        let (version, seq) = (doc.opened_version, doc.opened_seq);
        let loaded = self
            .shared
            .wait_until(timeout, |s| {
                s.diagnostics(&key).filter(|e| e.version.map_or(e.seq > seq, |v| v >= version)).map(|_| ())
            })
            .await
            .is_some();
        if !loaded && self.shared.closed().is_none() {
            self.shared.wait_was_in_vain(&key);
        }
        loaded
    }

    /// Waits, at most `timeout`, until the server has said that the work
    /// it announced has ended: no progress running or announced, and —
    /// where it reports a status — quiescent. Every wait ends on the
    /// server's own word, checked behind a [`barrier`](Self::barrier), so
    /// a next phase announced together with the end of the last one is
    /// seen; never on a quiet period, which a loaded machine overruns.
    /// Returns the work still running if it did not end.
    pub async fn wait_idle(&self, timeout: Duration) -> Option<Progress> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if !self.barrier(left.min(BARRIER_WAIT)).await {
                return Some(
                    self.shared
                        .indexing()
                        .unwrap_or_else(|| Progress { title: "not answering".into(), percentage: None }),
                );
            }
            // Nothing announced or running, behind the barrier: done.
            self.shared.indexing()?;
            let left = deadline.saturating_duration_since(Instant::now());
            if self.shared.wait_until(left, |s| s.indexing().is_none().then_some(())).await.is_none() {
                return self.shared.indexing();
            }
        }
    }

    /// For a server with an on-save checker (rust-analyzer's `cargo
    /// check`): tells it the synced content is saved — it is what is on
    /// disk — unless that version was saved already, and returns the
    /// progress mark to wait past: a check begun after it ran on this
    /// content. A barrier first, so that a check begun before is read
    /// before the mark is taken. `None` when the server holds newer
    /// content (a newer call saves that) or has no checker.
    pub async fn save_for_check(&self, timeout: Duration) -> Option<u64> {
        let doc = self.doc.as_ref()?;
        if !self.shared.has_checker() {
            return None;
        }
        let uri = doc.uri.to_string();
        if let Some(mark) = self.shared.saved_mark(&uri, doc.version) {
            return Some(mark);
        }
        self.barrier(timeout.min(BARRIER_WAIT)).await;
        self.shared.save_held(&uri, doc.version, || {
            self.client.notify("textDocument/didSave", json!({"textDocument": {"uri": doc.uri}}))
        })
    }

    /// Waits, at most `timeout`, until the server has re-read every file
    /// changed on disk that it is re-reading; returns those it has not.
    pub async fn wait_reread(&self, timeout: Duration) -> Vec<PathBuf> {
        self.shared.wait_until(timeout, |s| s.rereading().is_empty().then_some(())).await;
        self.shared.rereading()
    }

    /// Sends a request about the session's server. A server still loading
    /// its project may answer "content modified" (rust-analyzer does while
    /// it indexes); such a request is retried, after waiting for progress
    /// to finish, for up to [`CONTENT_MODIFIED_RETRY`].
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RequestError> {
        let mut build = |_: Option<&Held>| Ok::<_, String>(params.clone());
        match self.request_on(None, method, &mut build, timeout).await {
            Ok(value) => Ok(value),
            Err(OnError::Request(e)) => Err(e),
            // `request_on` reads no type, and `build` never fails.
            Err(OnError::Build(never) | OnError::Unfit(never)) => Err(RequestError::Closed(never)),
        }
    }

    /// Sends a request whose parameters `build` computes from what the
    /// server holds of `uri` when it reads the request (`None` when it
    /// holds nothing of it): built and queued with no change to the
    /// document sent in between, so a position computed on that text is a
    /// position in the text the server has. Retried like [`request`](Self::request)
    /// on "content modified", rebuilt each time; asked again (at most
    /// [`PARTIAL_RETRIES`] times) when the server logged meanwhile that its
    /// answer is partial.
    pub async fn request_on(
        &self,
        uri: Option<&str>,
        method: &str,
        build: &mut (dyn FnMut(Option<&Held>) -> Result<Value, String> + Send),
        timeout: Duration,
    ) -> Result<Value, OnError> {
        // Asked anyway, a server answers "method not found" or, worse, an
        // empty list that reads as "none".
        if !self.offers(method) {
            let cap = capability_for(method).unwrap_or_default();
            return Err(OnError::Request(RequestError::Unsupported(format!(
                "{} does not answer {} (it announced no `{cap}`)",
                self.key.server,
                asked_for(method)
            ))));
        }
        let deadline = Instant::now() + CONTENT_MODIFIED_RETRY;
        let mut partial_retries = 0;
        loop {
            let partial = self.shared.partial_mark();
            let started: Result<InFlight, OnError> = match uri {
                Some(uri) => self.shared.with_held(uri, |held| {
                    let params = with_own_progress(build(held).map_err(OnError::Build)?);
                    self.client.send_request(method, params).map_err(OnError::Request)
                }),
                None => {
                    let params = with_own_progress(build(None).map_err(OnError::Build)?);
                    self.client.send_request(method, params).map_err(OnError::Request)
                }
            };
            match started?.answer(timeout).await {
                Err(RequestError::Rpc(e)) if e.code == CONTENT_MODIFIED && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    self.wait_idle(deadline.saturating_duration_since(Instant::now())).await;
                }
                Ok(_) if self.shared.partial_mark() != partial => {
                    if partial_retries == PARTIAL_RETRIES {
                        let logged = self.shared.reported_errors().pop().unwrap_or_default();
                        return Err(OnError::Request(RequestError::Partial(format!(
                            "{} logged an error each of the {} times it answered, so its answer would be partial: {logged}",
                            self.key.server,
                            PARTIAL_RETRIES + 1
                        ))));
                    }
                    partial_retries += 1;
                    tracing::debug!(server = %self.key.server, method, "partial answer; asking again");
                }
                Ok(value) => return Ok(value),
                Err(e) => return Err(OnError::Request(e)),
            }
        }
    }
}

/// Typed requests: the parameters and the answer of `R` are
/// `lsp_types`' own, for requests whose answer is taken whole (a rename's
/// edit). Answers read item by item — locations and symbols, where one odd
/// entry must not lose the rest, and servers' own shapes — stay JSON
/// ([`Opened::request_on`]).
impl Opened {
    /// Sends `R` with `params` (see [`Opened::request`]); an answer that
    /// does not fit `R::Result` is [`OnError::Unfit`].
    pub async fn ask<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, OnError> {
        let mut params = Some(params);
        self.ask_on::<R>(None, &mut |_| params.take().ok_or_else(|| "asked twice".to_string()), timeout).await
    }

    /// Sends `R` with the parameters `build` computes from what the
    /// server holds of `uri` (see [`Opened::request_on`]); an answer that
    /// does not fit `R::Result` is [`OnError::Unfit`].
    pub async fn ask_on<R: lsp_types::request::Request>(
        &self,
        uri: Option<&str>,
        build: &mut BuildParams<'_, R::Params>,
        timeout: Duration,
    ) -> Result<R::Result, OnError> {
        let mut as_json = |held: Option<&Held>| {
            serde_json::to_value(build(held)?).map_err(|e| format!("{} parameters: {e}", R::METHOD))
        };
        let answer = self.request_on(uri, R::METHOD, &mut as_json, timeout).await?;
        serde_json::from_value(answer.clone()).map_err(|e| {
            OnError::Unfit(format!(
                "{} answered {} with what its type does not allow ({e}): {}",
                self.key.server,
                R::METHOD,
                crate::text::cut(&answer.to_string(), UNFIT_QUOTE).0
            ))
        })
    }
}

/// What computes a request's parameters from what the server holds of the
/// document (`None`: nothing), or says why it cannot.
pub type BuildParams<'a, P> = dyn FnMut(Option<&Held>) -> Result<P, String> + Send + 'a;

/// How much of an answer that does not fit its type is quoted, in characters.
const UNFIT_QUOTE: usize = 200;

/// Gives a request a work-done token of tether's own: the progress a
/// server reports for it (pyright's "Finding references") then comes on
/// that token, which [`ServerState`] does not count as the server's own work —
/// one caller's long request is not another caller's "still indexing".
fn with_own_progress(mut params: Value) -> Value {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    if let Some(object) = params.as_object_mut()
        && !object.contains_key("workDoneToken")
    {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        object
            .insert("workDoneToken".into(), Value::String(format!("{}{n}", super::shared::OWN_TOKEN_PREFIX)));
    }
    params
}

/// Why [`Opened::request_on`] did not answer.
#[derive(Debug, Clone, PartialEq)]
pub enum OnError {
    /// The parameters could not be built on the text the server holds
    /// (the file changed so the symbol is no longer there, say); the
    /// text says why.
    Build(String),
    /// The request failed.
    Request(RequestError),
    /// A typed request ([`Opened::ask_on`]) was answered with what its
    /// type does not allow; the text quotes it.
    Unfit(String),
}
