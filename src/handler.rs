//! The contract between the router and a tool: a [`ToolHandler`] declares
//! its [`ToolSpec`], parses its arguments synchronously (so argument errors
//! come back before any work is queued), and returns the work as a future.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::result::ToolResult;
use crate::spec::{Surface, ToolSpec};

/// The work a call turned into.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolResult> + Send + 'static>>;

/// An error to hand back to the model; the message says what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl From<ToolError> for ToolResult {
    fn from(e: ToolError) -> Self {
        ToolResult::error(e.0)
    }
}

/// What an after-write hook recorded about files just before they were
/// written, handed back to it after the write (the language-server layer
/// keeps the diagnostics of the content the write replaces).
pub type WriteBaseline = Option<Box<dyn std::any::Any + Send>>;

/// Runs around a tool's write; whatever text `after_write` returns is
/// appended to the tool's result. The language-server layer uses it to
/// report the diagnostics a write introduced and resolved — against the
/// diagnostics of the content just before the write, which
/// `before_write` asks for.
pub trait AfterWrite: Send + Sync + 'static {
    /// Called with the absolute paths about to be written, while they
    /// still hold what the write replaces. The default records nothing.
    fn before_write(&self, paths: Vec<PathBuf>) -> Pin<Box<dyn Future<Output = WriteBaseline> + Send>> {
        let _ = paths;
        Box::pin(async { None })
    }

    /// Called with the absolute paths just written, and what
    /// `before_write` recorded for them (`None` when it was not called).
    fn after_write(
        &self,
        paths: Vec<PathBuf>,
        before: WriteBaseline,
    ) -> Pin<Box<dyn Future<Output = Option<String>> + Send>>;
}

/// Several after-write hooks run in order; their texts are joined.
pub struct AfterWriteChain(pub Vec<Arc<dyn AfterWrite>>);

impl AfterWrite for AfterWriteChain {
    fn before_write(&self, paths: Vec<PathBuf>) -> Pin<Box<dyn Future<Output = WriteBaseline> + Send>> {
        let hooks = self.0.clone();
        Box::pin(async move {
            let mut each: Vec<WriteBaseline> = Vec::with_capacity(hooks.len());
            for hook in hooks {
                each.push(hook.before_write(paths.clone()).await);
            }
            Some(Box::new(each) as Box<dyn std::any::Any + Send>)
        })
    }

    fn after_write(
        &self,
        paths: Vec<PathBuf>,
        before: WriteBaseline,
    ) -> Pin<Box<dyn Future<Output = Option<String>> + Send>> {
        let hooks = self.0.clone();
        let mut each: Vec<WriteBaseline> =
            before.and_then(|b| b.downcast::<Vec<WriteBaseline>>().ok()).map(|b| *b).unwrap_or_default();
        each.resize_with(hooks.len(), || None);
        Box::pin(async move {
            let mut texts = Vec::new();
            for (hook, before) in hooks.into_iter().zip(each) {
                if let Some(text) = hook.after_write(paths.clone(), before).await {
                    texts.push(text);
                }
            }
            (!texts.is_empty()).then(|| texts.join("\n"))
        })
    }
}

/// What every call can see of its run.
#[derive(Clone)]
pub struct CallContext {
    /// The working directory, canonical.
    pub workdir: Arc<PathBuf>,
    /// The conversation this run belongs to.
    pub conversation: Arc<str>,
    /// The surface the call came from.
    pub surface: Surface,
    /// The after-write hook, if the run has one.
    pub after_write: Option<Arc<dyn AfterWrite>>,
    /// What each conversation last saw of each file, and who wrote what.
    pub views: Arc<crate::views::Views>,
    /// Cancelled when the caller stops waiting for this call. The router
    /// then drops the call's work; tools whose resource keeps running
    /// without them (a cell, a debug wait) pass it on so it stops too.
    pub cancel: CancellationToken,
}

impl CallContext {
    /// The working directory.
    pub fn root(&self) -> &Path {
        &self.workdir
    }

    /// This call's conversation read `path`, holding `bytes`.
    pub fn saw(&self, path: &Path, bytes: &[u8]) {
        self.views.saw(&self.conversation, path, bytes);
    }

    /// This call's conversation wrote `bytes` to `path` (`None`: deleted it).
    pub fn wrote(&self, path: &Path, bytes: Option<&[u8]>) {
        self.views.wrote(&self.conversation, path, bytes);
    }

    /// Runs the hook's `before_write` for `paths`, which a tool is about
    /// to write: call it before reading what the write replaces.
    pub async fn before_write(&self, paths: &[PathBuf]) -> WriteBaseline {
        match &self.after_write {
            Some(hook) => hook.before_write(paths.to_vec()).await,
            None => None,
        }
    }

    /// Runs the after-write hook for `paths`, with what `before_write`
    /// recorded, and appends its text to `result`.
    pub async fn report_write(
        &self,
        paths: Vec<PathBuf>,
        before: WriteBaseline,
        mut result: ToolResult,
    ) -> ToolResult {
        if let Some(hook) = &self.after_write
            && let Some(text) = hook.after_write(paths, before).await
        {
            result.append(&text);
        }
        result
    }
}

/// One tool. Built-in tools implement it, and so can an embedding host's own.
pub trait ToolHandler: Send + Sync + 'static {
    /// The tool's declaration.
    fn spec(&self) -> ToolSpec;

    /// Parses `args` and returns the work, or an argument error.
    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError>;
}

/// The JSON Schema of `T`, as a tool's `input_schema`, in the subset
/// every client and model provider takes ([`crate::schema::portable`]).
pub fn schema_of<T: schemars::JsonSchema>() -> serde_json::Value {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    crate::schema::portable(schema)
}
