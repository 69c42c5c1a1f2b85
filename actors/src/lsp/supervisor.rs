//! `LspSupervisor`: maps a file to its server (language → candidates in
//! table order → nearest root marker ∩ resolvable binary), keeps one
//! [`LspServerActor`] per (server, root), started lazily, and answers
//! `status` with, for every language, what runs and — for what cannot —
//! which half of the intersection failed.
//!
//! It also owns the run's file [`Watcher`], started by the first
//! [`SyncDisk`] (every query's first step): each batch of changes on disk
//! comes here as [`FilesChanged`] and goes on to every server actor. The
//! watcher answers a sync point only after handing over the batch, and
//! this mailbox is first in, first out, so the batch reaches a server's
//! mailbox before the query that asked for the sync point does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;

use super::census;
use super::config::{self, ServerConfig, Table};
use super::discovery::{self, Unusable, Usable};
use super::limits::{self, Limits};
use super::server::{
    FilesChanged, LspServerActor, MakeRoom, Reload, ServerCrashed, ServerKey, ServerPids, Shutdown, Stop,
    Usage,
};
use crate::describe::{ActorNode, Describe, describe_or_busy};
use crate::watch::{Change, Synced, WatchStatus, Watcher};

/// Why no server can answer for a file (the tools word it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// The file's extension names no language tether knows: the
    /// extension (`.xyz`), or the file when it has none.
    NoLanguage(String),
    /// No table entry serves the language.
    NotConfigured(String),
    /// Entries exist, but none is usable here.
    NotUsable {
        /// The language.
        language: String,
        /// The file, relative.
        file: String,
        /// One reason per candidate.
        reasons: Vec<Unusable>,
    },
    /// `tether.toml` is broken: its reader's error.
    BadConfig(String),
}

/// A file's server.
#[derive(Clone)]
pub struct Routed {
    /// Which instance.
    pub key: ServerKey,
    /// Its actor.
    pub addr: Addr<LspServerActor>,
    /// The file's language.
    pub language: String,
}

/// Which server answers for `file`; starts its actor (not its process) if new.
pub struct Route {
    /// An absolute path inside the working directory.
    pub file: PathBuf,
}

impl Message for Route {
    type Result = Result<Routed, Unavailable>;
}

/// The helper server of `file`'s language that offers `feature`
/// ([`crate::lsp::config::FEATURE_CODE_ACTIONS`], …), when one is
/// configured and usable here; starts its actor if new. `None`: none is
/// (the main server then does what it can).
pub struct RouteHelper {
    /// An absolute path inside the working directory.
    pub file: PathBuf,
    /// The feature asked for.
    pub feature: &'static str,
}

impl Message for RouteHelper {
    type Result = Option<Routed>;
}

impl Handler<RouteHelper> for LspSupervisor {
    type Result = Option<Routed>;

    fn handle(&mut self, msg: RouteHelper, ctx: &mut Self::Context) -> Self::Result {
        let table = self.table.clone().ok()?;
        let language = table.language_of(&msg.file)?.id.clone();
        let helpers = table.helpers(&language, msg.feature);
        if helpers.is_empty() {
            return None;
        }
        let usable = discovery::choose_cached(
            &helpers,
            &table.languages,
            &msg.file,
            &self.workdir,
            &mut self.binaries,
        )
        .ok()?;
        let (key, addr) = self.actor_for(usable, ctx);
        Some(Routed { key, addr, language })
    }
}

/// The working directory's language and server tables, as this
/// supervisor routes by them (or why `tether.toml` could not be read).
pub struct Tables;

impl Message for Tables {
    type Result = Result<Arc<Table>, String>;
}

impl Handler<Tables> for LspSupervisor {
    type Result = Result<Arc<Table>, String>;

    fn handle(&mut self, _msg: Tables, _ctx: &mut Self::Context) -> Self::Result {
        self.table.clone()
    }
}

/// Every running server actor.
pub struct Running;

impl Message for Running {
    type Result = Vec<(ServerKey, Addr<LspServerActor>)>;
}

/// Restart the server for `file`, or every server if `None`.
pub struct ReloadFor {
    /// The file whose server to restart.
    pub file: Option<PathBuf>,
}

