//! `lsp symbols`: a file's symbols (`documentSymbol`, nested, at their
//! names' own positions) and the workspace's (`workspace/symbol`, asked of
//! each server of a language the tree holds, once per server).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use actix::Addr;
use serde_json::{Value, json};
use tether_actors::lsp::config;
use tether_actors::lsp::supervisor::{LspSupervisor, Route};

use super::render::{Lines, kind_name};
use super::{
    DOCUMENT_SYMBOLS_CAP, REQUEST_TIMEOUT, WORKSPACE_SYMBOLS_CAP, languages_here, open, readiness, ready_for,
    taken_in_notes,
};
use crate::result::ToolResult;

/// A file of `language` under `root`, to route a language-wide request through.
fn sample_file(root: &Path, language: &str) -> Option<PathBuf> {
    ignore::WalkBuilder::new(root)
        .build()
        .flatten()
        .take(20_000)
        .find(|e| {
            e.file_type().is_some_and(|t| t.is_file()) && config::language_of(e.path()) == Some(language)
        })
        .map(|e| e.into_path())
}

/// How a symbol's name answers the query, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// The name itself.
    Exact,
    /// The name in another case.
    ExactIgnoringCase,
    /// The name starts with the query.
    Prefix,
    /// The name holds the query.
    Contains,
    /// Whatever else the server's fuzzy matching found.
    Fuzzy,
}

impl Rank {
    fn of(name: &str, query: &str) -> Rank {
        let (lower, wanted) = (name.to_lowercase(), query.to_lowercase());
        if name == query {
            Rank::Exact
        } else if lower == wanted {
            Rank::ExactIgnoringCase
        } else if lower.starts_with(&wanted) {
            Rank::Prefix
        } else if lower.contains(&wanted) {
            Rank::Contains
        } else {
            Rank::Fuzzy
        }
    }

    fn word(self) -> &'static str {
        match self {
            Rank::Exact => "exact",
            Rank::ExactIgnoringCase => "exact-ignoring-case",
            Rank::Prefix => "prefix",
            Rank::Contains => "contains",
            Rank::Fuzzy => "fuzzy",
        }
    }
}

/// One symbol a server answered with.
struct Found {
    name: String,
    kind: &'static str,
    place: super::render::Place,
    lang: &'static str,
    /// The root of the server that answered, relative to the working directory.
    root: String,
    outside: bool,
    rank: Rank,
}

