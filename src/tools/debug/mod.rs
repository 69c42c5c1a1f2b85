//! `debug`: drive a debugger (S7), level exec. Not parallel-safe; the
//! session actor's own mailbox runs one op at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tether_actors::dap::session::breakpoints::BreakpointSpec;
use tether_actors::dap::session::{AttachSpec, Cancellable, DebugOp, LaunchSpec, NODE_TEST, NPM_SCRIPT};

use crate::args::{confined, parse};
use crate::conversations::Conversations;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

mod attach;
mod bound;
mod failure;
mod listing;
pub mod render;
mod snapshot;

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "debug";

/// The op to run.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Which adapters are usable here, and why not.
    Adapters,
    /// Whether a session runs; when stopped, the stop's snapshot again.
    Status,
    /// Set the breakpoints of `file`: `lines`, or `breakpoints` with conditions, hit counts or log messages (empty clears the file); and/or `functions`, by name (empty clears them); may precede launch. Answers where each bound.
    Breakpoints,
    /// Which exceptions stop the program: `filters` (the adapter's names; without them, lists what is offered and on).
    Exceptions,
    /// Start `program` (or a Python `module`, or a test file under `module` node:test) with `args`, `cwd`, `env` — given `file` with `lines` or `breakpoints`, or `functions`, with those set first, in one call; answers with the first stop's snapshot and where each breakpoint bound.
    Launch,
    /// Attach to a running program: `port` (debugpy, or a dlv --headless server with adapter "delve"), `pid` (lldb, or delve) or `vm_service_uri` (dart).
    Attach,
    /// Continue to `file`:`line` once (a temporary breakpoint).
    RunTo,
    /// Run to the next stop.
    Continue,
    /// Stop where it is.
    Pause,
    /// One step over.
    StepOver,
    /// One step in.
    StepIn,
    /// One step out.
    StepOut,
    /// Thread ids and names (at most 100).
    Threads,
    /// Frames (cap 30).
    Stack,
    /// Scopes of `frame_id` (default: the frame the last stop showed).
    Scopes,
    /// Children of `reference` (cap 50; values cap 400 characters).
    Variables,
    /// Evaluate `expression` in `frame_id` (default: the frame the last stop showed).
    Evaluate,
    /// The program's stdout/stderr so far (bounded).
    Output,
    /// End the session; kills adapter and program.
    Terminate,
    /// This reference.
    Help,
}

/// Arguments of `debug`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    pub op: Op,
    pub file: Option<String>,
    pub lines: Option<Vec<u32>>,
    pub breakpoints: Option<Vec<BreakpointArg>>,
    pub functions: Option<Vec<String>>,
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    pub filters: Option<Vec<String>>,
    pub program: Option<String>,
    pub module: Option<String>,
    pub args: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub env: Option<BTreeMap<String, String>>,
    pub port: Option<u16>,
    pub pid: Option<u32>,
    pub adapter: Option<String>,
    pub vm_service_uri: Option<String>,
    pub thread_id: Option<i64>,
    pub frame_id: Option<i64>,
    pub reference: Option<i64>,
    pub expression: Option<String>,
}

/// One breakpoint with options.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakpointArg {
    #[schemars(range(min = 1))]
    pub line: u32,
    pub condition: Option<String>,
    pub hit_condition: Option<String>,
    pub log_message: Option<String>,
}

/// The `debug` tool.
pub struct Debug {
    /// The run's conversations, each with its own session actor.
    pub conversations: Arc<Conversations>,
}

fn need<T>(op: &str, field: &str, v: Option<T>) -> Result<T, ToolError> {
    v.ok_or_else(|| ToolError::new(format!("debug {op}: argument `{field}` is required")))
}

