//! What the tree holds: the languages present (for `symbols` and
//! `diagnostics "*"`), and the project checkers run over them — once per
//! project root their server would use, whatever languages a checker
//! covers — their diagnostics counted (by severity, by file) before one
//! page of them, in file order, grouped by file.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actix::Addr;
use serde_json::json;
use tether_actors::lsp::census::{self, Present};
use tether_actors::lsp::checker;
use tether_actors::lsp::config::{Checker, Table};
use tether_actors::lsp::discovery;
use tether_actors::lsp::supervisor::{LspSupervisor, Tables};

use tether_actors::fs::display_path;

use super::Page;
use super::render::Lines;
use crate::result::ToolResult;

/// Files named with their counts before a page: past them, the count
/// of the rest (their diagnostics are on the later pages).
const MAX_FILES_COUNTED: usize = 50;

/// What the tree holds, for a workspace question: the working directory's
/// tables and the languages present with their files (only `wanted`, when
/// given; it must be a language of the table).
pub(super) struct Here {
    pub table: Arc<Table>,
    pub present: Vec<Present>,
    /// Whether the walk stopped at `census::MAX_FILES_WALKED` (languages and
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
    let in_tree = census::scan(root, &table.languages);
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

/// One diagnostic a checker reported, where it is.
#[derive(Debug, Clone, serde::Serialize)]
struct Reported {
    /// Relative to the working directory, or absolute outside it.
    path: String,
    line: u32,
    column: u32,
    severity: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    message: String,
    /// The language whose checker reported it.
    language: String,
}

/// `3 errors, 1 warning`: counts by severity, the most severe first.
fn by_severity<'a>(severities: impl Iterator<Item = &'a str>) -> (Vec<(String, usize)>, String) {
    let rank =
        |s: &str| ["error", "warning", "information", "hint"].iter().position(|k| *k == s).unwrap_or(4);
    let mut counts: std::collections::BTreeMap<(usize, String), usize> = Default::default();
    for s in severities {
        *counts.entry((rank(s), s.to_string())).or_default() += 1;
    }
    let counts: Vec<(String, usize)> = counts.into_iter().map(|((_, s), n)| (s, n)).collect();
    let plural =
        |s: &str, n: usize| if n == 1 || s == "information" { s.to_string() } else { format!("{s}s") };
    let words = counts.iter().map(|(s, n)| format!("{n} {}", plural(s, *n))).collect::<Vec<_>>().join(", ");
    (counts, words)
}

/// Roots a checker runs in at most; past them the answer says how many
/// were left out.
pub const MAX_CHECK_ROOTS: usize = 6;

/// One checker's work here: the languages it covers (a server's checker
/// covers every language of the server: tsc TypeScript and JavaScript) and
/// the roots it runs in — the roots its server would be started at for the
/// files of those languages.
struct CheckPlan {
    checker: Checker,
    languages: Vec<String>,
    roots: Vec<PathBuf>,
    /// Roots past [`MAX_CHECK_ROOTS`].
    left: usize,
    /// Directories of those languages under no root of the server.
    rootless: usize,
}

/// Which checker runs where, and a note for each language without one.
fn plan_checks(workdir: &Path, table: &Table, present: &[Present]) -> (Vec<CheckPlan>, Vec<String>) {
    let mut plans: Vec<(String, CheckPlan)> = Vec::new();
    let mut unchecked = Vec::new();
    for p in present {
        let Some(server) = table.candidates(&p.id).into_iter().find(|s| s.checker.is_some()) else {
            unchecked.push(format!("{}: no project checker is configured (add one to tether.toml)", p.id));
            continue;
        };
        let at = match plans.iter().position(|(id, _)| *id == server.id) {
            Some(at) => at,
            None => {
                let checker = server.checker.clone().expect("found by its checker");
                let plan =
                    CheckPlan { checker, languages: Vec::new(), roots: Vec::new(), left: 0, rootless: 0 };
                plans.push((server.id.clone(), plan));
                plans.len() - 1
            }
        };
        let plan = &mut plans[at].1;
        plan.languages.push(p.id.clone());
        for sample in &p.samples {
            match discovery::find_root(sample, workdir, &server.root_markers) {
                Some(root) if plan.roots.contains(&root) => {}
                Some(root) if plan.roots.len() < MAX_CHECK_ROOTS => plan.roots.push(root),
                Some(_) => plan.left += 1,
                None => plan.rootless += 1,
            }
        }
    }
    (plans.into_iter().map(|(_, plan)| plan).collect(), unchecked)
}

