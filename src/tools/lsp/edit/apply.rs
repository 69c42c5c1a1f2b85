//! `lsp_edit` `apply`: one code action the server offers at a line,
//! chosen by title or kind. A lazily offered action is resolved
//! (`codeAction/resolve`); its command is run (`workspace/executeCommand`)
//! and the edits the server sends back while it runs
//! (`workspace/applyEdit`) are the edit applied. Without a unique choice
//! the answer lists what is offered there and writes nothing.

use std::fmt::Write as _;
use std::path::PathBuf;

use actix::Addr;
use lsp_types::request::{CodeActionRequest, CodeActionResolveRequest, ExecuteCommand};
use lsp_types::{
    CodeAction, CodeActionContext, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    CodeActionTriggerKind, Command, Diagnostic, ExecuteCommandParams, Position, Range,
    TextDocumentIdentifier, WorkspaceEdit,
};
use serde_json::Value;
use tether_actors::lsp::config::FEATURE_CODE_ACTIONS;
use tether_actors::lsp::edits::{identifier_at, utf16_column};
use tether_actors::lsp::server::Opened;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::lsp::workspace_edit::Played;

use super::{Computed, EditArgs, NAME, failed, finish, moved_since, play_all, undo_made};
use crate::handler::CallContext;
use crate::result::ToolResult;
use crate::tools::lsp::diagnostics::{self, Freshness};
use crate::tools::lsp::{REQUEST_TIMEOUT, Spot, open, open_at, open_helper, ready_for};

/// Most offered actions an answer lists.
pub const MAX_LISTED: usize = 30;

/// One offered action, as the listing and the choice see it.
#[derive(Clone)]
struct Offer {
    title: String,
    kind: Option<String>,
    preferred: bool,
    disabled: Option<String>,
    fixes: Option<String>,
    item: CodeActionOrCommand,
    /// Which of the asked servers offered it (its index).
    from: usize,
    /// Its server's name, when more than one was asked.
    server: Option<String>,
}

impl Offer {
    fn of(item: CodeActionOrCommand) -> Self {
        match &item {
            CodeActionOrCommand::Command(c) => Offer {
                title: c.title.clone(),
                kind: None,
                preferred: false,
                disabled: None,
                fixes: None,
                item,
                from: 0,
                server: None,
            },
            CodeActionOrCommand::CodeAction(a) => Offer {
                title: a.title.clone(),
                kind: a.kind.as_ref().map(|k| k.as_str().to_string()),
                preferred: a.is_preferred == Some(true),
                disabled: a.disabled.as_ref().map(|d| d.reason.clone()),
                fixes: a.diagnostics.as_ref().and_then(|d| d.first()).map(|d| d.message.clone()),
                item,
                from: 0,
                server: None,
            },
        }
    }

    fn line(&self) -> String {
        let mut s = format!("- {}", self.title);
        let mut tags: Vec<String> = self.kind.iter().cloned().collect();
        if self.preferred {
            tags.push("preferred".into());
        }
        if let Some(server) = &self.server {
            tags.push(format!("from {server}"));
        }
        if !tags.is_empty() {
            let _ = write!(s, " ({})", tags.join(", "));
        }
        if let Some(fixes) = &self.fixes {
            let first = fixes.lines().next().unwrap_or_default();
            let _ = write!(s, " — fixes: {first}");
        }
        if let Some(why) = &self.disabled {
            let _ = write!(s, " [disabled: {why}]");
        }
        s
    }

    /// Whether its kind is `kind` or under it (`refactor.extract` holds
    /// `refactor.extract.function`) — or above it with a title naming the
    /// rest: rust-analyzer offers "Extract into variable" as plain
    /// `refactor.extract`, which `refactor.extract.variable` asks for.
    fn of_kind(&self, kind: &str) -> bool {
        let Some(k) = self.kind.as_deref() else { return false };
        if k == kind || k.starts_with(&format!("{kind}.")) {
            return true;
        }
        let rest = kind.strip_prefix(k).and_then(|r| r.strip_prefix('.'));
        rest.is_some_and(|rest| {
            let title = self.title.to_lowercase();
            rest.split('.').all(|word| title.contains(&word.to_lowercase()))
        })
    }
}

