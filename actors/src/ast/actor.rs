//! `AstActor`: the tree-sitter parser set as a live resource.
//!
//! Searches and stagings run on blocking threads, at most
//! [`MAX_CONCURRENT_SCANS`] at once, while the mailbox keeps taking
//! messages. `Resolve` is different: it runs *atomically* — the mailbox
//! handles nothing else until the drift check and every write are done —
//! so two resolves can never interleave, and no staging can observe a
//! half-written change.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use actix::prelude::*;
use serde::Serialize;
use tokio::sync::Semaphore;

use super::lang::Lang;
use super::rewrite::{RewriteError, RewritePlan, plan};
use super::scan::{Coverage, ScanError, Scope};
use super::search::{SearchOutcome, search};
use super::staging::{Resolution, StagedSummary, Staging, StagingError, accept};
use crate::describe::{ActorNode, Describe};

/// Scans running at once; each already uses every core, so more would only
/// queue inside the OS instead of here.
pub const MAX_CONCURRENT_SCANS: usize = 4;

/// Why an AST request failed; the tools word it (what to do next names
/// them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AstError {
    /// Bad pattern or scope.
    Scan(ScanError),
    /// Bad rewrite.
    Rewrite(RewriteError),
    /// Unknown, resolved, or too many staged edits.
    Staging(StagingError),
    /// A blocking task died (a bug; reported rather than hidden): the
    /// runtime's error.
    Worker(String),
}

impl From<ScanError> for AstError {
    fn from(e: ScanError) -> Self {
        AstError::Scan(e)
    }
}

impl From<RewriteError> for AstError {
    fn from(e: RewriteError) -> Self {
        AstError::Rewrite(e)
    }
}

impl From<StagingError> for AstError {
    fn from(e: StagingError) -> Self {
        AstError::Staging(e)
    }
}

/// Find every match of a pattern.
#[derive(Debug, Clone)]
pub struct Search {
    /// Where and in which language.
    pub scope: Scope,
    /// The pattern.
    pub pattern: String,
    /// How many matches to keep.
    pub max_results: usize,
}

impl Message for Search {
    type Result = Result<SearchOutcome, AstError>;
}

/// Plan a rewrite and hold it under a new id.
#[derive(Debug, Clone)]
pub struct Stage {
    /// Where and in which language.
    pub scope: Scope,
    /// The pattern.
    pub pattern: String,
    /// The template that replaces each match.
    pub rewrite: String,
    /// The conversation staging it.
    pub owner: String,
}

/// What staging produced: a summary, or nothing to stage.
#[derive(Debug, Clone, Serialize)]
pub struct StageOutcome {
    /// The staged change; `None` when the pattern matched nowhere.
    pub staged: Option<StagedSummary>,
    /// What the scan covered.
    pub coverage: Coverage,
}

impl Message for Stage {
    type Result = Result<StageOutcome, AstError>;
}

/// Hold an already computed multi-file change (a language server's
/// rename) under a new id, for `resolve`.
#[derive(Debug, Clone)]
pub struct StageFiles {
    /// The files and their new content.
    pub plan: RewritePlan,
    /// The conversation staging it.
    pub owner: String,
}

impl Message for StageFiles {
    type Result = Result<StagedSummary, AstError>;
}

/// Accept or discard a staged change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolveAction {
    /// Write every file (or none).
    Accept,
    /// Drop the change.
    Discard,
}

/// Resolve a staged change by id.
#[derive(Clone)]
pub struct Resolve {
    /// The id from staging (`edit_N`).
    pub edit_id: String,
    /// What to do with it.
    pub action: ResolveAction,
    /// The conversation asking; only the one that staged the edit may.
    pub conversation: String,
    /// How the files are written when it is accepted (default:
    /// [`crate::fs::commit`]).
    pub committer: Option<super::staging::Committer>,
}

impl Message for Resolve {
    type Result = Result<Resolution, AstError>;
}

/// The files a staged change would write, if `conversation` staged it and
/// it is still pending (nothing otherwise): what accepting it replaces.
#[derive(Debug, Clone)]
pub struct StagedPaths {
    /// The id from staging.
    pub edit_id: String,
    /// The conversation asking.
    pub conversation: String,
}

impl Message for StagedPaths {
    type Result = Vec<std::path::PathBuf>;
}

/// The parser set's actor.
pub struct AstActor {
    root: std::path::PathBuf,
    staging: Staging,
    scans: Arc<Semaphore>,
    in_flight: Arc<AtomicU64>,
    started: Instant,
    resolving: u32,
    max_resolving: u32,
    resolved: u64,
}

impl AstActor {
    /// An actor for the working directory `root` (canonical).
    pub fn new(root: std::path::PathBuf) -> Self {
        Self {
            root,
            staging: Staging::default(),
            scans: Arc::new(Semaphore::new(MAX_CONCURRENT_SCANS)),
            in_flight: Arc::new(AtomicU64::new(0)),
            started: Instant::now(),
            resolving: 0,
            max_resolving: 0,
            resolved: 0,
        }
    }

