//! `lsp_rename` (S4): a project-wide rename through the language server,
//! level write. The server's WorkspaceEdit is checked (every edit must look
//! like a rename: one line, not much longer than the names), applied in
//! memory, then written all or nothing with a drift check — or staged for
//! `resolve` with `stage: true`.
//!
//! The rename is computed only after every change on disk made before the
//! call has reached the server (and been re-read, for servers that need
//! it). Once the edit is back, a second sync point tells whether any file
//! it touches changed meanwhile: the server's ranges would then point into
//! content that moved, so nothing is written and the answer says what changed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use actix::Addr;
use lsp_types::request::{DocumentSymbolRequest, Rename};
use lsp_types::{
    DocumentSymbol, DocumentSymbolParams, DocumentSymbolResponse, Position, RenameParams,
    TextDocumentIdentifier, TextDocumentPositionParams,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_actors::ast::actor::{AstActor, StageFiles};
use tether_actors::ast::lang::Lang;
use tether_actors::ast::renamed;
use tether_actors::ast::rewrite::{FileRewrite, RewritePlan};
use tether_actors::ast::scan::Coverage;
use tether_actors::fs::{DiffFile, FileChange, unified};
use tether_actors::lsp::edits::{apply_edits, check_rename_edit, edits_by_file, renamed_places};
use tether_actors::lsp::server::{OnError, Opened};
use tether_actors::lsp::shared::Held;
use tether_actors::lsp::supervisor::{ChangedBetween, LspSupervisor};

use super::{REQUEST_TIMEOUT, sync_disk};
use crate::args::parse;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "lsp_rename";

/// Arguments of `lsp_rename`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    pub file: String,
    #[schemars(range(min = 1))]
    pub line: u32,
    pub symbol: String,
    pub occurrence: Option<usize>,
    pub new_name: String,
    #[serde(default)]
    pub stage: bool,
}

/// The `lsp_rename` tool.
pub struct LspRename {
    /// The language-server supervisor.
    pub supervisor: Addr<LspSupervisor>,
    /// Where staged renames are held (with the parser set), if connected.
    pub ast: Option<Addr<AstActor>>,
}

impl ToolHandler for LspRename {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Write,
            parallel_safe: false,
            description: "Rename `symbol` on `file`:`line` project-wide.\n\nRename the symbol at `file` + `line` + `symbol` text to `new_name` across the project: every file or none; `stage: true` answers an edit_id for resolve instead.".into(),
            input_schema: schema_of::<RenameArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let args: RenameArgs = parse("lsp_rename", args)?;
        if args.line == 0 {
            return Err(ToolError::new("argument `line`: lines are 1-based; the first line is 1"));
        }
        let path = super::source_file(ctx.root(), &args.file)?;
        if !is_identifier(&args.symbol) {
            return Err(ToolError::new(format!(
                "argument `symbol`: `{}` is not one identifier; give the name to rename as it appears on the line",
                args.symbol
            )));
        }
        if !is_identifier(&args.new_name) {
            return Err(ToolError::new(format!(
                "argument `new_name`: `{}` is not an identifier; give one name of letters, digits, `_` (or `$`), not starting with a digit",
                args.new_name
            )));
        }
        if args.stage && self.ast.is_none() {
            return Err(ToolError::new(
                "lsp_rename: `stage` needs the parser set (it holds staged edits), which is not connected in this run",
            ));
        }
        let sup = self.supervisor.clone();
        let ast = self.ast.clone();
        let ctx = ctx.clone();
        Ok(Box::pin(async move {
            let mut args = args;
            // The line given is the file as this conversation read it.
            let held = match crate::tools::held_line::hold(&ctx, &path, args.line) {
                Ok(held) => held,
                Err(why) => return ToolResult::error(format!("lsp_rename: {why}")),
            };
            args.line = held.line;
            let mut result = rename(sup, ast, ctx, path, args).await;
            if let Some(note) = held.note {
                result.append(&note);
            }
            result
        }))
    }
}

