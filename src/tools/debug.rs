//! `debug`: drive a debugger (S7), level exec. Not parallel-safe; the
//! session actor's own mailbox runs one op at a time.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tether_actors::dap::session::{Cancellable, DebugOp};

use crate::args::{confined, parse};
use crate::conversations::Conversations;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The op to run.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Which adapters are usable here, and why not.
    Adapters,
    /// Whether a session runs, and where it is stopped.
    Status,
    /// Set breakpoints of `file` at `lines` (empty clears the file); may precede launch.
    Breakpoints,
    /// Start `program` (with `args`) stopped at its breakpoints.
    Launch,
    /// Attach to a program listening for a debugger on `port` (debugpy).
    Attach,
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
    /// Thread ids and names.
    Threads,
    /// Frames (cap 30).
    Stack,
    /// Scopes of `frame_id`.
    Scopes,
    /// Children of `reference` (cap 50; values cap 400 characters).
    Variables,
    /// Evaluate `expression` in `frame_id` (default: the top frame).
    Evaluate,
    /// The program's stdout/stderr so far (bounded).
    Output,
    /// End the session; kills adapter and program.
    Terminate,
}

/// Arguments of `debug`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// adapters, status, breakpoints, launch, attach, continue, pause, step_over, step_in, step_out, threads, stack, scopes, variables, evaluate, output or terminate.
    pub op: Op,
    /// breakpoints: the source file, relative to the working directory.
    pub file: Option<String>,
    /// breakpoints: 1-based lines (empty clears the file).
    pub lines: Option<Vec<u32>>,
    /// launch: the program (a .py, .go or .dart file, or a native executable).
    pub program: Option<String>,
    /// launch: the program's arguments.
    pub args: Option<Vec<String>>,
    /// attach: the port the program listens on.
    pub port: Option<u16>,
    /// continue/pause/step_*/stack: the thread (default: the stopped one).
    pub thread_id: Option<i64>,
    /// scopes (required) and evaluate: the frame, from stack.
    pub frame_id: Option<i64>,
    /// variables: the reference, from scopes or variables.
    pub reference: Option<i64>,
    /// evaluate: the expression.
    pub expression: Option<String>,
}

/// The `debug` tool.
pub struct Debug {
    /// The run's conversations, each with its own session actor.
    pub conversations: Arc<Conversations>,
}

fn need<T>(op: &str, field: &str, v: Option<T>) -> Result<T, ToolError> {
    v.ok_or_else(|| ToolError::new(format!("debug {op}: argument `{field}` is required")))
}

impl ToolHandler for Debug {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "debug".into(),
            level: Level::Exec,
            parallel_safe: false,
            description: "Drive a debugger (debugpy, lldb-dap, delve, dart): set breakpoints, launch or attach, step, and read threads, stack, scopes, variables and output. One session per conversation; ops run one at a time.".into(),
            input_schema: schema_of::<DebugArgs>(),
        }
    }

    fn serialized_by_resource(&self) -> bool {
        true
    }

    fn answers_cancellation(&self) -> bool {
        true
    }

    fn start(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let a: DebugArgs = parse("debug", args)?;
        let root = ctx.root();
        let op = match a.op {
            Op::Adapters => DebugOp::Adapters,
            Op::Status => DebugOp::Status,
            Op::Breakpoints => {
                let file = confined(root, "file", &need("breakpoints", "file", a.file)?)?;
                if !file.is_file() {
                    return Err(ToolError::new(format!(
                        "debug breakpoints: argument `file`: `{}` is not a file in the working directory",
                        tether_actors::fs::relative(root, &file)
                    )));
                }
                let lines = need("breakpoints", "lines", a.lines)?;
                if lines.contains(&0) {
                    return Err(ToolError::new("debug breakpoints: argument `lines`: lines are 1-based"));
                }
                DebugOp::Breakpoints { file, lines }
            }
            Op::Launch => {
                let program = confined(root, "program", &need("launch", "program", a.program)?)?;
                if !program.is_file() {
                    return Err(ToolError::new(format!(
                        "debug launch: argument `program`: `{}` is not a file; give the program to run (a .py, .go or .dart file, or an executable)",
                        tether_actors::fs::relative(root, &program)
                    )));
                }
                DebugOp::Launch { program, args: a.args.unwrap_or_default() }
            }
            Op::Attach => DebugOp::Attach { port: need("attach", "port", a.port)? },
            Op::Continue => DebugOp::Continue { thread: a.thread_id },
            Op::Pause => DebugOp::Pause { thread: a.thread_id },
            Op::StepOver => DebugOp::StepOver { thread: a.thread_id },
            Op::StepIn => DebugOp::StepIn { thread: a.thread_id },
            Op::StepOut => DebugOp::StepOut { thread: a.thread_id },
            Op::Threads => DebugOp::Threads,
            Op::Stack => DebugOp::Stack { thread: a.thread_id },
            Op::Scopes => DebugOp::Scopes { frame: need("scopes", "frame_id", a.frame_id)? },
            Op::Variables => DebugOp::Variables { reference: need("variables", "reference", a.reference)? },
            Op::Evaluate => DebugOp::Evaluate {
                expression: need("evaluate", "expression", a.expression)?,
                frame: a.frame_id,
            },
            Op::Output => DebugOp::Output,
            Op::Terminate => DebugOp::Terminate,
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
                Ok(reply) => ToolResult {
                    is_error: reply.is_error,
                    text: if status {
                        format!("{}\n{}", reply.text, super::lsp::RESOURCES_HINT)
                    } else {
                        reply.text
                    },
                    data: Some(reply.data),
                    images: Vec::new(),
                },
                Err(e) => ToolResult::error(format!("debug: the session actor is not running ({e})")),
            }
        }))
    }
}
