//! Function breakpoints: whether the adapter offers them, sending them so
//! that each answer is matched to the name asked (lldb-dap 19 answers in
//! an order of its own), where each bound — debugpy, which never says,
//! placed by the function's `def` in the working directory ([`FunctionBinding`];
//! kept with the line breakpoints' in `super::bindings`).

use std::collections::BTreeMap;
use std::path::Path;

use dap_types::{Breakpoint, Capabilities};

use super::breakpoints::readable;
use super::failure::Refusal;
use crate::dap::adapters::Quirks;
use crate::wire::dap::{DapClient, SendError};

/// Why `adapter` (by its capabilities) cannot set function breakpoints,
/// and what to give instead; `None` when it can.
pub(super) fn functions_unsupported(adapter: &str, caps: &Capabilities) -> Option<Refusal> {
    (caps.supports_function_breakpoints != Some(true))
        .then(|| Refusal::Functions { adapter: adapter.to_string() })
}

/// Sets `names` as the function breakpoints; the answer, its
/// `breakpoints` in the order of `names`. Where the adapter answers in an
/// order of its own (`Quirks::function_replies_reordered`), the names go
/// one more per request (each keeps the
/// breakpoint it had): the id new in each answer is the newest name's.
pub(super) async fn send_functions(
    client: &DapClient,
    quirks: Quirks,
    names: &[String],
) -> Result<Vec<Breakpoint>, SendError> {
    if !quirks.function_replies_reordered || names.len() < 2 {
        return client.set_function_breakpoints(names).await;
    }
    let mut ordered: Vec<Option<Breakpoint>> = Vec::new();
    for n in 1..=names.len() {
        let answered = client.set_function_breakpoints(&names[..n]).await?;
        let same = |a: &Breakpoint, b: &Breakpoint| a.id.is_some() && a.id == b.id;
        let seen = |bp: &Breakpoint| ordered.iter().flatten().any(|o| same(o, bp));
        let new = answered.iter().find(|bp| !seen(bp)).cloned();
        // The earlier names' breakpoints as this answer has them now.
        for o in ordered.iter_mut().flatten() {
            if let Some(now) = answered.iter().find(|bp| same(o, bp)) {
                *o = now.clone();
            }
        }
        ordered.push(new);
    }
    // A name with no breakpoint of its own in any answer reads as unbound.
    let unbound = || Breakpoint {
        id: None,
        verified: false,
        message: None,
        source: None,
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        instruction_reference: None,
        offset: None,
        reason: None,
    };
    Ok(ordered.into_iter().map(|bp| bp.unwrap_or_else(unbound)).collect())
}

/// Where one function breakpoint bound, by the adapter's answer (and its
/// later `breakpoint` events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionBinding {
    /// The function's name, as asked.
    pub name: String,
    /// The adapter's id for it, when it gave one (events refer to it).
    pub id: Option<i64>,
    /// Whether it bound.
    pub verified: bool,
    /// The source file it bound in: absolute as the adapter said it, or
    /// relative to the working directory where tether found its `def`.
    pub path: Option<String>,
    /// The line it bound at, when the adapter said.
    pub line: Option<u32>,
    /// The adapter's message (why it did not bind, or a note).
    pub message: Option<String>,
    /// What tether found of it beyond the adapter's answer.
    pub found: Option<FunctionFound>,
}

/// What tether found of a function breakpoint beyond the adapter's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionFound {
    /// The answer has no element for it: the adapter may not set function
    /// breakpoints (a line breakpoint would do).
    NotInReply,
    /// debugpy matches a function by its bare name, never a dotted one:
    /// the bare name to give.
    Dotted { bare: String },
    /// debugpy took it without saying where, and no `def` of it is in the
    /// working directory's Python files.
    NoDef,
    /// debugpy took it without saying where: placed at its first `def`;
    /// the next ones (`path:line`), and how many more there are.
    AtDef { more: Vec<String>, left: usize },
}

