//! `lsp_edit` `format`: a file, or `lines` of it, formatted by its
//! language server (`textDocument/formatting` / `rangeFormatting`) with
//! the file's own indentation: `.editorconfig` where it says, else what
//! the file itself uses (tabs or spaces, and how many).

use std::path::{Path, PathBuf};

use actix::Addr;
use lsp_types::request::{Formatting, RangeFormatting};
use lsp_types::{
    DocumentFormattingParams, DocumentRangeFormattingParams, FormattingOptions, Position, Range,
    TextDocumentIdentifier,
};
use tether_actors::lsp::config::FEATURE_FORMAT;
use tether_actors::lsp::edits::apply_edits;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::lsp::workspace_edit::Played;

use super::{Computed, EditArgs, NAME, failed, finish, moved_since};
use crate::handler::CallContext;
use crate::result::ToolResult;
use crate::tools::lsp::{REQUEST_TIMEOUT, open, open_helper};

/// Indentation width assumed when neither `.editorconfig` nor the file
/// says (the default of most servers' formatters).
const DEFAULT_INDENT: u32 = 4;

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
    let options = options_for(&root, &path, &doc.text);
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

/// The formatting options for `path`: `.editorconfig` (from `root` down
/// to the file's folder, nearer files winning), else the file's own
/// indentation.
fn options_for(root: &Path, path: &Path, text: &str) -> FormattingOptions {
    let said = editorconfig(root, path);
    let (file_spaces, file_width) = indentation_of(text);
    let insert_spaces = match said.indent_style.as_deref() {
        Some("tab") => false,
        Some("space") => true,
        _ => file_spaces,
    };
    let tab_size = said.indent_size.or(said.tab_width).unwrap_or(file_width);
    FormattingOptions {
        tab_size,
        insert_spaces,
        trim_trailing_whitespace: said.trim_trailing_whitespace,
        insert_final_newline: said.insert_final_newline,
        ..FormattingOptions::default()
    }
}

/// Whether `text` indents with spaces (rather than tabs), and by how many:
/// the most common step by which one line's indentation exceeds the line
/// before it.
fn indentation_of(text: &str) -> (bool, u32) {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    let mut steps = std::collections::BTreeMap::<u32, usize>::new();
    let mut previous = 0u32;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with('\t') {
            tabs += 1;
            continue;
        }
        let width = (line.len() - line.trim_start_matches(' ').len()) as u32;
        if width > 0 {
            spaces += 1;
        }
        if width > previous && matches!(width - previous, 2 | 3 | 4 | 8) {
            *steps.entry(width - previous).or_default() += 1;
        }
        previous = width;
    }
    let width =
        steps.into_iter().max_by_key(|(step, n)| (*n, *step)).map_or(DEFAULT_INDENT, |(step, _)| step);
    (tabs <= spaces, width)
}

/// What `.editorconfig` files say of one file.
#[derive(Debug, Default, PartialEq)]
struct EditorConfig {
    indent_style: Option<String>,
    indent_size: Option<u32>,
    tab_width: Option<u32>,
    trim_trailing_whitespace: Option<bool>,
    insert_final_newline: Option<bool>,
}

/// Reads the `.editorconfig` files from `path`'s folder up to `root` (or
/// to one that says `root = true`), applying the farthest first.
fn editorconfig(root: &Path, path: &Path) -> EditorConfig {
    let mut found = Vec::new();
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !d.starts_with(root) {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(d.join(".editorconfig")) {
            let is_root = text.lines().any(|l| {
                let l = l.trim().to_lowercase().replace(' ', "");
                l == "root=true"
            });
            found.push((d.to_path_buf(), text));
            if is_root {
                break;
            }
        }
        dir = d.parent();
    }
    let mut said = EditorConfig::default();
    for (dir, text) in found.iter().rev() {
        let rel = path.strip_prefix(dir).map(|p| p.to_string_lossy().replace('\\', "/")).unwrap_or_default();
        apply_sections(&mut said, text, &rel);
    }
    said
}

/// Applies the sections of one `.editorconfig` whose globs match `rel`
/// (the file's path relative to that `.editorconfig`'s folder).
fn apply_sections(said: &mut EditorConfig, text: &str, rel: &str) {
    let mut applies = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            applies = section_matches(section, rel);
            continue;
        }
        if !applies {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let (key, value) = (key.trim().to_lowercase(), value.trim().to_lowercase());
        let flag = match value.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        match key.as_str() {
            "indent_style" => said.indent_style = Some(value),
            "indent_size" if value == "tab" => said.indent_size = None,
            "indent_size" => said.indent_size = value.parse().ok().or(said.indent_size),
            "tab_width" => said.tab_width = value.parse().ok().or(said.tab_width),
            "trim_trailing_whitespace" => said.trim_trailing_whitespace = flag,
            "insert_final_newline" => said.insert_final_newline = flag,
            _ => {}
        }
    }
}

/// EditorConfig's glob rule: a pattern without `/` matches the file's
/// name in any folder; with one, the path from the `.editorconfig`'s folder.
fn section_matches(section: &str, rel: &str) -> bool {
    let pattern = if section.contains('/') {
        section.trim_start_matches('/').to_string()
    } else {
        format!("**/{section}")
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(rel))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_own_indentation_is_read() {
        assert_eq!(indentation_of("if a:\n    b\n    if c:\n        d\n"), (true, 4));
        assert_eq!(indentation_of("function f() {\n  a();\n  if (b) {\n    c();\n  }\n}\n"), (true, 2));
        assert_eq!(indentation_of("int f() {\n\treturn 1;\n}\n"), (false, DEFAULT_INDENT));
        assert_eq!(indentation_of("x = 1\n"), (true, DEFAULT_INDENT));
    }

    #[test]
    fn editorconfig_sections_apply_in_order_nearer_files_winning() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("web/src")).unwrap();
        std::fs::write(
            root.join(".editorconfig"),
            "root = true\n[*]\nindent_style = space\nindent_size = 4\n[*.{ts,js}]\nindent_size = 2\n",
        )
        .unwrap();
        std::fs::write(root.join("web/.editorconfig"), "[src/**.ts]\nindent_style = tab\n").unwrap();
        let ts = editorconfig(root, &root.join("web/src/a.ts"));
        assert_eq!((ts.indent_style.as_deref(), ts.indent_size), (Some("tab"), Some(2)));
        let py = editorconfig(root, &root.join("web/src/a.py"));
        assert_eq!((py.indent_style.as_deref(), py.indent_size), (Some("space"), Some(4)));
        let options = options_for(root, &root.join("web/src/a.ts"), "x\n    y\n");
        assert!(!options.insert_spaces && options.tab_size == 2, "{options:?}");
        let options = options_for(root, &root.join("web/b.js"), "x\n\ty\n");
        assert!(
            options.insert_spaces && options.tab_size == 2,
            "the file's tabs lose to what it says: {options:?}"
        );
    }
}
