//! Breakpoint bookkeeping (function breakpoints: [`super::functions`]): what the caller asked for per file (lines,
//! conditions, hit counts, logpoints) and by function name, whether the
//! adapter can do it, and where each one really bound.
//!
//! Adapters move breakpoints: debugpy puts one on a comment line on the
//! nearest line with code, lldb-dap one on a blank line on the next
//! statement, and delve refuses a line without code with a message. A
//! breakpoint is reported as bound at the line the adapter answered —
//! saying when that is not the line asked for — or as not bound with the
//! adapter's own words; never just "verified". A function breakpoint is
//! reported with the file and line it bound at, which the caller did not
//! know (that is why it named the function).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dap_types::{Breakpoint, Capabilities, SourceBreakpoint};
use serde::Serialize;
use serde_json::Value;

use super::failure::Refusal;
pub use super::functions::FunctionBinding;

/// One breakpoint as asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BreakpointSpec {
    /// 1-based line.
    pub line: u32,
    /// Stop only when this expression is true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Stop only when the hit count satisfies this (adapter syntax, e.g. `3`, `>= 3`, `% 2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_condition: Option<String>,
    /// Log this message (with `{expr}` interpolation) instead of stopping.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_message: Option<String>,
}

impl BreakpointSpec {
    /// A plain breakpoint at `line`.
    pub fn at(line: u32) -> Self {
        Self { line, condition: None, hit_condition: None, log_message: None }
    }

    /// The DAP `SourceBreakpoint`.
    pub(super) fn to_dap(&self) -> SourceBreakpoint {
        SourceBreakpoint {
            line: u64::from(self.line),
            column: None,
            condition: self.condition.clone(),
            hit_condition: self.hit_condition.clone(),
            log_message: self.log_message.clone(),
            mode: None,
        }
    }

    /// The DAP `SourceBreakpoint`s of `specs`.
    pub(super) fn all_to_dap(specs: &[BreakpointSpec]) -> Vec<SourceBreakpoint> {
        specs.iter().map(BreakpointSpec::to_dap).collect()
    }
}

/// Whether the adapter (its `initialize` capabilities) can set `specs`;
/// otherwise which kind it cannot, naming the adapter.
pub(super) fn unsupported(adapter: &str, caps: &Capabilities, specs: &[BreakpointSpec]) -> Option<Refusal> {
    let kinds = [
        (
            specs.iter().any(|s| s.condition.is_some()),
            caps.supports_conditional_breakpoints,
            "condition",
            "supportsConditionalBreakpoints",
            "conditions",
        ),
        (
            specs.iter().any(|s| s.hit_condition.is_some()),
            caps.supports_hit_conditional_breakpoints,
            "hit_condition",
            "supportsHitConditionalBreakpoints",
            "hit conditions",
        ),
        (
            specs.iter().any(|s| s.log_message.is_some()),
            caps.supports_log_points,
            "log_message",
            "supportsLogPoints",
            "logpoints",
        ),
    ];
    kinds.into_iter().find(|(asked, offered, ..)| *asked && *offered != Some(true)).map(
        |(_, _, field, capability, what)| Refusal::Kind {
            adapter: adapter.to_string(),
            what,
            capability,
            field,
        },
    )
}

/// Where one breakpoint bound, by the adapter's answer (and its later
/// `breakpoint` events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    /// As asked.
    #[serde(flatten)]
    pub spec: BreakpointSpec,
    /// The adapter's id for it, when it gave one (events refer to it).
    pub id: Option<i64>,
    /// Whether it bound.
    pub verified: bool,
    /// The line it bound at, when the adapter said.
    pub bound_line: Option<u32>,
    /// The adapter's message (why it did not bind, or a note).
    pub message: Option<String>,
    /// tether's own word on a breakpoint the adapter took without saying
    /// where (rdbg): the asked line holds no code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// An adapter's breakpoint message in words: js-debug sends the key of