pub(super) async fn workspace_symbols(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    query: String,
    language: Option<String>,
) -> ToolResult {
    let langs = match languages_here(&root, language.clone()).await {
        Ok(l) => l,
        Err(e) => return ToolResult::error(format!("lsp symbols: {e}")),
    };
    let mut places = Vec::new();
    let mut notes = Vec::new();
    // One server may serve several languages (typescript-language-server:
    // TypeScript and JavaScript); it is asked once, through a file of the
    // language it is built for — a `.js` file outside every tsconfig is
    // a project of its own, and tsserver searches only that one.
    let mut langs = langs;
    langs.sort_by_key(|l| *l == "javascript");
    let mut asked = std::collections::BTreeSet::new();
    // Servers that could not be asked or did not answer: with no symbol
    // from any other, "none match" would be a guess.
    let mut failed = 0;
    // Servers a file was opened in, to be asked.
    let mut reached = 0;
    for lang in langs {
        let probe_root = root.clone();
        let sample = tokio::task::spawn_blocking(move || sample_file(&probe_root, lang)).await.ok().flatten();
        let Some(sample) = sample else { continue };
        // Routed before it is opened: opening a second language's file in
        // a server already asked would make it the one the server searches
        // for the next caller.
        if let Ok(Ok(routed)) = sup.send(Route { file: sample.clone() }).await
            && !asked.insert(routed.key)
        {
            continue;
        }
        let (session, synced) = match open(&sup, &sample, false).await {
            Ok(s) => s,
            Err(e) => {
                notes.push(format!("{lang}: {e}"));
                failed += 1;
                continue;
            }
        };
        reached += 1;
        let ready = ready_for(&session).await;
        // typescript-language-server searches the project of the document
        // it last handled a request for: make that the sample, not a file
        // another call left in a project of its own.
        if let Some(doc) = &session.doc {
            let here = json!({"textDocument": {"uri": doc.uri}, "position": {"line": 0, "character": 0}});
            let _ = session.request("textDocument/hover", here, REQUEST_TIMEOUT).await;
        }
        for note in taken_in_notes(&session, &root, &synced, &ready) {
            notes.push(format!("{lang}: {}", note.trim_start_matches("note: ")));
        }
        if let Some(p) = session.shared.indexing() {
            notes.push(format!(
                "{lang}: {} still indexing{}; results may be incomplete",
                session.key.server,
                p.detail()
            ));
        }
        let answer = match session.request("workspace/symbol", json!({"query": query}), REQUEST_TIMEOUT).await
        {
            Ok(v) => v,
            Err(e) => {
                notes.push(format!("{lang}: {} failed: {e}", session.key.server));
                failed += 1;
                continue;
            }
        };
        let mut lines = Lines::new(&root);
        for item in answer.as_array().cloned().unwrap_or_default() {
            let name = item["name"].as_str().unwrap_or("?").to_string();
            let kind = serde_json::from_value::<lsp_types::SymbolKind>(item["kind"].clone())
                .map(kind_name)
                .unwrap_or("symbol");
            let Ok(loc) = serde_json::from_value::<lsp_types::Location>(item["location"].clone()) else {
                continue;
            };
            let place = lines.place(&loc.uri, &loc.range);
            let outside = loc.uri.to_file_path().is_ok_and(|p| !p.starts_with(&root));
            let rank = Rank::of(&name, &query);
            let root_rel = tether_actors::fs::relative(&root, &session.key.root);
            places.push(Found { name, kind, place, lang, root: root_rel, outside, rank });
        }
    }
    // What the model asked for first: exact names, then prefixes, then what
    // the servers' fuzzy matching let through; the project's before what
    // lies outside the working directory (a toolchain's standard library).
    // Stable: within a rank, each server's own order.
    places.sort_by_key(|f| (f.outside, f.rank));
    let several_roots = places.iter().any(|f| f.root != places[0].root);
    let total = places.len();
    if reached == 0 && failed == 0 {
        // No server was asked: "none match" would be about nothing.
        return ToolResult::error(format!(
            "lsp symbols: no server was asked for `{query}`: no file under the working directory is of a language a server is configured for{}; pass `language`, or check `tether status`",
            language.as_deref().map(|l| format!(" (asked for {l})")).unwrap_or_default()
        ));
    }
    if total == 0 && failed > 0 {
        return ToolResult::error(format!(
            "lsp symbols: no server could answer for `{query}`: {}; ask again (a crashed server restarts on the next call)",
            notes.join("; ")
        ));
    }
    let mut text = if total == 0 {
        format!("no workspace symbols match `{query}`")
    } else {
        format!(
            "{total} workspace symbol(s) match `{query}`{}:\n",
            if total > WORKSPACE_SYMBOLS_CAP {
                format!(" (showing {WORKSPACE_SYMBOLS_CAP}; narrow the query)")
            } else {
                String::new()
            }
        )
    };
    for f in places.iter().take(WORKSPACE_SYMBOLS_CAP) {
        let root = if several_roots { format!(", root {}", f.root) } else { String::new() };
        let outside = if f.outside { " (outside the working directory)" } else { "" };
        let _ = writeln!(
            text,
            "{} ({}, {}{root}) {}:{}:{}{outside}",
            f.name, f.kind, f.lang, f.place.path, f.place.line, f.place.column
        );
    }
    for note in &notes {
        let _ = writeln!(text, "note: {note}");
    }
    let data: Vec<Value> = places
        .iter()
        .take(WORKSPACE_SYMBOLS_CAP)
        .map(|f| {
            json!({
                "name": f.name, "kind": f.kind, "path": f.place.path, "line": f.place.line,
                "column": f.place.column, "language": f.lang, "root": f.root,
                "outside_workdir": f.outside, "match": f.rank.word(),
            })
        })
        .collect();
    ToolResult::text(text.trim_end()).with_data(json!({"total": total, "symbols": data}))
}

