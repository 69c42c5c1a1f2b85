//! `body: true`: the source of what an answer names, so "show me that
//! function" is the same call as "where is it". A definition's location
//! is the name's; its whole range is the innermost symbol of the file's
//! `documentSymbol` around it (hierarchy items too: pyright gives
//! them the name's range alone). Capped: [`MAX_BODY_LINES`] lines a body, [`MAX_BODIES`] bodies an
//! answer, each cut said.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use actix::Addr;
use lsp_types::{Position, Range, Url};
use serde_json::{Value, json};
use tether_actors::fs::display_path;
use tether_actors::lsp::supervisor::LspSupervisor;

use super::{REQUEST_TIMEOUT, open};
use crate::result::ToolResult;

/// Lines of one body shown at most (the rest counted, with where they end).
pub const MAX_BODY_LINES: usize = 100;
/// Bodies one answer shows at most (the rest named as not shown).
pub const MAX_BODIES: usize = 5;
/// How long one answer's bodies may take in all (each file's symbols
/// asked of its server).
pub const BODIES_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// One body, as the answer's data holds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Body {
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The lines shown, without their numbers.
    pub text: String,
    /// Lines of the body past [`MAX_BODY_LINES`] not shown.
    pub cut: usize,
}

impl Body {
    /// `lines` (0-based, the file's) from `range.start.line` to
    /// `range.end.line`, capped.
    pub fn of(path: String, lines: &[String], range: &Range) -> Body {
        let first = range.start.line as usize;
        let last = (range.end.line as usize).min(lines.len().saturating_sub(1)).max(first);
        let whole = last + 1 - first;
        let shown = whole.min(MAX_BODY_LINES);
        let text = lines.iter().skip(first).take(shown).cloned().collect::<Vec<_>>().join("\n");
        Body { path, start_line: first as u32 + 1, end_line: last as u32 + 1, text, cut: whole - shown }
    }

    /// The lines with their numbers, indented, and the cut said.
    fn rendered(&self, indent: &str) -> String {
        let mut out = String::new();
        for (k, line) in self.text.split('\n').enumerate() {
            let _ = writeln!(out, "{indent}{}| {line}", self.start_line as usize + k);
        }
        if self.cut > 0 {
            let _ = writeln!(
                out,
                "{indent}… {} more lines to line {} not shown (at most {MAX_BODY_LINES} a body; `read` the rest)",
                self.cut, self.end_line
            );
        }
        out
    }
}

/// Whether `range` holds `pos`.
fn holds(range: &Range, pos: &Position) -> bool {
    (range.start.line, range.start.character) <= (pos.line, pos.character)
        && (pos.line, pos.character) <= (range.end.line, range.end.character)
}

/// The whole range of the innermost symbol of a `documentSymbol` answer
/// that `pos` names: whose name (`selectionRange`) holds it — a
/// parameter's position names no function, though it is on its line;
/// flat `SymbolInformation` answers, which have no name range, by the
/// symbol that starts on the position's line.
pub fn enclosing(symbols: &Value, pos: &Position) -> Option<Range> {
    fn walk(items: &[Value], pos: &Position, best: &mut Option<Range>) {
        for item in items {
            let range: Option<Range> = serde_json::from_value(item["range"].clone())
                .or_else(|_| serde_json::from_value(item["location"]["range"].clone()))
                .ok();
            let Some(range) = range.filter(|r| holds(r, pos)) else { continue };
            let named = serde_json::from_value::<Range>(item["selectionRange"].clone())
                .map_or(range.start.line == pos.line, |s| holds(&s, pos));
            if named {
                *best = Some(range);
            }
            if let Some(children) = item["children"].as_array() {
                walk(children, pos, best);
            }
        }
    }
    let mut best = None;
    walk(symbols.as_array().map(Vec::as_slice).unwrap_or(&[]), pos, &mut best);
    best
}

/// What [`of_locations`] found: the bodies, and why others are missing.
pub struct Bodies {
    pub bodies: Vec<Body>,
    pub notes: Vec<String>,
}