    /// Runs `work` on a blocking thread once a scan slot is free, counting it
    /// as pending meanwhile.
    fn blocking<T, F>(&self, work: F) -> impl Future<Output = Result<T, AstError>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let scans = self.scans.clone();
        let in_flight = self.in_flight.clone();
        in_flight.fetch_add(1, Ordering::Relaxed);
        async move {
            let result = match scans.acquire_owned().await {
                Ok(permit) => tokio::task::spawn_blocking(move || {
                    let out = work();
                    drop(permit);
                    out
                })
                .await
                .map_err(|e| AstError::Worker(e.to_string())),
                Err(e) => Err(AstError::Worker(e.to_string())),
            };
            in_flight.fetch_sub(1, Ordering::Relaxed);
            result
        }
    }
}

impl Actor for AstActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // Resolves wait behind a full mailbox like everything else; a
        // generous capacity keeps bursts of calls from blocking senders.
        ctx.set_mailbox_capacity(1024);
    }
}

impl Handler<Search> for AstActor {
    type Result = ResponseFuture<Result<SearchOutcome, AstError>>;

    fn handle(&mut self, msg: Search, _ctx: &mut Self::Context) -> Self::Result {
        let work = self.blocking(move || search(&msg.scope, &msg.pattern, msg.max_results));
        Box::pin(async move { Ok(work.await??) })
    }
}

impl Handler<Stage> for AstActor {
    type Result = ResponseActFuture<Self, Result<StageOutcome, AstError>>;

    fn handle(&mut self, msg: Stage, _ctx: &mut Self::Context) -> Self::Result {
        let msg_owner = msg.owner.clone();
        let work = self.blocking(move || plan(&msg.scope, &msg.pattern, &msg.rewrite));
        Box::pin(work.into_actor(self).map(move |planned, act, _ctx| {
            let planned = planned??;
            let coverage = planned.coverage.clone();
            if planned.files.is_empty() {
                return Ok(StageOutcome { staged: None, coverage });
            }
            let staged = act.staging.stage(planned, &msg_owner)?;
            Ok(StageOutcome { staged: Some(staged), coverage })
        }))
    }
}

impl Handler<StageFiles> for AstActor {
    type Result = Result<StagedSummary, AstError>;

    fn handle(&mut self, msg: StageFiles, _ctx: &mut Self::Context) -> Self::Result {
        Ok(self.staging.stage(msg.plan, &msg.owner)?)
    }
}

impl Handler<StagedPaths> for AstActor {
    type Result = MessageResult<StagedPaths>;

    fn handle(&mut self, msg: StagedPaths, _ctx: &mut Self::Context) -> Self::Result {
        MessageResult(self.staging.paths(&msg.edit_id, &msg.conversation))
    }
}

impl Handler<Resolve> for AstActor {
    type Result = AtomicResponse<Self, Result<Resolution, AstError>>;

    fn handle(&mut self, msg: Resolve, _ctx: &mut Self::Context) -> Self::Result {
        let edit = match self.staging.take(&msg.edit_id, &msg.conversation) {
            Ok(edit) => edit,
            Err(e) => return AtomicResponse::new(Box::pin(fut::ready(Err(e.into())))),
        };
        if msg.action == ResolveAction::Discard {
            self.staging.record(&edit.id, Resolution::Discarded);
            self.resolved += 1;
            return AtomicResponse::new(Box::pin(fut::ready(Ok(Resolution::Discarded))));
        }
        self.resolving += 1;
        self.max_resolving = self.max_resolving.max(self.resolving);
        let root = self.root.clone();
        let id = edit.id.clone();
        // Not behind the scan semaphore: a resolve must never wait for
        // searches, and the mailbox is held while it runs.
        let committer = msg.committer.clone();
        let write = tokio::task::spawn_blocking(move || accept(&edit, &root, committer.as_ref()));
        AtomicResponse::new(Box::pin(write.into_actor(self).map(move |done, act, _ctx| {
            act.resolving -= 1;
            act.resolved += 1;
            let resolution = done.map_err(|e| AstError::Worker(e.to_string()))?;
            act.staging.record(&id, resolution.clone());
            Ok(resolution)
        })))
    }
}

impl Handler<Describe> for AstActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let uptime = self.started.elapsed().as_millis() as u64;
        let pending = self.in_flight.load(Ordering::Relaxed) + u64::from(self.resolving);
        let node = ActorNode::new("ast", "tree-sitter", "ready", uptime, pending)
            .with_detail("grammars", Lang::ALL.len())
            .with_detail("staged", self.staging.pending())
            .with_detail("resolved", self.resolved)
            .with_detail("max_concurrent_resolves", self.max_resolving);
        MessageResult(node)
    }
}