pub(super) async fn document_symbols(sup: Addr<LspSupervisor>, root: PathBuf, path: PathBuf) -> ToolResult {
    let rel = tether_actors::fs::relative(&root, &path);
    let (session, synced) = match open(&sup, &path, false).await {
        Ok(s) => s,
        Err(e) => return ToolResult::error(format!("lsp symbols: {e}")),
    };
    let doc = session.doc.clone().expect("a file was synced");
    let ready = ready_for(&session).await;
    let notes = taken_in_notes(&session, &root, &synced, &ready);
    let answer = match session
        .request("textDocument/documentSymbol", json!({"textDocument": {"uri": doc.uri}}), REQUEST_TIMEOUT)
        .await
    {
        Ok(v) => v,
        Err(e) => return ToolResult::error(format!("lsp symbols: {} failed: {e}", session.key.server)),
    };
    let text_lines: Vec<&str> = doc.text.lines().collect();
    let mut rows: Vec<(usize, String, &'static str, u32, usize)> = Vec::new();
    fn walk(
        items: &[Value],
        depth: usize,
        lines: &[&str],
        rows: &mut Vec<(usize, String, &'static str, u32, usize)>,
    ) {
        for item in items {
            let name = item["name"].as_str().unwrap_or("?").to_string();
            let kind = serde_json::from_value::<lsp_types::SymbolKind>(item["kind"].clone())
                .map(kind_name)
                .unwrap_or("symbol");
            // DocumentSymbol: the name's own range; SymbolInformation: the location.
            let start = if item.get("selectionRange").is_some() {
                &item["selectionRange"]["start"]
            } else {
                &item["location"]["range"]["start"]
            };
            let line = start["line"].as_u64().unwrap_or(0) as u32;
            let character = start["character"].as_u64().unwrap_or(0) as u32;
            let col = lines
                .get(line as usize)
                .map_or(character as usize + 1, |l| tether_actors::lsp::edits::char_column(l, character));
            rows.push((depth, name, kind, line + 1, col));
            if let Some(children) = item["children"].as_array() {
                walk(children, depth + 1, lines, rows);
            }
        }
    }
    walk(answer.as_array().map(Vec::as_slice).unwrap_or(&[]), 0, &text_lines, &mut rows);
    if rows.is_empty() {
        let why = readiness(&session)
            .unwrap_or_else(|| format!("{} is ready and reports none", session.key.server));
        let mut text = format!("no symbols in `{rel}`: {why}");
        for note in &notes {
            text.push('\n');
            text.push_str(note);
        }
        return ToolResult::text(text);
    }
    let total = rows.len();
    let mut text = format!(
        "{total} symbol(s) in `{rel}`{}:\n",
        if total > DOCUMENT_SYMBOLS_CAP {
            format!(" (showing {DOCUMENT_SYMBOLS_CAP})")
        } else {
            String::new()
        }
    );
    for (depth, name, kind, line, col) in rows.iter().take(DOCUMENT_SYMBOLS_CAP) {
        let _ = writeln!(text, "{}{name} ({kind}) {line}:{col}", "  ".repeat(*depth));
    }
    for note in &notes {
        let _ = writeln!(text, "{note}");
    }
    let data: Vec<Value> = rows
        .iter()
        .take(DOCUMENT_SYMBOLS_CAP)
        .map(|(d, n, k, l, c)| json!({"depth": d, "name": n, "kind": k, "line": l, "column": c}))
        .collect();
    ToolResult::text(text.trim_end()).with_data(json!({"file": rel, "total": total, "symbols": data}))
}
