//! What a debug session is asked for, as the tool surface gives it: what
//! it launches or attaches to, and each breakpoint by line. Below both the
//! adapters (which write these into their own arguments) and the session.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dap_types::SourceBreakpoint;
use serde::Serialize;

/// The `module` that runs a JavaScript or TypeScript test file (or the
/// test files under a directory) under `node --test`.
pub const NODE_TEST: &str = "node:test";

/// The prefix of a `module` that runs one of the project's npm scripts
/// (`npm:test` is `npm run test`), under js-debug.
pub const NPM_SCRIPT: &str = "npm:";

/// What to launch, and how.
#[derive(Debug, Clone, Default)]
pub struct LaunchSpec {
    /// The program file (a script or an executable).
    pub program: Option<PathBuf>,
    /// A Python module to run as `python -m MODULE` (debugpy), instead of
    /// a program; [`NODE_TEST`], which runs the test file (or directory)
    /// `program` under `node --test`; or [`NPM_SCRIPT`]`NAME`, which runs
    /// the project's npm script NAME (js-debug, both).
    pub module: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory (default: the run's).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Breakpoints of one file to set with the launch (replacing that
    /// file's), so that "stop there and show me" is one call.
    pub breakpoints: Option<(PathBuf, Vec<BreakpointSpec>)>,
    /// Function breakpoints to set with the launch, by name (replacing
    /// those set before; empty clears them).
    pub functions: Option<Vec<String>>,
}

impl LaunchSpec {
    /// Whether this runs tests under js-debug, whatever `program` is:
    /// `node --test`, or an npm script (a project's tests).
    pub fn is_test_run(&self) -> bool {
        self.module.as_deref() == Some(NODE_TEST) || self.npm_script().is_some()
    }

    /// The npm script this runs (`test` of `npm:test`).
    pub fn npm_script(&self) -> Option<&str> {
        self.module.as_deref()?.strip_prefix(NPM_SCRIPT)
    }
}

/// What to attach to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachSpec {
    /// A program listening for debugpy (`python -m debugpy --listen PORT`).
    DebugpyPort(u16),
    /// A `dlv --headless --listen 127.0.0.1:PORT` server.
    DelvePort(u16),
    /// A native process, through lldb-dap.
    LldbPid(u32),
    /// A Go process, through delve.
    DelvePid(u32),
    /// A Dart program's VM service (`dart run --observe` prints it), through
    /// `dart debug_adapter`. A loopback `ws://` or `http://` URI.
    DartVmService(String),
    /// A node program listening for the inspector (`node --inspect=PORT`),
    /// through js-debug.
    NodeInspectPort(u16),
    /// A Ruby program whose `debug` gem listens on a loopback port
    /// (`rdbg --open --port PORT`); it opens the port itself.
    RdbgPort(u16),
}

/// A way to attach, without its address: which adapter takes it is the
/// adapter table's (`AdapterConfig::attach`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachForm {
    /// A port a program listens on for debugpy.
    DebugpyPort,
    /// A `dlv --headless` server's port.
    DelveServer,
    /// A running Go process.
    DelvePid,
    /// A running native process.
    LldbPid,
    /// A Dart VM service's address.
    DartVmService,
    /// A port node's inspector listens on.
    NodeInspectPort,
    /// A port a Ruby program's `debug` gem listens on.
    RdbgPort,
}

impl AttachSpec {
    /// The form of this attach.
    pub fn form(&self) -> AttachForm {
        match self {
            Self::DebugpyPort(_) => AttachForm::DebugpyPort,
            Self::DelvePort(_) => AttachForm::DelveServer,
            Self::DelvePid(_) => AttachForm::DelvePid,
            Self::LldbPid(_) => AttachForm::LldbPid,
            Self::DartVmService(_) => AttachForm::DartVmService,
            Self::NodeInspectPort(_) => AttachForm::NodeInspectPort,
            Self::RdbgPort(_) => AttachForm::RdbgPort,
        }
    }
}

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
