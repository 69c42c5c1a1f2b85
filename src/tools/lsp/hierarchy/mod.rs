//! `call_hierarchy` and `type_hierarchy`: the items the server prepares at
//! the symbol (`textDocument/prepareCallHierarchy`,
//! `prepareTypeHierarchy`), then, asked of each, its callers or callees
//! (`callHierarchy/incomingCalls`, `outgoingCalls`), its direct
//! supertypes or subtypes (`typeHierarchy/supertypes`, `subtypes`):
//! listed grouped by file like references, each call with the line it is
//! made on, capped. A server with no type hierarchy (pyright,
//! typescript-language-server) has one derived from what it does answer:
//! [`derived`].

mod derived;

pub(super) use derived::derive;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use lsp_types::{Range, Url};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_actors::lsp::server::Opened;
use tether_actors::wire::jsonrpc::METHOD_NOT_FOUND;
use tether_actors::wire::pending::RequestError;

use super::render::{Lines, Place, kind_name};
use super::{Action, REQUEST_TIMEOUT, action_name, readiness, why_none};
use crate::handler::ToolError;
use crate::result::ToolResult;

/// Callers, callees, supertypes or subtypes listed at most (the rest counted).
pub const MAX_HIERARCHY_ITEMS: usize = 200;
/// Items the server prepares at one position (overloads) that are asked
/// for their neighbours (the rest said).
pub const MAX_PREPARED: usize = 5;
/// Call sites listed under each caller or callee (the rest counted).
pub const MAX_CALL_SITES: usize = 5;

/// Which way a hierarchy is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Incoming,
    Outgoing,
    Supertypes,
    Subtypes,
}

impl Direction {
    fn word(self) -> &'static str {
        match self {
            Direction::Incoming => "incoming",
            Direction::Outgoing => "outgoing",
            Direction::Supertypes => "supertypes",
            Direction::Subtypes => "subtypes",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Direction::Incoming => "callHierarchy/incomingCalls",
            Direction::Outgoing => "callHierarchy/outgoingCalls",
            Direction::Supertypes => "typeHierarchy/supertypes",
            Direction::Subtypes => "typeHierarchy/subtypes",
        }
    }

    /// What one found item is, singular and plural.
    fn nouns(self) -> (&'static str, &'static str) {
        match self {
            Direction::Incoming => ("caller", "callers"),
            Direction::Outgoing => ("callee", "callees"),
            Direction::Supertypes => ("direct supertype", "direct supertypes"),
            Direction::Subtypes => ("direct subtype", "direct subtypes"),
        }
    }
}

/// The direction of a hierarchy action (its default when none is given),
/// `None` for other actions; a direction of the other hierarchy is refused.
pub(super) fn direction(action: Action, given: Option<Direction>) -> Result<Option<Direction>, ToolError> {
    let (default, fits): (Direction, fn(Direction) -> bool) = match action {
        Action::CallHierarchy => {
            (Direction::Incoming, |d| matches!(d, Direction::Incoming | Direction::Outgoing))
        }
        Action::TypeHierarchy => {
            (Direction::Supertypes, |d| matches!(d, Direction::Supertypes | Direction::Subtypes))
        }
        _ => return Ok(None),
    };
    match given {
        None => Ok(Some(default)),
        Some(d) if fits(d) => Ok(Some(d)),
        Some(d) => Err(ToolError::new(format!(
            "lsp {}: argument `direction`: `{}` belongs to the other hierarchy; give {}",
            action_name(action),
            d.word(),
            if action == Action::CallHierarchy { "incoming or outgoing" } else { "supertypes or subtypes" }
        ))),
    }
}

/// Asks each item the server prepared for its neighbours in `direction`.
/// The answer: `{"prepared": [item], "found": [{"item", "sites_uri",
/// "sites"}]}`, the call sites (`fromRanges`) in the file `sites_uri`.
pub(super) async fn follow(
    session: &Opened,
    direction: Direction,
    prepared: &Value,
) -> Result<Value, String> {
    let mut items: Vec<Value> = prepared.as_array().cloned().unwrap_or_default();
    // Overloads each prepare an item; each is asked in turn, so a few.
    let prepared_total = items.len();
    items.truncate(MAX_PREPARED);
    let mut found = Vec::new();
    for item in &items {
        let answer = session
            .request(direction.method(), json!({"item": item}), REQUEST_TIMEOUT)
            .await
            .map_err(|e| match e {
                RequestError::Rpc(e) if e.code == METHOD_NOT_FOUND => format!(
                    "{} does not list {} (it answered `{}` with \"method not found\"); {}",
                    session.key.server,
                    direction.nouns().1,
                    direction.method(),
                    match direction {
                        Direction::Outgoing =>
                            "ask `definition` at the calls in its body (`body: true` shows them)",
                        _ => "ask `references` instead",
                    }
                ),
                e => format!("{} failed to list the {}: {e}", session.key.server, direction.nouns().1),
            })?;
        for entry in answer.as_array().cloned().unwrap_or_default() {
            found.push(match direction {
                // The caller, and where in its file it makes the calls.
                Direction::Incoming => {
                    json!({"item": entry["from"], "sites_uri": entry["from"]["uri"], "sites": entry["fromRanges"]})
                }
                // The callee, and where in the prepared item's file it is called.
                Direction::Outgoing => {
                    json!({"item": entry["to"], "sites_uri": item["uri"], "sites": entry["fromRanges"]})
                }
                Direction::Supertypes | Direction::Subtypes => json!({"item": entry, "sites": []}),
            });
        }
    }
    Ok(json!({"prepared": items, "prepared_total": prepared_total, "found": found}))
}