/// The program of a launch: `program`, or none for a Python `module` or
/// an npm script (`npm:NAME`, checked against the `package.json` in `cwd`);
/// a `node:test` launch takes a test file or a directory of them, or none
/// (node's own discovery).
fn launch_program(
    root: &Path,
    cwd: &Path,
    program: Option<String>,
    module: Option<&str>,
) -> Result<Option<PathBuf>, ToolError> {
    let file = |p: &str| {
        let program = confined(root, "program", p)?;
        if !program.is_file() {
            return Err(ToolError::new(format!(
                "debug launch: argument `program`: `{}` is not a file; give the program to run (a .py, .go, .js, .ts, .rb or .dart file, or an executable)",
                tether_actors::fs::relative(root, &program)
            )));
        }
        Ok(program)
    };
    match (program, module) {
        (None, None) => Err(ToolError::new(
            "debug launch: argument `program` is required (or `module` for `python -m MODULE`)",
        )),
        (Some(p), None) => file(&p).map(Some),
        (Some(p), Some(NODE_TEST)) => {
            let program = confined(root, "program", &p)?;
            if program.is_dir() {
                return Ok(Some(program));
            }
            let program = file(&p)?;
            let script = program
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "js" | "mjs" | "cjs" | "ts" | "mts" | "cts"));
            if !script {
                return Err(ToolError::new(format!(
                    "debug launch: `module` node:test runs a JavaScript or TypeScript test file, or the test files under a directory; `{p}` is neither (.js, .mjs, .cjs, .ts, .mts, .cts)"
                )));
            }
            Ok(Some(program))
        }
        (None, Some(NODE_TEST)) => Ok(None),
        (None, Some(m)) if m.starts_with(NPM_SCRIPT) => {
            npm_script(root, cwd, &m[NPM_SCRIPT.len()..])?;
            Ok(None)
        }
        (Some(_), Some(_)) => Err(ToolError::new(
            "debug launch: give `program` or a `module`, not both (only `module` node:test takes a `program`: the test file or directory)",
        )),
        (None, Some(m)) => {
            let python = !m.is_empty()
                && m.split('.')
                    .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'));
            if python {
                Ok(None)
            } else {
                Err(ToolError::new(format!(
                    "debug launch: argument `module`: `{m}` is not a Python module name (dotted identifiers, such as `pytest` or `pkg.cli`), `node:test` nor `npm:SCRIPT`"
                )))
            }
        }
    }
}

/// Checks that the `package.json` in `cwd` has the script `name`.
fn npm_script(root: &Path, cwd: &Path, name: &str) -> Result<(), ToolError> {
    let manifest = cwd.join("package.json");
    let shown = tether_actors::fs::relative(root, &manifest);
    let text = std::fs::read_to_string(&manifest).map_err(|e| {
        ToolError::new(format!(
            "debug launch: `module` npm:{name} runs a script of `{shown}`, which cannot be read ({e}); give `cwd`, the folder of the project's package.json"
        ))
    })?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        ToolError::new(format!("debug launch: `module` npm:{name}: `{shown}` is not valid JSON ({e})"))
    })?;
    let scripts = json["scripts"].as_object();
    if scripts.is_some_and(|s| s.contains_key(name)) {
        return Ok(());
    }
    let known: Vec<&str> = scripts.map(|s| s.keys().map(String::as_str).collect()).unwrap_or_default();
    Err(ToolError::new(if known.is_empty() {
        format!(
            "debug launch: `module` npm:{name}: `{shown}` has no scripts; add one, or launch the test file with `module: \"node:test\"`"
        )
    } else {
        format!(
            "debug launch: `module` npm:{name}: `{shown}` has no script `{name}`; it has {}",
            known.join(", ")
        )
    }))
}

/// A source file argument, confined and existing.
fn source_file(
    root: &std::path::Path,
    op: &str,
    file: Option<String>,
) -> Result<std::path::PathBuf, ToolError> {
    let file = confined(root, "file", &need(op, "file", file)?)?;
    if !file.is_file() {
        return Err(ToolError::new(format!(
            "debug {op}: argument `file`: `{}` is not a file in the working directory",
            tether_actors::fs::relative(root, &file)
        )));
    }
    Ok(file)
}