impl Message for ReloadFor {
    type Result = Result<Vec<String>, ReloadFailed>;
}

/// Makes sure every change on disk made before it was sent has reached
/// the servers (starting the watcher on first use).
pub struct SyncDisk;

impl Message for SyncDisk {
    type Result = Synced;
}

/// The files changed between two sync points (`None`: no longer known).
pub struct ChangedBetween {
    /// The earlier sync point's batch number.
    pub after: u64,
    /// The later one's.
    pub upto: u64,
}

impl Message for ChangedBetween {
    type Result = Option<Vec<Change>>;
}

/// The files changed in batches delivered at or after a moment, up to a
/// sync point (see [`crate::watch::WatchHandle::changed_since_time`]).
pub struct ChangedSinceTime {
    /// The moment.
    pub since: std::time::SystemTime,
    /// The sync point's batch number.
    pub upto: u64,
}

impl Message for ChangedSinceTime {
    type Result = Vec<Change>;
}

/// Ask for the per-language status.
pub struct Status;

impl Message for Status {
    type Result = StatusReport;
}

/// One language's status.
#[derive(Debug, Clone, Serialize)]
pub struct LanguageStatus {
    /// The language.
    pub language: String,
    /// Its files in the working directory (a floor when `capped`).
    pub files: usize,
    /// Server instances of this language, as the tree describes them.
    pub running: Vec<ActorNode>,
    /// Each candidate, main servers first, then helpers: whether it can
    /// start here and why not (the tool words them into the data).
    #[serde(skip)]
    pub candidates: Vec<Candidate>,
    /// Whether some server can serve this language here.
    pub usable: bool,
}

/// Every language's status.
#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    /// Problems with `tether.toml`, if any.
    pub config_error: Option<String>,
    /// How the working directory is watched (`None`: not yet, it starts
    /// with the first query).
    pub watch: Option<WatchStatus>,
    /// Per language the working directory holds, in table order.
    pub languages: Vec<LanguageStatus>,
    /// Languages servers are configured for, with no file here (empty
    /// when `capped`: then it is not known).
    pub absent: Vec<String>,
    /// Whether the count of files stopped at `census::MAX_FILES_WALKED`.
    pub capped: bool,
    /// The servers' memory budget and idle limit.
    pub limits: Limits,
    /// The resident memory the running servers hold together, in bytes.
    pub memory_held: u64,
}

/// The supervisor actor.
pub struct LspSupervisor {
    workdir: PathBuf,
    /// Shared with every caller that asks for it ([`Tables`]): cloned per
    /// route, so an `Arc`.
    table: Result<Arc<Table>, String>,
    /// Resolved binaries by server id: PATH lookups cost a dozen `stat`s,
    /// and a server's binary does not move during a run.
    binaries: std::collections::HashMap<String, PathBuf>,
    servers: BTreeMap<ServerKey, Addr<LspServerActor>>,
    crashes: u64,
    started: Instant,
    watcher: Option<Watcher>,
    pids: ServerPids,
    /// The servers' memory budget and idle limit (`[lsp]` of
    /// `tether.toml`; the defaults when it is not valid, which `table`
    /// reports).
    limits: Limits,
    /// Whether servers are being stopped for the budget now.
    stopping: bool,
}

/// How long a server may take to say what it holds.
const USAGE_WAIT: Duration = Duration::from_secs(2);
/// How long stopping one server may take: its `shutdown`, its `exit`.
const STOP_WAIT: Duration = Duration::from_secs(5);

impl LspSupervisor {
    /// A supervisor for `workdir` (canonical), reading its `tether.toml`.
    pub fn new(workdir: PathBuf) -> Self {
        let table = config::load(&workdir).map(Arc::new);
        let limits = limits::load(&workdir).unwrap_or_default();
        Self {
            limits,
            stopping: false,
            workdir,
            table,
            binaries: std::collections::HashMap::new(),
            servers: BTreeMap::new(),
            crashes: 0,
            started: Instant::now(),
            watcher: None,
            pids: ServerPids::default(),
        }
    }

