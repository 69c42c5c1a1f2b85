//! Navigation (`definition`, `type_definition`, `implementation`,
//! `references`, `hover`, `code_actions`, `call_hierarchy`,
//! `type_hierarchy`): the question asked at the
//! symbol's position in the text the server holds, asked again when the
//! server indexed, was replaced, or had a file change under the answer,
//! and the answer rendered with what it may be missing.

use std::path::{Path, PathBuf};

use actix::Addr;
use serde_json::{Value, json};

use tether_actors::lsp::server::{OnError, Opened};
use tether_actors::lsp::shared::Held;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::watch::Synced;
use tether_actors::wire::jsonrpc::METHOD_NOT_FOUND;
use tether_actors::wire::pending::RequestError;

use super::answers::{render_code_actions, render_hover, render_locations, render_references};
use super::changed_under::{self, Since};
use super::hierarchy::{self, Direction};
use super::position::{self, SymbolAt};
use super::vanished;
use super::{
    Action, MAX_SUPERSEDED, Page, READY_WAIT, REQUEST_TIMEOUT, Ready, Spot, action_name, body, crosscheck,
    is_empty_answer, open_at, readiness, ready_for, render, taken_in_notes,
};
use crate::result::ToolResult;

/// One navigation call: what to ask, where, and how to answer.
pub(super) struct Question {
    pub action: Action,
    pub spot: Spot,
    /// The page of `references`.
    pub page: Page,
    /// The hierarchy's direction (its default when the call named none).
    pub direction: Option<Direction>,
    /// Whether the answer carries the source of what it names.
    pub body: bool,
}

/// One navigation question asked once, and what its answer is read with.
struct Answered {
    session: Opened,
    synced: Synced,
    ready: Ready,
    at: SymbolAt,
    /// Where an outside edit synced while the call waited moved the symbol.
    moved_note: Option<String>,
    answer: Value,
}

/// Why [`ask_at`] has no answer.
enum NotAnswered {
    /// The server was replaced on purpose while it was asked (a restart
    /// to take in a checkout, or to serve an unimported build): ask anew.
    Superseded,
    /// The tool's answer: an error that says why.
    Failed(ToolResult),
}

/// Opens, waits for the server and asks `action` at the symbol, once
/// (twice while the server indexes).
async fn ask_at(
    sup: &Addr<LspSupervisor>,
    path: &Path,
    rel: &str,
    question: &Question,
    synced: Option<Synced>,
) -> Result<Answered, NotAnswered> {
    let action = question.action;
    let Spot { line, ref symbol, .. } = question.spot;
    let name = action_name(action);
    let failed = |text: String| Err(NotAnswered::Failed(ToolResult::error(text)));
    let (session, synced, doc, at) = match open_at(sup, path, rel, &question.spot, synced).await {
        Ok(found) => found,
        Err(e) => return failed(format!("lsp {name}: {e}")),
    };
    let ready = ready_for(&session).await;
    // The position is computed on the text the server holds when it reads
    // the request: an outside edit synced while the call waited moves it.
    let uri = doc.uri.to_string();
    let mut moved_note = None;
    let mut build = |held: Option<&Held>| -> Result<Value, String> {
        let here = match held {
            Some(held) if held.version != doc.version => {
                let (moved, note) = position::relocate(&at, &held.text, rel, line, symbol)?;
                moved_note = note;
                moved
            }
            Some(_) => at.clone(),
            None => {
                return Err(format!(
                    "`{rel}` was removed from disk while the call waited for the server; nothing to ask about"
                ));
            }
        };
        Ok(request_params(action, &session, &doc.uri, &here))
    };
    let method = request_method(action);
    let asked = session.request_on(Some(&uri), method, &mut build, REQUEST_TIMEOUT).await;
    // A server tether is replacing may still answer, from what it had (a
    // build it could not import), or fail for going: asked anew.
    let unsupported = matches!(asked, Err(OnError::Request(RequestError::Unsupported(_))));
    if session.shared.superseded() && !unsupported {
        return Err(NotAnswered::Superseded);
    }
    // A server with no type hierarchy (none announced, or clangd 14's
    // own pre-standard one, which answers the standard request "method
    // not found") has one derived from its definitions and references.
    let not_found =
        matches!(&asked, Err(OnError::Request(RequestError::Rpc(e))) if e.code == METHOD_NOT_FOUND);
    if let (true, Action::TypeHierarchy, Some(direction)) =
        (unsupported || not_found, action, question.direction)
    {
        return match hierarchy::derive(&session, &doc, &at, at.name(symbol), direction).await {
            Ok(answer) => Ok(Answered { session, synced, ready, at, moved_note, answer }),
            Err(why) => failed(format!("lsp {name}: {why}")),
        };
    }
    let mut answer = match asked {
        Ok(v) => v,
        Err(OnError::Build(why) | OnError::Unfit(why)) => return failed(format!("lsp {name}: {why}")),
        Err(OnError::Request(RequestError::Unsupported(why))) => {
            return failed(format!("lsp {name}: {why}; ask another action, or search the text (`ast_grep`)"));
        }
        Err(OnError::Request(e)) => return failed(format!("lsp {name}: {} failed: {e}", session.key.server)),
    };
    // Some servers start their indexing progress only after answering the
    // first request with nothing; an empty answer while indexing is worth
    // one more ask once it is done, never a "none found". A cross-file
    // answer given while indexing is one from the part indexed so far
    // (intelephense, asked `references` on a real project at once, lists
    // the declaration alone): asked again too.
    if (is_empty_answer(&answer) || is_cross_file(action)) && readiness(&session).is_some() {
        session.wait_idle(READY_WAIT).await;
        if let Ok(v) = session.request_on(Some(&uri), method, &mut build, REQUEST_TIMEOUT).await {
            answer = v;
        }
    }
    // A hierarchy's first answer is where it starts; the second, asked
    // of those items, is the answer.
    if let Some(direction) = question.direction {
        answer = match hierarchy::follow(&session, direction, &answer).await {
            Ok(v) => v,
            Err(why) => return failed(format!("lsp {name}: {why}")),
        };
    }
    if session.shared.superseded() {
        return Err(NotAnswered::Superseded);
    }
    Ok(Answered { session, synced, ready, at, moved_note, answer })
}

