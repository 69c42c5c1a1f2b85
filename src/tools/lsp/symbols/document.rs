//! A file's symbols (`documentSymbol`): nested, at their names' own
//! positions; narrowed by a query on the name, or — a dotted query
//! (`Session.request`) — on the path of names it nests in.

use std::fmt::Write as _;
use std::path::PathBuf;

use actix::Addr;
use serde_json::{Value, json};
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::wire::pending::RequestError;

use super::super::render::kind_name;
use super::super::{Page, REQUEST_TIMEOUT, open, ready_for, taken_in_notes, why_none};
use super::dotted::{self, Dotted};
use crate::result::ToolResult;

/// One row of a file's symbols.
struct Row {
    depth: usize,
    /// The names of the symbols it nests in, outermost first (a flat
    /// answer's `containerName`, read as names).
    within: Vec<String>,
    name: String,
    kind: &'static str,
    /// 1-based line and character column of its name.
    line: u32,
    column: usize,
    /// Its whole range, where the server gave one.
    range: Option<lsp_types::Range>,
}

impl Row {
    /// `Session.request`: its name after those it nests in.
    fn path(&self) -> String {
        let mut path = self.within.join(".");
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&self.name);
        path
    }

    /// The names it nests in, then its own (gopls's `(*Session).Request`
    /// is `Session`, then `Request`).
    fn qualified(&self) -> (Vec<String>, String) {
        let mut qualifiers: Vec<String> = self.within.iter().flat_map(|w| dotted::segments(w)).collect();
        let mut own = dotted::segments(&self.name);
        let last = own.pop().unwrap_or_else(|| self.name.clone());
        qualifiers.extend(own);
        (qualifiers, last)
    }
}

fn walk(items: &[Value], depth: usize, within: &[String], lines: &[&str], rows: &mut Vec<Row>) {
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
        let range = serde_json::from_value(item["range"].clone())
            .or_else(|_| serde_json::from_value(item["location"]["range"].clone()))
            .ok();
        // A flat answer (SymbolInformation) says where a symbol nests by
        // its container's name.
        let mut within = within.to_vec();
        if let Some(container) = item["containerName"].as_str().filter(|c| !c.is_empty()) {
            within.push(container.to_string());
        }
        rows.push(Row {
            depth,
            within: within.clone(),
            name: name.clone(),
            kind,
            line: line + 1,
            column: col,
            range,
        });
        if let Some(children) = item["children"].as_array() {
            within.push(name);
            walk(children, depth + 1, &within, lines, rows);
        }
    }
}

/// Whether `row` answers `query`: its name holds it (ignoring case), or,
/// dotted, its name holds the member and it nests in the containers.
fn answers(row: &Row, query: &str, dotted: Option<&Dotted>) -> bool {
    match dotted {
        None => row.name.to_lowercase().contains(&query.to_lowercase()),
        Some(d) => {
            let (qualifiers, own) = row.qualified();
            own.to_lowercase().contains(&d.member.to_lowercase()) && d.sits_in(&qualifiers)
        }
    }
}