/// Whether `kind` asks for a whole-file source action (`source.fixAll`,
/// `source.organizeImports`): none offered, or one changing nothing, means
/// the file needs none — a success, as a format of a formatted file is.
fn whole_file_kind(kind: Option<&str>) -> bool {
    kind.is_some_and(|k| k == "source" || k.starts_with("source."))
}

/// What `title` and `kind` pick among `offers`: one index, or every
/// matching one (none, or several) for the answer to list.
fn choose(offers: &[Offer], title: Option<&str>, kind: Option<&str>) -> Result<usize, Vec<usize>> {
    let by_kind: Vec<usize> =
        (0..offers.len()).filter(|&i| kind.is_none_or(|k| offers[i].of_kind(k))).collect();
    let picked: Vec<usize> = match title {
        Some(t) => {
            let exact: Vec<usize> = by_kind.iter().copied().filter(|&i| offers[i].title == t).collect();
            if exact.is_empty() {
                let t = t.to_lowercase();
                by_kind.into_iter().filter(|&i| offers[i].title.to_lowercase().contains(&t)).collect()
            } else {
                exact
            }
        }
        None => by_kind,
    };
    match picked.as_slice() {
        [one] if title.is_some() || kind.is_some() => Ok(*one),
        // Several of the kind asked for, one of them preferred: that one, as
        // an editor's auto-fix takes it.
        [_, _, ..] if title.is_none() && kind.is_some() => {
            match picked.iter().filter(|&&i| offers[i].preferred).collect::<Vec<_>>().as_slice() {
                [one] => Ok(**one),
                _ => Err(picked),
            }
        }
        _ => Err(picked),
    }
}

/// The listing of `offers`: those enabled here one a line, those the
/// server offers but disables at this selection by title only (their
/// reasons are said when one is asked for by title).
fn listing(offers: &[&Offer]) -> String {
    let (enabled, disabled): (Vec<&Offer>, Vec<&Offer>) = offers.iter().partition(|o| o.disabled.is_none());
    let mut text = String::new();
    for offer in enabled.iter().take(MAX_LISTED) {
        let _ = writeln!(text, "{}", offer.line());
    }
    if enabled.len() > MAX_LISTED {
        let _ = writeln!(text, "… {} more not listed (at most {MAX_LISTED})", enabled.len() - MAX_LISTED);
    }
    match disabled.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(text, "{}", one.line());
        }
        many => {
            let titles: Vec<&str> = many.iter().map(|o| o.title.as_str()).collect();
            let _ = writeln!(
                text,
                "disabled at this selection ({}): {} (ask for one by `title` to see why)",
                many.len(),
                titles.join("; ")
            );
        }
    }
    text.trim_end().to_string()
}

