//! Where each breakpoint really bound, by line and by function, as the
//! adapter last reported it: its answers to `setBreakpoints` and
//! `setFunctionBreakpoints`, its later `breakpoint` events and the stops
//! that hit them ([`Bindings`]), and how an answer shows them
//! ([`BoundView`]). What was asked is [`super::breakpoints`] (by line) and
//! [`super::functions`] (by name).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dap_types::Breakpoint;
use serde_json::Value;

use super::breakpoints::{Binding, BreakpointSpec, comment_starts};
#[cfg(test)]
use super::functions::FunctionFound;
use super::functions::{FunctionBinding, python_defs};
use crate::dap::adapters::Quirks;

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

impl Bindings {
    /// Records a `setFunctionBreakpoints` reply for `names` (all of them:
    /// each request replaces the last), in the order asked (see
    /// [`send_functions`]). An adapter's that never says where
    /// (`Quirks::functions_placed_by_defs`) are placed by their `def`s
    /// under `workdir`.
    pub(super) fn record_functions(
        &mut self,
        quirks: Quirks,
        workdir: &Path,
        names: &[String],
        reply: &[Breakpoint],
    ) {
        self.functions = names
            .iter()
            .enumerate()
            .map(|(i, name)| FunctionBinding::from_reply(name, reply.get(i)))
            .collect();
        let unplaced = |b: &FunctionBinding| b.verified && b.line.is_none();
        if quirks.functions_placed_by_defs && self.functions.iter().any(unplaced) {
            let wanted: Vec<&str> =
                self.functions.iter().filter(|b| unplaced(b)).map(|b| b.name.as_str()).collect();
            let defs = python_defs(workdir, &wanted);
            for b in &mut self.functions {
                b.place_by_defs(defs.get(&b.name).map(Vec::as_slice).unwrap_or_default());
            }
        }
    }

    /// Records another process's `setFunctionBreakpoints` reply, in a run
    /// of several: one that bound in one process stays bound.
    pub(super) fn record_functions_more(
        &mut self,
        quirks: Quirks,
        workdir: &Path,
        names: &[String],
        reply: &[Breakpoint],
    ) {
        let before = std::mem::take(&mut self.functions);
        self.record_functions(quirks, workdir, names, reply);
        for b in self.functions.iter_mut().filter(|b| !b.verified) {
            if let Some(old) = before.iter().find(|o| o.verified && o.name == b.name) {
                *b = old.clone();
            }
        }
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
mod tests {
    use super::super::breakpoints::tests::answer;
    use super::*;
    use serde_json::json;

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
    fn debugpys_function_breakpoints_are_placed_by_their_def_and_unknown_ones_do_not_bind() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "def add(a, b):\n    return a + b\n").unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("pkg/b.py"), "class K:\n    async def add (self):\n        pass\n")
            .unwrap();
        let names = ["add", "nope", "K.m"].map(String::from);
        let verified = json!({"verified": true});
        let reply = json!({"breakpoints": [verified, verified, verified]});
        let mut b = Bindings::default();
        b.record_functions(
            crate::dap::adapters::Quirks { functions_placed_by_defs: true, ..Default::default() },
            dir.path(),
            &names,
            &answer(reply),
        );
        let add = &b.functions[0];
        assert_eq!((add.verified, add.path.as_deref(), add.line), (true, Some("a.py"), Some(1)));
        assert_eq!(add.found, Some(FunctionFound::AtDef { more: vec!["pkg/b.py:2".into()], left: 0 }));
        let nope = &b.functions[1];
        assert!(!nope.verified);
        assert_eq!(nope.found, Some(FunctionFound::NoDef));
        assert_eq!(b.functions[2].found, Some(FunctionFound::Dotted { bare: "m".into() }));
        assert_eq!(b.bound(), 1);
        // Another adapter's answer is taken as it says.
        b.record_functions(
            crate::dap::adapters::Quirks::default(),
            dir.path(),
            &names[..1],
            &answer(json!({"breakpoints": [{"verified": false}]})),
        );
        let add = &b.functions[0];
        assert_eq!((add.verified, add.message.as_deref()), (false, None));
    }
}