pub(super) async fn project_check(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    language: Option<String>,
    page: Page,
) -> ToolResult {
    let Here { table, present, .. } = match languages_here(&sup, &root, language.clone()).await {
        Ok(here) => here,
        Err(e) => return ToolResult::error(format!("lsp diagnostics: {e}")),
    };
    let (plans, unchecked) = plan_checks(&root, &table, &present);
    let mut text = String::new();
    for note in unchecked {
        let _ = writeln!(text, "{note}");
    }
    let mut all: Vec<Reported> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut any_checker = false;
    let mut failed = false;
    // Languages whose checker reported something.
    let mut reporting = BTreeSet::new();
    for plan in &plans {
        let langs = plan.languages.join(", ");
        let command = format!("{} {}", plan.checker.command, plan.checker.args.join(" "));
        for dir in &plan.roots {
            let rel = tether_actors::fs::relative(&root, dir);
            let place = if rel.is_empty() || rel == "." { String::new() } else { format!(" in `{rel}`") };
            if let Some(why) = checker::no_project(&plan.checker, dir) {
                let _ = writeln!(text, "{langs}: not checked{place}: {why}");
                continue;
            }
            any_checker = true;
            let diags = match checker::run(&plan.checker, dir).await {
                Ok(diags) => diags,
                Err(e) => {
                    // Never "0 diagnostics": a checker that did not check says why.
                    failed = true;
                    let _ = writeln!(text, "{langs}: the project check{place} failed: {e}");
                    continue;
                }
            };
            let found: Vec<Reported> = diags
                .into_iter()
                .map(|d| {
                    let path = if d.path.is_absolute() { d.path.clone() } else { dir.join(&d.path) };
                    let language =
                        table.language_of(&path).map_or(plan.languages[0].clone(), |l| l.id.clone());
                    Reported {
                        path: display_path(&root, &path),
                        line: d.line,
                        column: d.column,
                        severity: d.severity,
                        code: d.code,
                        message: d.message.lines().next().unwrap_or("").trim().to_string(),
                        language,
                    }
                })
                .collect();
            let files: BTreeSet<&str> = found.iter().map(|d| d.path.as_str()).collect();
            let (_, severities) = by_severity(found.iter().map(|d| d.severity.as_str()));
            let _ = write!(
                text,
                "{langs}: `{}`{place} reported {} diagnostic(s)",
                command.trim_end(),
                found.len()
            );
            if !found.is_empty() {
                let _ = write!(text, " in {} file(s): {severities}", files.len());
            }
            text.push('\n');
            for d in found {
                // Nested roots check some files twice: each diagnostic once.
                if seen.insert((d.path.clone(), d.line, d.column, d.code.clone(), d.message.clone())) {
                    reporting.insert(d.language.clone());
                    all.push(d);
                }
            }
        }
        if plan.left > 0 {
            let _ = writeln!(
                text,
                "{langs}: {} more root(s) not checked (at most {MAX_CHECK_ROOTS} a checker)",
                plan.left
            );
        }
        if plan.rootless > 0 {
            let _ = writeln!(
                text,
                "{langs}: files in {} director{} under no project root were not checked",
                plan.rootless,
                if plan.rootless == 1 { "y" } else { "ies" }
            );
        }
    }
    if text.is_empty() {
        text = "no source files of a language with a project checker here".to_string();
    }
    // File order, each file's by position: the order pages walk.
    all.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    let total = all.len();
    let offset = page.offset;
    if offset > 0 && offset >= total {
        let what = if total == 0 {
            "there are none; leave `offset` out".to_string()
        } else {
            format!("use 0 to {}", total - 1)
        };
        return ToolResult::error(format!(
            "lsp diagnostics: `offset` {offset} is past the {total} diagnostics; {what}\n{}",
            text.trim_end()
        ));
    }
    let (shown, data) = counted_page(&root, &all, page, reporting.len() > 1);
    text.push_str(&shown);
    let result = ToolResult::text(text.trim_end()).with_data(data);
    if any_checker && !failed { result } else { ToolResult { is_error: true, ..result } }
}