/// its unlocalised string for a breakpoint no loaded code holds.
pub(super) fn readable(message: &str) -> Option<String> {
    match message.trim() {
        "" => None,
        "breakpoint.provisionalBreakpoint" => {
            Some("no code loaded at that line (none there, or not run yet)".into())
        }
        m => Some(m.to_string()),
    }
}

impl Binding {
    /// Reads one element of a `setBreakpoints` reply (`None`: the reply
    /// has no element for it).
    pub(super) fn from_reply(spec: &BreakpointSpec, bp: Option<&Breakpoint>) -> Self {
        let mut binding = Self {
            spec: spec.clone(),
            id: None,
            verified: false,
            bound_line: None,
            message: None,
            note: None,
        };
        if let Some(bp) = bp {
            binding.id = bp.id.and_then(|id| i64::try_from(id).ok());
            binding.update(bp);
        }
        binding
    }

    /// For a breakpoint the adapter took without a line (rdbg says only
    /// `verified`), what the source says of the asked line: past the end
    /// it can never stop (not bound), blank or a comment it binds, if
    /// anywhere, at a later line.
    fn check_unplaced(&mut self, source: Option<&str>, comments: &[&str]) {
        if !self.verified || self.bound_line.is_some() {
            return;
        }
        let Some(source) = source else { return };
        let line = self.spec.line;
        match source.lines().nth(line.saturating_sub(1) as usize).map(str::trim) {
            None => {
                self.verified = false;
                self.message = Some(format!(
                    "line {line} is past the end of the file ({} lines); the adapter took it, but it can never stop",
                    source.lines().count()
                ));
            }
            Some(text) if text.is_empty() || comments.iter().any(|c| text.starts_with(c)) => {
                let what = if text.is_empty() { "is blank" } else { "is a comment" };
                self.note = Some(format!(
                    "line {line} {what}: the adapter took it without saying where it binds (a later line that runs, if any)"
                ));
            }
            Some(_) => {}
        }
    }

    /// Applies a `breakpoint` event's breakpoint with this binding's id.
    pub(super) fn update(&mut self, bp: &Breakpoint) {
        self.verified = bp.verified;
        if let Some(l) = bp.line.and_then(|l| u32::try_from(l).ok()) {
            self.bound_line = Some(l);
        }
        if let Some(m) = &bp.message {
            self.message = readable(m);
        }
    }
}

/// How a comment line of `file`'s language starts (a line starting with
/// `*` is a block comment's in C-like languages, a splat in Ruby).
fn comment_starts(file: &Path) -> &'static [&'static str] {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "rb" | "py" | "sh" | "pl" | "r" => &["#"],
        "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "go" | "c" | "h" | "cc" | "cpp" | "hpp" | "rs"
        | "dart" | "java" | "kt" | "swift" | "cs" => &["//", "/*", "*"],
        _ => &["#", "//"],
    }
}

/// Every file's bindings and the function breakpoints', as the adapter
/// last reported them.
#[derive(Debug, Clone, Default)]
pub(super) struct Bindings {
    pub(super) files: BTreeMap<PathBuf, Vec<Binding>>,
    pub(super) functions: Vec<FunctionBinding>,
}

