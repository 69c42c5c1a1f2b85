//! Starting the server: its arguments, the process and its client, the
//! `initialize` handshake, the backoff after a crash, and the deliberate
//! restart (`shutdown`, `exit`, then the same start); and what the
//! process's exit does (`Exited`, reported on as `ServerCrashed`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde_json::{Value, json};

use super::fallback::ImportFailed;
use super::{
    BACKOFF_MAX, BACKOFF_START, EXIT_TIMEOUT, INITIALIZE_TIMEOUT, LspError, LspServerActor, Running,
    SHUTDOWN_TIMEOUT, STABLE_AFTER, ServerKey, State,
};
use crate::lsp::shared::ServerState;
use crate::process::{self, ExitInfo, KillGuard};
use crate::wire::client::Client;

/// How many directories of its own a server's cache may take for one
/// root, one for each tether run serving that root at once.
const MAX_CACHES_PER_ROOT: usize = 16;
/// The file naming the process whose server uses a cache directory.
const CACHE_LOCK: &str = ".tether-owner";

/// A server's arguments with `{cache}` read as a directory of its own for
/// this root (jdtls's Eclipse workspace: two roots must not share one),
/// or `workspace` when given (the unmanaged project's).
fn expand_args(args: &[String], server: &str, root: &Path, workspace: Option<&Path>) -> Vec<String> {
    if !args.iter().any(|a| a.contains("{cache}")) {
        return args.to_vec();
    }
    let cache = workspace
        .map_or_else(|| exclusive_cache(&crate::tools_prefix::cache_for(server, root)), Path::to_path_buf);
    if let Err(e) = std::fs::create_dir_all(&cache) {
        tracing::warn!("cannot create {}: {e}", cache.display());
    }
    let cache = cache.display().to_string();
    args.iter().map(|a| a.replace("{cache}", &cache)).collect()
}

/// `base`, or `base-2`, `base-3`…: the first no other live process uses,
/// marked as this process's. Two tether runs on one root (a `serve
/// --http` beside a stdio run) each get their own: jdtls's Eclipse
/// workspace, shared by two live servers, loses its projects ("Project …
/// is not open", "Failed to save JDT index") — found by the hunt.
fn exclusive_cache(base: &Path) -> std::path::PathBuf {
    let me = std::process::id();
    for n in 1..=MAX_CACHES_PER_ROOT {
        let dir = if n == 1 {
            base.to_path_buf()
        } else {
            base.with_file_name(format!("{}-{n}", base.file_name().unwrap_or_default().to_string_lossy()))
        };
        let lock = dir.join(CACHE_LOCK);
        let owner: Option<u32> = std::fs::read_to_string(&lock).ok().and_then(|t| t.trim().parse().ok());
        let taken = owner.is_some_and(|pid| {
            // SAFETY: kill(2) with signal 0 only asks whether the process exists.
            pid != me && unsafe { libc::kill(pid as i32, 0) } == 0
        });
        if taken {
            continue;
        }
        if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&lock, me.to_string()).is_ok() {
            return dir;
        }
    }
    base.to_path_buf()
}

impl LspServerActor {
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
    fn spawn(&mut self, ctx: &mut Context<Self>) -> Result<(Client, Arc<ServerState>, KillGuard), LspError> {
        self.generation += 1;
        let generation = self.generation;
        let me = ctx.address();
        let config = &self.usable.config;
        let name = self.name();
        // The exit report reaches the waiters straight from the process
        // monitor — not through the mailbox, which an `initialize` in
        // flight may hold — so they learn the status and stderr, not "EOF".
        let slot: Arc<std::sync::OnceLock<(Client, Arc<ServerState>)>> = Arc::default();
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
        let shared =
            Arc::new(ServerState::with_checker(config.settings.clone(), config.check_progress.clone()));
        shared.formats_under(&self.key.root);
        let client = Client::connect(&self.name(), spawned.stdout, spawned.stdin, shared.clone());
        let _ = slot.set((client.clone(), shared.clone()));
        if config.indexes_at_start {
            shared.awaits_first_index(config.indexed_logs.clone());
        }
        shared.on_partial_logs(config.partial_logs.clone());
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
            // Edits are played on a copy and written all or nothing.
            "workspaceEdit": {"documentChanges": true, "resourceOperations": ["create", "rename", "delete"], "failureHandling": "transactional"},
            "applyEdit": true,
            "executeCommand": {"dynamicRegistration": false},
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
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite", "source", "source.organizeImports", "source.fixAll"]}},
                "isPreferredSupport": true,
                "disabledSupport": true,
                "dataSupport": true,
                "resolveSupport": {"properties": ["edit", "command"]},
            },
            "formatting": {"dynamicRegistration": false},
            "rangeFormatting": {"dynamicRegistration": false},
            "rename": {"prepareSupport": false},
        },
    })
}

/// Starts the server if it is not running: room in the run's budget, then
/// spawn, `initialize`, `initialized`, settings. Runs inside the actor's
/// atomic `Open`.
pub(super) fn ensure_running(
    act: &mut LspServerActor,
    _ctx: &mut Context<LspServerActor>,
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
                ensure_running(act, ctx)
            },
        ));
    }
    // Room in the run's budget first: idle servers may be stopped for it.
    Box::pin(act.room_to_start().then(
        |room, act, ctx| -> ResponseActFuture<LspServerActor, Result<(), LspError>> {
            match room {
                Ok(()) => spawn_and_initialize(act, ctx),
                Err(e) => Box::pin(fut::ready(Err(e))),
            }
        },
    ))
}

/// The start itself: spawn, `initialize`, `initialized`, settings.
fn spawn_and_initialize(
    act: &mut LspServerActor,
    ctx: &mut Context<LspServerActor>,
) -> ResponseActFuture<LspServerActor, Result<(), LspError>> {
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
        if let Some(why) = act.stopped.take() {
            act.restarts += 1;
            act.restart_note = Some(format!("{why}; it was started again for this call"));
        }
        act.docs.clear();
        act.state = State::Running;
        act.pids.lock().insert(act.key.clone(), guard.pid());
        act.running =
            Some(Running { client, guard, shared, started: Instant::now(), capabilities: Arc::new(caps) });
        act.schedule_import_check(0, ctx);
        act.introduce_unlisted(ctx);
        Ok(())
    }))
}

impl LspServerActor {
    /// Stops the server (`shutdown`, `exit`, then the kill) and starts it
    /// afresh; its documents are reopened as queries name them.
    pub(super) fn restart(&mut self) -> ResponseActFuture<Self, Result<(), LspError>> {
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
        Box::pin(stop.into_actor(self).then(|(), act, ctx| ensure_running(act, ctx)))
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    #[test]
    fn a_cache_another_live_process_holds_is_not_shared() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("jdtls-root");
        assert_eq!(exclusive_cache(&base), base, "free: taken");
        assert_eq!(exclusive_cache(&base), base, "this process's own: kept across restarts");
        // Process 1 lives as long as the machine does.
        std::fs::write(base.join(CACHE_LOCK), "1").unwrap();
        assert_eq!(exclusive_cache(&base), dir.path().join("jdtls-root-2"));
        // A dead owner's is taken over.
        std::fs::write(base.join(CACHE_LOCK), "4194303").unwrap();
        assert_eq!(exclusive_cache(&base), base);
    }
}

/// The process of generation `generation` exited.
pub struct Exited {
    pub(super) generation: u64,
    pub(super) info: ExitInfo,
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
