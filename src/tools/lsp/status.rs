//! `lsp status` and `lsp reload`: what runs for each language found here,
//! and restarting it.

use std::fmt::Write as _;
use std::path::PathBuf;

use actix::Addr;
use tether_actors::describe::format_size;
use tether_actors::lsp::supervisor::{Candidate, LspSupervisor, ReloadFailed, ReloadFor, Status};

use crate::result::ToolResult;

pub(super) async fn status(sup: Addr<LspSupervisor>) -> ToolResult {
    let report = match sup.send(Status).await {
        Ok(r) => r,
        Err(e) => return ToolResult::error(format!("lsp status: the supervisor is not running ({e})")),
    };
    let mut text = String::new();
    match &report.watch {
        Some(watch) => {
            let _ = writeln!(text, "{}", watch.describe());
        }
        None => {
            let _ = writeln!(text, "file watching: starts with the first query");
        }
    }
    if let Some(e) = &report.config_error {
        let _ = writeln!(text, "tether.toml: {e} (using the built-in table)");
    }
    if report.languages.is_empty() {
        let _ = writeln!(text, "no file here is of a language a server is configured for");
    }
    let or_more = if report.capped { " or more" } else { "" };
    for lang in &report.languages {
        let _ = writeln!(
            text,
            "{} ({}{or_more} file{}): {}",
            lang.language,
            lang.files,
            if lang.files == 1 { "" } else { "s" },
            if lang.usable { "usable" } else { "not usable" }
        );
        for node in &lang.running {
            let number = |key: &str| node.detail.get(key).and_then(|v| v.as_u64());
            let memory =
                number("memory_bytes").map(|b| format!(" memory={}", format_size(b))).unwrap_or_default();
            let idle = number("idle_ms").map(|ms| format!(" idle={}s", ms / 1000)).unwrap_or_default();
            let _ = writeln!(
                text,
                "  running {} [{}] pid={} up={}ms restarts={}{memory}{idle}",
                node.id,
                node.state,
                node.pid.map_or("-".to_string(), |p| p.to_string()),
                node.uptime_ms,
                node.restarts.unwrap_or(0)
            );
            for e in node.detail.get("reported_errors").and_then(|v| v.as_array()).into_iter().flatten() {
                let _ = writeln!(text, "    it reported: {}", e.as_str().unwrap_or(""));
            }
        }
        for c in &lang.candidates {
            let _ = writeln!(text, "  {}", candidate(c));
        }
    }
    if report.capped {
        let _ = writeln!(
            text,
            "(the count stopped at {} files: languages past it are not listed)",
            tether_actors::lsp::census::MAX_FILES_WALKED
        );
    }
    if !report.absent.is_empty() {
        let _ = writeln!(text, "servers are configured for, with no file here: {}", report.absent.join(", "));
    }
    let _ = writeln!(text, "{}", report.limits.describe(Some(report.memory_held)));
    text.push_str(RESOURCES_HINT);
    // The candidates are typed; the data holds each as its line reads.
    let mut data = serde_json::to_value(&report).unwrap_or_default();
    if let Some(rows) = data["languages"].as_array_mut() {
        for (row, lang) in rows.iter_mut().zip(&report.languages) {
            row["candidates"] = lang.candidates.iter().map(candidate).collect();
        }
    }
    ToolResult::text(text).with_data(&data)
}

/// Most roots a candidate's line names.
const ROOTS_SHOWN: usize = 5;

/// One candidate's line: whether it can start here, and why not — the
/// roots its markers give the language's files, and its program.
fn candidate(c: &Candidate) -> String {
    let who = match c.only_for.is_empty() {
        true => c.id.clone(),
        false => format!("{} (asked only for {})", c.id, c.only_for.join(", ")),
    };
    let roots = if c.roots.is_empty() {
        format!("no {} in the directory of any {} file or above it", c.markers.join(", "), c.language)
    } else {
        let mut rels: Vec<String> = c.roots.iter().take(ROOTS_SHOWN).cloned().collect();
        if c.roots.len() > ROOTS_SHOWN {
            rels.push(format!("and {} more", c.roots.len() - ROOTS_SHOWN));
        }
        format!("{} at {}", if c.roots.len() == 1 { "root" } else { "roots" }, rels.join(", "))
    };
    match &c.binary {
        Ok(path) if !c.roots.is_empty() => format!("{who}: usable ({roots}; {})", path.display()),
        Ok(path) => format!("{who}: {roots} (binary {} found)", path.display()),
        Err(why) => format!("{who}: {}; {roots}", crate::tools::unusable::reason(why, true)),
    }
}

/// Where `status` sends the model for everything else the run holds.
pub(crate) const RESOURCES_HINT: &str = "(every live resource of the run — servers, debug sessions, kernels, workers — with pids, owners and last errors: call `resources`)";

pub(super) async fn reload(sup: Addr<LspSupervisor>, path: Option<PathBuf>) -> ToolResult {
    match sup.send(ReloadFor { file: path }).await {
        Ok(Ok(done)) if done.is_empty() => {
            ToolResult::text("no server was running; servers start on first use")
        }
        Ok(Ok(done)) => ToolResult::text(format!("restarted {}", done.join(", "))),
        Ok(Err(ReloadFailed::Unavailable(e))) => {
            ToolResult::error(format!("lsp reload: {}", crate::tools::unusable::unavailable(&e)))
        }
        Ok(Err(ReloadFailed::Server { name, error })) => {
            ToolResult::error(format!("lsp reload: {name}: {error}"))
        }
        Err(e) => ToolResult::error(format!("lsp reload: the supervisor is not running ({e})")),
    }
}