pub(super) async fn apply(
    sup: Addr<LspSupervisor>,
    ctx: CallContext,
    path: PathBuf,
    args: EditArgs,
) -> ToolResult {
    let root = ctx.root().to_path_buf();
    let rel = tether_actors::fs::relative(&root, &path);
    let line = args.line.expect("checked at start");
    // The selection: the symbol's text on the line, or the line itself.
    let mut notes = Vec::new();
    let (session, synced, range) = match &args.symbol {
        Some(symbol) => {
            let spot = Spot { line, symbol: symbol.clone(), occurrence: None };
            match open_at(&sup, &path, &rel, &spot, None).await {
                Ok((session, synced, _, at)) => {
                    notes.extend(at.note(symbol));
                    (session, synced, Range::new(at.position, at.end))
                }
                Err(e) => return ToolResult::error(format!("{NAME}: {e}")),
            }
        }
        None => match open(&sup, &path, false).await {
            Ok((session, synced)) => {
                let text = session.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
                match line_range(&text, line) {
                    Some(range) => (session, synced, range),
                    None => {
                        return ToolResult::error(format!(
                            "{NAME}: argument `line`: `{rel}` has {} line(s); give a line within it",
                            text.lines().count()
                        ));
                    }
                }
            }
            Err(e) => return ToolResult::error(format!("{NAME}: {e}")),
        },
    };
    let doc = session.doc.clone().expect("a file was synced");
    // The main server, then a helper its language has for code actions
    // (ruff beside pyright): every offer says which server made it.
    let mut sessions = vec![session];
    if let Some(helper) = open_helper(&sup, &path, FEATURE_CODE_ACTIONS, synced.clone()).await {
        match helper {
            Ok((helper, _)) => sessions.push(helper),
            Err(e) => notes.push(format!("note: the helper for code actions could not be asked: {e}")),
        }
    }
    let mut offers: Vec<Offer> = Vec::new();
    let mut asked_servers = Vec::new();
    for (from, session) in sessions.iter().enumerate() {
        if !session.offers("textDocument/codeAction") {
            continue;
        }
        asked_servers.push(session.key.server.clone());
        match offers_of(session, from == 0, &doc.uri, range, args.kind.as_deref(), &rel, &mut notes).await {
            Ok(found) => {
                for mut offer in found {
                    offer.from = from;
                    if !offers.iter().any(|o| o.title == offer.title && o.kind == offer.kind) {
                        offers.push(offer);
                    }
                }
            }
            Err(e) if from == 0 => {
                return ToolResult::error(format!(
                    "{NAME}: {} could not list code actions at {rel}:{line}: {e}",
                    session.key.server
                ));
            }
            Err(e) => notes.push(format!(
                "note: {} could not list code actions here ({e}); only {}'s are shown",
                session.key.server, sessions[0].key.server
            )),
        }
    }
    if asked_servers.is_empty() {
        return ToolResult::error(format!(
            "{NAME}: {} offers no code actions for `{rel}`",
            sessions[0].key.server
        ));
    }
    let servers = match asked_servers.as_slice() {
        [one] => format!("{one} offers"),
        many => format!("{} offer", many.join(" and ")),
    };
    let tagged = asked_servers.len() > 1;
    for offer in &mut offers {
        offer.server = tagged.then(|| sessions[offer.from].key.server.clone());
    }
    let at = format!("{rel}:{line}");
    let chosen = match choose(&offers, args.title.as_deref(), args.kind.as_deref()) {
        Ok(i) => {
            let others: Vec<&str> = (0..offers.len())
                .filter(|&j| {
                    j != i
                        && args.title.is_none()
                        && args.kind.as_deref().is_some_and(|k| offers[j].of_kind(k))
                })
                .map(|j| offers[j].title.as_str())
                .collect();
            if !others.is_empty() {
                notes.push(format!(
                    "note: {} actions of kind `{}` are offered here; the one the server prefers was applied, not: {}",
                    others.len() + 1,
                    args.kind.as_deref().unwrap_or_default(),
                    others.join("; ")
                ));
            }
            offers.swap_remove(i)
        }
        Err(matching) => {
            let asked = match (&args.title, &args.kind) {
                (None, None) => None,
                (Some(t), None) => Some(format!("title `{t}`")),
                (None, Some(k)) => Some(format!("kind `{k}`")),
                (Some(t), Some(k)) => Some(format!("title `{t}` of kind `{k}`")),
            };
            if matching.is_empty()
                && args.title.is_none()
                && let Some(kind) = args.kind.as_deref().filter(|k| whole_file_kind(Some(k)))
            {
                let mut result = ToolResult::text(format!(
                    "{servers} no `{kind}` action for `{rel}`: nothing to change; nothing was written"
                ));
                for note in &notes {
                    result.append(note);
                }
                return result;
            }
            if offers.is_empty() {
                // With why it may be empty: a server that had not loaded the file.
                let mut result = ToolResult::error(format!(
                    "{NAME}: {servers} no code actions at {at}{}; nothing was written",
                    args.kind.as_ref().map(|k| format!(" of kind `{k}`")).unwrap_or_default()
                ));
                for note in &notes {
                    result.append(note);
                }
                return result;
            }
            let (head, shown): (String, Vec<&Offer>) = match (asked, matching.len()) {
                (None, _) => (
                    format!(
                        "{} code action(s) at {at}; name one by `title` or `kind` to apply it (nothing was written):",
                        offers.len()
                    ),
                    offers.iter().collect(),
                ),
                (Some(asked), 0) => (
                    format!(
                        "{NAME}: no code action at {at} matches {asked}; nothing was written. Offered there:"
                    ),
                    offers.iter().collect(),
                ),
                (Some(asked), n) => (
                    format!(
                        "{NAME}: {n} code actions at {at} match {asked}; give the exact `title` of one (nothing was written):"
                    ),
                    matching.iter().map(|&i| &offers[i]).collect(),
                ),
            };
            let text = format!("{head}\n{}", listing(&shown));
            let data = serde_json::json!({"offered": shown.iter().map(|o| serde_json::json!({
                "title": o.title, "kind": o.kind, "preferred": o.preferred, "disabled": o.disabled, "fixes": o.fixes,
                "server": sessions[o.from].key.server,
            })).collect::<Vec<_>>(), "servers": asked_servers});
            let mut result = if args.title.is_none() && args.kind.is_none() {
                ToolResult::text(text)
            } else {
                ToolResult::error(text)
            };
            for note in &notes {
                result.append(note);
            }
            return result.with_data(data);
        }
    };
    if let Some(why) = &chosen.disabled {
        return ToolResult::error(format!(
            "{NAME}: `{}` is offered at {at} but disabled: {why}; nothing was written",
            chosen.title
        ));
    }
    let session = &sessions[chosen.from];
    let what = match &chosen.kind {
        Some(k) => format!("`{}` ({k}, {})", chosen.title, session.key.server),
        None => format!("`{}` ({})", chosen.title, session.key.server),
    };
    let (edits, hints) = match edits_of(session, chosen.item).await {
        Ok(found) => found,
        Err(why) => return ToolResult::error(format!("{NAME}: {what}: {why}; nothing was written")),
    };
    let files = match play_all(&root, &edits) {
        Ok(files) => files,
        Err(why) => return ToolResult::error(format!("{NAME}: {what}: {why}; nothing was written")),
    };
    if files.is_empty() {
        // A source action with nothing to do is done, as a format of a
        // formatted file is.
        if whole_file_kind(args.kind.as_deref()) {
            return ToolResult::text(format!("{what} has nothing to change in `{rel}`; nothing was written"));
        }
        return ToolResult::error(format!("{NAME}: {what} changes nothing here; nothing was written"));
    }
    let since = moved_since(&sup, &root, &synced, &files).await;
    if let Some(asked) = files.iter().find(|f| f.path == path)
        && asked.before.as_deref() != Some(doc.text.as_str())
    {
        undo_made(&since.made);
        return ToolResult::error(format!(
            "{NAME}: `{rel}` changed on disk while {} computed the edit; nothing was written. Call it again",
            session.key.server
        ));
    }
    if let Some(why) = since.moved {
        undo_made(&since.made);
        return ToolResult::error(format!("{NAME}: {why}; nothing was written. Call it again"));
    }
    notes.extend(named_by_the_server(&root, &files, &hints));
    let computed = Computed { what, server: session.key.server.clone(), files, notes, made: since.made };
    finish(ctx, computed, args.preview).await
}

