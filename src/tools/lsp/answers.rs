//! Rendering a navigation answer: locations, references grouped by file
//! and paged, hover text, code actions — each saying why when it is empty.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use tether_actors::lsp::server::Opened;

use super::render::{Lines, Place, grouped, hover_text, locations};
use super::{MAX_CODE_ACTIONS, MAX_HOVER_CHARS, MAX_LOCATIONS, Page, readiness, why_none};
use crate::result::ToolResult;

pub(super) fn render_locations(
    session: &Opened,
    root: &Path,
    answer: &Value,
    name: &str,
    symbol: &str,
    rel: &str,
    line: u32,
) -> ToolResult {
    let locs = locations(answer);
    if locs.is_empty() {
        let why = why_none(session, "found none");
        return ToolResult::text(format!(
            "no {} for `{symbol}` at {rel}:{line}: {why}",
            name.replace('_', " ")
        ))
        .with_data(json!({"locations": [], "server": session.key.server}));
    }
    let mut lines = Lines::new(root);
    let total = locs.len();
    let places: Vec<Place> =
        locs.iter().take(MAX_LOCATIONS).map(|(uri, range)| lines.place(uri, range)).collect();
    let mut text = format!("{} of `{symbol}` ({total}):\n", name.replace('_', " "));
    for p in &places {
        let _ = writeln!(text, "{}", p.line_entry());
    }
    if total > places.len() {
        let _ = writeln!(text, "… {} more not listed (at most {MAX_LOCATIONS})", total - places.len());
    }
    // A list found while the server still indexes may be part of the whole.
    if let Some(why) = readiness(session) {
        let _ = writeln!(text, "note: {why}");
    }
    ToolResult::text(text.trim_end())
        .with_data(json!({"locations": places, "total": total, "server": session.key.server}))
}

pub(super) fn render_references(
    session: &Opened,
    root: &Path,
    answer: &Value,
    symbol: &str,
    page: Page,
) -> ToolResult {
    let Page { offset, limit } = page;
    let mut lines = Lines::new(root);
    let mut places: Vec<Place> =
        locations(answer).iter().map(|(uri, range)| lines.place(uri, range)).collect();
    places.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    places.dedup();
    if places.is_empty() {
        let why = why_none(session, "found none");
        return ToolResult::text(format!("no references to `{symbol}`: {why}"))
            .with_data(json!({"total": 0}));
    }
    let files: std::collections::BTreeSet<&str> = places.iter().map(|p| p.path.as_str()).collect();
    let total = places.len();
    if offset >= total {
        return ToolResult::error(format!(
            "lsp references: `offset` {offset} is past the {total} references; use 0 to {}",
            total - 1
        ));
    }
    let end = (offset + limit).min(total);
    let mut text = format!(
        "{total} reference{} to `{symbol}` in {} file{}",
        if total == 1 { "" } else { "s" },
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    if total > limit || offset > 0 {
        let _ = write!(text, " (showing {}–{end}; {limit} a page", offset + 1);
        text.push_str(&super::render::more_hint(end, total, limit));
        text.push(')');
    }
    text.push_str(":\n");
    text.push_str(&grouped(&places, offset, limit));
    if let Some(why) = readiness(session) {
        let _ = write!(text, "note: {why}");
    }
    ToolResult::text(text.trim_end()).with_data(json!({
        "total": total,
        "offset": offset,
        "limit": limit,
        "references": &places[offset..end],
        "server": session.key.server,
    }))
}

pub(super) fn render_hover(
    session: &Opened,
    answer: &Value,
    symbol: &str,
    rel: &str,
    line: u32,
) -> ToolResult {
    match hover_text(answer) {
        Some(text) => {
            let total = text.chars().count();
            let shown = if total > MAX_HOVER_CHARS {
                let kept: String = text.chars().take(MAX_HOVER_CHARS).collect();
                format!("{kept}\n… {} more characters of hover not shown", total - MAX_HOVER_CHARS)
            } else {
                text
            };
            ToolResult::text(shown.clone()).with_data(json!({"hover": shown, "server": session.key.server}))
        }
        None => {
            let why = why_none(session, "has nothing to show");
            ToolResult::text(format!("no hover for `{symbol}` at {rel}:{line}: {why}"))
        }
    }
}

pub(super) fn render_code_actions(
    session: &Opened,
    answer: &Value,
    symbol: &str,
    rel: &str,
    line: u32,
) -> ToolResult {
    let items = answer.as_array().cloned().unwrap_or_default();
    if items.is_empty() {
        let why = readiness(session).unwrap_or_else(|| format!("{} offers none here", session.key.server));
        return ToolResult::text(format!("no code actions for `{symbol}` at {rel}:{line}: {why}"));
    }
    let mut text = format!("{} code action(s) at {rel}:{line} (listed, not applied):\n", items.len());
    for item in items.iter().take(MAX_CODE_ACTIONS) {
        let title = item["title"].as_str().unwrap_or("?");
        match item["kind"].as_str() {
            Some(kind) => {
                let _ = writeln!(text, "- {title} ({kind})");
            }
            None => {
                let _ = writeln!(text, "- {title}");
            }
        }
    }
    if items.len() > MAX_CODE_ACTIONS {
        let _ = writeln!(
            text,
            "… {} more not listed (at most {MAX_CODE_ACTIONS})",
            items.len() - MAX_CODE_ACTIONS
        );
    }
    let total = items.len();
    let listed: Vec<Value> = items.into_iter().take(MAX_CODE_ACTIONS).collect();
    ToolResult::text(text.trim_end())
        .with_data(json!({"actions": listed, "total": total, "server": session.key.server}))
}
