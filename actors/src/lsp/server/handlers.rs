//! The messages the actor answers — open, reload, stop — their handlers,
//! and the session an open hands back.

use std::path::PathBuf;
use std::time::Instant;

use actix::prelude::*;

use super::start::ensure_running;
use super::{LspError, LspServerActor, Opened, SyncedDoc};

/// Start (if needed) and sync `file` (if given); `save` also sends `didSave`.
pub struct Open {
    /// The file to bring up to date.
    pub file: Option<PathBuf>,
    /// Send `didSave` after syncing.
    pub save: bool,
}

impl Message for Open {
    type Result = Result<Opened, LspError>;
}

/// Send a file open in the server again as a new version, though it did
/// not change, so that the server checks it anew (a file it depends on
/// was written); `None` when the file is not open in it.
pub struct Recheck {
    /// The file.
    pub file: PathBuf,
}

impl Message for Recheck {
    type Result = Result<Option<Opened>, LspError>;
}

/// Restart the server now.
pub struct Reload;

impl Message for Reload {
    type Result = Result<(), LspError>;
}

impl LspServerActor {
    fn session(&self, doc: Option<SyncedDoc>) -> Option<Opened> {
        let running = self.running.as_ref()?;
        Some(Opened {
            key: self.key.clone(),
            client: running.client.clone(),
            shared: running.shared.clone(),
            doc,
            capabilities: running.capabilities.clone(),
            phased_diagnostics: self.usable.config.phased_diagnostics,
            tsserver_requests: self.usable.config.tsserver_requests,
            workspace_symbols_types_only: self.usable.config.workspace_symbols_types_only,
            project_index_file: self.usable.config.project_index_file.clone(),
            omits_unresolved: self.usable.config.omits_unresolved,
            serves: self.serves.clone(),
            restarted: None,
            _hold: self.holds.hold(),
        })
    }
}

impl Handler<Open> for LspServerActor {
    type Result = AtomicResponse<Self, Result<Opened, LspError>>;

    fn handle(&mut self, msg: Open, ctx: &mut Self::Context) -> Self::Result {
        self.last_used = Instant::now();
        let started = ensure_running(self, ctx);
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
            let mut session = act
                .session(doc)
                .ok_or_else(|| LspError::Request(format!("{} is not running", act.name())))?;
            session.restarted = act.restart_note.take();
            Ok(session)
        })))
    }
}

impl Handler<Recheck> for LspServerActor {
    type Result = Result<Option<Opened>, LspError>;

    fn handle(&mut self, msg: Recheck, _ctx: &mut Self::Context) -> Self::Result {
        // A server not running has nothing open to check again.
        let Some(running) = &self.running else { return Ok(None) };
        let (client, shared) = (running.client.clone(), running.shared.clone());
        let Some(doc) = self.recheck(&msg.file, &client, &shared)? else { return Ok(None) };
        Ok(self.session(Some(doc)))
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

/// Stop the actor (and with it the server process).
pub struct Shutdown;

impl Message for Shutdown {
    type Result = ();
}

impl Handler<Shutdown> for LspServerActor {
    type Result = ();

    fn handle(&mut self, _msg: Shutdown, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
