//! `tether status`: what is connected and usable in this working directory,
//! and for whatever is not, why — in the spirit of `hx --health`.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use tether_actors::ast::lang::Lang;
use tether_actors::ast::scan::count_files_by_language;

use crate::spec::Resource;

/// Most files counted per status run; past this the count says "or more".
const MAX_COUNTED_FILES: usize = 50_000;

/// One component of a resource (a grammar; later a server or adapter).
#[derive(Debug, Clone, Serialize)]
pub struct Component {
    /// Its name.
    pub name: String,
    /// Whether it can be used here.
    pub usable: bool,
    /// Why, or why not.
    pub detail: String,
}

/// One resource's status.
#[derive(Debug, Clone, Serialize)]
pub struct ResourceStatus {
    /// The resource's name.
    pub resource: String,
    /// Whether this run connected it.
    pub connected: bool,
    /// Its components.
    pub components: Vec<Component>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    /// The working directory.
    pub workdir: String,
    /// The conversation id.
    pub conversation: String,
    /// Every resource tether has, connected or not.
    pub resources: Vec<ResourceStatus>,
}

impl StatusReport {
    /// The report as text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "working directory: {}", self.workdir);
        let _ = writeln!(out, "conversation: {}", self.conversation);
        for r in &self.resources {
            let state = if r.connected { "connected" } else { "not connected (its tools are absent)" };
            let _ = writeln!(out, "{}: {state}", r.resource);
            for c in &r.components {
                let mark = if c.usable { "ok" } else { "unusable" };
                let _ = writeln!(out, "  {:<11} {mark:<8} {}", c.name, c.detail);
            }
        }
        out
    }
}

/// Checks every resource for `workdir`. `lsp` is the data of an
/// `lsp status` call when language servers are connected.
pub fn report(
    workdir: &Path,
    conversation: &str,
    connected: &[Resource],
    lsp: Option<&serde_json::Value>,
) -> StatusReport {
    let resources = Resource::ALL
        .into_iter()
        .map(|resource| ResourceStatus {
            resource: resource.as_str().to_string(),
            connected: connected.contains(&resource),
            components: match resource {
                Resource::Parsers => grammars(workdir),
                Resource::LanguageServers => servers(lsp).into_iter().chain([budget(workdir, lsp)]).collect(),
                Resource::Kernels => kernels(),
                // The languages no adapter serves are `debug adapters`'
                // to list, not every project's status.
                Resource::Debuggers => tether_actors::dap::adapters::report(workdir)
                    .into_iter()
                    .filter(|(name, _, _)| {
                        !tether_actors::dap::adapters::MISSING.iter().any(|(m, _, _)| m == name)
                    })
                    .map(|(name, usable, detail)| Component { name, usable, detail })
                    .collect(),
            },
        })
        .collect();
    StatusReport { workdir: workdir.display().to_string(), conversation: conversation.to_string(), resources }
}

fn grammars(workdir: &Path) -> Vec<Component> {
    let (counts, capped) = count_files_by_language(workdir, MAX_COUNTED_FILES);
    Lang::ALL
        .into_iter()
        .map(|lang| {
            let exts: Vec<String> = lang.extensions().iter().map(|e| format!(".{e}")).collect();
            let n = counts.get(&lang).copied().unwrap_or(0);
            let files = format!(
                "{n}{} file{} here",
                if capped { " or more" } else { "" },
                if n == 1 { "" } else { "s" }
            );
            match lang.check() {
                Ok(abi) => Component {
                    name: lang.id().to_string(),
                    usable: true,
                    detail: format!("bundled, ABI {}; {}; {files}", abi, exts.join(" ")),
                },
                Err(e) => Component {
                    name: lang.id().to_string(),
                    usable: false,
                    detail: format!("the bundled grammar does not load: {e}"),
                },
            }
        })
        .collect()
}

/// Per language: usable or not, with each candidate's state in words.
fn servers(lsp: Option<&serde_json::Value>) -> Vec<Component> {
    let Some(languages) = lsp.and_then(|v| v["languages"].as_array()) else {
        return Vec::new();
    };
    let absent = lsp.and_then(|v| v["absent"].as_array()).map(|a| {
        let ids: Vec<&str> = a.iter().filter_map(|s| s.as_str()).collect();
        Component {
            name: "(others)".into(),
            usable: false,
            detail: format!("configured, no file here: {}", ids.join(", ")),
        }
    });
    languages
        .iter()
        .map(|l| {
            let mut details: Vec<String> = l["running"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .map(|n| {
                            format!(
                                "running {} [{}]",
                                n["id"].as_str().unwrap_or("?"),
                                n["state"].as_str().unwrap_or("?")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            details.extend(
                l["candidates"]
                    .as_array()
                    .map(|c| c.iter().filter_map(|s| s.as_str().map(str::to_string)).collect::<Vec<_>>())
                    .unwrap_or_default(),
            );
            let files = l["files"].as_u64().unwrap_or(0);
            let or_more = if lsp.is_some_and(|v| v["capped"] == true) { " or more" } else { "" };
            details.insert(0, format!("{files}{or_more} file{} here", if files == 1 { "" } else { "s" }));
            Component {
                name: l["language"].as_str().unwrap_or("?").to_string(),
                usable: l["usable"].as_bool().unwrap_or(false),
                detail: details.join("; "),
            }
        })
        .chain(absent.filter(|c| !c.detail.ends_with(": ")))
        .collect()
}

/// The servers' memory budget and idle limit that apply here (what they
/// hold now, when they are connected).
fn budget(workdir: &Path, lsp: Option<&serde_json::Value>) -> Component {
    let held = lsp.and_then(|v| v["memory_held"].as_u64());
    match tether_actors::lsp::limits::load(workdir) {
        Ok(limits) => Component { name: "(budget)".into(), usable: true, detail: limits.describe(held) },
        Err(e) => Component { name: "(budget)".into(), usable: false, detail: e },
    }
}

/// Whether each kernel's interpreter can be found here.
fn kernels() -> Vec<Component> {
    [("python", "python3"), ("javascript", "node")]
        .into_iter()
        .map(|(lang, program)| {
            let mut command = std::process::Command::new(program);
            command.arg("--version");
            (lang, program, tether_actors::process::probe(&mut command, tether_actors::process::PROBE_WAIT))
        })
        .map(|(lang, program, probed)| match probed {
            Some(out) if out.status.success() => {
                let version =
                    String::from_utf8_lossy(if out.stdout.is_empty() { &out.stderr } else { &out.stdout })
                        .trim()
                        .to_string();
                Component {
                    name: lang.into(),
                    usable: true,
                    detail: format!("{program} ({version}); starts on the first cell"),
                }
            }
            _ => Component {
                name: lang.into(),
                usable: false,
                detail: format!("`{program}` does not run here (not on PATH?)"),
            },
        })
        .collect()
}