    /// The resident memory of every running server's process group, together.
    pub fn memory_held(&self) -> u64 {
        let pgids: Vec<u32> = self.pids.lock().values().copied().collect();
        crate::process::groups_rss(&pgids).into_iter().sum()
    }

    /// The running servers' pids, kept current by the server actors.
    pub fn server_pids(&self) -> ServerPids {
        self.pids.clone()
    }

    /// The watcher, started on first use. Batches come back to this
    /// actor through a weak address, so the watcher does not keep it alive.
    fn watcher(&mut self, ctx: &mut Context<Self>) -> &Watcher {
        if self.watcher.is_none() {
            let preference = match config::watch_preference(&self.workdir) {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!("{e}; watching for events");
                    Default::default()
                }
            };
            let me = ctx.address().downgrade();
            let deliver: crate::watch::Deliver = std::sync::Arc::new(move |batch| {
                if let Some(me) = me.upgrade() {
                    me.do_send(FilesChanged(batch));
                }
            });
            self.watcher = Some(Watcher::start(self.workdir.clone(), preference, deliver));
        }
        self.watcher.as_ref().expect("just started")
    }

    fn actor_for(&mut self, usable: Usable, ctx: &mut Context<Self>) -> (ServerKey, Addr<LspServerActor>) {
        let key = ServerKey { server: usable.config.id.clone(), root: usable.root.clone() };
        if let Some(addr) = self.servers.get(&key).filter(|a| a.connected()) {
            return (key, addr.clone());
        }
        let workdir = self.workdir.clone();
        let me = ctx.address().recipient::<ServerCrashed>();
        let pids = self.pids.clone();
        let room = ctx.address().recipient::<MakeRoom>();
        let idle_limit = self.limits.idle_limit;
        let addr = LspServerActor::create(move |_| {
            LspServerActor::new(usable, workdir, Some(me), Some(room), idle_limit, pids)
        });
        self.servers.insert(key.clone(), addr.clone());
        (key, addr)
    }
}

/// One candidate server of a language, as probed here: the roots its
/// markers give the language's files, and its program.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its id.
    pub id: String,
    /// The features it alone is asked for, for a helper (empty for a
    /// main server).
    pub only_for: Vec<String>,
    /// The language probed.
    pub language: String,
    /// Its root markers.
    pub markers: Vec<String>,
    /// The roots found, relative to the working directory.
    pub roots: Vec<String>,
    /// Its program, or why none was found.
    pub binary: Result<PathBuf, Unusable>,
}

impl Candidate {
    /// Whether it can start here: a root and its program.
    pub fn usable(&self) -> bool {
        self.binary.is_ok() && !self.roots.is_empty()
    }
}

/// `config` probed for `present`'s files.
fn candidate(workdir: &Path, config: &ServerConfig, present: &census::Present) -> Candidate {
    let mut roots: Vec<PathBuf> = present
        .samples
        .iter()
        .filter_map(|file| discovery::find_root(file, workdir, &config.root_markers))
        .collect();
    roots.sort();
    roots.dedup();
    let binary = discovery::resolve_binary(&config.command, workdir, workdir)
        .map_err(|tried| discovery::why_not_binary(config, &tried));
    Candidate {
        id: config.id.clone(),
        only_for: config.only_features.clone(),
        language: present.id.clone(),
        markers: config.root_markers.clone(),
        roots: roots.iter().map(|r| crate::fs::relative(workdir, r)).collect(),
        binary,
    }
}

impl Actor for LspSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(limits::BUDGET_CHECK_EVERY, |act, ctx| {
            if act.stopping || act.pids.lock().is_empty() {
                return;
            }
            let held = act.memory_held();
            if held <= act.limits.memory_budget {
                return;
            }
            let why = format!(
                "because the run's language servers held {}, over its {} budget, and it was the least recently used",
                limits::size(held),
                limits::size(act.limits.memory_budget)
            );
            ctx.spawn(act.stop_for_budget(0, None, why).map(|_, _, _| ()));
        });
    }
}

