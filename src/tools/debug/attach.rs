//! The ways a debug session attaches to a running program, in words:
//! which argument reaches which adapter, and how the program is started
//! for it. `debug adapters` lists them; a refused attach names its way.

use tether_actors::dap::asked::{AttachForm, AttachSpec};
use tether_actors::dap::session::Debuggee;

/// How an adapter attaches, in the `attach` op's own arguments.
pub(super) fn attach_forms(forms: &[AttachForm]) -> String {
    let ways: Vec<&str> = forms
        .iter()
        .map(|form| match form {
            AttachForm::DebugpyPort => "`port` of a program started with `python -m debugpy --listen PORT`",
            AttachForm::LldbPid => "`pid` of a running native process",
            AttachForm::DelvePid => "`pid` of a running Go process",
            AttachForm::DelveServer => {
                "`port` with `adapter: \"delve\"` for a `dlv --headless --listen 127.0.0.1:PORT` server"
            }
            AttachForm::DartVmService => {
                "`vm_service_uri` of a program started with `dart run --observe` (the ws:// or http:// address it prints, on loopback)"
            }
            AttachForm::NodeInspectPort => {
                "`port` with `adapter: \"js-debug\"` of a program started with `node --inspect=127.0.0.1:PORT`"
            }
            AttachForm::RdbgPort => {
                "`port` with `adapter: \"rdbg\"` of a program started with `rdbg --open --port PORT` (or `RUBY_DEBUG_PORT=PORT ruby -rdebug/open`)"
            }
        })
        .collect();
    if ways.is_empty() { "attach: not offered".into() } else { format!("attach: {}", ways.join(", or ")) }
}

/// What an attach reached: `process 4242`, `the delve server on port 2345`.
pub(super) fn attached_to(spec: &AttachSpec) -> String {
    match spec {
        AttachSpec::DebugpyPort(p) => format!("the program listening for debugpy on port {p}"),
        AttachSpec::DelvePort(p) => format!("the delve server on port {p}"),
        AttachSpec::LldbPid(pid) | AttachSpec::DelvePid(pid) => format!("process {pid}"),
        AttachSpec::DartVmService(uri) => format!("the Dart VM service at {uri}"),
        AttachSpec::NodeInspectPort(p) => format!("the node program inspected on port {p}"),
        AttachSpec::RdbgPort(p) => format!("the Ruby program listening for rdbg on port {p}"),
    }
}

/// What a session debugs: its command line, or what it attached to.
pub(super) fn debuggee(debuggee: &Debuggee) -> String {
    match debuggee {
        Debuggee::Launched(line) => line.clone(),
        Debuggee::Attached(spec) => attached_to(spec),
    }
}