/// `lines` or `breakpoints`, as specs (`None`: neither given).
fn breakpoint_specs(
    op: &str,
    lines: Option<Vec<u32>>,
    breakpoints: Option<Vec<BreakpointArg>>,
) -> Result<Option<Vec<BreakpointSpec>>, ToolError> {
    let specs: Vec<BreakpointSpec> = match (lines, breakpoints) {
        (Some(_), Some(_)) => {
            return Err(ToolError::new(format!("debug {op}: give `lines` or `breakpoints`, not both")));
        }
        (Some(lines), None) => lines.into_iter().map(BreakpointSpec::at).collect(),
        (None, Some(bps)) => bps.into_iter().map(spec_of).collect::<Result<Vec<_>, _>>()?,
        (None, None) => return Ok(None),
    };
    if specs.iter().any(|b| b.line == 0) {
        return Err(ToolError::new(format!("debug {op}: argument `lines`: lines are 1-based")));
    }
    Ok(Some(specs))
}

/// `functions`, checked: each a function's name (`None`: not given).
fn function_names(op: &str, functions: Option<Vec<String>>) -> Result<Option<Vec<String>>, ToolError> {
    let Some(names) = functions else { return Ok(None) };
    if let Some(at) = names.iter().position(|n| n.trim().is_empty()) {
        return Err(ToolError::new(format!(
            "debug {op}: argument `functions[{at}]` is empty; give each function's name (such as `parse` or Go's `main.parse`), or `functions: []` to clear them"
        )));
    }
    // Once each, in the order given: adapters key them by name (lldb-dap
    // answers a repeated one once).
    let mut unique: Vec<String> = Vec::with_capacity(names.len());
    for name in names.into_iter().map(|n| n.trim().to_string()) {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    Ok(Some(unique))
}

/// A file's breakpoints, when `file` and `lines` (or `breakpoints`) are
/// given: one without the other is an error.
fn file_breakpoints(
    root: &Path,
    op: &str,
    file: Option<String>,
    lines: Option<Vec<u32>>,
    breakpoints: Option<Vec<BreakpointArg>>,
) -> Result<Option<(PathBuf, Vec<BreakpointSpec>)>, ToolError> {
    match (file, breakpoint_specs(op, lines, breakpoints)?) {
        (Some(file), Some(specs)) => Ok(Some((source_file(root, op, Some(file))?, specs))),
        (None, None) => Ok(None),
        (Some(_), None) => Err(ToolError::new(format!(
            "debug {op}: `file` names whose breakpoints to set; give `lines` or `breakpoints` with it (an empty list clears the file)"
        ))),
        (None, Some(_)) => Err(ToolError::new(format!(
            "debug {op}: argument `file` is required with `lines` or `breakpoints` (the file they are in)"
        ))),
    }
}

fn spec_of(b: BreakpointArg) -> Result<BreakpointSpec, ToolError> {
    let nonempty = |field: &str, v: Option<String>| match v {
        Some(t) if t.trim().is_empty() => Err(ToolError::new(format!(
            "debug breakpoints: argument `breakpoints[].{field}` is empty; leave it out for a plain breakpoint"
        ))),
        v => Ok(v),
    };
    Ok(BreakpointSpec {
        line: b.line,
        condition: nonempty("condition", b.condition)?,
        hit_condition: nonempty("hit_condition", b.hit_condition)?,
        log_message: nonempty("log_message", b.log_message)?,
    })
}

/// What `attach` reaches: `port`, `pid` or `vm_service_uri`, and the
/// adapter that attaches that way.
fn attach_spec(a: &DebugArgs) -> Result<AttachSpec, ToolError> {
    let given = [a.port.is_some(), a.pid.is_some(), a.vm_service_uri.is_some()];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(ToolError::new(
            "debug attach: give one of `port`, `pid` or `vm_service_uri`, not several",
        ));
    }
    if a.port == Some(0) {
        return Err(ToolError::new(
            "debug attach: argument `port`: 0 is not a port; give the one the program listens on",
        ));
    }
    if let Some(pid) = a.pid {
        if pid <= 1 {
            return Err(ToolError::new(format!(
                "debug attach: argument `pid`: {pid} is not a program to debug; give the process id of the running program"
            )));
        }
        if is_tether_or_an_ancestor(pid) {
            return Err(ToolError::new(format!(
                "debug attach: argument `pid`: {pid} is tether or the process that started it; stopping it would stop this session — give the program's own pid"
            )));
        }
    }
    match (a.port, a.pid, a.vm_service_uri.as_deref(), a.adapter.as_deref()) {
        (Some(p), _, _, None | Some("debugpy")) => Ok(AttachSpec::DebugpyPort(p)),
        (Some(p), _, _, Some("delve")) => Ok(AttachSpec::DelvePort(p)),
        (Some(p), _, _, Some("js-debug")) => Ok(AttachSpec::NodeInspectPort(p)),
        (Some(p), _, _, Some("rdbg")) => Ok(AttachSpec::RdbgPort(p)),
        (_, Some(pid), _, None | Some("lldb")) => Ok(AttachSpec::LldbPid(pid)),
        (_, Some(pid), _, Some("delve")) => Ok(AttachSpec::DelvePid(pid)),
        (_, _, Some(uri), None | Some("dart")) => Ok(AttachSpec::DartVmService(vm_service_uri(uri)?)),
        (None, None, None, _) => Err(ToolError::new(
            "debug attach: argument `port` (debugpy, a dlv --headless server, `node --inspect` with `adapter: \"js-debug\"`, `rdbg --open` with `adapter: \"rdbg\"`), `pid` (lldb, delve) or `vm_service_uri` (dart) is required",
        )),
        (_, _, _, other) => Err(ToolError::new(format!(
            "debug attach: argument `adapter`: `{}` cannot attach that way; debugpy takes `port`, lldb takes `pid`, delve takes either, js-debug takes `port` (of `node --inspect`), rdbg takes `port` (of `rdbg --open`), dart takes `vm_service_uri`",
            other.unwrap_or_default()
        ))),
    }
}

