//! Keeping the server's view of files current: a file's content sent
//! (`didOpen`, `didChange`), the brief opens that make a server re-read a
//! file changed on disk, and the watcher's batches of changes.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use actix::prelude::*;
use serde_json::{Value, json};

use super::{
    Doc, LspError, LspServerActor, MAX_KEPT_OPEN, MAX_SYNC_BYTES, REINDEX_WAIT, REOPEN_MAX, SyncedDoc,
};
use crate::lsp::shared::{Held, ServerState};
use crate::watch::{Batch, ChangeKind};
use crate::wire::client::Client;

impl LspServerActor {
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
    pub(super) fn sync(
        &mut self,
        file: &Path,
        save: bool,
        client: &Client,
        shared: &ServerState,
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
        // waits for the check (`Opened::save_for_check`), so the check it
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
        shared: &ServerState,
    ) -> Result<bool, LspError> {
        let seq = shared.seq();
        match self.docs.get(file).map(|doc| *doc.text == text) {
            Some(true) => Ok(false),
            Some(false) => {
                self.send_again(file, uri, Arc::new(text), client, shared)?;
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

    /// Sends `text` as `file`'s next version (a `didChange`): new content,
    /// or the same content again so that the server checks the file anew
    /// against the files it depends on, and publishes for that version.
    fn send_again(
        &mut self,
        file: &Path,
        uri: &lsp_types::Url,
        text: Arc<String>,
        client: &Client,
        shared: &ServerState,
    ) -> Result<(), LspError> {
        let seq = shared.seq();
        let Some(doc) = self.docs.get_mut(file) else { return Ok(()) };
        // What the server said about the content being replaced, if it
        // was about that content: the previous fresh state.
        let fresh = shared.diagnostics(uri.as_str()).filter(|e| match e.version {
            Some(v) => v == doc.version,
            None => e.seq > doc.synced_seq,
        });
        if fresh.is_some() {
            doc.previous = fresh;
        }
        doc.version += 1;
        self.versions.insert(file.to_path_buf(), doc.version);
        doc.text = text;
        doc.synced_seq = seq;
        doc.changed_at = SystemTime::now();
        let held = Held { version: doc.version, text: doc.text.clone() };
        shared.send_held(uri.as_str(), Some(held), || {
            client.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [{"text": *doc.text}]}),
            )
        })?;
        Ok(())
    }

    /// Sends `file`, open in the server, again as a new version though it
    /// did not change (a file another was written under: its list may be
    /// stale), and returns it as synced. A file not open is left alone:
    /// `None`.
    pub(super) fn recheck(
        &mut self,
        file: &Path,
        client: &Client,
        shared: &ServerState,
    ) -> Result<Option<SyncedDoc>, LspError> {
        if self.docs.get(file).is_none_or(|d| d.transient) {
            return Ok(None);
        }
        let text = self.read_text(file)?;
        let rel = crate::fs::relative(&self.workdir, file);
        let uri = lsp_types::Url::from_file_path(file)
            .map_err(|()| LspError::File(format!("`{rel}` has no file URI")))?;
        self.send_again(file, &uri, Arc::new(text), client, shared)?;
        let mut doc = self.sync(file, false, client, shared)?;
        doc.changed = true;
        Ok(Some(doc))
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
        shared: &Arc<ServerState>,
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
        shared: &Arc<ServerState>,
        ctx: &mut Context<Self>,
    ) {
        let Some(doc) = self.docs.get(path) else { return };
        let (version, seq, transient) = (doc.version, doc.synced_seq, doc.transient);
        let tracked = self.usable.config.index_after_parse;
        if transient && self.usable.config.keep_reopened {
            self.close_oldest_kept(shared);
        }
        if tracked {
            shared.begin_reread(path, version);
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
    fn close_oldest_kept(&mut self, shared: &ServerState) {
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
            shared.end_reread(&oldest, doc.version);
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
        shared.end_reread(path, version);
    }
}

/// Closes `uri` on the server, and records that it no longer holds it.
fn close_doc(client: &Client, shared: &ServerState, uri: &lsp_types::Url) {
    let _ = shared.send_held(uri.as_str(), None, || {
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}))
    });
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

/// Most files a server is shown at its start because its compilation
/// database does not name them (see [`LspServerActor::introduce_unlisted`]).
pub const MAX_UNLISTED_SHOWN: usize = 200;
/// Header extensions: a header is indexed through the files that include it.
const HEADERS: &[&str] = &["h", "hh", "hpp", "hxx", "inc", "ipp", "tpp"];

impl LspServerActor {
    /// For a server that indexes only the files its compilation database
    /// names (`ServerConfig::project_index_file`, clangd's
    /// `compile_commands.json`): the source files of its languages under
    /// its root that the database does not name — created after it was
    /// made, or while tether ran, when a predecessor killed or restarted
    /// had been shown them — re-read once at its start, so its index holds
    /// them. Found by the hunt: a clangd restarted after a kill answered
    /// "10 references" where 12 were, the created files' uses missing.
    pub(super) fn introduce_unlisted(&mut self, ctx: &mut Context<Self>) {
        let Some(db) = self.usable.config.project_index_file.clone() else { return };
        let Ok(text) = std::fs::read_to_string(self.key.root.join(&db)) else { return };
        let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(&text) else { return };
        let named: std::collections::HashSet<std::path::PathBuf> = entries
            .iter()
            .filter_map(|e| {
                let file = Path::new(e["file"].as_str()?);
                let dir = Path::new(e["directory"].as_str().unwrap_or(""));
                let path = if file.is_absolute() { file.to_path_buf() } else { dir.join(file) };
                Some(path.canonicalize().unwrap_or(path))
            })
            .collect();
        let mut unlisted = Vec::new();
        let walk = ignore::WalkBuilder::new(&self.key.root).build().flatten();
        for entry in walk.take(crate::lsp::census::MAX_FILES_WALKED) {
            let path = entry.path();
            let header = path.extension().and_then(|e| e.to_str()).is_some_and(|e| HEADERS.contains(&e));
            if header || !entry.file_type().is_some_and(|t| t.is_file()) || !self.serves(path) {
                continue;
            }
            if !named.contains(path) {
                unlisted.push(path.to_path_buf());
            }
            if unlisted.len() >= MAX_UNLISTED_SHOWN {
                tracing::warn!(server = %self.key.server, "more than {MAX_UNLISTED_SHOWN} files outside {db}; the rest are not shown to it");
                break;
            }
        }
        let Some(running) = &self.running else { return };
        let (client, shared) = (running.client.clone(), running.shared.clone());
        for path in unlisted {
            self.reread(&path, false, &client, &shared, ctx);
        }
    }
}