/// Whether `name` is one identifier as the languages tether serves spell
/// them (Unicode letters, digits, `_`, and JavaScript's `$`; Rust's raw
/// `r#name` too): a server may accept `foo-bar` or `a.b` and write broken
/// code.
fn is_identifier(name: &str) -> bool {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    (first.is_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

async fn rename(
    sup: Addr<LspSupervisor>,
    ast: Option<Addr<AstActor>>,
    ctx: CallContext,
    path: PathBuf,
    args: RenameArgs,
) -> ToolResult {
    let root = ctx.root().to_path_buf();
    let rel = tether_actors::fs::relative(&root, &path);
    if args.occurrence == Some(0) {
        return ToolResult::error(
            "lsp_rename: argument `occurrence`: occurrences are 1-based; the first on the line is 1",
        );
    }
    let spot = super::Spot { line: args.line, symbol: args.symbol.clone(), occurrence: args.occurrence };
    let (session, synced, doc, at) = match super::open_at(&sup, &path, &rel, &spot, None).await {
        Ok(found) => found,
        Err(e) => return ToolResult::error(format!("lsp_rename: {e}")),
    };
    if let Err(why) = at.require_whole(&args.symbol, &rel) {
        return ToolResult::error(format!("lsp_rename: {why}; nothing was written"));
    }
    let ready = super::ready_for(&session).await;
    if ready.unloaded {
        return ToolResult::error(format!(
            "lsp_rename: {} had not finished loading `{rel}` within {} s; a rename computed now could miss uses in files it has not read, so nothing was written. Call it again shortly",
            session.key.server,
            super::READY_WAIT.as_secs()
        ));
    }
    let unread = ready.unread;
    if !unread.is_empty() {
        let shown: Vec<String> =
            unread.iter().take(5).map(|p| format!("`{}`", tether_actors::fs::relative(&root, p))).collect();
        return ToolResult::error(format!(
            "lsp_rename: {} has not yet re-read {} file(s) changed on disk ({}); a rename computed now could miss or misplace their uses, so nothing was written. Call it again shortly",
            session.key.server,
            unread.len(),
            shown.join(", ")
        ));
    }
    // Computed on the text the server holds when it reads the request:
    // a file changed while the call waited is never renamed at the old spot.
    let mut build = |held: Option<&Held>| -> Result<RenameParams, String> {
        if held.is_none_or(|h| h.version != doc.version) {
            return Err(format!(
                "`{rel}` changed on disk while the call waited for the server, so nothing was written; call it again with the line as it is now"
            ));
        }
        Ok(RenameParams {
            text_document_position: TextDocumentPositionParams {
                text_document: TextDocumentIdentifier { uri: doc.uri.clone() },
                position: at.position,
            },
            new_name: args.new_name.clone(),
            work_done_progress_params: Default::default(),
        })
    };
    let uri = doc.uri.to_string();
    let edit = match session.ask_on::<Rename>(Some(&uri), &mut build, REQUEST_TIMEOUT).await {
        Ok(Some(edit)) => edit,
        Ok(None) => {
            return ToolResult::error(format!(
                "lsp_rename: {} returned no edit for `{}` at {rel}:{}",
                session.key.server, args.symbol, args.line
            ));
        }
        Err(OnError::Build(why)) => return ToolResult::error(format!("lsp_rename: {why}")),
        Err(OnError::Request(e)) => {
            return ToolResult::error(format!("lsp_rename: {} refused the rename: {e}", session.key.server));
        }
        Err(OnError::Unfit(why)) => {
            return ToolResult::error(format!("lsp_rename: {why}; nothing was written"));
        }
    };
    let by_file = match edits_by_file(&edit) {
        Ok(m) => m,
        Err(e) => return ToolResult::error(format!("lsp_rename: {e}; nothing was written")),
    };
    // Did anything the edit touches change on disk while it was computed?
    let after = sync_disk(&sup).await;
    let moved = match sup.send(ChangedBetween { after: synced.seq, upto: after.seq }).await {
        Ok(Some(changes)) => changes,
        _ => {
            return ToolResult::error(
                "lsp_rename: too many files changed on disk while the server computed the rename to tell whether it is still right; nothing was written. Call it again",
            );
        }
    };
    let touched: Vec<PathBuf> = by_file.keys().filter_map(|u| u.to_file_path().ok()).collect();
    let hit: Vec<String> = moved
        .iter()
        .filter(|c| touched.contains(&c.path))
        .map(|c| format!("`{}` ({:?})", tether_actors::fs::relative(&root, &c.path), c.kind).to_lowercase())
        .collect();
    if !hit.is_empty() {
        return ToolResult::error(format!(
            "lsp_rename: {} changed on disk while {} computed the rename, so its edits may point into content that moved; nothing was written. Call it again",
            hit.join(", "),
            session.key.server
        ));
    }
    // The old name is the identifier at the cursor, as the server sees it —
    // not the caller's substring — and every edit must rename exactly it.
    let old_name =
        tether_actors::lsp::edits::identifier_at(&doc.text, at.position).unwrap_or(&args.symbol).to_string();
    let mut note = at.note(&args.symbol);
    // Changes on disk the sync points could not confirm: the server may not
    // know a use of the name they made, and the rename would miss it.
    for unconfirmed in [&synced.note, &after.note].into_iter().flatten() {
        let line = format!("note: {unconfirmed}; a use of `{old_name}` there may be missed");
        note = Some(match note {
            Some(n) => format!("{n}\n{line}"),
            None => line,
        });
    }
    let mut files = Vec::new();
    let mut counts = BTreeMap::new();
    for (uri, edits) in &by_file {
        let Ok(file) = uri.to_file_path() else {
            return ToolResult::error(format!(
                "lsp_rename: the edit touches {uri}, which is not a file; nothing was written"
            ));
        };
        let file = match tether_actors::fs::confine(&root, &file.display().to_string()) {
            Ok(f) => f,
            Err(_) => {
                return ToolResult::error(format!(
                    "lsp_rename: the edit touches {}, outside the working directory; nothing was written",
                    file.display()
                ));
            }
        };
        let frel = tether_actors::fs::relative(&root, &file);
        let before = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                return ToolResult::error(format!(
                    "lsp_rename: cannot read `{frel}` ({e}); nothing was written"
                ));
            }
        };
        if file == path && before != *doc.text {
            return ToolResult::error(format!(
                "lsp_rename: `{frel}` changed while the server computed the rename; nothing was written. Call it again"
            ));
        }
        for e in edits {
            if let Err(err) = check_rename_edit(&before, e, &old_name, &args.new_name) {
                return ToolResult::error(format!("lsp_rename: in `{frel}`: {err}"));
            }
        }
        let after = match apply_edits(&before, edits) {
            Ok(t) => t,
            Err(e) => return ToolResult::error(format!("lsp_rename: in `{frel}`: {e}; nothing was written")),
        };
        // Read with the file's grammar: the new name must be a name where
        // the old one stood, and the file no more broken than it was.
        if let Some(lang) = Lang::for_path(&file) {
            let places = renamed_places(&before, edits, &old_name, &args.new_name);
            if let Err(why) = renamed::check(lang, &before, &after, &old_name, &args.new_name, &places) {
                return ToolResult::error(format!(
                    "lsp_rename: in `{frel}`: {why}; nothing was written. Pick another name"
                ));
            }
        }
        if after != before {
            counts.insert(frel.clone(), edits.len());
            files.push(FileRewrite {
                rel: frel,
                path: file,
                before,
                after,
                replacements: edits.len(),
                nested: 0,
                nested_left: 0,
            });
        }
    }
    if let Some(why) = declared_beside(&sup, &session, &root, &by_file, &old_name, &args.new_name).await {
        return ToolResult::error(format!("lsp_rename: {why}; nothing was written. Pick another name"));
    }
    if files.is_empty() {
        return ToolResult::error(format!(
            "lsp_rename: {} proposed no change for `{}`",
            session.key.server, args.symbol
        ));
    }
    let total: usize = counts.values().sum();
    let mut summary = String::new();
    for (f, n) in &counts {
        let _ = writeln!(summary, "  {f}: {n}");
    }
    let left = left_behind(&files, &old_name);
    if args.stage {
        let plan = RewritePlan { files, coverage: Coverage::default() };
        let staged = match ast
            .expect("checked at start")
            .send(StageFiles { plan, owner: ctx.conversation.to_string() })
            .await
        {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                return ToolResult::error(format!("lsp_rename: {}", crate::tools::structural::ast_error(&e)));
            }
            Err(e) => return ToolResult::error(format!("lsp_rename: the parser set is not running ({e})")),
        };
        let text = format!(
            "(proposed) rename `{}` → `{}`: {total} edit(s) in {} file(s); nothing is written yet: call resolve with edit_id \"{}\" and action \"accept\", or \"discard\".\n{summary}{}",
            args.symbol,
            args.new_name,
            counts.len(),
            staged.edit_id,
            staged.preview
        );
        let mut result = ToolResult::text(text.trim_end()).with_data(&staged);
        if let Some(note) = &note {
            result.append(note);
        }
        if let Some(left) = &left {
            result.append(left);
        }
        return result;
    }
    // The diff of what is written, as `lsp_edit` shows one.
    let shown: Vec<DiffFile<'_>> = files
        .iter()
        .map(|f| DiffFile { rel: &f.rel, before: Some(&f.before), after: Some(&f.after) })
        .collect();
    let diff = unified(&shown, super::edit::MAX_DIFF_LINES);
    let mut diff_text = diff.text.trim_end_matches('\n').to_string();
    if diff.omitted > 0 {
        diff_text.push_str(&format!("\n… {} more diff lines not shown", diff.omitted));
    }
    let changes: Vec<FileChange> = files
        .iter()
        .map(|f| FileChange {
            path: f.path.clone(),
            before: Some(f.before.clone().into_bytes()),
            after: Some(f.after.clone().into_bytes()),
            mode: None,
        })
        .collect();
    let written: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let baseline = ctx.before_write(&written).await;
    let writer = ctx.clone();
    let committed = tokio::task::spawn_blocking(move || crate::writes::commit(&writer, &changes)).await;
    let committed = match committed {
        Ok(Ok(committed)) => committed,
        Ok(Err(e)) => return ToolResult::error(format!("lsp_rename: {e}")),
        Err(e) => return ToolResult::error(format!("lsp_rename: the writer stopped unexpectedly ({e})")),
    };
    let mut result = ToolResult::text(format!(
        "renamed `{}` → `{}`: {total} edit(s) in {} file(s):\n{summary}{diff_text}",
        old_name,
        args.new_name,
        counts.len()
    ))
    .with_data(json!({"files": counts}));
    if let Some(note) = note {
        result.append(&note);
    }
    if let Some(left) = left {
        result.append(&left);
    }
    if let Some(note) = crate::tools::committed_note(&root, &committed) {
        result.append(&note);
    }
    ctx.report_write(written, baseline, result).await
}

