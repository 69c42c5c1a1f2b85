//! Serving a root whose build the server could not import as an
//! unmanaged folder (`ServerConfig::unmanaged_fallback`, `import_check`):
//! noticing the failure — reported, or (Gradle offline) only seen in
//! what the server lists as imported a while after it started — writing
//! the project of [`crate::lsp::unmanaged`] off the actor's thread, and
//! restarting the server on it.

use std::time::Duration;

use actix::prelude::*;
use serde_json::{Value, json};

use super::LspServerActor;
use crate::lsp::unmanaged;

/// The server of generation `generation` could not import the build.
pub(super) struct ImportFailed {
    pub(super) generation: u64,
}

impl Message for ImportFailed {
    type Result = ();
}

impl Handler<ImportFailed> for LspServerActor {
    type Result = ();

    fn handle(&mut self, msg: ImportFailed, ctx: &mut Self::Context) {
        if msg.generation != self.generation || self.unmanaged.is_some() {
            return;
        }
        let Some(running) = &self.running else { return };
        let text = self.usable.config.unmanaged_fallback.clone().unwrap_or_default();
        // The longest saying of the failure holds its cause.
        let why = running
            .shared
            .reported_errors()
            .into_iter()
            .filter(|r| r.contains(&text))
            .max_by_key(String::len)
            .unwrap_or(text);
        ctx.wait(self.serve_unmanaged(why, false));
    }
}

/// How many times the import check is put off while the server reports
/// work in progress (each time by its `after_secs`).
const IMPORT_CHECK_DEFERRALS: u32 = 30;
/// How long the server may take to list its projects.
const IMPORT_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

impl LspServerActor {
    /// Asks, `after_secs` from now, whether the server imported a project
    /// for a root whose build file it may fail on without a word
    /// (`ServerConfig::import_check`); one that none covers is served as
    /// an unmanaged folder.
    pub(super) fn schedule_import_check(&mut self, deferrals: u32, ctx: &mut Context<Self>) {
        let Some(check) = self.usable.config.import_check.clone() else { return };
        if self.unmanaged.is_some() {
            return;
        }
        let Some(build_file) = check.build_files.iter().find(|f| self.key.root.join(f).is_file()).cloned()
        else {
            return;
        };
        let generation = self.generation;
        ctx.run_later(Duration::from_secs(check.after_secs), move |act, ctx| {
            let Some(running) = act.running.as_ref().filter(|_| act.generation == generation) else { return };
            let (client, busy) = (running.client.clone(), running.shared.indexing().is_some());
            if act.unmanaged.is_some() {
                return;
            }
            // An import at work (a download, online) is waited out.
            if busy && deferrals < IMPORT_CHECK_DEFERRALS {
                act.schedule_import_check(deferrals + 1, ctx);
                return;
            }
            let params = json!({"command": check.command, "arguments": []});
            let ask =
                async move { client.request("workspace/executeCommand", params, IMPORT_CHECK_TIMEOUT).await };
            let waited = check.after_secs * u64::from(deferrals + 1);
            ctx.spawn(ask.into_actor(act).map(move |listed, act, ctx| {
                if act.generation != generation || act.unmanaged.is_some() {
                    return;
                }
                // A busy server may not answer in time: asked again later.
                let Ok(listed) = listed else {
                    if deferrals < IMPORT_CHECK_DEFERRALS {
                        act.schedule_import_check(deferrals + 1, ctx);
                    }
                    return;
                };
                let root = act.key.root.clone();
                // Folder URIs (`file:/x/`, as jdtls writes them). Its own
                // default project, which holds whatever no project does,
                // lives in its workspace: never a cover, even where that
                // workspace is under the root.
                let workspace = crate::tools_prefix::cache_for(&act.key.server, &act.key.root);
                let covered = listed
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter_map(|uri| lsp_types::Url::parse(uri).ok()?.to_file_path().ok())
                    .filter(|path| !path.starts_with(&workspace))
                    .any(|path| {
                        path.starts_with(&root) || (root.starts_with(&path) && path.parent().is_some())
                    });
                if !covered {
                    let why = format!(
                        "{} had imported no project from `{build_file}` {waited} s after it started",
                        act.key.server
                    );
                    ctx.wait(act.serve_unmanaged(why, false));
                }
            }));
        });
    }

    /// Writes (again) the unmanaged project for the root — off the actor's
    /// thread: it walks the tree — and restarts the server on it. The
    /// mailbox waits: a query sent after this reaches the new server.
    /// When the project cannot be written the server restarts only if
    /// `restart_anyway` (a batch to take in), never on its failed import
    /// again (which would fail the same way, for ever).
    pub(super) fn serve_unmanaged(
        &mut self,
        why: String,
        restart_anyway: bool,
    ) -> ResponseActFuture<Self, ()> {
        let (cache, root) =
            (crate::tools_prefix::cache_for(&self.key.server, &self.key.root), self.key.root.clone());
        let write = tokio::task::spawn_blocking(move || unmanaged::write(&cache, &root));
        Box::pin(write.into_actor(self).then(move |written, act, _ctx| {
            let written = written.map_err(|e| std::io::Error::other(e.to_string())).and_then(|w| w);
            match written {
                Ok(project) => {
                    tracing::info!(server = %act.key.server, sources = ?project.sources, "build import failed; serving the root as an unmanaged folder");
                    act.unmanaged = Some((project, why));
                    Box::pin(act.restart().map(|_, _, _| ())) as ResponseActFuture<Self, ()>
                }
                Err(e) => {
                    if let Some(running) = &act.running {
                        running.shared.note_reported(format!(
                            "{why}; and the unmanaged project tether writes in its place could not be written ({e})"
                        ));
                    }
                    if restart_anyway {
                        return Box::pin(act.restart().map(|_, _, _| ())) as ResponseActFuture<Self, ()>;
                    }
                    Box::pin(fut::ready(()))
                }
            }
        }))
    }
}