/// The bodies of the symbols at `locations` (the first [`MAX_BODIES`]),
/// each file's symbols asked of its server, all within [`BODIES_WAIT`].
/// Only files of the working directory outside its dependencies: a
/// library's file would start a server of its own (a `node_modules`
/// package is a project root) or none (a standard library's stub).
pub async fn of_locations(sup: &Addr<LspSupervisor>, root: &Path, locations: &[(Url, Range)]) -> Bodies {
    let mut out = Bodies { bodies: Vec::new(), notes: Vec::new() };
    let deadline = tokio::time::Instant::now() + BODIES_WAIT;
    // Each file's symbols and text, asked once.
    let mut files: HashMap<PathBuf, Result<FileSymbols, String>> = HashMap::new();
    for (uri, range) in locations.iter().take(MAX_BODIES) {
        let Ok(path) = uri.to_file_path() else {
            out.notes.push(format!("note: no body for {uri}: not a file"));
            continue;
        };
        let shown = display_path(root, &path);
        let dependency = path.strip_prefix(root).map_or(true, |rel| {
            rel.components().any(|c| {
                matches!(
                    c.as_os_str().to_str(),
                    Some("node_modules" | ".venv" | "venv" | "site-packages" | "vendor" | "target")
                )
            })
        });
        if dependency {
            out.notes.push(format!(
                "note: no body for {shown}:{}: it is outside the project's own files (`read` it)",
                range.start.line + 1
            ));
            continue;
        }
        if !files.contains_key(&path) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let symbols = match tokio::time::timeout(left, file_symbols(sup, &path)).await {
                Ok(symbols) => symbols,
                Err(_) => Err(format!("the bodies took more than {} s in all", BODIES_WAIT.as_secs())),
            };
            files.insert(path.clone(), symbols);
        }
        let (symbols, lines, server) = match &files[&path] {
            Ok(found) => found,
            Err(e) => {
                out.notes.push(format!("note: no body for {shown}:{}: {e}", range.start.line + 1));
                continue;
            }
        };
        let Some(whole) = enclosing(symbols, &range.start) else {
            out.notes.push(format!(
                "note: no body for {shown}:{}: no symbol {server} lists in the file is there",
                range.start.line + 1,
            ));
            continue;
        };
        out.bodies.push(Body::of(shown, lines, &whole));
    }
    if locations.len() > MAX_BODIES {
        out.notes.push(format!(
            "note: bodies shown for the first {MAX_BODIES} locations only; {} more not shown",
            locations.len() - MAX_BODIES
        ));
    }
    out
}

/// A file's `documentSymbol` answer, its lines, and the server's name.
type FileSymbols = (Value, Vec<String>, String);

/// The symbols of the file at `path` as its server lists them, the text
/// they are about, and the server's name.
async fn file_symbols(
    sup: &Addr<LspSupervisor>,
    path: &Path,
) -> Result<(Value, Vec<String>, String), String> {
    let (session, _) = open(sup, path, false).await?;
    let doc = session.doc.clone().ok_or("the server synced no document")?;
    let server = session.key.server.clone();
    let symbols = session
        .request("textDocument/documentSymbol", json!({"textDocument": {"uri": doc.uri}}), REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("{server} could not list the file's symbols ({e})"))?;
    Ok((symbols, doc.text.lines().map(str::to_string).collect(), server))
}

/// `result` with the bodies after its list, and in its data.
pub fn attach(mut result: ToolResult, found: Bodies) -> ToolResult {
    for body in &found.bodies {
        result.append(&format!(
            "{}:{}–{}:\n{}",
            body.path,
            body.start_line,
            body.end_line,
            body.rendered("  ").trim_end()
        ));
    }
    for note in &found.notes {
        result.append(note);
    }
    if let Some(Value::Object(data)) = result.data.as_mut() {
        data.insert("bodies".into(), json!(found.bodies));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(a: (u32, u32), b: (u32, u32)) -> Value {
        json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
    }

    #[test]
    fn the_innermost_symbol_named_at_the_position_is_its_body() {
        let symbols = json!([{
            "name": "C", "kind": 5, "range": range((0, 0), (9, 0)), "selectionRange": range((0, 6), (0, 7)),
            "children": [{"name": "m", "kind": 6, "range": range((2, 4), (4, 0)), "selectionRange": range((2, 8), (2, 9))}],
        }]);
        let at = |line, character| enclosing(&symbols, &Position::new(line, character));
        assert_eq!(at(2, 8).map(|r| r.start.line), Some(2), "the method, not its class");
        assert_eq!(at(0, 6).map(|r| r.end.line), Some(9), "the class");
        assert_eq!(at(2, 12), None, "a parameter on the method's line names no method");
        assert_eq!(at(3, 2), None, "inside the method, at no name: nothing named there");
        let flat = json!([{"name": "f", "kind": 12, "location": {"uri": "file:///a.py", "range": range((5, 0), (7, 3))}}]);
        assert_eq!(enclosing(&flat, &Position::new(5, 4)).map(|r| r.end.line), Some(7));
    }

    #[test]
    fn a_long_body_is_cut_and_says_where_it_ends() {
        let lines: Vec<String> = (1..=300).map(|n| format!("line {n}")).collect();
        let whole =
            Body::of("a.py".into(), &lines, &serde_json::from_value(range((9, 0), (199, 0))).unwrap());
        assert_eq!((whole.start_line, whole.end_line, whole.cut), (10, 200, 191 - MAX_BODY_LINES));
        let shown = whole.rendered("");
        assert!(shown.starts_with("10| line 10\n"), "{shown}");
        assert!(
            shown.contains(&format!("… {} more lines to line 200 not shown", 191 - MAX_BODY_LINES)),
            "{shown}"
        );
        let short = Body::of("a.py".into(), &lines, &serde_json::from_value(range((0, 0), (2, 5))).unwrap());
        assert_eq!((short.cut, short.text.as_str()), (0, "line 1\nline 2\nline 3"));
    }
}