/// Most places a rename left the old name in that its answer lists.
const MAX_LEFT_LISTED: usize = 10;

/// Where the old name still stands, as a whole word, in the files the
/// rename rewrote: strings and comments the server does not rename (a
/// `repr` a test compares, a log message), said so an agent updates them
/// or knows why a test now fails.
fn left_behind(files: &[FileRewrite], old: &str) -> Option<String> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut places = Vec::new();
    for f in files {
        for (n, line) in f.after.lines().enumerate() {
            let whole_word = line.match_indices(old).any(|(at, _)| {
                !line[..at].chars().next_back().is_some_and(is_word)
                    && !line[at + old.len()..].chars().next().is_some_and(is_word)
            });
            if whole_word {
                places.push(format!("{}:{}: {}", f.rel, n + 1, line.trim()));
            }
        }
    }
    if places.is_empty() {
        return None;
    }
    let mut note = format!(
        "note: `{old}` is still written in {} place(s) of these files, which the server does not rename (strings, comments):",
        places.len()
    );
    for place in places.iter().take(MAX_LEFT_LISTED) {
        note.push_str(&format!("\n  {place}"));
    }
    if places.len() > MAX_LEFT_LISTED {
        note.push_str(&format!("\n  … {} more", places.len() - MAX_LEFT_LISTED));
    }
    Some(note)
}

