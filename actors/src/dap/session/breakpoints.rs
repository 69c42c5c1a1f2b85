//! Breakpoints by line: what the caller asked for per file (lines,
//! conditions, hit counts, logpoints), whether the adapter can do it, and
//! how one element of its answer reads ([`Binding`]; all of them together
//! are `super::bindings`, function breakpoints `super::functions`).
//!
//! Adapters move breakpoints: debugpy puts one on a comment line on the
//! nearest line with code, lldb-dap one on a blank line on the next
//! statement, and delve refuses a line without code with a message. A
//! breakpoint is reported as bound at the line the adapter answered —
//! saying when that is not the line asked for — or as not bound with the
//! adapter's own words; never just "verified". A function breakpoint is
//! reported with the file and line it bound at, which the caller did not
//! know (that is why it named the function).

use std::path::Path;

use dap_types::{Breakpoint, Capabilities};
use serde::Serialize;

use super::failure::Refusal;

pub use crate::dap::asked::BreakpointSpec;

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
    pub(super) fn check_unplaced(&mut self, source: Option<&str>, comments: &[&str]) {
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
pub(super) fn comment_starts(file: &Path) -> &'static [&'static str] {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "rb" | "py" | "sh" | "pl" | "r" => &["#"],
        "js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "go" | "c" | "h" | "cc" | "cpp" | "hpp" | "rs"
        | "dart" | "java" | "kt" | "swift" | "cs" => &["//", "/*", "*"],
        _ => &["#", "//"],
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// An answer's `breakpoints`, as the client reads them.
    pub(in super::super) fn answer(body: Value) -> Vec<Breakpoint> {
        serde_json::from_value(body["breakpoints"].clone()).unwrap()
    }

    /// An `initialize` answer, as the client reads it.
    pub(in super::super) fn caps(body: Value) -> Capabilities {
        serde_json::from_value(body).unwrap()
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
