//! `lsp`: language-server queries (S3), level read, parallel-safe.
//!
//! Every navigation action takes `file`, `line` and `symbol` (never a
//! column). Every action first makes sure each change on disk made before
//! the call arrived has reached the servers (a sync point with the run's
//! file watcher), syncs the file to its server, waits (bounded) for the
//! server to finish indexing and re-reading changed files, and says so
//! when it answered before it had — and why whenever an answer is empty.
//!
//! Here: the tool, and opening a file at its server and waiting for it;
//! `navigate` asks the navigation actions and `answers` renders them,
//! `hierarchy` follows call and type hierarchies, `body` reads the
//! source of what an answer names,
//! `changed_under` holds cross-file answers against changes made meanwhile,
//! `vanished` against files deleted or cut short before the server caught
//! up, `crosscheck` holds an answer against the text for servers that drop
//! what they cannot resolve, [`symbols`] and [`diagnostics`] their
//! actions ([`reach`]: what a write did to the files it did not write),
//! `project` what the tree holds and the project checkers,
//! `status` status and reload, [`rename`] `lsp_rename`, [`edit`]
//! `lsp_edit` (code actions and formatting, a language's helper server
//! asked beside its main one).

mod answers;
mod body;
mod changed_under;
mod crosscheck;
pub mod diagnostics;
pub mod edit;
mod hierarchy;
mod navigate;
pub(crate) mod outline;
pub mod position;
mod project;
pub mod reach;
pub mod rename;
pub mod render;
mod status;
pub mod symbols;
mod vanished;

pub(crate) use status::RESOURCES_HINT;

use std::path::{Path, PathBuf};
use std::time::Duration;

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use tether_actors::lsp::server::{Open, Opened};
use tether_actors::lsp::supervisor::{LspSupervisor, Route, RouteHelper, SyncDisk};
use tether_actors::watch::Synced;

use crate::args::{confined, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};
pub use body::{MAX_BODIES, MAX_BODY_LINES};
pub use changed_under::HALF_WRITTEN_WINDOW;
pub use hierarchy::{Direction, MAX_CALL_SITES, MAX_HIERARCHY_ITEMS};
use navigate::{Question, navigate};
use position::{SymbolAt, locate};
use project::{languages_here, project_check};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "lsp";

/// How long a query may take once the server is ready.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How many times a question is asked anew because tether replaced its
/// server meanwhile (a restart to take in a checkout, or to serve a build
/// it could not import).
pub const MAX_SUPERSEDED: usize = 2;
/// How long a query waits for the server to finish indexing before asking anyway.
pub const READY_WAIT: Duration = Duration::from_secs(20);
/// How long starting a server and syncing a file may take.
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest one call of the LSP tools can take: every bounded wait it
/// may make, added up — starting the server and taking the file in, the
/// three waits for it to be ready (loaded, done indexing, changed files
/// re-read), the request with its "content modified" retries — for the
/// question and each time it is asked anew (tether replaced the server, or
/// a file changed under a `references` answer), then a write's diagnostics
/// before and after. A host or a test that bounds a call bounds it by
/// this, never by less: a cold machine may use every one of these waits.
pub const CALL_BOUND: Duration = Duration::from_secs(
    (OPEN_TIMEOUT.as_secs()
        + 3 * READY_WAIT.as_secs()
        + REQUEST_TIMEOUT.as_secs()
        + tether_actors::lsp::opened::CONTENT_MODIFIED_RETRY.as_secs())
        * (1 + MAX_SUPERSEDED as u64 + changed_under::MAX_REASKS as u64)
        + diagnostics::BASELINE_WAIT.as_secs()
        + diagnostics::AFTER_WRITE_WAIT.as_secs(),
);
/// A file modified this recently, whose line is not where a call says, may
/// be in the middle of being written (truncated, not yet refilled): it is
/// read again until it holds still.
pub const MID_WRITE_RECENT: Duration = Duration::from_secs(2);
/// How long a file must hold still to be taken as written.
pub const MID_WRITE_STILL: Duration = Duration::from_millis(100);
/// The longest wait for a file being written to hold still.
pub const MID_WRITE_WAIT: Duration = Duration::from_secs(1);
/// How many times a call whose symbol was not where it said takes the
/// file in again, when it was being written.
const MID_WRITE_RETRIES: usize = 2;
/// References, or a project check's diagnostics, per page unless the
/// caller gives `limit`.
pub const REFERENCES_PAGE: usize = 50;
/// Most references, or a project check's diagnostics, one answer may list
/// (`limit`).
pub const MAX_REFERENCES_PAGE: usize = 1_000;
/// The `file` of `diagnostics` that runs the project's checkers.
const PROJECT: &str = "*";
/// Locations listed by definition, type_definition and implementation (the
/// rest counted): `implementation` of a common interface runs to thousands.
pub const MAX_LOCATIONS: usize = 200;
/// Hover text shown at most, in characters (the rest counted).
pub const MAX_HOVER_CHARS: usize = 8_000;
/// Code actions listed at most (the rest counted).
pub const MAX_CODE_ACTIONS: usize = 100;
/// Workspace symbols per page unless the caller gives `limit`.
pub const WORKSPACE_SYMBOLS_CAP: usize = 100;
/// Document symbols per page unless the caller gives `limit`.
pub const DOCUMENT_SYMBOLS_CAP: usize = 200;