/// Whether `pid` is this process or one of its ancestors (its parent is
/// the agent host): a debugger attached there would halt the caller.
fn is_tether_or_an_ancestor(pid: u32) -> bool {
    let mut current = std::process::id();
    // Bounded: a process tree is not deeper than this in practice.
    for _ in 0..64 {
        if current == pid {
            return true;
        }
        match tether_actors::process::parent_of(current) {
            Some(parent) if parent > 1 => current = parent,
            _ => return false,
        }
    }
    false
}

/// A Dart VM service address, checked: `ws://` or `http://` (dds takes
/// either), on a loopback host with a port — tether attaches only to
/// programs on this machine, as it does by port.
fn vm_service_uri(uri: &str) -> Result<String, ToolError> {
    let bad = |what: &str| {
        ToolError::new(format!(
            "debug attach: argument `vm_service_uri`: `{uri}` {what}; give the address `dart run --observe` prints, such as http://127.0.0.1:8181/AbCd=/"
        ))
    };
    let parsed: http::Uri = uri.trim().parse().map_err(|_| bad("is not a URI"))?;
    match parsed.scheme_str() {
        Some("ws" | "http") => {}
        _ => return Err(bad("is not a ws:// or http:// address")),
    }
    match parsed.host() {
        Some("127.0.0.1" | "localhost" | "[::1]") => {}
        _ => return Err(bad("is not on this machine (127.0.0.1, localhost or [::1])")),
    }
    if parsed.port_u16().is_none() {
        return Err(bad("has no port"));
    }
    Ok(uri.trim().to_string())
}