/// Files whose document symbols are read for the declaration the rename
/// renames, when it is not in the file asked about.
const MAX_DECLARATION_FILES: usize = 4;

/// Whether `new` is already declared in the scope of the declaration the
/// rename renames (its siblings in the document symbols of its file):
/// written, one would hide or clash with the other. The declaration is
/// the document symbol whose name one of the rename's edits replaces;
/// looked for in the file asked about first, then in a few more of the
/// files the rename touches.
async fn declared_beside(
    sup: &Addr<LspSupervisor>,
    asked: &Opened,
    root: &Path,
    by_file: &BTreeMap<lsp_types::Url, Vec<lsp_types::TextEdit>>,
    old: &str,
    new: &str,
) -> Option<String> {
    let asked_uri = asked.doc.as_ref().map(|d| d.uri.clone());
    let mut order: Vec<&lsp_types::Url> = by_file.keys().filter(|u| Some(*u) == asked_uri.as_ref()).collect();
    order.extend(by_file.keys().filter(|u| Some(*u) != asked_uri.as_ref()).take(MAX_DECLARATION_FILES));
    for uri in order {
        let starts: Vec<Position> = by_file[uri].iter().map(|e| e.range.start).collect();
        let symbols = if Some(uri) == asked_uri.as_ref() {
            document_symbols(asked, uri).await
        } else {
            let path = uri.to_file_path().ok()?;
            match super::open(sup, &path, false).await {
                Ok((session, _)) => document_symbols(&session, uri).await,
                Err(_) => None,
            }
        };
        let Some(symbols) = symbols else { continue };
        let rel = uri.to_file_path().map(|p| tether_actors::fs::relative(root, &p)).unwrap_or_default();
        match clash(&symbols, &starts, old, new) {
            Clash::Found(line, kind) => {
                return Some(format!(
                    "`{new}` is already declared beside `{old}` in `{rel}` (line {line}, {kind}); renamed, one would clash with or hide the other"
                ));
            }
            Clash::Free => return None,
            Clash::NoDeclaration => continue,
        }
    }
    None
}

