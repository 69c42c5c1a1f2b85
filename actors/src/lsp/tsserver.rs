//! tsserver's own protocol, asked through typescript-language-server's
//! `workspace/executeCommand` `typescript.tsserverRequest` (5.x), for the
//! two answers its LSP side cannot give truthfully:
//!
//! - **diagnostics of the synced content**: it publishes without
//!   versions, and not at all when a kind of list was empty and stays
//!   empty, so a published list (or its absence) says nothing about which
//!   content it is about. tsserver's `*DiagnosticsSync` requests queue
//!   behind the `change` the document's sync sent (a change is a fence in
//!   its request queue), so their answer is about that content.
//! - **workspace symbols of every loaded project**: its `workspace/symbol`
//!   searches the project of the document it last handled a request for,
//!   which another caller may have moved; `navto` without a file searches
//!   every project tsserver holds, and names each item's container.
//!
//! The shapes are tsserver's (`protocol.d.ts`): 1-based lines and
//! offsets in UTF-16 code units; categories and kinds as words.

use std::time::Duration;

use lsp_types::{Diagnostic, DiagnosticSeverity, DiagnosticTag, NumberOrString, Position, Range, SymbolKind};
use serde_json::{Value, json};

use super::opened::Opened;
use crate::wire::jsonrpc::RpcError;
use crate::wire::pending::RequestError;

/// The command typescript-language-server runs tsserver requests through.
pub const COMMAND: &str = "typescript.tsserverRequest";
/// tsserver's diagnostics requests, in the order its LSP side publishes
/// their lists: what parsing found, what checking found, suggestions.
const DIAGNOSTICS_KINDS: [&str; 3] =
    ["syntacticDiagnosticsSync", "semanticDiagnosticsSync", "suggestionDiagnosticsSync"];
/// The JSON-RPC code a refusal tsserver answered in its own protocol is
/// reported with (JSON-RPC's "internal error").
const REFUSED: i64 = -32603;
/// Most items `navto` is asked for (tsserver's own default is unbounded;
/// the answer is cut by the caller anyway).
pub const NAVTO_MAX: usize = 1000;

/// Sends tsserver `command` with `args`; its response's `body`.
async fn ask(session: &Opened, command: &str, args: Value, timeout: Duration) -> Result<Value, RequestError> {
    let params = json!({"command": COMMAND, "arguments": [command, args]});
    let answer = session.request("workspace/executeCommand", params, timeout).await?;
    // The whole tsserver response comes back (`{type, success, body}`);
    // only a body-less answer is taken as the body itself.
    match answer.get("body") {
        Some(body) => Ok(body.clone()),
        None if answer.get("success").and_then(Value::as_bool) == Some(false) => {
            Err(RequestError::Rpc(RpcError {
                code: REFUSED,
                message: format!(
                    "tsserver refused {command}: {}",
                    answer.get("message").and_then(Value::as_str).unwrap_or("no reason given")
                ),
                data: None,
            }))
        }
        None => Ok(answer),
    }
}

/// Every diagnostic tsserver has for `uri` as the server holds it now —
/// syntactic, semantic and suggestions, as typescript-language-server
/// would publish them. The three requests are sent at once and answered
/// in order; each is bounded by `timeout`.
pub async fn diagnostics(
    session: &Opened,
    uri: &str,
    timeout: Duration,
) -> Result<Vec<Diagnostic>, RequestError> {
    let args = json!({"file": uri});
    let [syntactic, semantic, suggestion] = DIAGNOSTICS_KINDS;
    let (a, b, c) = tokio::join!(
        ask(session, syntactic, args.clone(), timeout),
        ask(session, semantic, args.clone(), timeout),
        ask(session, suggestion, args, timeout),
    );
    let mut out = Vec::new();
    for body in [a?, b?, c?] {
        out.extend(body.as_array().into_iter().flatten().filter_map(diagnostic));
    }
    Ok(out)
}