/// What to ask the language server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Errors and warnings of `file`; `file: "*"` runs the project's checker.
    Diagnostics,
    /// Where the symbol is declared.
    Definition,
    /// Where its type is declared.
    TypeDefinition,
    /// Concrete implementations.
    Implementation,
    /// Every use, grouped by file (`limit` a page, default 50; `offset` pages on).
    References,
    /// Signature and doc comment.
    Hover,
    /// Workspace symbols matching `query`, or the symbols of `file`.
    Symbols,
    /// Quick fixes the server offers at the symbol.
    CodeActions,
    /// Who calls it (`direction` incoming, the default) or what it calls (outgoing).
    CallHierarchy,
    /// Its direct supertypes (`direction`, the default) or subtypes.
    TypeHierarchy,
    /// Which servers run, for which roots, and why others cannot.
    Status,
    /// Restart the server for `file` (or every server).
    Reload,
    /// This reference.
    Help,
}

/// Arguments of `lsp`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    pub action: Action,
    pub file: Option<String>,
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    pub symbol: Option<String>,
    pub occurrence: Option<usize>,
    pub direction: Option<Direction>,
    pub body: Option<bool>,
    pub query: Option<String>,
    pub offset: Option<usize>,
    pub limit: Option<usize>,
    pub language: Option<String>,
}

/// The `lsp` tool.
pub struct Lsp {
    /// The language-server supervisor.
    pub supervisor: Addr<LspSupervisor>,
}

fn needs(action: &str, field: &str, value: Option<String>) -> Result<String, ToolError> {
    value.filter(|v| !v.is_empty()).ok_or_else(|| {
        ToolError::new(format!(
            "lsp {action}: argument `{field}` is required; navigation takes file, line and symbol (the identifier as it appears on that line, never a column)"
        ))
    })
}