async fn document_symbols(session: &Opened, uri: &lsp_types::Url) -> Option<DocumentSymbolResponse> {
    let params = DocumentSymbolParams {
        text_document: TextDocumentIdentifier { uri: uri.clone() },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    session.ask::<DocumentSymbolRequest>(params, REQUEST_TIMEOUT).await.ok().flatten()
}

/// What a file's document symbols say of a name beside the renamed one.
#[derive(Debug, PartialEq)]
enum Clash {
    /// The renamed declaration is here and a sibling already has the new
    /// name: its 1-based line and kind.
    Found(u32, String),
    /// The renamed declaration is here, and no sibling has the new name.
    Free,
    /// The renamed declaration is not among these symbols.
    NoDeclaration,
}

fn kind_word(kind: lsp_types::SymbolKind) -> String {
    format!("{kind:?}").to_lowercase()
}

/// [`Clash`] for `symbols`, the renamed declaration being the symbol named
/// `old` whose name starts where an edit (`starts`) does.
fn clash(symbols: &DocumentSymbolResponse, starts: &[Position], old: &str, new: &str) -> Clash {
    match symbols {
        DocumentSymbolResponse::Nested(tree) => nested_clash(tree, starts, old, new),
        DocumentSymbolResponse::Flat(flat) => {
            // Flat lists give the whole range only: the declaration is the
            // innermost symbol named `old` holding an edit's start.
            let holds = |r: &lsp_types::Range, p: &Position| r.start <= *p && *p <= r.end;
            let declared = flat
                .iter()
                .filter(|s| s.name == old && starts.iter().any(|p| holds(&s.location.range, p)))
                .min_by_key(|s| {
                    (s.location.range.end.line - s.location.range.start.line, s.location.range.end.character)
                });
            let Some(declared) = declared else { return Clash::NoDeclaration };
            flat.iter()
                .find(|s| s.name == new && s.container_name == declared.container_name)
                .map_or(Clash::Free, |s| Clash::Found(s.location.range.start.line + 1, kind_word(s.kind)))
        }
    }
}

fn nested_clash(siblings: &[DocumentSymbol], starts: &[Position], old: &str, new: &str) -> Clash {
    let renamed = siblings.iter().any(|s| s.name == old && starts.contains(&s.selection_range.start));
    if renamed {
        return siblings
            .iter()
            .find(|s| s.name == new)
            .map_or(Clash::Free, |s| Clash::Found(s.selection_range.start.line + 1, kind_word(s.kind)));
    }
    for s in siblings {
        match nested_clash(s.children.as_deref().unwrap_or_default(), starts, old, new) {
            Clash::NoDeclaration => continue,
            found => return found,
        }
    }
    Clash::NoDeclaration
}