/// One found item, resolved to where it is.
struct Found {
    name: String,
    kind: &'static str,
    /// Where it is declared, when the server says more than the file:
    /// `class APIRoute` for one of several `__init__`s.
    container: Option<String>,
    place: Place,
    uri: Url,
    /// Its name's range.
    selection: Range,
    range: Range,
    sites: Vec<Place>,
}

fn read_found(lines: &mut Lines, entry: &Value) -> Option<Found> {
    let item = &entry["item"];
    let uri: Url = serde_json::from_value(item["uri"].clone()).ok()?;
    let range: Range = serde_json::from_value(item["range"].clone()).ok()?;
    let selection: Range = serde_json::from_value(item["selectionRange"].clone()).unwrap_or(range);
    let kind = serde_json::from_value::<lsp_types::SymbolKind>(item["kind"].clone())
        .map(kind_name)
        .unwrap_or("type");
    let sites_uri: Option<Url> = serde_json::from_value(entry["sites_uri"].clone()).ok();
    let ranges: Vec<Range> = serde_json::from_value(entry["sites"].clone()).unwrap_or_default();
    let mut sites: Vec<Place> = match &sites_uri {
        Some(at) => ranges.iter().map(|r| lines.place(at, r)).collect(),
        None => Vec::new(),
    };
    sites.sort_by_key(|p| (p.line, p.column));
    sites.dedup();
    Some(Found {
        name: item["name"].as_str().unwrap_or("?").to_string(),
        kind,
        container: item["detail"].as_str().and_then(container),
        place: lines.place(&uri, &selection),
        uri,
        selection,
        range,
        sites,
    })
}

/// What an item's `detail` says beyond its file: pyright writes `class
/// APIRoute (routing.py)` or `(routing.py) · Workspace`; the file and the
/// scope go, the class stays.
fn container(detail: &str) -> Option<String> {
    let detail = detail.split(" · ").next().unwrap_or("");
    let detail = match (detail.rfind(" ("), detail.ends_with(')')) {
        (Some(open), true) => &detail[..open],
        _ if detail.starts_with('(') && detail.ends_with(')') => "",
        _ => detail,
    };
    let detail = detail.trim();
    (!detail.is_empty() && detail.len() <= 80).then(|| detail.to_string())
}

/// The found items of a [`follow`] answer, in the order they are listed.
fn collect(lines: &mut Lines, answer: &Value) -> Vec<Found> {
    let mut found: Vec<Found> =
        answer["found"].as_array().into_iter().flatten().filter_map(|e| read_found(lines, e)).collect();
    // The project's own first, then what lies outside it (a standard
    // library's `print`), each by file and line.
    let key = |f: &Found| (f.place.path.starts_with('/'), f.place.path.clone(), f.place.line, f.place.column);
    found.sort_by_key(key);
    found.dedup_by(|a, b| a.place == b.place && a.name == b.name);
    found
}