impl ToolHandler for Lsp {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Read,
            parallel_safe: true,
            description: "Ask the language server about `symbol` on `file`:`line`; symbols: query and/or file; diagnostics \"*\": the project.\n\nPositions are file + 1-based line + the symbol's text on that line. Arguments by action:\n- diagnostics: `file`, or `\"*\"` to run the project's checkers, once in each project root (`language`: which one; default every language present; nothing is written into the project): counts by severity and by file (with each file's first `offset`) first, then one page of the diagnostics grouped by file; `limit` per page (default 50, at most 1000), `offset` to page on.\n- definition, type_definition, implementation, references, hover, code_actions, call_hierarchy, type_hierarchy: `file`, `line`, `symbol` (a substring of the line; whole identifiers first). When it occurs more than once there the answer says which it used; `occurrence` (1-based) picks another.\n- references: `limit` per page (default 50, at most 1000), `offset` to page on; grouped by file.\n- call_hierarchy: `direction` incoming (who calls it; the default) or outgoing (what it calls), each with the lines of the calls; grouped by file, at most 200.\n- type_hierarchy: `direction` supertypes (the default) or subtypes, one level; grouped by file.\n- symbols: `query` (the workspace, `language` to pick one), `file` (that file's symbols), or both (that file's symbols whose names hold the query); `limit` per page (default 100 in the workspace, 200 in a file, at most 1000), `offset` to page on. Workspace symbols rank exact names first, then types, functions and methods, module-level names, and the parameters and locals of functions last. A dotted query, `Container.member` (`Session.request`, `pkg.http.Session.request`), keeps the members of that container — in the workspace by the container the server names and the module the file is, in a file by nesting — and when none is there says what the member alone matched, and where. A member is shown with its container before it (`Session.request`).\n- `body: true` (definition, type_definition, implementation, symbols, call_hierarchy, type_hierarchy): each found symbol's source too, its whole range, at most 100 lines a body and 5 bodies an answer, the cut said.\n- reload: `file` (its server) or nothing (every server).".into(),
            input_schema: schema_of::<LspArgs>(),
            // Named by every answer cut to a page ("pass offset=50 for more,
            // or a larger limit").
            unlisted: vec!["offset", "limit"],
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let args: LspArgs = parse("lsp", args)?;
        if args.line == Some(0) {
            return Err(ToolError::new("argument `line`: lines are 1-based; the first line is 1"));
        }
        check_applies(&args)?;
        let root = ctx.root().to_path_buf();
        let sup = self.supervisor.clone();
        let file = |name: &str, f: Option<String>| -> Result<PathBuf, ToolError> {
            let f = needs(name, "file", f)?;
            let path = confined(&root, "file", &f)?;
            if path.is_dir() {
                return Err(ToolError::new(format!(
                    "argument `file`: `{f}` is a directory; give a source file"
                )));
            }
            if !path.exists() {
                return Err(ToolError::new(format!(
                    "argument `file`: `{f}` does not exist; give a file relative to the working directory"
                )));
            }
            Ok(path)
        };
        let work: ToolFuture = match args.action {
            Action::Status => Box::pin(status::status(sup)),
            Action::Help => return Ok(crate::help::answer(&self.spec())),
            Action::Reload => {
                let path = match args.file {
                    Some(f) => Some(file("reload", Some(f))?),
                    None => None,
                };
                Box::pin(status::reload(sup, path))
            }
            Action::Diagnostics => {
                if args.file.as_deref() == Some(PROJECT) {
                    let page = Page { offset: args.offset.unwrap_or(0), limit: page_limit(args.limit)? };
                    Box::pin(project_check(sup, root.clone(), args.language, page))
                } else {
                    let path = file("diagnostics", args.file)?;
                    Box::pin(file_diagnostics(sup, root.clone(), path))
                }
            }
            Action::Symbols => {
                let body = args.body.unwrap_or(false);
                if args.query.as_deref().is_some_and(|q| q.trim().is_empty()) {
                    return Err(ToolError::new(
                        "lsp symbols: argument `query` is empty; give a name or part of one, or leave `query` out and give `file` to list that file's symbols",
                    ));
                }
                match (args.query, args.file) {
                    (Some(q), None) => {
                        let page = symbols_page(args.offset, args.limit, WORKSPACE_SYMBOLS_CAP)?;
                        Box::pin(symbols::workspace_symbols(sup, root.clone(), q, args.language, body, page))
                    }
                    (query, Some(f)) => {
                        let path = file("symbols", Some(f))?;
                        let page = symbols_page(args.offset, args.limit, DOCUMENT_SYMBOLS_CAP)?;
                        Box::pin(symbols::document_symbols(sup, root.clone(), path, query, body, page))
                    }
                    (None, None) => {
                        return Err(ToolError::new(
                            "lsp symbols: give `query` (search the workspace), `file` (that file's symbols), or both (that file's symbols matching the query)",
                        ));
                    }
                }
            }
            nav => {
                let name = action_name(nav);
                let path = file(name, args.file)?;
                let line = args.line.ok_or_else(|| {
                    ToolError::new(format!("lsp {name}: argument `line` is required (1-based)"))
                })?;
                let symbol = needs(name, "symbol", args.symbol)?;
                let page = Page { offset: args.offset.unwrap_or(0), limit: page_limit(args.limit)? };
                let occurrence = match args.occurrence {
                    Some(0) => {
                        return Err(ToolError::new(
                            "argument `occurrence`: occurrences are 1-based; the first on the line is 1",
                        ));
                    }
                    n => n,
                };
                let direction = hierarchy::direction(nav, args.direction)?;
                let body = args.body.unwrap_or(false);
                let spot = Spot { line, symbol, occurrence };
                Box::pin(navigate(
                    sup,
                    root.clone(),
                    path,
                    Question { action: nav, spot, page, direction, body },
                ))
            }
        };
        Ok(work)
    }
}