impl LspSupervisor {
    /// Stops the least recently used idle servers (never `except`) until
    /// the rest, with `need` more bytes, fit the budget; `why` is said to
    /// the call that starts each again. One such round at a time.
    fn stop_for_budget(
        &mut self,
        need: u64,
        except: Option<ServerKey>,
        why: String,
    ) -> ResponseActFuture<Self, ()> {
        if self.stopping {
            return Box::pin(fut::ready(()));
        }
        self.stopping = true;
        // The server asking for room waits for the answer: it is not asked.
        let servers: Vec<Addr<LspServerActor>> = self
            .servers
            .iter()
            .filter(|(key, _)| Some(*key) != except.as_ref())
            .map(|(_, addr)| addr.clone())
            .collect();
        let budget = self.limits.memory_budget;
        let work = async move {
            let mut usage = Vec::new();
            for addr in &servers {
                // A server busy starting answers after its start: not waited for.
                if let Ok(Ok(Some(report))) = tokio::time::timeout(USAGE_WAIT, addr.send(Usage)).await {
                    usage.push((report, addr.clone()));
                }
            }
            let reports: Vec<_> = usage.iter().map(|(r, _)| r.clone()).collect();
            let chosen: Vec<ServerKey> = limits::to_stop(&reports, need, budget, except.as_ref())
                .into_iter()
                .map(|u| u.key.clone())
                .collect();
            for (report, addr) in usage.into_iter().filter(|(r, _)| chosen.contains(&r.key)) {
                let idle = report.last_used.elapsed();
                let said =
                    format!("{why} (idle for {})", limits::minutes(Duration::from_secs(idle.as_secs())));
                let _ = tokio::time::timeout(STOP_WAIT, addr.send(Stop { why: said })).await;
            }
        };
        Box::pin(work.into_actor(self).map(|(), act, _| act.stopping = false))
    }
}

impl Handler<MakeRoom> for LspSupervisor {
    type Result = ResponseActFuture<Self, Result<(), String>>;

    fn handle(&mut self, msg: MakeRoom, _ctx: &mut Self::Context) -> Self::Result {
        if let Some(refused) = self.limits.refuses(&msg.key.server, msg.start) {
            return Box::pin(fut::ready(Err(refused)));
        }
        let held = self.memory_held();
        if held + msg.size <= self.limits.memory_budget {
            return Box::pin(fut::ready(Ok(())));
        }
        let why = format!(
            "to make room for {} (about {}) in the run's {} budget, which its language servers held {} of, as the least recently used",
            msg.key.server,
            limits::size(msg.size),
            limits::size(self.limits.memory_budget),
            limits::size(held)
        );
        Box::pin(self.stop_for_budget(msg.size, Some(msg.key), why).map(|(), _, _| Ok(())))
    }
}

impl Handler<Route> for LspSupervisor {
    type Result = Result<Routed, Unavailable>;

    fn handle(&mut self, msg: Route, ctx: &mut Self::Context) -> Self::Result {
        let table = self.table.clone().map_err(Unavailable::BadConfig)?;
        let rel = crate::fs::relative(&self.workdir, &msg.file);
        let Some(language) = table.language_of(&msg.file).map(|l| l.id.clone()) else {
            let ext = msg.file.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or(rel);
            return Err(Unavailable::NoLanguage(ext));
        };
        let candidates = table.candidates(&language);
        if candidates.is_empty() {
            return Err(Unavailable::NotConfigured(language));
        }
        let usable = discovery::choose_cached(
            &candidates,
            &table.languages,
            &msg.file,
            &self.workdir,
            &mut self.binaries,
        )
        .map_err(|reasons| Unavailable::NotUsable {
            language: language.clone(),
            file: rel,
            reasons,
        })?;
        let (key, addr) = self.actor_for(usable, ctx);
        Ok(Routed { key, addr, language })
    }
}

/// Stop every server and the supervisor (and its watcher).
pub struct StopAll;

impl Message for StopAll {
    type Result = ();
}

impl Handler<StopAll> for LspSupervisor {
    type Result = ();

    fn handle(&mut self, _msg: StopAll, ctx: &mut Self::Context) {
        for addr in self.servers.values() {
            addr.do_send(Shutdown);
        }
        self.watcher = None;
        ctx.stop();
    }
}

impl Handler<SyncDisk> for LspSupervisor {
    type Result = ResponseFuture<Synced>;

