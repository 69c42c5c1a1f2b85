//! `lsp_edit` `format`: a file, or `lines` of it, formatted by its
//! language server (`textDocument/formatting` / `rangeFormatting`) with
//! the file's own indentation: `.editorconfig` where it says, else what
//! the file itself uses (tabs or spaces, and how many).

use std::path::{Path, PathBuf};

use actix::Addr;
use lsp_types::request::{Formatting, RangeFormatting};
use lsp_types::{
    DocumentFormattingParams, DocumentRangeFormattingParams, Position, Range, TextDocumentIdentifier,
};
use tether_actors::lsp::config::FEATURE_FORMAT;
use tether_actors::lsp::edits::apply_edits;
use tether_actors::lsp::formatting;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::lsp::workspace_edit::Played;

use super::{Computed, EditArgs, NAME, failed, finish, moved_since};
use crate::handler::CallContext;
use crate::result::ToolResult;
use crate::tools::lsp::{REQUEST_TIMEOUT, open, open_helper};

pub(super) async fn format(
    sup: Addr<LspSupervisor>,
    ctx: CallContext,
    path: PathBuf,
    args: EditArgs,
) -> ToolResult {
    let root = ctx.root().to_path_buf();
    let rel = tether_actors::fs::relative(&root, &path);
    let (main, synced) = match open(&sup, &path, false).await {
        Ok(found) => found,
        Err(e) => return ToolResult::error(format!("{NAME}: {e}")),
    };
    // A helper its language has for formatting (ruff beside pyright) formats
    // instead of the main server.
    let mut notes = Vec::new();
    let session = match open_helper(&sup, &path, FEATURE_FORMAT, synced.clone()).await {
        Some(Ok((helper, _))) => helper,
        Some(Err(e)) => {
            notes.push(format!(
                "note: the formatting helper could not be asked ({e}); {} formatted",
                main.key.server
            ));
            main
        }
        None => main,
    };
    let doc = session.doc.clone().expect("a file was synced");
    let method =
        if args.lines.is_some() { "textDocument/rangeFormatting" } else { "textDocument/formatting" };
    if !session.offers(method) {
        let what = if args.lines.is_some() { "a range of lines of " } else { "" };
        return ToolResult::error(format!(
            "{NAME}: {} does not format {what}`{rel}`; nothing was written. A formatter for it: {}",
            session.key.server,
            formatter_for(&path)
        ));
    }
    let lines = doc.text.lines().count() as u32;
    let options = formatting::options_for(&root, &path, &doc.text);
    let indent = if options.insert_spaces { format!("{} spaces", options.tab_size) } else { "tabs".into() };
    let text_document = TextDocumentIdentifier { uri: doc.uri.clone() };
    let asked = match args.lines.as_deref() {
        Some(&[first, last]) => {
            if last > lines {
                return ToolResult::error(format!(
                    "{NAME}: argument `lines`: `{rel}` has {lines} line(s), so [{first}, {last}] runs past its end; give lines within 1..={lines}"
                ));
            }
            let range = Range::new(Position::new(first - 1, 0), Position::new(last, 0));
            let params = DocumentRangeFormattingParams {
                text_document,
                range,
                options,
                work_done_progress_params: Default::default(),
            };
            session.ask::<RangeFormatting>(params, REQUEST_TIMEOUT).await
        }
        _ => {
            let params = DocumentFormattingParams {
                text_document,
                options,
                work_done_progress_params: Default::default(),
            };
            session.ask::<Formatting>(params, REQUEST_TIMEOUT).await
        }
    };
    let edits = match asked {
        Ok(edits) => edits.unwrap_or_default(),
        Err(e) => {
            return ToolResult::error(format!(
                "{NAME}: {} could not format `{rel}`: {}; nothing was written",
                session.key.server,
                failed(&e)
            ));
        }
    };
    let after = match apply_edits(&doc.text, &edits) {
        Ok(after) => after,
        Err(e) => {
            return ToolResult::error(format!(
                "{NAME}: {}'s formatting edits do not apply to `{rel}` ({e}); nothing was written",
                session.key.server
            ));
        }
    };
    let scope = match args.lines.as_deref() {
        Some(&[first, last]) => format!("lines {first}-{last} of `{rel}`"),
        _ => format!("`{rel}`"),
    };
    if after == *doc.text {
        return ToolResult::text(format!(
            "{scope} is already formatted as {} formats it; nothing was written",
            session.key.server
        ));
    }
    if std::fs::read_to_string(&path).ok().as_deref() != Some(doc.text.as_str()) {
        return ToolResult::error(format!(
            "{NAME}: `{rel}` changed on disk while {} formatted it; nothing was written. Call it again",
            session.key.server
        ));
    }
    let files =
        vec![Played { path, before: Some(doc.text.to_string()), after: Some(after), edits: edits.len() }];
    if let Some(why) = moved_since(&sup, &root, &synced, &files).await.moved {
        return ToolResult::error(format!("{NAME}: {why}; nothing was written. Call it again"));
    }
    let what = format!("formatting of {scope} ({}, {indent})", session.key.server);
    finish(
        ctx,
        Computed { what, server: session.key.server.clone(), files, notes: Vec::new(), made: Vec::new() },
        args.preview,
    )
    .await
}

/// A formatter a user could install for `path`'s language.
fn formatter_for(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or_default() {
        "py" | "pyi" => "ruff (`pip install ruff`, then `ruff format`) or black",
        "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs" | "json" | "css" | "scss" | "html" | "md" | "yaml"
        | "yml" => "prettier (`npm install -g prettier`)",
        "rs" => "rustfmt (`rustup component add rustfmt`)",
        "go" => "gofmt (it ships with Go)",
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" => "clang-format (`apt-get install clang-format`)",
        "java" => "google-java-format",
        "sh" | "bash" => "shfmt",
        _ => "none known to tether for this language",
    }
}
