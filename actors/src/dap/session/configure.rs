//! One way to configure a target: what it should hold — the breakpoints
//! by file, the function breakpoints, the exception filters — sent in
//! DAP's order once the adapter said `initialized`, on a session's first
//! connection ([`super::start`]) and on each further process a run follows
//! ([`super::targets`]: js-debug's child sessions). What a target should
//! hold is read from [`super::state::Targets`] as it is sent, so a change
//! made meanwhile reaches it too; where each breakpoint bound is recorded
//! in the session's bindings, and what could not be set comes back as
//! notes. Which exception filters a session gets is the adapters' part
//! (`crate::dap::adapters::filters`).
//!
//! A change during a session (`breakpoints`, `exceptions`) goes to every
//! live target through the same typed requests ([`super::stopping`]).

use dap_types::Capabilities;

use super::breakpoints::{BreakpointSpec, unsupported};
use super::functions::{functions_unsupported, send_functions};
use super::state::AdapterState;
use super::{NotSet, Note};
use crate::dap::adapters::Adapter;
use crate::dap::adapters::filters::exception_arguments;
use crate::wire::dap::DapClient;

/// Whose answers a target's are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// The session's first: its answers say where the breakpoints bound.
    First,
    /// Another process of a run of several (each test file's own): a
    /// breakpoint that bound in one stays bound, though a process that
    /// never loads its file says it did not.
    More,
}

/// Sends `client` the breakpoints, function breakpoints and exception
/// filters the session wants (after `initialized`, before
/// `configurationDone`), records where each bound, and says what could
/// not be set.
pub(super) async fn configure(
    client: &DapClient,
    shared: &AdapterState,
    adapter: Adapter,
    caps: &Capabilities,
    target: Target,
) -> Vec<Note> {
    let mut notes = Vec::new();
    let (files, workdir) = {
        let t = shared.targets.lock();
        (t.breakpoints.keys().cloned().collect::<Vec<_>>(), t.workdir.clone())
    };
    for file in &files {
        // Read as it is sent: a change meanwhile went to this target too.
        let Some(specs) = shared.targets.lock().breakpoints.get(file).cloned() else { continue };
        let rel = || crate::fs::relative(&workdir, file);
        if let Some(why) = unsupported(adapter.id, caps, &specs) {
            notes.push(Note::LinesNotSet { file: rel(), why: NotSet::Refused(why) });
            continue;
        }
        // One file the adapter will not take (a Python file's breakpoints
        // left from an earlier session, under delve) costs that file's
        // breakpoints, said in the answer, not the launch.
        match client.set_breakpoints(file, BreakpointSpec::all_to_dap(&specs)).await {
            Ok(bound) => {
                let bindings = &mut shared.state.lock().bindings;
                match target {
                    Target::First => bindings.record(file, &specs, &bound),
                    Target::More => bindings.record_more(file, &specs, &bound),
                }
            }
            Err(e) => notes.push(Note::LinesNotSet { file: rel(), why: NotSet::Failed(e.to_string()) }),
        }
    }
    let functions = shared.targets.lock().functions.clone();
    if !functions.is_empty() {
        if let Some(why) = functions_unsupported(adapter.id, caps) {
            notes.push(Note::FunctionsNotSet { names: functions, why: NotSet::Refused(why) });
        } else {
            match send_functions(client, adapter.quirks, &functions).await {
                Ok(bound) => {
                    let bindings = &mut shared.state.lock().bindings;
                    match target {
                        Target::First => {
                            bindings.record_functions(adapter.quirks, &workdir, &functions, &bound)
                        }
                        Target::More => {
                            bindings.record_functions_more(adapter.quirks, &workdir, &functions, &bound)
                        }
                    }
                }
                Err(e) => {
                    notes.push(Note::FunctionsNotSet { names: functions, why: NotSet::Failed(e.to_string()) })
                }
            }
        }
    }
    let exceptions = shared.targets.lock().exceptions.clone();
    if let Err(e) = client.set_exception_breakpoints(&exception_arguments(adapter.quirks, &exceptions)).await
    {
        notes.push(Note::FiltersNotSet(e.to_string()));
    }
    notes
}