/// The answer of [`follow`] as text: grouped by file, each item at its
/// name with its source line, the call sites under it, a line's calls
/// on one row; and where the listed items are named, for their bodies.
pub(super) fn render(
    session: &Opened,
    root: &Path,
    answer: &Value,
    direction: Direction,
    symbol: &str,
    rel: &str,
    line: u32,
) -> (ToolResult, Vec<(Url, Range)>) {
    let server = &session.key.server;
    let (one, many) = direction.nouns();
    let hierarchy =
        if matches!(direction, Direction::Incoming | Direction::Outgoing) { "call" } else { "type" };
    if answer["prepared"].as_array().is_none_or(|a| a.is_empty()) {
        let why = readiness(session).unwrap_or_else(|| {
            format!(
                "{server} has no {hierarchy} hierarchy there (is `{symbol}` a {}?)",
                if hierarchy == "call" { "function or method" } else { "class, interface or type" }
            )
        });
        let none = ToolResult::text(format!("no {many} of `{symbol}` at {rel}:{line}: {why}"))
            .with_data(json!({"direction": direction.word(), "total": 0, "items": [], "server": server}));
        return (none, Vec::new());
    }
    let mut lines = Lines::new(root);
    let found = collect(&mut lines, answer);
    if found.is_empty() {
        let why = why_none(session, "found none");
        let none = ToolResult::text(format!("no {many} of `{symbol}` at {rel}:{line}: {why}"))
            .with_data(json!({"direction": direction.word(), "total": 0, "items": [], "server": server}));
        return (none, Vec::new());
    }
    let total = found.len();
    let mut by_file: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &found {
        *by_file.entry(f.place.path.as_str()).or_default() += 1;
    }
    let calls: usize = found.iter().map(|f| f.sites.len()).sum();
    let mut text = format!("{total} {} of `{symbol}`", if total == 1 { one } else { many });
    if hierarchy == "call" {
        let _ = write!(text, " ({calls} call{})", if calls == 1 { "" } else { "s" });
    }
    let _ = write!(text, " in {} file{}", by_file.len(), if by_file.len() == 1 { "" } else { "s" });
    if total > MAX_HIERARCHY_ITEMS {
        let _ = write!(text, " (showing {MAX_HIERARCHY_ITEMS})");
    }
    text.push_str(":\n");
    let mut current: Option<&str> = None;
    for f in found.iter().take(MAX_HIERARCHY_ITEMS) {
        if current != Some(f.place.path.as_str()) {
            let _ = writeln!(text, "{} ({})", f.place.path, by_file[f.place.path.as_str()]);
            current = Some(f.place.path.as_str());
        }
        let container = f.container.as_deref().map(|c| format!(", in {c}")).unwrap_or_default();
        let _ = writeln!(
            text,
            "  {} ({}{container}) {}:{}: {}",
            f.name,
            f.kind,
            f.place.line,
            f.place.column,
            f.place.text.as_deref().unwrap_or("")
        );
        // Incoming: the calls are in the caller's file; outgoing: in the
        // file asked about, named when it is another.
        let shown = &f.sites[..f.sites.len().min(MAX_CALL_SITES)];
        for row in shown.chunk_by(|a, b| a.path == b.path && a.line == b.line) {
            let at = if row[0].path == f.place.path { String::new() } else { format!("{} ", row[0].path) };
            let columns: Vec<String> = row.iter().map(|s| s.column.to_string()).collect();
            let _ = writeln!(
                text,
                "    calls at {at}{}:{}: {}",
                row[0].line,
                columns.join(","),
                row[0].text.as_deref().unwrap_or("")
            );
        }
        if f.sites.len() > MAX_CALL_SITES {
            let _ = writeln!(
                text,
                "    … {} more calls (at most {MAX_CALL_SITES} listed)",
                f.sites.len() - MAX_CALL_SITES
            );
        }
    }
    if total > MAX_HIERARCHY_ITEMS {
        let _ = writeln!(
            text,
            "… {} more not listed (at most {MAX_HIERARCHY_ITEMS})",
            total - MAX_HIERARCHY_ITEMS
        );
    }
    if matches!(direction, Direction::Supertypes | Direction::Subtypes) {
        let _ = writeln!(text, "(one level: ask type_hierarchy again at one of them for the next)");
    }
    if let Some(total) = answer["prepared_total"].as_u64().filter(|&n| n as usize > MAX_PREPARED) {
        let _ = writeln!(
            text,
            "note: {server} found {total} declarations (overloads) there; the first {MAX_PREPARED} were followed"
        );
    }
    if let Some(how) = answer["derived"].as_str() {
        let _ = writeln!(text, "note: {server} offers no standard type hierarchy; {how}");
    }
    if let Some(why) = readiness(session) {
        let _ = writeln!(text, "note: {why}");
    }
    let items: Vec<Value> = found
        .iter()
        .take(MAX_HIERARCHY_ITEMS)
        .map(|f| {
            json!({
                "name": f.name, "kind": f.kind, "container": f.container, "path": f.place.path, "line": f.place.line,
                "column": f.place.column, "calls": f.sites,
                // Where the server gave the whole range, not only the name's.
                "end_line": (f.range != f.selection).then_some(f.range.end.line + 1),
            })
        })
        .collect();
    let named = found.into_iter().take(MAX_HIERARCHY_ITEMS).map(|f| (f.uri, f.selection)).collect();
    let result = ToolResult::text(text.trim_end()).with_data(json!({
        "direction": direction.word(),
        "total": total,
        "calls": calls,
        "items": items,
        "server": server,
    }));
    (result, named)
}

#[cfg(test)]
mod tests {
    use super::container;

    #[test]
    fn an_items_container_is_what_its_detail_says_beyond_the_file() {
        assert_eq!(container("class APIRoute (routing.py)").as_deref(), Some("class APIRoute"));
        assert_eq!(container("(routing.py) · Workspace"), None);
        assert_eq!(container("class Dog (a.py) · Workspace").as_deref(), Some("class Dog"));
        assert_eq!(container(""), None);
        assert_eq!(container("ns::Widget").as_deref(), Some("ns::Widget"));
    }
}