/// What `session` offers at `range` of the document `uri`: it is waited
/// for until it has published for the content (quick fixes are offered for
/// the diagnostics the request names), then asked — for source actions
/// too when no `kind` narrows the question. The `main` server's
/// diagnostics are those of the content now on disk, waited for as the
/// `diagnostics` action waits (a server slow to publish under load would
/// otherwise be asked with none, and offer no quick fix).
async fn offers_of(
    session: &Opened,
    main: bool,
    uri: &lsp_types::Url,
    range: Range,
    kind: Option<&str>,
    rel: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Offer>, String> {
    let ready = ready_for(session).await;
    if ready.unloaded {
        notes.push(format!(
            "note: {} had not finished loading `{rel}`; fixes for diagnostics it has not published are not offered yet",
            session.key.server
        ));
    }
    let known = if main {
        let (items, freshness) = diagnostics::fresh(session, diagnostics::DIAGNOSTICS_WAIT).await;
        if freshness != Freshness::Fresh {
            notes.push(format!(
                "note: {}'s diagnostics of `{rel}` were {} when its code actions were asked; fixes for those it had not reported are not offered",
                session.key.server,
                freshness.word()
            ));
        }
        items
    } else {
        session.shared.diagnostics(uri.as_str()).map(|e| e.items).unwrap_or_default()
    };
    let diagnostics: Vec<Diagnostic> = known
        .into_iter()
        .filter(|d| d.range.start.line <= range.end.line && range.start.line <= d.range.end.line)
        .collect();
    // A kind is asked for with its parent too: a server may file an
    // action one level up (rust-analyzer's extractions are plain
    // `refactor.extract`); `choose` narrows the answer again.
    let asks: Vec<Option<Vec<CodeActionKind>>> = match kind {
        Some(k) => {
            let mut only = vec![CodeActionKind::from(k.to_string())];
            if let Some((parent, _)) = k.rsplit_once('.') {
                only.push(CodeActionKind::from(parent.to_string()));
            }
            vec![Some(only)]
        }
        None => vec![None, Some(vec![CodeActionKind::SOURCE])],
    };
    let mut offers = Vec::new();
    for only in asks {
        let params = CodeActionParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            range,
            context: CodeActionContext {
                diagnostics: diagnostics.clone(),
                only,
                trigger_kind: Some(CodeActionTriggerKind::INVOKED),
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let items =
            session.ask::<CodeActionRequest>(params, REQUEST_TIMEOUT).await.map_err(|e| failed(&e))?;
        offers.extend(items.unwrap_or_default().into_iter().map(Offer::of));
    }
    Ok(offers)
}

/// The range of line `line` (1-based) from its first to its last
/// non-blank character; `None` past the end of `text`.
fn line_range(text: &str, line: u32) -> Option<Range> {
    let content = text.split('\n').nth(line as usize - 1)?;
    if line as usize > text.lines().count().max(1) {
        return None;
    }
    let content = content.strip_suffix('\r').unwrap_or(content);
    let start = content.len() - content.trim_start().len();
    let end = content.trim_end().len().max(start);
    let l = line - 1;
    Some(Range::new(
        Position::new(l, utf16_column(content, start)),
        Position::new(l, utf16_column(content, end)),
    ))
}

/// The names a server made up for what it extracted, where it asked its
/// client to start renaming them: a note each, so the next call can be
/// the rename.
fn named_by_the_server(root: &std::path::Path, files: &[Played], hints: &[Value]) -> Vec<String> {
    hints
        .iter()
        .filter_map(|hint| {
            let uri: lsp_types::Url = serde_json::from_value(hint["textDocument"]["uri"].clone()).ok()?;
            let position: Position = serde_json::from_value(hint["position"].clone()).ok()?;
            let path = uri.to_file_path().ok()?;
            let text = files.iter().find(|f| f.path == path)?.after.as_deref()?;
            let name = identifier_at(text, position)?;
            let rel = tether_actors::fs::relative(root, &path);
            Some(format!(
                "note: the server named it `{name}` ({rel}:{}); `lsp_rename` gives it a better name",
                position.line + 1
            ))
        })
        .collect()
}

/// The edits `item` makes — its own edit (resolved first when the server
/// offered it lazily), then those the server sends while its command runs
/// — and the rename hints sent meanwhile.
async fn edits_of(
    session: &Opened,
    item: CodeActionOrCommand,
) -> Result<(Vec<WorkspaceEdit>, Vec<Value>), String> {
    let (edit, command) = match item {
        CodeActionOrCommand::Command(c) => (None, Some(c)),
        CodeActionOrCommand::CodeAction(action) => {
            let action =
                if action.edit.is_none() && action.command.is_none() || needs_resolve(session, &action) {
                    session
                        .ask::<CodeActionResolveRequest>(action, REQUEST_TIMEOUT)
                        .await
                        .map_err(|e| format!("the server could not resolve it: {}", failed(&e)))?
                } else {
                    action
                };
            (action.edit, action.command)
        }
    };
    let mut edits: Vec<WorkspaceEdit> = edit.into_iter().collect();
    let mut hints = Vec::new();
    if let Some(command) = command {
        let (sent, hinted) = run_command(session, command).await?;
        edits.extend(sent);
        hints = hinted;
    }
    Ok((edits, hints))
}

/// Whether the server resolves actions lazily and this one lacks its edit.
fn needs_resolve(session: &Opened, action: &CodeAction) -> bool {
    let resolves = session.capabilities["codeActionProvider"]["resolveProvider"].as_bool() == Some(true);
    resolves && action.edit.is_none() && action.data.is_some()
}

/// Runs `command` and takes the edits (and rename hints) the server sends
/// while it runs; one command at a time per server, so they are this
/// call's alone.
async fn run_command(session: &Opened, command: Command) -> Result<(Vec<WorkspaceEdit>, Vec<Value>), String> {
    if !session.offers("workspace/executeCommand") {
        return Err(format!(
            "it runs the command `{}`, and the server does not run commands",
            command.command
        ));
    }
    let applied = &session.shared.applied;
    let _running = applied.running.lock().await;
    applied.take_from_now();
    let params = ExecuteCommandParams {
        command: command.command.clone(),
        arguments: command.arguments.unwrap_or_default(),
        work_done_progress_params: Default::default(),
    };
    let ran = session.ask::<ExecuteCommand>(params, REQUEST_TIMEOUT).await;
    let taken = applied.taken();
    let hints = applied.hints();
    if let Err(e) = ran {
        return Err(format!("its command `{}` failed: {}", command.command, failed(&e)));
    }
    let edits = taken
        .into_iter()
        .map(|v| {
            serde_json::from_value::<WorkspaceEdit>(v)
                .map_err(|e| format!("the server sent an edit that is not a WorkspaceEdit ({e})"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((edits, hints))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(title: &str, kind: &str, preferred: bool) -> Offer {
        Offer::of(CodeActionOrCommand::CodeAction(CodeAction {
            title: title.into(),
            kind: Some(CodeActionKind::from(kind.to_string())),
            is_preferred: Some(preferred),
            ..CodeAction::default()
        }))
    }

    #[test]
    fn a_title_or_kind_picks_one_and_several_are_listed() {
        let offers = vec![
            action("Add import from \"./util\"", "quickfix", true),
            action("Add import from \"./other\"", "quickfix", false),
            action("Organize Imports", "source.organizeImports", false),
            action("Extract to function in module scope", "refactor.extract.function", false),
        ];
        assert_eq!(choose(&offers, Some("Organize Imports"), None), Ok(2));
        assert_eq!(choose(&offers, Some("./util"), None), Ok(0), "a unique substring");
        assert_eq!(choose(&offers, Some("add import"), None), Err(vec![0, 1]), "two match: listed");
        assert_eq!(choose(&offers, None, Some("refactor.extract")), Ok(3), "a kind holds its sub-kinds");
        assert_eq!(choose(&offers, None, Some("quickfix")), Ok(0), "the preferred of several");
        let mut both = offers.clone();
        both[1].preferred = true;
        assert_eq!(choose(&both, None, Some("quickfix")), Err(vec![0, 1]), "two preferred: listed");
        assert_eq!(choose(&offers, Some("util"), Some("quickfix")), Ok(0));
        assert_eq!(choose(&offers, Some("nothing like it"), None), Err(vec![]));
        assert!(choose(&offers, None, None).is_err(), "no choice: the list");
        assert_eq!(offers[0].line(), "- Add import from \"./util\" (quickfix, preferred)");
        let rust = vec![
            action("Extract into variable", "refactor.extract", false),
            action("Extract into function", "refactor.extract", false),
        ];
        assert_eq!(
            choose(&rust, None, Some("refactor.extract.variable")),
            Ok(0),
            "a title naming the sub-kind"
        );
        assert_eq!(choose(&rust, None, Some("refactor.extract")), Err(vec![0, 1]));
        assert_eq!(choose(&rust, None, Some("refactor.inline.variable")), Err(vec![]));
    }

    #[test]
    fn a_line_without_symbol_is_selected_from_its_first_to_last_character() {
        let text = "a\n    const x = 1 + 2;  \n";
        assert_eq!(line_range(text, 2), Some(Range::new(Position::new(1, 4), Position::new(1, 20))));
        assert_eq!(line_range(text, 3), None);
    }
}
