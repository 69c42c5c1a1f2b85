//! `lsp_edit` (S4): the edits a language server makes — a code action it
//! offers (a quick fix, organize imports, an extraction), or formatting —
//! applied, level write. Every edit is played on a copy of the files it
//! touches ([`tether_actors::lsp::workspace_edit`]), shown as a unified
//! diff, and with `preview` written nowhere; otherwise committed through
//! the run's one all-or-nothing path ([`crate::writes`]) with the
//! diagnostics each changed file gained and lost.
//!
//! - [`apply`] — choosing a code action, resolving it, running its command
//!   and taking the edits the server sends back during it;
//! - [`format`] — whole-file and line-range formatting with the file's own
//!   indentation;
//! - [`symbol`] — a declaration replaced (whole or its body), a sibling
//!   inserted beside it, or the declaration deleted, its extent read from
//!   the syntax tree.

mod apply;
mod format;
mod symbol;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use actix::Addr;
use lsp_types::WorkspaceEdit;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_actors::fs::{DiffFile, FileChange, unified};
use tether_actors::lsp::server::OnError;
use tether_actors::lsp::supervisor::{ChangedBetween, LspSupervisor};
use tether_actors::lsp::workspace_edit::{Played, play};

use tether_actors::watch::{ChangeKind, Synced};

use super::sync_disk;
use crate::args::parse;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "lsp_edit";
/// Most diff lines an answer shows; the rest are counted.
pub const MAX_DIFF_LINES: usize = 80;

/// What `lsp_edit` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditAction {
    Apply,
    Format,
    Replace,
    InsertBefore,
    InsertAfter,
    Delete,
}

/// Arguments of `lsp_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    pub action: EditAction,
    pub file: String,
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    pub symbol: Option<String>,
    pub title: Option<String>,
    pub kind: Option<String>,
    // First and last line, 1-based, inclusive (the reference says so: a
    // doc comment here would be listed with every tool list).
    pub lines: Option<Vec<u32>>,
    pub text: Option<String>,
    #[serde(default)]
    pub body_only: bool,
    #[serde(default)]
    pub force: bool,
    #[serde(default)]
    pub preview: bool,
}

/// The `lsp_edit` tool.
pub struct LspEdit {
    /// The language-server supervisor.
    pub supervisor: Addr<LspSupervisor>,
}