/// One tsserver diagnostic as LSP's, as typescript-language-server
/// converts it (related information left out: it is not shown).
fn diagnostic(d: &Value) -> Option<Diagnostic> {
    let severity = match d["category"].as_str() {
        Some("warning") => DiagnosticSeverity::WARNING,
        Some("suggestion") => DiagnosticSeverity::HINT,
        _ => DiagnosticSeverity::ERROR,
    };
    let mut tags = Vec::new();
    if d["reportsUnnecessary"].as_bool() == Some(true) {
        tags.push(DiagnosticTag::UNNECESSARY);
    }
    if d["reportsDeprecated"].as_bool() == Some(true) {
        tags.push(DiagnosticTag::DEPRECATED);
    }
    Some(Diagnostic {
        range: Range::new(position(&d["start"])?, position(&d["end"])?),
        severity: Some(severity),
        code: d["code"].as_i64().map(|c| NumberOrString::Number(c as i32)),
        source: Some(d["source"].as_str().unwrap_or("typescript").to_string()),
        message: d["text"].as_str()?.to_string(),
        tags: (!tags.is_empty()).then_some(tags),
        ..Default::default()
    })
}

/// A tsserver location (`{line, offset}`, both 1-based) as an LSP position.
fn position(at: &Value) -> Option<Position> {
    let line = at["line"].as_u64()?.checked_sub(1)?;
    let character = at["offset"].as_u64()?.checked_sub(1)?;
    Some(Position::new(u32::try_from(line).ok()?, u32::try_from(character).ok()?))
}

/// `query`'s symbols in every project tsserver holds, in the shape of
/// `workspace/symbol`'s `SymbolInformation` (with `containerName`).
pub async fn navto(session: &Opened, query: &str, timeout: Duration) -> Result<Value, RequestError> {
    let body =
        ask(session, "navto", json!({"searchValue": query, "maxResultCount": NAVTO_MAX}), timeout).await?;
    let items = body.as_array().into_iter().flatten().filter_map(|item| {
        let file = item["file"].as_str()?;
        let uri = lsp_types::Url::from_file_path(file).ok()?;
        let range = Range::new(position(&item["start"])?, position(&item["end"])?);
        let mut symbol = json!({
            "name": item["name"].as_str()?,
            "kind": symbol_kind(item["kind"].as_str().unwrap_or("")),
            "location": {"uri": uri, "range": range},
        });
        if let Some(container) = item["containerName"].as_str().filter(|c| !c.is_empty()) {
            symbol["containerName"] = json!(container);
        }
        Some(symbol)
    });
    Ok(Value::Array(items.collect()))
}

/// tsserver's element kind (`ScriptElementKind`) as an LSP symbol kind,
/// as typescript-language-server maps it.
fn symbol_kind(kind: &str) -> SymbolKind {
    match kind {
        "class" | "local class" => SymbolKind::CLASS,
        "function" | "local function" => SymbolKind::FUNCTION,
        "method" | "getter" | "setter" => SymbolKind::METHOD,
        "const" | "enum member" => SymbolKind::CONSTANT,
        "constructor" => SymbolKind::CONSTRUCTOR,
        "enum" => SymbolKind::ENUM,
        "field" => SymbolKind::FIELD,
        "file" => SymbolKind::FILE,
        "interface" => SymbolKind::INTERFACE,
        "module" => SymbolKind::MODULE,
        "property" | "JSX attribute" => SymbolKind::PROPERTY,
        "type" => SymbolKind::TYPE_PARAMETER,
        _ => SymbolKind::VARIABLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsserver_diagnostic_reads_as_typescript_language_server_publishes_it() {
        let d = json!({
            "start": {"line": 3, "offset": 7}, "end": {"line": 3, "offset": 10},
            "text": "Type 'string' is not assignable to type 'number'.",
            "code": 2322, "category": "error"
        });
        let got = diagnostic(&d).unwrap();
        assert_eq!(got.range, Range::new(Position::new(2, 6), Position::new(2, 9)));
        assert_eq!(got.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(got.code, Some(NumberOrString::Number(2322)));
        assert_eq!(got.source.as_deref(), Some("typescript"));
        let hint = json!({
            "start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 4},
            "text": "'x' is declared but its value is never read.", "code": 6133,
            "category": "suggestion", "reportsUnnecessary": true
        });
        let got = diagnostic(&hint).unwrap();
        assert_eq!(got.severity, Some(DiagnosticSeverity::HINT));
        assert_eq!(got.tags, Some(vec![DiagnosticTag::UNNECESSARY]));
        assert!(diagnostic(&json!({"text": "no place"})).is_none());
    }
}