/// Every reference to `symbol` on 1-based `line` of `path`, declarations
/// included, as the `references` action answers it — asked again while
/// the server indexes or files change under it, cross-checked against the
/// text where the server leaves uses out, its notes appended — all on
/// one page ([`MAX_REFERENCES_PAGE`]).
pub(crate) async fn all_references(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    path: PathBuf,
    line: u32,
    symbol: String,
) -> ToolResult {
    let spot = Spot { line, symbol, occurrence: None };
    let page = Page { offset: 0, limit: MAX_REFERENCES_PAGE };
    navigate(
        sup,
        root,
        path,
        Question { action: Action::References, spot, page, direction: None, body: false },
    )
    .await
}

/// The symbol a call is about: `symbol` as written on 1-based `line`, its
/// `occurrence` there (1-based; the first when not given).
#[derive(Debug, Clone)]
pub(crate) struct Spot {
    pub line: u32,
    pub symbol: String,
    pub occurrence: Option<usize>,
}

/// Which actions each argument that only some take applies to: given
/// with another, it would be silently ignored.
fn check_applies(args: &LspArgs) -> Result<(), ToolError> {
    use Action as A;
    let name = action_name(args.action);
    let navigation = matches!(
        args.action,
        A::Definition
            | A::TypeDefinition
            | A::Implementation
            | A::References
            | A::Hover
            | A::CodeActions
            | A::CallHierarchy
            | A::TypeHierarchy
    );
    let refuse = |field: &str, takes: &str| {
        Err(ToolError::new(format!(
            "lsp {name}: argument `{field}` applies to {takes} only; leave it out here"
        )))
    };
    if args.occurrence.is_some() && !navigation {
        return refuse("occurrence", "the actions that take `line` and `symbol`");
    }
    let paged = matches!(args.action, A::References | A::Symbols)
        || (args.action == A::Diagnostics && args.file.as_deref() == Some(PROJECT));
    for (field, given) in [("offset", args.offset.is_some()), ("limit", args.limit.is_some())] {
        if given && !paged {
            return refuse(field, "references, symbols and diagnostics of `file: \"*\"`");
        }
    }
    if args.direction.is_some() && !matches!(args.action, A::CallHierarchy | A::TypeHierarchy) {
        return refuse("direction", "call_hierarchy and type_hierarchy");
    }
    let bodies = matches!(
        args.action,
        A::Definition
            | A::TypeDefinition
            | A::Implementation
            | A::Symbols
            | A::CallHierarchy
            | A::TypeHierarchy
    );
    if args.body.is_some() && !bodies {
        return refuse(
            "body",
            "definition, type_definition, implementation, symbols, call_hierarchy and type_hierarchy",
        );
    }
    Ok(())
}

/// Which references, or which of a project check's diagnostics, to list.
#[derive(Debug, Clone, Copy)]
struct Page {
    offset: usize,
    limit: usize,
}