impl Bindings {
    /// Records a `setBreakpoints` reply for `file`.
    pub(super) fn record(&mut self, file: &Path, specs: &[BreakpointSpec], reply: &[Breakpoint]) {
        let mut bindings = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| Binding::from_reply(spec, reply.get(i)))
            .collect::<Vec<_>>();
        if bindings.iter().any(|b| b.verified && b.bound_line.is_none()) {
            let source = std::fs::read_to_string(file).ok();
            let comments = comment_starts(file);
            for b in &mut bindings {
                b.check_unplaced(source.as_deref(), comments);
            }
        }
        if bindings.is_empty() {
            self.files.remove(file);
        } else {
            self.files.insert(file.to_path_buf(), bindings);
        }
    }

    /// Records another process's `setBreakpoints` reply for `file`, in a
    /// run of several (each test file's own): a breakpoint that bound in
    /// one process stays bound, though a process that never loads its
    /// file says it did not.
    pub(super) fn record_more(&mut self, file: &Path, specs: &[BreakpointSpec], reply: &[Breakpoint]) {
        let before = self.files.get(file).cloned().unwrap_or_default();
        self.record(file, specs, reply);
        if let Some(now) = self.files.get_mut(file) {
            for b in now.iter_mut().filter(|b| !b.verified) {
                if let Some(old) = before.iter().find(|o| o.verified && o.spec == b.spec) {
                    *b = old.clone();
                }
            }
        }
    }

    /// Applies a `breakpoint` event (`changed`, `new`, `removed`) by id.
    pub(super) fn event(&mut self, body: &Value) {
        let Ok(event) = serde_json::from_value::<dap_types::BreakpointEvent>(body.clone()) else { return };
        let bp = &event.breakpoint;
        let Some(id) = bp.id.and_then(|id| i64::try_from(id).ok()) else { return };
        let removed = matches!(event.reason, dap_types::BreakpointEventReason::Removed);
        for binding in self.files.values_mut().flatten().filter(|b| b.id == Some(id)) {
            if removed {
                binding.verified = false;
                binding.message = Some("removed by the adapter".into());
            } else {
                binding.update(bp);
            }
        }
        for binding in self.functions.iter_mut().filter(|b| b.id == Some(id)) {
            if removed {
                binding.verified = false;
                binding.message = Some("removed by the adapter".into());
            } else {
                binding.update(bp);
            }
        }
    }

    /// A stop at the breakpoints `ids` (`hitBreakpointIds`): they bound,
    /// whatever was said of them before (js-debug, attached, never says so).
    pub(super) fn hit(&mut self, ids: &[i64]) {
        let hit = |id: Option<i64>| id.is_some_and(|id| ids.contains(&id));
        for binding in self.files.values_mut().flatten().filter(|b| hit(b.id) && !b.verified) {
            binding.verified = true;
            binding.message = None;
        }
        for binding in self.functions.iter_mut().filter(|b| hit(b.id) && !b.verified) {
            binding.verified = true;
            binding.message = None;
        }
    }

    pub(super) fn total(&self) -> usize {
        self.files.values().map(Vec::len).sum::<usize>() + self.functions.len()
    }

    pub(super) fn bound(&self) -> usize {
        self.files.values().flatten().filter(|b| b.verified).count()
            + self.functions.iter().filter(|b| b.verified).count()
    }

    /// What the answers show: each file's bindings by its path relative
    /// to `workdir`, and the function breakpoints with theirs.
    pub(super) fn view(&self, workdir: &Path) -> BoundView {
        let files =
            self.files.iter().map(|(file, bs)| (crate::fs::relative(workdir, file), bs.clone())).collect();
        let functions = self
            .functions
            .iter()
            .map(|b| FunctionBinding {
                path: b.path.as_deref().map(|p| super::replies::display(workdir, p)),
                ..b.clone()
            })
            .collect();
        BoundView { files, functions }
    }

    /// When breakpoints are set and none bound at all: all of them, as the
    /// answers show them — the likeliest reason a run never stopped.
    pub(super) fn none_bound(&self, workdir: &Path) -> Option<BoundView> {
        (self.total() > 0 && self.bound() == 0).then(|| self.view(workdir))
    }
}

/// Where the breakpoints bound, as an answer shows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundView {
    /// Each file (relative to the working directory when inside it) with
    /// its bindings, in line order as asked.
    pub files: Vec<(String, Vec<Binding>)>,
    /// The function breakpoints (paths relative likewise).
    pub functions: Vec<FunctionBinding>,
}