impl ToolHandler for Debug {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Exec,
            parallel_safe: false,
            description: "Debug Python, C/C++/Rust, Go, JS/TS, Ruby or Dart; stops show source, locals, stack.\n\nlaunch: program or module, file + lines to break first; attach: port, pid or vm_service_uri; breakpoints: file + lines, or functions; run_to: file + line. Breakpoints take conditions, hit counts and logpoints; exception stops, steps, threads, stack, scopes, variables, evaluate and output are ops of their own. Every op that ends in a stop answers with a snapshot: where, the source around it, the locals, the call chain. One session per conversation; ops run one at a time.\n\nArguments by op:\n- breakpoints: `file` (relative to the working directory) and `lines` (1-based; empty clears the file), or `breakpoints`, each a `line` with an optional `condition` (an expression in the program's language), `hit_condition` (debugpy: `3`, `>= 3`, `% 2`; lldb: a count) or `log_message` (printed instead of stopping; `{expr}` is interpolated). May precede launch; answers where each bound.\n- breakpoints `functions`: names to stop in (C `square`, Go `main.double`, Python a bare `add`), all at once: each call replaces them, empty clears them; with `file` + `lines` too, both are set. Answers the file and line each bound at, or the adapter's reason (js-debug offers none: give `file` + `lines`).\n- exceptions: `filters`, the adapter's names (debugpy: raised, uncaught, userUnhandled; js-debug: all, uncaught, and in a node:test run assertions; rdbg: uncaught, any, RuntimeError); empty: none; left out: lists what is offered and on.\n- launch: `program` (a .py, .go, .js, .ts, .rb or .dart file, or a native executable), or `module`: a Python module run as `python -m MODULE` (such as pytest); `node:test` to run the JavaScript/TypeScript test file or directory `program` under `node --test` (`args`: the runner's flags, such as `--test-name-pattern=NAME`); `npm:SCRIPT` to run a package.json script (`args` after `--`). `args`, `cwd` (default: the working directory), `env` (extra variables). With `file` and `lines` or `breakpoints`, or `functions`, those are set first, in the same call.\n- attach: `port` on 127.0.0.1 (debugpy, or a `dlv --headless` server with `adapter` delve), `pid` (lldb, or delve), or `vm_service_uri` (the address `dart run --observe` prints, ws:// or http:// on loopback); `adapter`: debugpy (default with port), lldb (default with pid), delve, js-debug or rdbg.\n- run_to: `file` and `line`, once (a temporary breakpoint).\n- continue, pause, step_over, step_in, step_out, stack: `thread_id` (default: the stopped thread).\n- scopes, evaluate: `frame_id` (default: the frame the last stop showed); evaluate: `expression`.\n- variables: `reference`, from scopes or variables (children capped at 50, values at 400 characters).".into(),
            input_schema: schema_of::<DebugArgs>(),
            // One call at a time in its actor's mailbox; a cancelled call answers
            // with the state it left.
            serialized_by_resource: true,
            answers_cancellation: true,
            // Named by the attach error that needs it.
            unlisted: vec!["vm_service_uri"],
        }
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let a: DebugArgs = parse("debug", args)?;
        let root = ctx.root();
        // Lines are 1-based, as the schema says: a 0 is named first.
        let zero_line = a.line == Some(0) || a.breakpoints.iter().flatten().any(|b| b.line == 0);
        if zero_line {
            let field = if a.line == Some(0) { "line" } else { "breakpoints[].line" };
            return Err(ToolError::new(format!(
                "debug: argument `{field}`: lines are 1-based; the first line is 1"
            )));
        }
        // The adapter's ids are never negative (DAP sends them unsigned).
        for (field, id, listed_by) in
            [("thread_id", a.thread_id, "threads"), ("frame_id", a.frame_id, "stack")]
        {
            if let Some(id) = id.filter(|id| *id < 0) {
                return Err(ToolError::new(format!(
                    "debug: argument `{field}`: {id} is not an id the adapter gave; give one that {listed_by} listed (they are not negative)"
                )));
            }
        }
        let op = match a.op {
            Op::Adapters => DebugOp::Adapters,
            Op::Status => DebugOp::Status,
            Op::Breakpoints => {
                let functions = function_names("breakpoints", a.functions)?;
                let lines = file_breakpoints(root, "breakpoints", a.file, a.lines, a.breakpoints)?;
                if lines.is_none() && functions.is_none() {
                    return Err(ToolError::new(
                        "debug breakpoints: argument `file` with `lines` (or `breakpoints`), or `functions`, is required; an empty list clears them",
                    ));
                }
                DebugOp::Breakpoints { lines, functions }
            }
            Op::Exceptions => DebugOp::Exceptions { filters: a.filters },
            Op::RunTo => {
                let file = source_file(root, "run_to", a.file)?;
                let line = need("run_to", "line", a.line)?;
                if line == 0 {
                    return Err(ToolError::new("debug run_to: argument `line`: lines are 1-based"));
                }
                DebugOp::RunTo { file, line, thread: a.thread_id }
            }
            Op::Launch => {
                let cwd = match a.cwd {
                    Some(c) => {
                        let dir = confined(root, "cwd", &c)?;
                        if !dir.is_dir() {
                            return Err(ToolError::new(format!(
                                "debug launch: argument `cwd`: `{c}` is not a directory in the working directory"
                            )));
                        }
                        Some(dir)
                    }
                    None => None,
                };
                let program =
                    launch_program(root, cwd.as_deref().unwrap_or(root), a.program, a.module.as_deref())?;
                let env = a.env.unwrap_or_default();
                if let Some(bad) = env.keys().find(|k| k.is_empty() || k.contains(['=', '\0'])) {
                    return Err(ToolError::new(format!(
                        "debug launch: argument `env`: `{bad}` is not a variable name (no `=`, not empty)"
                    )));
                }
                if env.values().any(|v| v.contains('\0')) {
                    return Err(ToolError::new("debug launch: argument `env`: values cannot hold NUL"));
                }
                let breakpoints = file_breakpoints(root, "launch", a.file, a.lines, a.breakpoints)?;
                let functions = function_names("launch", a.functions)?;
                DebugOp::Launch(LaunchSpec {
                    program,
                    module: a.module,
                    args: a.args.unwrap_or_default(),
                    cwd,
                    env,
                    breakpoints,
                    functions,
                })
            }
            Op::Attach => DebugOp::Attach(attach_spec(&a)?),
            Op::Continue => DebugOp::Continue { thread: a.thread_id },
            Op::Pause => DebugOp::Pause { thread: a.thread_id },
            Op::StepOver => DebugOp::StepOver { thread: a.thread_id },
            Op::StepIn => DebugOp::StepIn { thread: a.thread_id },
            Op::StepOut => DebugOp::StepOut { thread: a.thread_id },
            Op::Threads => DebugOp::Threads,
            Op::Stack => DebugOp::Stack { thread: a.thread_id },
            Op::Scopes => DebugOp::Scopes { frame: a.frame_id },
            Op::Variables => match need("variables", "reference", a.reference)? {
                reference if reference > 0 => DebugOp::Variables { reference },
                other => {
                    return Err(ToolError::new(format!(
                        "debug variables: argument `reference`: {other} is not a reference; give one that scopes or variables listed (they are positive)"
                    )));
                }
            },
            Op::Evaluate => match need("evaluate", "expression", a.expression)? {
                e if e.trim().is_empty() => {
                    return Err(ToolError::new(
                        "debug evaluate: argument `expression` is empty; give the expression to evaluate",
                    ));
                }
                expression => DebugOp::Evaluate { expression, frame: a.frame_id },
            },
            Op::Output => DebugOp::Output,
            Op::Terminate => DebugOp::Terminate,
            Op::Help => return Ok(crate::help::answer(&self.spec())),
        };
        let status = matches!(op, DebugOp::Status);
        let conversations = self.conversations.clone();
        let conversation = ctx.conversation.clone();
        let cancel = ctx.cancel.clone();
        Ok(Box::pin(async move {
            let session = match conversations.get(&conversation).map(|c| c.debug) {
                Ok(Some(session)) => session,
                Ok(None) => return ToolResult::error("debug: debuggers are not connected to this run"),
                Err(why) => return ToolResult::error(format!("debug: {why}")),
            };
            match session.send(Cancellable { op, cancel }).await {
                Ok(reply) => {
                    let mut answer = render::reply(reply);
                    if status {
                        answer.text = format!("{}\n{}", answer.text, super::lsp::RESOURCES_HINT);
                    }
                    answer
                }
                Err(e) => ToolResult::error(format!("debug: the session actor is not running ({e})")),
            }
        }))
    }
}