impl Page {
    /// The rows of a list of `total` this page shows, and what its header
    /// says of them (nothing when the whole list fits on the first page);
    /// an error when `offset` is past the list.
    fn span(self, total: usize, what: &str) -> Result<(std::ops::Range<usize>, String), String> {
        let Page { offset, limit } = self;
        if offset > 0 && offset >= total {
            let fix =
                if total == 0 { "leave `offset` out".to_string() } else { format!("use 0 to {}", total - 1) };
            return Err(format!("`offset` {offset} is past the {total} {what}; {fix}"));
        }
        let end = (offset + limit).min(total);
        let header = if total > limit || offset > 0 {
            format!(" (showing {}–{end}; {limit} a page{})", offset + 1, render::more_hint(end, total, limit))
        } else {
            String::new()
        };
        Ok((offset..end, header))
    }
}

/// The page of a symbols list: `default` rows unless `limit` says.
fn symbols_page(offset: Option<usize>, limit: Option<usize>, default: usize) -> Result<Page, ToolError> {
    let limit = match limit {
        None => default,
        Some(_) => page_limit(limit)?,
    };
    Ok(Page { offset: offset.unwrap_or(0), limit })
}

fn page_limit(limit: Option<usize>) -> Result<usize, ToolError> {
    match limit {
        None => Ok(REFERENCES_PAGE),
        Some(n) if (1..=MAX_REFERENCES_PAGE).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::new(format!(
            "argument `limit`: {n} is out of range; give 1 to {MAX_REFERENCES_PAGE} (default {REFERENCES_PAGE})"
        ))),
    }
}

fn action_name(action: Action) -> &'static str {
    match action {
        Action::Diagnostics => "diagnostics",
        Action::Definition => "definition",
        Action::TypeDefinition => "type_definition",
        Action::Implementation => "implementation",
        Action::References => "references",
        Action::Hover => "hover",
        Action::Symbols => "symbols",
        Action::CodeActions => "code_actions",
        Action::CallHierarchy => "call_hierarchy",
        Action::TypeHierarchy => "type_hierarchy",
        Action::Status => "status",
        Action::Reload => "reload",
        Action::Help => "help",
    }
}

/// The source file argument `file` names: confined to `root`, and a file.
pub(crate) fn source_file(root: &Path, file: &str) -> Result<PathBuf, ToolError> {
    let path = confined(root, "file", file)?;
    if !path.is_file() {
        return Err(ToolError::new(format!("argument `file`: `{file}` is not a file; give a source file")));
    }
    Ok(path)
}

/// Every change on disk made before now has reached the servers.
pub(crate) async fn sync_disk(sup: &Addr<LspSupervisor>) -> Synced {
    sup.send(SyncDisk).await.unwrap_or_else(|e| Synced {
        seq: 0,
        note: Some(format!(
            "the file watcher could not be reached ({e}); changes made outside tether may be missing"
        )),
    })
}

/// Takes in what changed on disk, routes `path` to its server, starts it
/// and syncs the file.
pub(crate) async fn open(
    sup: &Addr<LspSupervisor>,
    path: &Path,
    save: bool,
) -> Result<(Opened, Synced), String> {
    let synced = sync_disk(sup).await;
    open_after(sup, path, save, synced).await
}

/// [`open`] after the sync point `synced` was taken: the route and the
/// open queue behind the changes it delivered, so the server has them.
pub(crate) async fn open_after(
    sup: &Addr<LspSupervisor>,
    path: &Path,
    save: bool,
    synced: Synced,
) -> Result<(Opened, Synced), String> {
    let routed = match sup.send(Route { file: path.to_path_buf() }).await {
        Ok(Ok(routed)) => routed,
        Ok(Err(e)) => return Err(format!("server unavailable: {}", crate::tools::unusable::unavailable(&e))),
        Err(e) => return Err(format!("the language-server supervisor is not running ({e})")),
    };
    open_routed(routed, path, save, synced).await
}

/// The helper server of `path`'s language for `feature`, opened on it
/// after `synced`: `None` when the language has none usable here.
pub(crate) async fn open_helper(
    sup: &Addr<LspSupervisor>,
    path: &Path,
    feature: &'static str,
    synced: Synced,
) -> Option<Result<(Opened, Synced), String>> {
    let routed = sup.send(RouteHelper { file: path.to_path_buf(), feature }).await.ok()??;
    Some(open_routed(routed, path, false, synced).await)
}