/// Whether an action's answer is a list of locations across the project
/// (one a deleted file can leave stale).
fn lists_locations(action: Action) -> bool {
    matches!(action, Action::References | Action::Implementation)
}

/// Whether an action's answer is gathered from files across the project.
fn is_cross_file(action: Action) -> bool {
    matches!(
        action,
        Action::References | Action::Implementation | Action::CallHierarchy | Action::TypeHierarchy
    )
}

pub(super) async fn navigate(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    path: PathBuf,
    question: Question,
) -> ToolResult {
    let action = question.action;
    let Spot { line, ref symbol, .. } = question.spot;
    let page = question.page;
    let rel = tether_actors::fs::relative(&root, &path);
    // A cross-file answer a change on disk overtook (a file the server
    // read half-written) is asked again once the server has the change.
    let mut synced = None;
    let (mut asks, mut superseded, mut vanished_asks) = (0, 0, 0);
    // Files written from a little before the call on are held against its
    // `references` answer (see `changed_under`), asked again once if they fall short.
    let written_from = std::time::SystemTime::now() - changed_under::HALF_WRITTEN_WINDOW;
    // The files that fell short on the first check, with their content then.
    let mut first_short: Option<Vec<(String, u64)>> = None;
    let (asked, overtaken, gone, short) = loop {
        let asked = match ask_at(&sup, &path, &rel, &question, synced.take()).await {
            Ok(asked) => asked,
            Err(NotAnswered::Superseded) if superseded < MAX_SUPERSEDED => {
                superseded += 1;
                continue;
            }
            Err(NotAnswered::Superseded) => {
                return ToolResult::error(format!(
                    "lsp {}: the server kept being restarted while it was asked; call again",
                    action_name(action)
                ));
            }
            Err(NotAnswered::Failed(result)) => return result,
        };
        asks += 1;
        if !is_cross_file(action) {
            break (asked, None, Vec::new(), Vec::new());
        }
        let mut since = asked.synced.clone();
        let overtaken = match changed_under::changed_since(&sup, &asked.session, &mut since).await {
            Since::Nothing => None,
            Since::Changed(_) if asks <= changed_under::MAX_REASKS => {
                synced = Some(since);
                continue;
            }
            other => changed_under::overtaken_note(&asked.session.key.server, &root, &other),
        };
        // An index that has not caught up with a deletion yet: its answer
        // names what is gone. Asked again once it has had a moment.
        let gone = if lists_locations(action) { vanished::of(&asked.answer).await } else { Vec::new() };
        if !gone.is_empty() && vanished_asks < vanished::MAX_REASKS {
            vanished_asks += 1;
            tokio::time::sleep(vanished::REASK_WAIT).await;
            continue;
        }
        let short = if action == Action::References && overtaken.is_none() {
            let word = asked.at.name(symbol);
            changed_under::shortfalls(
                &sup,
                &asked.session,
                &root,
                written_from,
                since.seq,
                word,
                &asked.answer,
            )
            .await
        } else {
            Vec::new()
        };
        if !short.is_empty() && first_short.is_none() {
            first_short = Some(short.iter().map(|s| (s.file.clone(), s.content)).collect());
            synced = Some(since);
            continue;
        }
        // Asked again, a file that held still was read whole: the words it
        // holds beyond the answer's uses are not the symbol's.
        let held_still = |s: &changed_under::Shortfall| {
            first_short
                .as_ref()
                .is_some_and(|first| first.iter().any(|(f, c)| *f == s.file && *c == s.content))
        };
        let short = short.into_iter().filter(|s| !held_still(s)).collect();
        break (asked, overtaken, gone, short);
    };
    let Answered { session, synced, ready, at, moved_note, mut answer } = asked;
    // What it still lists of what is gone is left out, and said.
    let mut vanished_note = None;
    if !gone.is_empty() {
        vanished::leave_out(&mut answer, &gone);
        vanished_note = Some(vanished::note(&session.key.server, &root, &gone));
    }
    let name = action_name(action);
    let note = at.note(symbol);
    // Labelled with the identifier the server was asked about: when the
    // text asked is only part of a longer name, that name.
    let held_note = at.held_note(symbol);
    let used = at.name(symbol).to_string();
    let symbol = used.as_str();
    // A hierarchy's items, where its bodies are.
    let mut listed = None;
    let mut result = match (action, question.direction) {
        (Action::Hover, _) => render_hover(&session, &answer, symbol, &rel, line),
        (Action::References, _) => render_references(&session, &root, &answer, symbol, page),
        (Action::CodeActions, _) => render_code_actions(&session, &answer, symbol, &rel, line),
        (_, Some(direction)) => {
            let (result, items) = hierarchy::render(&session, &root, &answer, direction, symbol, &rel, line);
            listed = Some(items);
            result
        }
        _ => render_locations(&session, &root, &answer, name, symbol, &rel, line),
    };
    if question.body && !result.is_error {
        let named = listed.unwrap_or_else(|| render::locations(&answer));
        result = body::attach(result, body::of_locations(&sup, &root, &named).await);
    }
    if let Some(held) = &held_note {
        result.prepend(held);
    }
    let short_note = changed_under::shortfall_note(&session.key.server, symbol, &short);
    for note in note.into_iter().chain(moved_note).chain(overtaken).chain(vanished_note).chain(short_note) {
        result.append(&note);
    }
    for note in taken_in_notes(&session, &root, &synced, &ready) {
        result.append(&note);
    }
    if is_cross_file(action)
        && let Some(note) = super::index_note(&session)
    {
        result.append(&note);
    }
    if action == Action::References && session.omits_unresolved && !result.is_error {
        let answered: std::collections::BTreeSet<String> = render::locations(&answer)
            .iter()
            .filter_map(|(uri, _)| uri.to_file_path().ok())
            .map(|p| tether_actors::fs::relative(&root, &p))
            .collect();
        let (workdir, server_root, file, word) =
            (root.clone(), session.key.root.clone(), path.clone(), symbol.to_string());
        let unlisted = tokio::task::spawn_blocking(move || {
            crosscheck::unlisted(
                &workdir,
                &server_root,
                &file,
                &word,
                &answered,
                changed_under::HALF_WRITTEN_WINDOW,
            )
        })
        .await;
        if let Some(note) = unlisted.ok().and_then(|u| u.note(&session.key.server, symbol)) {
            result.append(&note);
        }
    }
    result
}