impl FunctionBinding {
    /// Reads one element of a `setFunctionBreakpoints` reply; `None`: the
    /// reply has no element for it (rdbg answers with none at all).
    pub(super) fn from_reply(name: &str, bp: Option<&Breakpoint>) -> Self {
        let mut binding = Self {
            name: name.to_string(),
            id: None,
            verified: false,
            path: None,
            line: None,
            message: None,
            found: None,
        };
        match bp {
            Some(bp) => {
                binding.id = bp.id.and_then(|id| i64::try_from(id).ok());
                binding.update(bp);
            }
            None => binding.found = Some(FunctionFound::NotInReply),
        }
        binding
    }

    /// Applies an answer's or a `breakpoint` event's breakpoint.
    pub(super) fn update(&mut self, bp: &Breakpoint) {
        self.verified = bp.verified;
        if let Some(l) = bp.line.and_then(|l| u32::try_from(l).ok()) {
            self.line = Some(l);
        }
        if let Some(p) = bp.source.as_ref().and_then(|s| s.path.as_deref()) {
            self.path = Some(p.to_string());
        }
        if let Some(m) = &bp.message {
            self.message = readable(m);
        }
    }

    /// For a breakpoint debugpy took without saying where (it takes any
    /// name, and stops when a function of that bare name is called): where
    /// `defs` (the working directory's definitions of that name) put it, or
    /// that it binds nowhere in the working directory.
    pub(super) fn place_by_defs(&mut self, defs: &[(String, u32)]) {
        if !self.verified || self.line.is_some() {
            return;
        }
        let name = &self.name;
        if let Some((_, bare)) = name.rsplit_once('.') {
            self.verified = false;
            self.found = Some(FunctionFound::Dotted { bare: bare.to_string() });
            return;
        }
        let Some((path, line)) = defs.first() else {
            self.verified = false;
            self.found = Some(FunctionFound::NoDef);
            return;
        };
        self.path = Some(path.clone());
        self.line = Some(*line);
        let more: Vec<String> =
            defs.iter().skip(1).take(MAX_PLACES).map(|(p, l)| format!("{p}:{l}")).collect();
        let left = defs.len().saturating_sub(1 + MAX_PLACES);
        self.found = Some(FunctionFound::AtDef { more, left });
    }
}

/// Python files read at most when looking for a function's `def`, and
/// the longest read (a larger one is generated, not the program's).
const MAX_SCAN_FILES: usize = 5_000;
const MAX_SCAN_BYTES: u64 = 1 << 20;
/// Further definitions of a function's name listed (the rest counted).
const MAX_PLACES: usize = 3;

/// Where each of `names` is defined (`def NAME(`, `async def NAME(`) in
/// the Python files under `workdir` — not installed packages — as
/// `(path, line)` sorted by path; a name defined nowhere is absent.
pub(super) fn python_defs(workdir: &Path, names: &[&str]) -> BTreeMap<String, Vec<(String, u32)>> {
    use crate::project_walk::{self, Entry, Rules};
    use std::ops::ControlFlow;
    const SKIPPED: &[&str] = &["site-packages", "dist-packages", "node_modules", "venv", "__pycache__"];
    let mut found: BTreeMap<String, Vec<(String, u32)>> = BTreeMap::new();
    let mut files = Vec::new();
    let rules = Rules { ignore_files: true, skip: SKIPPED, max_depth: None };
    project_walk::walk(workdir, rules, |entry| {
        if let Entry::File(path) = entry
            && path.extension().is_some_and(|x| x == "py")
            && std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_SCAN_BYTES)
        {
            files.push(path.to_path_buf());
        }
        if files.len() < MAX_SCAN_FILES { ControlFlow::Continue(()) } else { ControlFlow::Break(()) }
    });
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let Some(rest) = line.strip_prefix("async ").unwrap_or(line).strip_prefix("def ") else {
                continue;
            };
            let rest = rest.trim_start();
            let defined = names.iter().find(|n| {
                rest.strip_prefix(**n).is_some_and(|after| after.trim_start().starts_with(['(', '[']))
            });
            if let Some(name) = defined {
                let rel = crate::fs::relative(workdir, &path);
                found.entry(name.to_string()).or_default().push((rel, i as u32 + 1));
            }
        }
    }
    found
}