impl BoundView {
    /// Breakpoints set, lines and functions.
    pub fn total(&self) -> usize {
        self.files.iter().map(|(_, bs)| bs.len()).sum::<usize>() + self.functions.len()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// An answer's `breakpoints`, as the client reads them.
    pub(in super::super) fn answer(body: Value) -> Vec<Breakpoint> {
        serde_json::from_value(body["breakpoints"].clone()).unwrap()
    }

    /// An `initialize` answer, as the client reads it.
    pub(in super::super) fn caps(body: Value) -> Capabilities {
        serde_json::from_value(body).unwrap()
    }

    /// (bound, line bound at, message, note) of a binding.
    type Seen = (bool, Option<u32>, Option<String>, Option<String>);

    fn seen(b: &Bindings) -> Vec<Seen> {
        b.files
            .values()
            .flatten()
            .map(|b| (b.verified, b.bound_line, b.message.clone(), b.note.clone()))
            .collect()
    }

    #[test]
    fn a_breakpoint_taken_without_a_line_is_checked_against_the_source() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.rb");
        std::fs::write(&file, "x = 1\n\n# note\n*rest = [2]\n").unwrap();
        let specs = [1, 2, 3, 4, 9].map(BreakpointSpec::at);
        let verified = json!({"verified": true});
        let reply = json!({"breakpoints": [verified, verified, verified, verified, verified]});
        let mut b = Bindings::default();
        b.record(&file, &specs, &answer(reply));
        let unplaced = |what: &str, line: u32| {
            Some(format!(
                "line {line} {what}: the adapter took it without saying where it binds (a later line that runs, if any)"
            ))
        };
        assert_eq!(
            seen(&b),
            [
                (true, None, None, None),
                (true, None, None, unplaced("is blank", 2)),
                (true, None, None, unplaced("is a comment", 3)),
                // A splat, not a C comment's continuation.
                (true, None, None, None),
                (
                    false,
                    None,
                    Some(
                        "line 9 is past the end of the file (4 lines); the adapter took it, but it can never stop"
                            .into()
                    ),
                    None
                ),
            ]
        );
        assert_eq!(b.bound(), 4);
        assert_eq!(b.view(dir.path()).files[0].0, "a.rb");
    }

    #[test]
    fn a_moved_breakpoint_keeps_its_line_and_an_unbound_one_the_adapters_words() {
        let specs = [BreakpointSpec::at(3), BreakpointSpec::at(5), BreakpointSpec::at(9)];
        let reply = json!({"breakpoints": [
            {"id": 1, "verified": true, "line": 2},
            {"id": 2, "verified": true, "line": 5},
            {"id": 3, "verified": false, "message": "could not find statement at main.go:9"},
        ]});
        let mut b = Bindings::default();
        let root = Path::new("/w");
        b.record(Path::new("/w/main.go"), &specs, &answer(reply));
        assert_eq!(
            seen(&b),
            [
                (true, Some(2), None, None),
                (true, Some(5), None, None),
                (false, None, Some("could not find statement at main.go:9".into()), None),
            ]
        );
        assert_eq!(b.none_bound(root), None);
        b.event(&json!({"reason": "changed", "breakpoint": {"id": 3, "verified": true, "line": 10}}));
        assert_eq!(b.bound(), 3);
    }

    #[test]
    fn none_bound_is_every_breakpoint_when_none_did() {
        let mut b = Bindings::default();
        b.record(
            Path::new("/w/a.go"),
            &[BreakpointSpec::at(1)],
            &answer(json!({"breakpoints": [{"verified": false}]})),
        );
        let view = b.none_bound(Path::new("/w")).unwrap();
        assert_eq!(view.total(), 1);
        assert_eq!(view.files[0].0, "a.go");
    }

    #[test]
    fn kinds_the_adapter_lacks_are_refused_by_name() {
        let spec = BreakpointSpec { hit_condition: Some("3".into()), ..BreakpointSpec::at(4) };
        let caps = caps(json!({"supportsConditionalBreakpoints": true}));
        let why = unsupported("lldb", &caps, std::slice::from_ref(&spec)).unwrap();
        assert_eq!(
            why,
            Refusal::Kind {
                adapter: "lldb".into(),
                what: "hit conditions",
                capability: "supportsHitConditionalBreakpoints",
                field: "hit_condition"
            }
        );
        assert!(
            unsupported(
                "lldb",
                &super::tests::caps(json!({"supportsHitConditionalBreakpoints": true})),
                &[spec]
            )
            .is_none()
        );
    }
}