/// The counts (in all, when `several` languages reported; by file, with
/// the offset each file starts at) and the page of `all` (sorted) that
/// `page` asks for, grouped by file; and the same as data.
fn counted_page(root: &Path, all: &[Reported], page: Page, several: bool) -> (String, serde_json::Value) {
    let mut text = String::new();
    let total = all.len();
    let Page { offset, limit } = page;
    let end = (offset + limit).min(total);
    let (counts, severities) = by_severity(all.iter().map(|d| d.severity.as_str()));
    let mut files: Vec<(&str, usize, usize)> = Vec::new();
    for (k, d) in all.iter().enumerate() {
        match files.last_mut() {
            Some((path, n, _)) if *path == d.path => *n += 1,
            _ => files.push((d.path.as_str(), 1, k)),
        }
    }
    if total > 0 {
        if several {
            let _ = writeln!(text, "in all: {total} diagnostic(s) in {} file(s): {severities}", files.len());
        }
        for (path, n, first) in files.iter().take(MAX_FILES_COUNTED) {
            let _ = writeln!(text, "  {path} {n} (offset {first})");
        }
        if files.len() > MAX_FILES_COUNTED {
            let _ = writeln!(text, "  … {} more file(s), on later pages", files.len() - MAX_FILES_COUNTED);
        }
        if total > limit || offset > 0 {
            let _ = write!(text, "showing {}–{end} of {total}; {limit} a page", offset + 1);
            text.push_str(&super::render::more_hint(end, total, limit));
            text.push_str(":\n");
        }
    }
    let mut lines = Lines::new(root);
    let by_file: std::collections::HashMap<&str, usize> = files.iter().map(|(p, n, _)| (*p, *n)).collect();
    let mut current: Option<&str> = None;
    for d in &all[offset.min(total)..end] {
        if current != Some(d.path.as_str()) {
            let _ = writeln!(text, "{} ({})", d.path, by_file[d.path.as_str()]);
            current = Some(d.path.as_str());
        }
        let code = d.code.as_ref().map(|c| format!(" [{c}]")).unwrap_or_default();
        let _ = writeln!(text, "  {}:{}: {}{code} {}", d.line, d.column, d.severity, d.message);
        let path = Path::new(&d.path);
        let path = if path.is_absolute() { path.to_path_buf() } else { root.join(path) };
        let at = lsp_types::Position::new(d.line.saturating_sub(1), 0);
        if let Some(src) = lsp_types::Url::from_file_path(&path)
            .ok()
            .and_then(|uri| lines.place(&uri, &lsp_types::Range::new(at, at)).text)
        {
            let _ = writeln!(text, "    | {src}");
        }
    }
    let files_data: Vec<serde_json::Value> =
        files.iter().map(|(path, n, first)| json!({"path": path, "count": n, "offset": first})).collect();
    let severity_data: serde_json::Map<String, serde_json::Value> =
        counts.into_iter().map(|(s, n)| (s, json!(n))).collect();
    let data = json!({
        "total": total,
        "offset": offset,
        "limit": limit,
        "by_severity": severity_data,
        "files": files_data,
        "diagnostics": &all[offset.min(total)..end],
    });
    (text, data)
}
