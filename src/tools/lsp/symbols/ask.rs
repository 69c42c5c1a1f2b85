//! One server asked a workspace question: opened through a file of its
//! root, waited for, asked, and asked again when its files changed on
//! disk while it answered or tether replaced it meanwhile.

use std::path::{Path, PathBuf};

use actix::Addr;
use serde_json::json;
use tether_actors::lsp::server::Opened;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::watch::Synced;
use tether_actors::wire::pending::RequestError;

use super::super::changed_under::{self, Since};
use super::super::render::{Lines, kind_name};
use super::super::{MAX_SUPERSEDED, REQUEST_TIMEOUT, open, open_after, ready_for, taken_in_notes};
use super::{Found, Rank, home_relative};

/// What one server answered, and what to say about it.
#[derive(Default)]
pub(super) struct Asked {
    pub(super) found: Vec<Found>,
    pub(super) notes: Vec<String>,
    /// Whether it could not be asked or did not answer.
    pub(super) failed: bool,
    /// The server's name, when it announced no workspace symbols.
    pub(super) cannot: Option<String>,
    /// Whether tether replaced the server while it was asked.
    pub(super) superseded: bool,
}

/// Asks the server of `sample`'s root for `query`; asked again when its
/// files changed on disk while it answered (one read half-written is
/// missing from the answer), up to [`changed_under::MAX_REASKS`] times.
pub(super) async fn ask(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    lang: String,
    sample: PathBuf,
    query: String,
) -> Asked {
    let mut synced = None;
    let (mut asks, mut superseded) = (0, 0);
    loop {
        let (mut out, answered) = ask_once(&sup, &root, &lang, &sample, &query, synced.take()).await;
        if out.superseded && superseded < MAX_SUPERSEDED {
            superseded += 1;
            continue;
        }
        let Some((session, mut since)) = answered else { return out };
        asks += 1;
        match changed_under::changed_since(&sup, &session, &mut since).await {
            Since::Nothing => return out,
            Since::Changed(_) if asks <= changed_under::MAX_REASKS => synced = Some(since),
            other => {
                if let Some(note) = changed_under::overtaken_note(&session.key.server, &root, &other) {
                    out.notes.push(format!("{lang}: {}", note.trim_start_matches("note: ")));
                }
                return out;
            }
        }
    }
}

/// [`ask`], once: what the server answered, and (when it did) its session
/// and the sync point the answer came after.
async fn ask_once(
    sup: &Addr<LspSupervisor>,
    root: &Path,
    lang: &str,
    sample: &Path,
    query: &str,
    synced: Option<Synced>,
) -> (Asked, Option<(Opened, Synced)>) {
    let mut out = Asked::default();
    let opened = match synced {
        Some(synced) => open_after(sup, sample, false, synced).await,
        None => open(sup, sample, false).await,
    };
    let (session, synced) = match opened {
        Ok(s) => s,
        Err(e) => {
            out.notes.push(format!("{lang}: {e}"));
            out.failed = true;
            return (out, None);
        }
    };
    let ready = ready_for(&session).await;
    // typescript-language-server's `workspace/symbol` searches the
    // project of the document it last handled a request for; tsserver is
    // asked directly where it can be (every project it holds), and
    // otherwise the sample is made that document first.
    if let (Some(doc), false) = (&session.doc, session.tsserver_requests) {
        let here = lsp_types::HoverParams {
            text_document_position_params: lsp_types::TextDocumentPositionParams {
                text_document: lsp_types::TextDocumentIdentifier { uri: doc.uri.clone() },
                position: lsp_types::Position::new(0, 0),
            },
            work_done_progress_params: Default::default(),
        };
        let _ = session.ask::<lsp_types::request::HoverRequest>(here, REQUEST_TIMEOUT).await;
    }
    for note in
        taken_in_notes(&session, root, &synced, &ready).into_iter().chain(super::super::index_note(&session))
    {
        out.notes.push(format!("{lang}: {}", note.trim_start_matches("note: ")));
    }
    if let Some(p) = session.shared.indexing() {
        out.notes.push(format!(
            "{lang}: {} still indexing{}; results may be incomplete",
            session.key.server,
            p.detail()
        ));
    }
    let asked = match session.tsserver_requests {
        true => tether_actors::lsp::tsserver::navto(&session, query, REQUEST_TIMEOUT).await,
        false => session.request("workspace/symbol", json!({"query": query}), REQUEST_TIMEOUT).await,
    };
    let answer = match asked {
        Ok(v) => v,
        Err(RequestError::Unsupported(_)) => {
            out.cannot = Some(format!("{lang} ({})", session.key.server));
            return (out, None);
        }
        Err(e) => {
            out.notes.push(format!("{lang}: {} failed: {e}", session.key.server));
            out.failed = true;
            out.superseded = session.shared.superseded();
            return (out, None);
        }
    };
    // A server tether is replacing may still answer, from what it had.
    if session.shared.superseded() {
        out.superseded = true;
        out.failed = true;
        out.notes.push(format!("{lang}: {} was restarted while it was asked; ask again", session.key.server));
        return (out, None);
    }
    let mut lines = Lines::new(root);
    let root_rel = tether_actors::fs::relative(root, &session.key.root);
    for item in answer.as_array().cloned().unwrap_or_default() {
        let name = item["name"].as_str().unwrap_or("?").to_string();
        let kind = serde_json::from_value::<lsp_types::SymbolKind>(item["kind"].clone())
            .map(kind_name)
            .unwrap_or("symbol");
        let Ok(loc) = serde_json::from_value::<lsp_types::Location>(item["location"].clone()) else {
            continue;
        };
        let mut place = lines.place_of_name(&loc.uri, &loc.range, &name);
        let outside = loc.uri.to_file_path().is_ok_and(|p| !p.starts_with(root));
        if outside {
            place.path = home_relative(&place.path);
        }
        let rank = Rank::of(&name, query);
        let container = item["containerName"].as_str().filter(|c| !c.is_empty()).map(str::to_string);
        out.found.push(Found {
            name,
            container,
            kind,
            place,
            uri: loc.uri,
            range: loc.range,
            lang: lang.to_string(),
            root: root_rel.clone(),
            outside,
            rank,
        });
    }
    if session.workspace_symbols_types_only {
        let (members, notes) = super::members::from_documents(sup, root, &session, query, lang).await;
        out.found.extend(members);
        out.notes.extend(notes);
    }
    (out, Some((session, synced)))
}