fn request_method(action: Action) -> &'static str {
    match action {
        Action::Definition => "textDocument/definition",
        Action::TypeDefinition => "textDocument/typeDefinition",
        Action::Implementation => "textDocument/implementation",
        Action::Hover => "textDocument/hover",
        Action::References => "textDocument/references",
        Action::CodeActions => "textDocument/codeAction",
        Action::CallHierarchy => "textDocument/prepareCallHierarchy",
        Action::TypeHierarchy => "textDocument/prepareTypeHierarchy",
        _ => unreachable!("not a navigation action"),
    }
}

/// The request's parameters for the symbol `at` in the document `uri`.
fn request_params(action: Action, session: &Opened, uri: &lsp_types::Url, at: &SymbolAt) -> Value {
    let here = json!({"textDocument": {"uri": uri}, "position": at.position});
    match action {
        Action::References => {
            let mut p = here;
            p["context"] = json!({"includeDeclaration": true});
            p
        }
        Action::CodeActions => {
            let overlapping: Vec<Value> = session
                .shared
                .diagnostics(uri.as_str())
                .map(|e| e.items)
                .unwrap_or_default()
                .into_iter()
                .filter(|d| d.range.start.line <= at.position.line && at.position.line <= d.range.end.line)
                .filter_map(|d| serde_json::to_value(d).ok())
                .collect();
            let range = json!({"start": at.position, "end": at.end});
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": overlapping}})
        }
        _ => here,
    }
}