/// Opens `path` on the server `routed` names, bounded by [`OPEN_TIMEOUT`].
async fn open_routed(
    routed: tether_actors::lsp::supervisor::Routed,
    path: &Path,
    save: bool,
    synced: Synced,
) -> Result<(Opened, Synced), String> {
    let opened =
        tokio::time::timeout(OPEN_TIMEOUT, routed.addr.send(Open { file: Some(path.to_path_buf()), save }));
    match opened.await {
        Ok(Ok(Ok(session))) => Ok((session, synced)),
        Ok(Ok(Err(e))) => Err(format!("server unavailable: {e}")),
        Ok(Err(e)) => Err(format!("server unavailable: {e}")),
        Err(_) => Err(format!(
            "server unavailable: {} did not start within {} s",
            routed.key.server,
            OPEN_TIMEOUT.as_secs()
        )),
    }
}

/// [`open`], then the symbol on its line. A file caught in the middle of
/// being written by another program (truncated, not yet refilled) reads
/// short: when the symbol is not where the call says and the file on disk
/// no longer holds what was read, it is taken in again, once. `synced`:
/// a sync point already taken for this call, if any.
pub(crate) async fn open_at(
    sup: &Addr<LspSupervisor>,
    path: &Path,
    rel: &str,
    spot: &Spot,
    mut synced: Option<Synced>,
) -> Result<(Opened, Synced, tether_actors::lsp::server::SyncedDoc, SymbolAt), String> {
    let mut tries = 0;
    loop {
        tries += 1;
        let (session, synced) = match synced.take() {
            Some(synced) => open_after(sup, path, false, synced).await?,
            None => open(sup, path, false).await?,
        };
        let doc = session.doc.clone().expect("a file was synced");
        match locate(&doc.text, rel, spot.line, &spot.symbol, spot.occurrence) {
            Ok(at) => return Ok((session, synced, doc, at)),
            Err(e) => {
                let moved = held_still(path).await.is_some_and(|now| now != *doc.text);
                if !moved || tries > MID_WRITE_RETRIES {
                    return Err(e.0);
                }
            }
        }
    }
}

/// The file's content once it holds still: read again every
/// [`MID_WRITE_STILL`] while it changes, for at most [`MID_WRITE_WAIT`] —
/// only when it was modified within [`MID_WRITE_RECENT`]; otherwise as it is.
async fn held_still(path: &Path) -> Option<String> {
    let recent = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age < MID_WRITE_RECENT);
    let mut last = std::fs::read_to_string(path).ok();
    if !recent {
        return last;
    }
    let deadline = std::time::Instant::now() + MID_WRITE_WAIT;
    while std::time::Instant::now() < deadline {
        tokio::time::sleep(MID_WRITE_STILL).await;
        let now = std::fs::read_to_string(path).ok();
        if now == last {
            break;
        }
        last = now;
    }
    last
}

/// What a query found when it waited for its server: changed files not
/// yet re-read, whether the server had loaded the document at all.
#[derive(Debug, Default)]
pub(crate) struct Ready {
    /// Files changed on disk the server had still not re-read.
    pub unread: Vec<PathBuf>,
    /// The server had published nothing for the document since it was
    /// opened: it may not have loaded it, or the project behind it.
    pub unloaded: bool,
}

/// Waits, bounded, until the server is ready to answer about the session's
/// document: it has published for the document since it was opened (the
/// one signal every server gives that it has loaded the file and its
/// project — awaited by every caller, whoever opened the file), the work
/// it announced has ended, and files changed on disk are re-read.
pub(crate) async fn ready_for(session: &Opened) -> Ready {
    let loaded = session.wait_loaded(READY_WAIT).await;
    session.wait_idle(READY_WAIT).await;
    Ready { unread: session.wait_reread(READY_WAIT).await, unloaded: !loaded }
}

