//! Members a server's workspace symbols leave out (jdtls lists types
//! only: `Ledger`, never the method `Ledger.Depends`): found in the
//! document symbols of the files of the server's languages that hold the
//! query's text, at most [`MAX_MEMBER_FILES`] of them within
//! [`MEMBER_SEARCH_WAIT`], and said to be found so.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use actix::Addr;
use serde_json::json;
use tether_actors::lsp::server::Opened;
use tether_actors::lsp::supervisor::LspSupervisor;

use super::super::render::{Lines, kind_name};
use super::super::{REQUEST_TIMEOUT, open, outline};
use super::{Found, Rank};

/// Most files whose document symbols a member search reads.
pub(super) const MAX_MEMBER_FILES: usize = 40;
/// How long a member search may take in all.
pub(super) const MEMBER_SEARCH_WAIT: Duration = Duration::from_secs(60);
/// Most files a member search walks for the query's text.
const MAX_FILES_READ: usize = 20_000;

/// The members named like `query` in the files of `session`'s server that
/// hold its text, and what to say of how they were found.
pub(super) async fn from_documents(
    sup: &Addr<LspSupervisor>,
    workdir: &Path,
    session: &Opened,
    query: &str,
    lang: &str,
) -> (Vec<Found>, Vec<String>) {
    let server = session.key.server.clone();
    let (serves, server_root, wanted) =
        (session.serves.clone(), session.key.root.clone(), query.to_lowercase());
    let holding = tokio::task::spawn_blocking(move || files_holding(&server_root, &serves, &wanted))
        .await
        .unwrap_or_default();
    let mut notes = Vec::new();
    if holding.is_empty() {
        return (Vec::new(), notes);
    }
    let wanted_here = query.to_lowercase();
    let deadline = Instant::now() + MEMBER_SEARCH_WAIT;
    let mut found = Vec::new();
    let mut read = 0;
    let mut lines = Lines::new(workdir);
    let root_rel = tether_actors::fs::relative(workdir, &session.key.root);
    for path in holding.iter().take(MAX_MEMBER_FILES) {
        if Instant::now() >= deadline {
            break;
        }
        let Ok((file_session, _)) = open(sup, path, false).await else { continue };
        let Some(doc) = file_session.doc.clone() else { continue };
        let left = deadline.saturating_duration_since(Instant::now()).min(REQUEST_TIMEOUT);
        let Ok(answer) = file_session
            .request("textDocument/documentSymbol", json!({"textDocument": {"uri": doc.uri}}), left)
            .await
        else {
            continue;
        };
        read += 1;
        for listed in outline::flatten(&answer) {
            // A constructor is named as its class, which the server's own
            // answer lists already.
            let constructor = listed.kind == Some(lsp_types::SymbolKind::CONSTRUCTOR);
            if constructor
                || listed.containers.is_empty()
                || !listed.name.to_lowercase().contains(&wanted_here)
            {
                continue;
            }
            let place = lines.place_of_name(&doc.uri, &listed.at, &listed.name);
            found.push(Found {
                rank: Rank::of(&listed.name, query),
                kind: listed.kind.map(kind_name).unwrap_or("symbol"),
                container: listed.containers.last().cloned(),
                name: listed.name,
                place,
                uri: doc.uri.clone(),
                range: listed.at,
                lang: lang.to_string(),
                root: root_rel.clone(),
                outside: false,
            });
        }
    }
    let cut = holding.len().saturating_sub(read);
    let mut note = format!(
        "{lang}: {server}'s workspace symbols list types only; members were read from the document symbols of the {read} file(s) holding `{query}`"
    );
    if cut > 0 {
        note.push_str(&format!(
            "; {cut} more file(s) hold it and were not read (at most {MAX_MEMBER_FILES} files, {} s): give `file` to search one, or a longer query",
            MEMBER_SEARCH_WAIT.as_secs()
        ));
    }
    notes.push(note);
    (found, notes)
}

/// The files `serves` covers under `root` whose text holds `wanted`
/// (lower case), in path order; the walk keeps to what git would.
fn files_holding(root: &Path, serves: &tether_actors::lsp::server::Serves, wanted: &str) -> Vec<PathBuf> {
    use std::ops::ControlFlow;
    use tether_actors::project_walk::{self, DEPENDENCIES, Entry, Rules};
    let mut out = Vec::new();
    let mut walked = 0;
    let rules = Rules { ignore_files: true, skip: DEPENDENCIES, max_depth: None };
    project_walk::walk(root, rules, |entry| {
        walked += 1;
        if walked > MAX_FILES_READ {
            return ControlFlow::Break(());
        }
        if let Entry::File(path) = entry
            && serves.file(path)
            && std::fs::read_to_string(path).is_ok_and(|t| t.to_lowercase().contains(wanted))
        {
            out.push(path.to_path_buf());
        }
        ControlFlow::Continue(())
    });
    out.sort();
    out
}
