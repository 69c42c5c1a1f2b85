//! What the tree holds: the languages present (for `symbols` and
//! `diagnostics "*"`), and the project checkers run over them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use actix::Addr;
use serde_json::json;
use tether_actors::lsp::checker;
use tether_actors::lsp::config::{self, ServerConfig};
use tether_actors::lsp::supervisor::LspSupervisor;

use super::render::Lines;
use crate::result::ToolResult;

/// Diagnostics listed per checker run.
const CHECKER_LISTED: usize = 200;

pub(super) fn present_languages(root: &Path, wanted: Option<&str>) -> Result<Vec<&'static str>, String> {
    if let Some(l) = wanted {
        let known = ["python", "c", "cpp", "rust", "typescript", "javascript", "go", "dart"];
        return known.iter().find(|k| **k == l).map(|k| vec![*k]).ok_or_else(|| {
            format!(
                "argument `language`: `{l}` is not a language servers are configured for; use one of: {}",
                known.join(", ")
            )
        });
    }
    let (counts, _) = tether_actors::ast::scan::count_files_by_language(root, 20_000);
    let mut langs = Vec::new();
    // A grammar's extensions, through the server table: any of them that
    // names a server language (python's first, in order, is `.bazel`).
    for (lang, _) in counts {
        let server_langs = lang
            .extensions()
            .iter()
            .filter_map(|ext| config::language_of(&PathBuf::from(format!("x.{ext}"))));
        for l in server_langs {
            if !langs.contains(&l) {
                langs.push(l);
            }
        }
    }
    Ok(langs)
}

/// [`present_languages`] off the actor thread: it may walk the tree.
pub(super) async fn languages_here(
    root: &Path,
    language: Option<String>,
) -> Result<Vec<&'static str>, String> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || present_languages(&root, language.as_deref()))
        .await
        .unwrap_or_else(|e| Err(e.to_string()))
}

pub(super) async fn project_check(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    language: Option<String>,
) -> ToolResult {
    let langs = match languages_here(&root, language.clone()).await {
        Ok(l) => l,
        Err(e) => return ToolResult::error(format!("lsp diagnostics: {e}")),
    };
    let table: Vec<ServerConfig> = match config::load(&root) {
        Ok(t) => t,
        Err(e) => return ToolResult::error(format!("lsp diagnostics: {e}")),
    };
    let _ = sup;
    let mut text = String::new();
    let mut all = Vec::new();
    let mut any_checker = false;
    let mut failed = false;
    for lang in langs {
        let Some(checker) =
            table.iter().filter(|s| s.languages.iter().any(|l| l == lang)).find_map(|s| s.checker.clone())
        else {
            let _ = writeln!(text, "{lang}: no project checker is configured (add one to tether.toml)");
            continue;
        };
        any_checker = true;
        match checker::run(&checker, &root).await {
            Ok(diags) => {
                let errors = diags.iter().filter(|d| d.severity == "error").count();
                let _ = writeln!(
                    text,
                    "{lang}: `{} {}` reported {} diagnostic(s), {errors} error(s){}",
                    checker.command,
                    checker.args.join(" "),
                    diags.len(),
                    if diags.is_empty() { "" } else { ":" }
                );
                let mut lines = Lines::new(&root);
                for d in diags.iter().take(CHECKER_LISTED) {
                    let path = if d.path.is_absolute() { d.path.clone() } else { root.join(&d.path) };
                    let uri = lsp_types::Url::from_file_path(&path).ok();
                    let place = uri.map(|u| {
                        lines.place(
                            &u,
                            &lsp_types::Range::new(
                                lsp_types::Position::new(d.line.saturating_sub(1), 0),
                                lsp_types::Position::new(d.line.saturating_sub(1), 0),
                            ),
                        )
                    });
                    let rel = place
                        .as_ref()
                        .map(|p| p.path.clone())
                        .unwrap_or_else(|| d.path.display().to_string());
                    let code = d.code.as_ref().map(|c| format!(" [{c}]")).unwrap_or_default();
                    let _ = writeln!(
                        text,
                        "{rel}:{}:{}: {}{code} {}",
                        d.line,
                        d.column,
                        d.severity,
                        d.message.lines().next().unwrap_or("")
                    );
                    if let Some(src) = place.and_then(|p| p.text) {
                        let _ = writeln!(text, "    | {src}");
                    }
                }
                if diags.len() > CHECKER_LISTED {
                    let _ = writeln!(text, "… {} more not shown", diags.len() - CHECKER_LISTED);
                }
                all.extend(diags);
            }
            Err(e) => {
                // Never "0 diagnostics": a checker that did not check says why.
                failed = true;
                let _ = writeln!(text, "{lang}: the project check failed: {e}");
            }
        }
    }
    if text.is_empty() {
        text = "no source files of a language with a project checker here".to_string();
    }
    let result = ToolResult::text(text.trim_end()).with_data(json!({"diagnostics": all}));
    if any_checker && !failed { result } else { ToolResult { is_error: true, ..result } }
}