    fn handle(&mut self, _msg: SyncDisk, ctx: &mut Self::Context) -> Self::Result {
        let handle = self.watcher(ctx).handle();
        Box::pin(async move { handle.sync().await })
    }
}

impl Handler<FilesChanged> for LspSupervisor {
    type Result = ();

    fn handle(&mut self, msg: FilesChanged, _ctx: &mut Self::Context) {
        for addr in self.servers.values() {
            addr.do_send(FilesChanged(msg.0.clone()));
        }
    }
}

impl Handler<ChangedBetween> for LspSupervisor {
    type Result = Option<Vec<Change>>;

    fn handle(&mut self, msg: ChangedBetween, _ctx: &mut Self::Context) -> Self::Result {
        self.watcher.as_ref()?.handle().changed_between(msg.after, msg.upto)
    }
}

impl Handler<ChangedSinceTime> for LspSupervisor {
    type Result = MessageResult<ChangedSinceTime>;

    fn handle(&mut self, msg: ChangedSinceTime, _ctx: &mut Self::Context) -> Self::Result {
        MessageResult(
            self.watcher
                .as_ref()
                .map(|w| w.handle().changed_since_time(msg.since, msg.upto))
                .unwrap_or_default(),
        )
    }
}

impl Handler<Running> for LspSupervisor {
    type Result = MessageResult<Running>;

    fn handle(&mut self, _msg: Running, _ctx: &mut Self::Context) -> Self::Result {
        MessageResult(self.servers.iter().map(|(k, a)| (k.clone(), a.clone())).collect())
    }
}

/// Why `lsp reload` did not reload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadFailed {
    /// The file asked for has no server here.
    Unavailable(Unavailable),
    /// A server did not reload: which (`id (root)`), and the error.
    Server { name: String, error: String },
}

impl Handler<ReloadFor> for LspSupervisor {
    type Result = ResponseFuture<Result<Vec<String>, ReloadFailed>>;

    fn handle(&mut self, msg: ReloadFor, ctx: &mut Self::Context) -> Self::Result {
        let targets: Vec<(ServerKey, Addr<LspServerActor>)> = match msg.file {
            Some(file) => match <Self as Handler<Route>>::handle(self, Route { file }, ctx) {
                Ok(routed) => vec![(routed.key, routed.addr)],
                Err(e) => return Box::pin(std::future::ready(Err(ReloadFailed::Unavailable(e)))),
            },
            None => self.servers.iter().map(|(k, a)| (k.clone(), a.clone())).collect(),
        };
        let workdir = self.workdir.clone();
        Box::pin(async move {
            let mut done = Vec::new();
            for (key, addr) in targets {
                let name = format!("{} ({})", key.server, crate::fs::relative(&workdir, &key.root));
                match addr.send(Reload).await {
                    Ok(Ok(())) => done.push(name),
                    Ok(Err(e)) => return Err(ReloadFailed::Server { name, error: e.to_string() }),
                    Err(e) => return Err(ReloadFailed::Server { name, error: e.to_string() }),
                }
            }
            Ok(done)
        })
    }
}

impl Handler<ServerCrashed> for LspSupervisor {
    type Result = ();

    fn handle(&mut self, msg: ServerCrashed, _ctx: &mut Self::Context) {
        self.crashes += 1;
        tracing::info!(server = %msg.key.server, root = %msg.key.root.display(), "server crashed; restarts on next use: {}", msg.info.status);
    }
}

impl Handler<Status> for LspSupervisor {
    type Result = ResponseFuture<StatusReport>;