impl ToolHandler for LspEdit {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Write,
            parallel_safe: false,
            description: "Apply a code action, format, or edit a symbol.\n\nApply a code action the language server offers, or format with it; the answer is the diff and the diagnostics the edit fixed and introduced, every file written or none. `preview: true` answers the diff and writes nothing.\n- apply: `file`, `line`, and optionally `symbol` (the text to select on the line, such as an expression to extract; default the whole line). Pick the action by `title` (exact, or a unique substring) or `kind` (quickfix, source.organizeImports, source.fixAll, refactor.extract.function, refactor.extract.constant, refactor.inline, …); with neither, or a pick that matches several, the answer lists what is offered there and writes nothing.\n- format: `file`, and optionally `lines` [first, last] (1-based, inclusive); indentation from `.editorconfig`, else the file's own.\n- replace, insert_before, insert_after, delete: `file` and `symbol` — on `line`, or a `Container.member` name. `replace` puts `text` in place of the whole declaration (decorators and attributes included; its doc comment too when `text` starts with one), or with `body_only: true` of its body alone (a Python docstring is kept unless `text` brings one; for braces, the statements or the whole block). `insert_before`/`insert_after` add `text` as a sibling, separated as its neighbours are. `delete` removes it with its decorators and doc comment, refused while references remain (listed) unless `force: true`. `text` may come at any indentation: it is written at the symbol's, with the file's tabs or spaces, line endings and final newline. A property (getter, setter, deleter) and an overload group (signatures, doc comment, implementation) are one declaration; their body is the getter's, the implementation's. The symbol is found by the language server's document symbols, else the syntax tree (the answer says which); a name several declarations match is refused, each listed; an edit that would leave a syntax error is refused.
`line` is the file as this conversation last read it: moved by another since, the edit goes where that line is now (the answer says so); changed, it is refused.".into(),
            input_schema: schema_of::<EditArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let args: EditArgs = parse(NAME, args)?;
        if args.line == Some(0) {
            return Err(ToolError::new("argument `line`: lines are 1-based; the first line is 1"));
        }
        let path = super::source_file(ctx.root(), &args.file)?;
        let by_symbol = matches!(
            args.action,
            EditAction::Replace | EditAction::InsertBefore | EditAction::InsertAfter | EditAction::Delete
        );
        if by_symbol {
            check_symbol_args(&args)?;
        } else if args.text.is_some() || args.body_only || args.force {
            return Err(ToolError::new(
                "`text`, `body_only` and `force` are for the edits by symbol (replace, insert_before, insert_after, delete)",
            ));
        }
        match args.action {
            EditAction::Apply if args.line.is_none() => {
                return Err(ToolError::new(
                    "argument `line`: `apply` needs the 1-based line the code action is for",
                ));
            }
            EditAction::Apply if args.lines.is_some() => {
                return Err(ToolError::new(
                    "argument `lines`: only `format` takes `lines`; `apply` takes `line` and `symbol`",
                ));
            }
            EditAction::Format if args.title.is_some() || args.kind.is_some() || args.line.is_some() => {
                return Err(ToolError::new(
                    "`format` takes `file` and optionally `lines` [first, last]; `line`, `title` and `kind` are for `apply`",
                ));
            }
            _ => {}
        }
        if let Some(lines) = &args.lines
            && !matches!(lines.as_slice(), [first, last] if *first >= 1 && first <= last)
        {
            return Err(ToolError::new(format!(
                "argument `lines`: {lines:?} is not a range of 1-based lines; give [first, last] with 1 <= first <= last"
            )));
        }
        let sup = self.supervisor.clone();
        let ctx = ctx.clone();
        Ok(Box::pin(async move {
            let mut args = args;
            // The lines given are the file as this conversation read it.
            let mut notes = Vec::new();
            let mut hold = |line: &mut u32| -> Result<(), String> {
                let held = crate::tools::held_line::hold(&ctx, &path, *line)?;
                *line = held.line;
                notes.extend(held.note);
                Ok(())
            };
            let held = args.line.iter_mut().chain(args.lines.iter_mut().flatten()).try_for_each(&mut hold);
            if let Err(why) = held {
                return ToolResult::error(format!("{NAME}: {why}"));
            }
            notes.dedup();
            let mut result = match args.action {
                EditAction::Apply => apply::apply(sup, ctx, path, args).await,
                EditAction::Format => format::format(sup, ctx, path, args).await,
                _ => symbol::edit_symbol(sup, ctx, path, args).await,
            };
            for note in notes {
                result.append(&note);
            }
            result
        }))
    }
}

/// The arguments of an edit by symbol, checked.
fn check_symbol_args(args: &EditArgs) -> Result<(), ToolError> {
    let action = match args.action {
        EditAction::Replace => "replace",
        EditAction::InsertBefore => "insert_before",
        EditAction::InsertAfter => "insert_after",
        _ => "delete",
    };
    if args.symbol.as_deref().is_none_or(|s| s.trim().is_empty()) {
        return Err(ToolError::new(format!(
            "argument `symbol`: `{action}` needs the symbol's name — on `line`, or as `Container.member`"
        )));
    }
    if args.title.is_some() || args.kind.is_some() || args.lines.is_some() {
        return Err(ToolError::new(format!(
            "`{action}` takes `symbol` (and `line`); `title` and `kind` are for `apply`, `lines` for `format`"
        )));
    }
    if args.body_only && args.action != EditAction::Replace {
        return Err(ToolError::new(format!("argument `body_only`: only `replace` takes it, not `{action}`")));
    }
    if args.force && args.action != EditAction::Delete {
        return Err(ToolError::new(format!("argument `force`: only `delete` takes it, not `{action}`")));
    }
    match (args.action, args.text.as_deref()) {
        (EditAction::Delete, Some(_)) => Err(ToolError::new(
            "argument `text`: `delete` takes none; to put something in its place use `replace`",
        )),
        (EditAction::Delete, None) => Ok(()),
        (EditAction::Replace, t) if t.is_none_or(|t| t.trim().is_empty()) => Err(ToolError::new(
            "argument `text`: `replace` needs the new text; to remove the symbol use `delete`",
        )),
        (_, t) if t.is_none_or(|t| t.trim().is_empty()) => {
            Err(ToolError::new(format!("argument `text`: `{action}` needs the text to insert")))
        }
        _ => Ok(()),
    }
}