/// What a cross-file answer must say about changes on disk it may not
/// reflect: files the server had not re-read yet, a sync point the
/// watcher could not confirm, a document the server had not loaded.
pub(crate) fn taken_in_notes(session: &Opened, root: &Path, synced: &Synced, ready: &Ready) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(restarted) = &session.restarted {
        notes.push(format!("note: {restarted}"));
    }
    if let Some(note) = &synced.note {
        notes.push(format!("note: {note}"));
    }
    if ready.unloaded
        && let Some(doc) = &session.doc
    {
        let rel = doc.uri.to_file_path().map(|p| tether_actors::fs::relative(root, &p)).unwrap_or_default();
        notes.push(format!(
            "note: {} had not finished loading `{rel}` within {} s (it had published nothing for it yet), so this answer may be incomplete — ask again",
            session.key.server,
            READY_WAIT.as_secs()
        ));
    }
    let unread = &ready.unread;
    if !unread.is_empty() {
        let shown: Vec<String> =
            unread.iter().take(5).map(|p| format!("`{}`", tether_actors::fs::relative(root, p))).collect();
        let more = unread.len().saturating_sub(shown.len());
        notes.push(format!(
            "note: {} was still re-reading {} file(s) changed on disk ({}{}) when it answered; their latest content may be missing here — ask again to include it",
            session.key.server,
            unread.len(),
            shown.join(", "),
            if more > 0 { format!(", and {more} more") } else { String::new() }
        ));
    }
    notes
}

/// What a project-wide answer must say when the server's root lacks the
/// file its index needs (clangd without `compile_commands.json`): that
/// only the files it has opened are covered.
pub(crate) fn index_note(session: &Opened) -> Option<String> {
    let needed = session.project_index_file.as_deref()?;
    if session.key.root.join(needed).is_file() {
        return None;
    }
    Some(format!(
        "note: {} indexes the files `{needed}` names, and its root has none, so this answer covers only the files it has opened so far and may be incomplete; generate `{needed}` (CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; `bear -- make`) for project-wide answers",
        session.key.server
    ))
}

fn is_empty_answer(v: &Value) -> bool {
    v.is_null() || v.as_array().is_some_and(|a| a.is_empty())
}

/// "still indexing (40%)" or "ready", for empty answers.
fn readiness(session: &Opened) -> Option<String> {
    session.shared.indexing().map(|p| {
        format!(
            "{} is still indexing{}; the answer may be incomplete, try again shortly",
            session.key.server,
            p.detail()
        )
    })
}

/// Why an answer is empty: still indexing, a failure the server reported
/// of its own (jdtls's build import: it may be answering from part of the
/// project), or else "ready and `none`".
fn why_none(session: &Opened, none: &str) -> String {
    readiness(session).unwrap_or_else(|| {
        let reported = session.shared.reported_errors();
        match reported.last() {
            Some(last) => format!(
                "{} {none}, but it reported {} error(s) of its own, the last: {last}; the project may be only partly loaded (`lsp status` lists them)",
                session.key.server,
                reported.len()
            ),
            None => format!("{} is ready and {none}", session.key.server),
        }
    })
}

async fn file_diagnostics(sup: Addr<LspSupervisor>, root: PathBuf, path: PathBuf) -> ToolResult {
    let rel = tether_actors::fs::relative(&root, &path);
    let (session, synced) = match open(&sup, &path, false).await {
        Ok(s) => s,
        Err(e) => return ToolResult::error(format!("lsp diagnostics: {e}")),
    };
    let (items, freshness) = diagnostics::fresh(&session, diagnostics::DIAGNOSTICS_WAIT).await;
    let text = session.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
    // Fresh means about the content on disk now, not only when the call came.
    let freshness = diagnostics::still_on_disk(&path, &text, freshness, &session.key.server);
    let mut listing = diagnostics::listing(&rel, &text, &items, &freshness);
    for note in session.restarted.iter().chain(&synced.note) {
        listing.push_str(&format!("\nnote: {note}"));
    }
    ToolResult::text(listing).with_data(json!({
        "file": rel,
        "fresh": freshness == diagnostics::Freshness::Fresh,
        "freshness": freshness.word(),
        "diagnostics": items,
        "server": session.key.server,
    }))
}
