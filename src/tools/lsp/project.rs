//! What the tree holds: the languages present (for `symbols` and
//! `diagnostics "*"`), and the project checkers run over them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::Addr;
use serde_json::json;
use tether_actors::lsp::checker;
use tether_actors::lsp::config::Table;
use tether_actors::lsp::supervisor::{LspSupervisor, Tables};
use tether_actors::lsp::tree::{self, Present};

use super::render::Lines;
use crate::result::ToolResult;

/// Diagnostics listed per checker run.
const CHECKER_LISTED: usize = 200;

/// What the tree holds, for a workspace question: the working directory's
/// tables and the languages present with their files (only `wanted`, when
/// given; it must be a language of the table).
pub(super) struct Here {
    pub table: Arc<Table>,
    pub present: Vec<Present>,
    /// Whether the walk stopped at `tree::MAX_FILES_WALKED` (languages and
    /// roots past it are not known).
    pub capped: bool,
}

fn what_is_here(root: &Path, table: Arc<Table>, wanted: Option<&str>) -> Result<Here, String> {
    if let Some(l) = wanted
        && table.languages.get(l).is_none()
    {
        return Err(format!(
            "argument `language`: `{l}` is not a language of the table; use one of: {} (or add a [[language]] to tether.toml)",
            table.languages.ids().join(", ")
        ));
    }
    let in_tree = tree::scan(root, &table.languages);
    let capped = in_tree.capped;
    let present = in_tree.languages.into_iter().filter(|p| wanted.is_none_or(|w| w == p.id)).collect();
    Ok(Here { table, present, capped })
}

/// [`what_is_here`] by the supervisor's tables (the ones it routes by),
/// off the actor thread: it walks the tree.
pub(super) async fn languages_here(
    sup: &Addr<LspSupervisor>,
    root: &Path,
    language: Option<String>,
) -> Result<Here, String> {
    let table = match sup.send(Tables).await {
        Ok(table) => table?,
        Err(e) => return Err(format!("the supervisor is not running ({e})")),
    };
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || what_is_here(&root, table, language.as_deref()))
        .await
        .unwrap_or_else(|e| Err(e.to_string()))
}

pub(super) async fn project_check(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    language: Option<String>,
) -> ToolResult {
    let Here { table, present, .. } = match languages_here(&sup, &root, language.clone()).await {
        Ok(here) => here,
        Err(e) => return ToolResult::error(format!("lsp diagnostics: {e}")),
    };
    let mut text = String::new();
    let mut all = Vec::new();
    let mut any_checker = false;
    let mut failed = false;
    for lang in present.iter().map(|p| p.id.as_str()) {
        let Some(checker) = table.candidates(lang).into_iter().find_map(|s| s.checker.clone()) else {
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