/// An edit computed by a server, ready to show or write.
struct Computed {
    /// What the answer calls it ("`Add import from \"./util\"` (quickfix)").
    what: String,
    /// The server that computed it.
    server: String,
    /// The files it changes, in path order.
    files: Vec<Played>,
    /// Notes to append (the symbol used, changes the server may have missed).
    notes: Vec<String>,
    /// Files the server created, empty, for the edit to fill: shown as
    /// created, and removed again when nothing is written.
    made: Vec<PathBuf>,
}

/// What a failed request says, for an answer.
fn failed(e: &OnError) -> String {
    match e {
        OnError::Build(why) | OnError::Unfit(why) => why.clone(),
        OnError::Request(e) => e.to_string(),
    }
}

/// Plays `edits` one after another on a copy of the files they touch: each
/// starts from what the ones before it left. Every file must lie inside
/// `root`; nothing is written.
fn play_all(root: &Path, edits: &[WorkspaceEdit]) -> Result<Vec<Played>, String> {
    let mut state: BTreeMap<PathBuf, Played> = BTreeMap::new();
    for edit in edits {
        let mut read = |p: &Path| -> Result<Option<String>, String> {
            let confined = tether_actors::fs::confine(root, &p.display().to_string())
                .map_err(|_| format!("it is outside the working directory {}", root.display()))?;
            if let Some(f) = state.get(&confined) {
                return Ok(f.after.clone());
            }
            match std::fs::read_to_string(&confined) {
                Ok(t) => Ok(Some(t)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        };
        let played = play(edit, &mut read).map_err(|e| e.to_string())?;
        for mut p in played {
            // Created or renamed files are named by the server: confine them
            // too, and write each where confinement resolved it.
            p.path = tether_actors::fs::confine(root, &p.path.display().to_string()).map_err(|_| {
                format!("the edit writes {}, outside the working directory", p.path.display())
            })?;
            match state.get_mut(&p.path) {
                Some(known) => {
                    known.after = p.after;
                    known.edits += p.edits;
                }
                None => {
                    state.insert(p.path.clone(), p);
                }
            }
        }
    }
    Ok(state.into_values().filter(|f| f.before != f.after).collect())
}

/// What happened on disk, to the files an edit touches, while the server
/// computed it (after `synced`).
struct Since {
    /// Why the edit is no longer right: a file it touches changed, its
    /// ranges pointing into content that moved.
    moved: Option<String>,
    /// Files the server itself created, empty, for the edit to fill
    /// (tsserver's "Move to a new file" writes the new file, then sends
    /// the text to put in it): the edit's own, removed again when nothing
    /// is written ([`undo_made`]).
    made: Vec<PathBuf>,
}

async fn moved_since(sup: &Addr<LspSupervisor>, root: &Path, synced: &Synced, files: &[Played]) -> Since {
    let after = sync_disk(sup).await;
    let changes = match sup.send(ChangedBetween { after: synced.seq, upto: after.seq }).await {
        Ok(Some(changes)) => changes,
        _ => {
            let why = "too many files changed on disk while the server computed the edit to tell whether it is still right";
            return Since { moved: Some(why.into()), made: Vec::new() };
        }
    };
    let made: Vec<PathBuf> = changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Created)
        .filter(|c| files.iter().any(|f| f.path == c.path && f.before.as_deref() == Some("")))
        .map(|c| c.path.clone())
        .collect();
    let hit: Vec<String> = changes
        .iter()
        .filter(|c| !made.contains(&c.path) && files.iter().any(|f| f.path == c.path))
        .map(|c| format!("`{}`", tether_actors::fs::relative(root, &c.path)))
        .collect();
    let moved = (!hit.is_empty())
        .then(|| format!("{} changed on disk while the server computed the edit", hit.join(", ")));
    Since { moved, made }
}

/// Removes the files the server created for an edit that was not written
/// (refused, previewed, failed), so a refusal leaves the tree as it was —
/// each only while it is still empty: anything put in it since is kept.
fn undo_made(made: &[PathBuf]) {
    for path in made {
        if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The answer for `computed`: the diff, and either "nothing was written"
/// (`preview`) or the commit and the diagnostics delta of what it wrote.
async fn finish(ctx: CallContext, computed: Computed, preview: bool) -> ToolResult {
    let root = ctx.root().to_path_buf();
    let rels: Vec<String> =
        computed.files.iter().map(|f| tether_actors::fs::relative(&root, &f.path)).collect();
    let shown: Vec<DiffFile<'_>> = computed
        .files
        .iter()
        .zip(&rels)
        .map(|(f, rel)| DiffFile {
            rel,
            before: f.before.as_deref().filter(|_| !computed.made.contains(&f.path)),
            after: f.after.as_deref(),
        })
        .collect();
    let diff = unified(&shown, MAX_DIFF_LINES);
    // Only the last line's end goes: a blank context line (" ") ending the
    // last hunk is part of it, and a hunk short of its count does not apply.
    let mut diff_text = diff.text.trim_end_matches('\n').to_string();
    if diff.omitted > 0 {
        diff_text.push_str(&format!("\n… {} more diff lines not shown", diff.omitted));
    }
    let data = json!({"server": computed.server, "files": rels, "preview": preview});
    let mut result = if preview {
        ToolResult::text(format!("(preview) {}; nothing was written:\n{diff_text}", computed.what))
            .with_data(data)
    } else {
        let changes: Vec<FileChange> = computed
            .files
            .iter()
            .map(|f| FileChange {
                path: f.path.clone(),
                before: f.before.clone().map(String::into_bytes),
                after: f.after.clone().map(String::into_bytes),
                mode: None,
            })
            .collect();
        let written: Vec<PathBuf> = computed.files.iter().map(|f| f.path.clone()).collect();
        let baseline = ctx.before_write(&written).await;
        let writer = ctx.clone();
        let committed = tokio::task::spawn_blocking(move || crate::writes::commit(&writer, &changes)).await;
        let committed = match committed {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                undo_made(&computed.made);
                return ToolResult::error(format!("{NAME}: {e}"));
            }
            Err(e) => {
                undo_made(&computed.made);
                return ToolResult::error(format!("{NAME}: the writer stopped unexpectedly ({e})"));
            }
        };
        let mut result = ToolResult::text(format!("applied {}:\n{diff_text}", computed.what)).with_data(data);
        for note in &computed.notes {
            result.append(note);
        }
        if let Some(note) = crate::tools::committed_note(&root, &committed) {
            result.append(&note);
        }
        return ctx.report_write(written, baseline, result).await;
    };
    for note in &computed.notes {
        result.append(note);
    }
    undo_made(&computed.made);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range, TextEdit, Url};

    fn insert_at_start(path: &Path, text: &str) -> WorkspaceEdit {
        let edit =
            TextEdit { range: Range::new(Position::new(0, 0), Position::new(0, 0)), new_text: text.into() };
        WorkspaceEdit {
            changes: Some([(Url::from_file_path(path).unwrap(), vec![edit])].into_iter().collect()),
            ..WorkspaceEdit::default()
        }
    }

    #[test]
    fn edits_play_in_turn_and_none_reaches_outside_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = root.join("a.ts");
        std::fs::write(&a, "x\n").unwrap();
        // The second edit starts from what the first left.
        let played = play_all(&root, &[insert_at_start(&a, "one\n"), insert_at_start(&a, "two\n")]).unwrap();
        assert_eq!(played.len(), 1);
        assert_eq!(played[0].before.as_deref(), Some("x\n"));
        assert_eq!(played[0].after.as_deref(), Some("two\none\nx\n"));
        assert_eq!(played[0].edits, 2);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "x\n", "nothing is written");
        // A file outside: the whole edit is refused.
        let outside = tempfile::NamedTempFile::new().unwrap();
        let err =
            play_all(&root, &[insert_at_start(&a, "one\n"), insert_at_start(outside.path(), "pwned\n")])
                .unwrap_err();
        assert!(err.contains("outside the working directory"), "{err}");
    }
}