/// The symbols of `path`; with `query`, those whose names hold it
/// (ignoring case) or, dotted, those nested as it says; with `body`, the
/// first ones' source.
pub(in crate::tools::lsp) async fn document_symbols(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    path: PathBuf,
    query: Option<String>,
    body: bool,
    page: Page,
) -> ToolResult {
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
        Err(RequestError::Unsupported(why)) => return ToolResult::error(format!("lsp symbols: {why}")),
        Err(e) => return ToolResult::error(format!("lsp symbols: {} failed: {e}", session.key.server)),
    };
    let text_lines: Vec<&str> = doc.text.lines().collect();
    let mut rows: Vec<Row> = Vec::new();
    walk(answer.as_array().map(Vec::as_slice).unwrap_or(&[]), 0, &[], &text_lines, &mut rows);
    let listed = rows.len();
    if let Some(q) = query.as_deref() {
        let dotted = Dotted::parse(q);
        let all = std::mem::take(&mut rows);
        let (kept, rest): (Vec<Row>, Vec<Row>) =
            all.into_iter().partition(|r| answers(r, q, dotted.as_ref()));
        rows = kept;
        if rows.is_empty() && listed > 0 {
            let text = match &dotted {
                None => format!(
                    "none of the {listed} symbol(s) in `{rel}` has `{q}` in its name; leave `query` out to list them all"
                ),
                Some(d) => {
                    let member: Vec<&Row> = rest.iter().filter(|r| answers(r, &d.member, None)).collect();
                    if member.is_empty() {
                        format!(
                            "no symbol in `{rel}` has `{}` in its name (nor nests in `{}`); leave `query` out to list all {listed}",
                            d.member,
                            d.container()
                        )
                    } else {
                        let within: Vec<String> = member.iter().map(|r| r.within.join(".")).collect();
                        let sit = within.iter().map(|w| Some(w.as_str()).filter(|w| !w.is_empty()));
                        format!(
                            "no symbol in `{rel}` named like `{}` nests in `{}`; `{}` alone matches {}: {}; write one of those before `.{}`",
                            d.member,
                            d.container(),
                            d.member,
                            member.len(),
                            dotted::where_they_sit(sit),
                            d.member
                        )
                    }
                }
            };
            return ToolResult::text(text).with_data(json!({"file": rel, "total": 0, "symbols": []}));
        }
    }
    if rows.is_empty() {
        let why = why_none(&session, "reports none");
        let mut text = format!("no symbols in `{rel}`: {why}");
        for note in &notes {
            text.push('\n');
            text.push_str(note);
        }
        return ToolResult::text(text);
    }
    let total = rows.len();
    let (span, paged) = match page.span(total, "symbols") {
        Ok(span) => span,
        Err(e) => return ToolResult::error(format!("lsp symbols: {e}")),
    };
    let rows = &rows[span.clone()];
    let matching = query.as_deref().map(|q| format!(" matching `{q}`")).unwrap_or_default();
    let mut text = format!("{total} symbol(s){matching} in `{rel}`{paged}:\n");
    for r in rows {
        // The whole file as a tree; rows a query picked out, and the rows
        // of a later page, each with the names it nests in (its parents
        // are not listed with it).
        let shown = if query.is_some() || span.start > 0 {
            r.path()
        } else {
            format!("{}{}", "  ".repeat(r.depth), r.name)
        };
        let _ = writeln!(text, "{shown} ({}) {}:{}", r.kind, r.line, r.column);
    }
    // Bodies of the first rows, none inside one already shown (a class's
    // methods are in its body).
    let mut bodies = super::super::body::Bodies { bodies: Vec::new(), notes: Vec::new() };
    if body {
        let lines: Vec<String> = doc.text.lines().map(str::to_string).collect();
        let mut skipped = 0;
        for r in rows {
            let Some(range) = r.range else { continue };
            if bodies
                .bodies
                .iter()
                .any(|b| b.start_line <= range.start.line + 1 && range.end.line < b.end_line)
            {
                continue;
            }
            if bodies.bodies.len() == super::super::body::MAX_BODIES {
                skipped += 1;
                continue;
            }
            bodies.bodies.push(super::super::body::Body::of(rel.clone(), &lines, &range));
        }
        if skipped > 0 {
            bodies.notes.push(format!(
                "note: bodies shown for the first {} symbols only; {skipped} more not shown (narrow with `query`)",
                super::super::body::MAX_BODIES
            ));
        }
    }
    for note in &notes {
        let _ = writeln!(text, "{note}");
    }
    let data: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({"depth": r.depth, "name": r.name, "container": r.within.join("."), "kind": r.kind,
                   "line": r.line, "column": r.column})
        })
        .collect();
    let result = ToolResult::text(text.trim_end())
        .with_data(json!({"file": rel, "total": total, "offset": span.start, "symbols": data}));
    if body { super::super::body::attach(result, bodies) } else { result }
}
