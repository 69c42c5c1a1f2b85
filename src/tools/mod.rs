//! The built-in tools, one handler per file, plus what they share: scope
//! resolution and the sentence that says what a structural scan covered.

pub mod apply_patch;
pub mod ask_user;
pub mod ast_edit;
pub mod ast_grep;
pub mod debug;
pub mod edit;
pub mod eval;
pub mod lsp;
pub mod patch;
pub mod read;
pub mod resolve;
pub mod resources;
pub mod vibe;
pub mod write;

use std::sync::Arc;

use tether_actors::ast::lang::Lang;
use tether_actors::ast::scan::{Coverage, MAX_FILE_BYTES, Scope};

use crate::args::confined;
use crate::handler::{CallContext, ToolError, ToolHandler};

/// The built-in host tools (`read`, `write`, `edit`, `apply_patch`).
pub fn host_file_tools() -> Vec<Arc<dyn ToolHandler>> {
    vec![
        Arc::new(read::Read),
        Arc::new(write::Write),
        Arc::new(edit::Edit),
        Arc::new(apply_patch::ApplyPatch),
    ]
}

/// Resolves the `path` and `language` arguments of a structural tool.
pub(crate) fn scope(
    ctx: &CallContext,
    path: Option<&str>,
    language: Option<&str>,
) -> Result<Scope, ToolError> {
    let path = match path {
        Some(p) => confined(ctx.root(), "path", p)?,
        None => ctx.root().to_path_buf(),
    };
    if !path.exists() {
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        return Err(ToolError::new(format!(
            "argument `path`: `{rel}` does not exist; give an existing file or directory relative to the working directory (omit it to search everything)"
        )));
    }
    let lang = match language {
        Some(id) => {
            Some(id.parse::<Lang>().map_err(|e| ToolError::new(format!("argument `language`: {e}")))?)
        }
        None => None,
    };
    Ok(Scope { root: ctx.root().to_path_buf(), path, lang, prefilter: true })
}

/// "120 python files, 3 dart files" and what was skipped, for result texts.
pub(crate) fn coverage_phrase(cov: &Coverage) -> String {
    let langs: Vec<String> = cov
        .per_language
        .iter()
        .filter(|(lang, _)| !cov.pattern_unparseable_in.contains_key(*lang))
        .map(|(lang, n)| format!("{lang} {n}"))
        .collect();
    let searched = cov.files
        - cov
            .pattern_unparseable_in
            .keys()
            .map(|l| cov.per_language.get(l).copied().unwrap_or(0))
            .sum::<usize>();
    let mut out = format!("searched {searched} file{}", plural(searched));
    if !langs.is_empty() {
        out.push_str(&format!(" ({})", langs.join(", ")));
    }
    let skipped = cov.skipped();
    if skipped > 0 {
        let mut why = Vec::new();
        if cov.skipped_binary > 0 {
            why.push(format!("{} binary", cov.skipped_binary));
        }
        if cov.skipped_large > 0 {
            why.push(format!("{} over {} MiB", cov.skipped_large, MAX_FILE_BYTES / (1024 * 1024)));
        }
        if cov.skipped_not_utf8 > 0 {
            why.push(format!("{} not UTF-8", cov.skipped_not_utf8));
        }
        if cov.unreadable > 0 {
            why.push(format!("{} unreadable", cov.unreadable));
        }
        out.push_str(&format!("; skipped {skipped} ({})", why.join(", ")));
    }
    if !cov.pattern_unparseable_in.is_empty() {
        let langs: Vec<&str> = cov.pattern_unparseable_in.keys().map(String::as_str).collect();
        out.push_str(&format!(
            "; not searched: {} file(s), where the pattern does not parse",
            langs.join(", ")
        ));
    }
    out
}

/// What to say when a scope held no file of a searchable language.
pub(crate) fn nothing_to_search(scope: &Scope, rel: &str) -> Option<String> {
    if !scope.path.is_dir() {
        return None;
    }
    let which = match scope.lang {
        Some(lang) => format!("no {lang} files"),
        None => format!("no files of a bundled language ({})", Lang::id_list()),
    };
    Some(format!(
        "{which} under `{rel}` (after .gitignore); nothing was searched. Check `path`, or pass `language`"
    ))
}

/// The largest file `edit` and `apply_patch` change: they hold it (and
/// its new content) in memory; past it, `write` replaces a file whole.
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// Refuses a file past [`MAX_EDIT_BYTES`], naming the tool and the path.
pub(crate) fn editable_size(tool: &str, path: &std::path::Path, rel: &str) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_EDIT_BYTES => Err(format!(
            "{tool}: `{rel}` holds {} bytes; {tool} changes files of up to {MAX_EDIT_BYTES} bytes — use write to replace it whole",
            meta.len()
        )),
        _ => Ok(()),
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Runs blocking file work off the actor threads.
pub(crate) async fn blocking<F>(tool: &'static str, work: F) -> crate::result::ToolResult
where
    F: FnOnce() -> crate::result::ToolResult + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) => crate::result::ToolResult::error(format!(
            "{tool}: the worker stopped unexpectedly ({e}); nothing is known to have changed, check and retry"
        )),
    }
}