    fn handle(&mut self, _msg: Status, _ctx: &mut Self::Context) -> Self::Result {
        let (table, config_error) = match &self.table {
            Ok(t) => (t.clone(), None),
            Err(e) => (Arc::new(Table::default()), Some(e.clone())),
        };
        let running: Vec<(ServerKey, Addr<LspServerActor>)> =
            self.servers.iter().map(|(k, a)| (k.clone(), a.clone())).collect();
        let workdir = self.workdir.clone();
        let watch = self.watcher.as_ref().map(|w| w.handle().status());
        let limits = self.limits.clone();
        let memory_held = self.memory_held();
        Box::pin(async move {
            // The walk and the PATH probes are blocking work: off the
            // actor thread, which the router shares.
            let probe_table = table.clone();
            let (in_tree, probed) = tokio::task::spawn_blocking(move || {
                let in_tree = census::scan(&workdir, &probe_table.languages);
                let probed: Vec<(Vec<Candidate>, Vec<Candidate>)> = in_tree
                    .languages
                    .iter()
                    .map(|present| {
                        let main = probe_table
                            .candidates(&present.id)
                            .into_iter()
                            .map(|c| Candidate { only_for: Vec::new(), ..candidate(&workdir, c, present) })
                            .collect();
                        let helpers = probe_table
                            .all_helpers(&present.id)
                            .into_iter()
                            .map(|h| candidate(&workdir, h, present))
                            .collect();
                        (main, helpers)
                    })
                    .collect();
                (in_tree, probed)
            })
            .await
            .unwrap_or_default();
            // A server running for a file the walk did not count (a hidden
            // directory's, past the cap) still has its row.
            let mut in_tree = in_tree;
            let mut probed = probed;
            for (key, _) in &running {
                let Some(server) = table.servers.iter().find(|s| s.id == key.server) else { continue };
                // Only when none of its languages has a row: a TypeScript
                // project's server is not a JavaScript row of 0 files.
                if let Some(language) = server.languages.first()
                    && !server.languages.iter().any(|l| in_tree.get(l).is_some())
                {
                    in_tree.languages.push(census::Present {
                        id: language.clone(),
                        files: 0,
                        samples: Vec::new(),
                    });
                    probed.push((Vec::new(), Vec::new()));
                }
            }
            let mut languages = Vec::new();
            for (present, (statuses, helpers)) in in_tree.languages.iter().zip(probed) {
                let mut nodes = Vec::new();
                for (key, addr) in &running {
                    let serves =
                        table.servers.iter().any(|s| s.id == key.server && s.languages.contains(&present.id));
                    if serves {
                        nodes.push(describe_or_busy(&addr.clone().recipient(), "lsp-server").await);
                    }
                }
                let live = nodes.iter().any(|n| !n.state.starts_with("crashed"));
                // Helpers do not make a language usable: they answer no navigation.
                let usable = statuses.iter().any(Candidate::usable) || live;
                let candidates = statuses.into_iter().chain(helpers).collect();
                languages.push(LanguageStatus {
                    language: present.id.clone(),
                    files: present.files,
                    running: nodes,
                    candidates,
                    usable,
                });
            }
            // Past the cap, "no file here" is not known.
            let absent = if in_tree.capped {
                Vec::new()
            } else {
                table
                    .languages
                    .ids()
                    .into_iter()
                    .filter(|id| in_tree.get(id).is_none() && !table.candidates(id).is_empty())
                    .map(str::to_string)
                    .collect()
            };
            StatusReport {
                config_error,
                watch,
                languages,
                absent,
                capped: in_tree.capped,
                limits,
                memory_held,
            }
        })
    }
}

impl Handler<Describe> for LspSupervisor {
    type Result = ResponseFuture<ActorNode>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let mut node = ActorNode::new(
            "lsp-supervisor",
            &crate::fs::relative(&self.workdir, &self.workdir),
            if self.table.is_ok() { "ready" } else { "config error" },
            self.started.elapsed().as_millis() as u64,
            0,
        )
        .with_detail("crashes", self.crashes)
        .with_detail("memory_held_bytes", self.memory_held())
        .with_detail("memory_budget_bytes", self.limits.memory_budget);
        if let Some(limit) = self.limits.idle_limit {
            node = node.with_detail("idle_limit_ms", limit.as_millis() as u64);
        }
        if let Some(w) = &self.watcher {
            let status = w.handle().status();
            node = node
                .with_detail("file_watching", status.mode)
                .with_detail("watched_directories", status.directories)
                .with_detail("changes_delivered", status.changes);
        }
        let servers: Vec<Addr<LspServerActor>> = self.servers.values().cloned().collect();
        Box::pin(async move {
            for addr in servers {
                node.children.push(describe_or_busy(&addr.recipient(), "lsp-server").await);
            }
            node
        })
    }
}
