//! `eval`: persistent Python and JavaScript cells (S8), level exec. Not
//! parallel-safe, but serialised by its kernel's own mailbox rather than
//! the shared lane — a cell's `tool("write", …)` goes through that lane,
//! and must not wait behind the cell that made it.

use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix::Recipient;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_actors::kernel::KernelLang;
use tether_actors::kernel::actor::{
    Bridge, BridgeAnswer, CellNote, CellOutcome, CellStatus, MAX_OUTPUT, RunCell,
};
use tether_actors::kernel::pool::GetKernel;
use tether_actors::text::human_duration;

use crate::args::{in_range, parse};
use crate::conversations::Conversations;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::{Image, ToolResult};
use crate::router::Call;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "eval";

/// Words a description must have, at least and at most.
const DESCRIPTION_WORDS: (usize, usize) = (5, 10);
/// Longest idle budget a call may ask for.
const MAX_IDLE_SECONDS: usize = 3600;
/// Tools a cell's `tool(...)` may not call: each runs one call at a time
/// in its resource's own mailbox, and a nested `eval` would wait for the
/// kernel's, which the calling cell holds; the kernel refuses them at once.
const REENTRANT: &[&str] = &["eval", "debug"];

/// Arguments of `eval`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    pub code: String,
    /// 5 to 10 words.
    pub description: String,
    pub language: Option<Language>,
    #[serde(default)]
    pub reset: bool,
    pub idle_timeout_seconds: Option<usize>,
}

/// A cell's language.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// CPython.
    Python,
    /// Node.js.
    Javascript,
}

/// The `eval` tool.
pub struct Eval {
    /// The run's conversations, each with its own kernels.
    pub conversations: Arc<Conversations>,
    /// The router, for the bridge (set once the router has started).
    pub router: Arc<OnceLock<Recipient<Call>>>,
    /// The run's idle budget.
    pub idle_budget: Duration,
}

impl ToolHandler for Eval {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Exec,
            parallel_safe: false,
            description: "Run a Python (default) or JavaScript cell in a persistent interpreter.\n\nRun a Python (default) or JavaScript cell in a persistent interpreter: state survives calls, the last expression is echoed, display() shows tables and figures, tool(name, args) calls host tools.\n\nPython cells accept %pip, %cd, !cmd, x = !cmd, %%bash, %%timeit and %timeit. `description` labels the cell in the transcript. `reset`: discard the interpreter and start clean before this cell. `idle_timeout_seconds`: seconds without progress before the cell is interrupted (default: the run's budget, 300).".into(),
            input_schema: schema_of::<EvalArgs>(),
            // One call at a time in its actor's mailbox; a cancelled call answers
            // with the state it left.
            serialized_by_resource: true,
            answers_cancellation: true,
            // Named by the answer of a cell its budget interrupted.
            unlisted: vec!["idle_timeout_seconds"],
        }
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let args: EvalArgs = parse("eval", args)?;
        let words = args.description.split_whitespace().count();
        if !(DESCRIPTION_WORDS.0..=DESCRIPTION_WORDS.1).contains(&words) {
            return Err(ToolError::new(format!(
                "eval: argument `description` has {words} word{}; give {} to {} words saying what the cell does (it labels the cell in the transcript)",
                if words == 1 { "" } else { "s" },
                DESCRIPTION_WORDS.0,
                DESCRIPTION_WORDS.1
            )));
        }
        let idle_budget = match args.idle_timeout_seconds {
            Some(s) => Duration::from_secs(in_range("idle_timeout_seconds", s, 1, MAX_IDLE_SECONDS)? as u64),
            None => self.idle_budget,
        };
        let lang = match args.language {
            Some(Language::Javascript) => KernelLang::Javascript,
            Some(Language::Python) | None => KernelLang::Python,
        };
        let router = self
            .router
            .get()
            .cloned()
            .ok_or_else(|| ToolError::new("eval: the runtime is still starting; call again"))?;
        let surface = ctx.surface;
        // A cell's tool calls are cancelled with the cell's own call.
        let cancel = ctx.cancel.clone();
        // … and belong to the cell's conversation.
        let conversation = ctx.conversation.clone();
        let bridge: Bridge = Arc::new(move |tool: String, args: Value| {
            let router = router.clone();
            let conversation = conversation.clone();
            let cancel = cancel.child_token();
            Box::pin(async move {
                let call =
                    Call::new(tool, args, surface).cancelled_by(cancel).in_conversation(conversation.clone());
                match router.send(call).await {
                    Ok(r) => BridgeAnswer { is_error: r.is_error, text: r.text, data: r.data },
                    Err(e) => BridgeAnswer {
                        is_error: true,
                        text: format!("the router is not running ({e})"),
                        data: None,
                    },
                }
            })
        });
        let conversations = self.conversations.clone();
        let conversation = ctx.conversation.clone();
        let description = args.description.trim().to_string();
        let cell = RunCell {
            code: args.code,
            reset: args.reset,
            idle_budget,
            bridge,
            reentrant: REENTRANT,
            cancel: ctx.cancel.clone(),
        };
        Ok(Box::pin(async move {
            let pool = match conversations.get(&conversation).map(|c| c.kernels) {
                Ok(Some(pool)) => pool,
                Ok(None) => return ToolResult::error("eval: kernels are not connected to this run"),
                Err(why) => return ToolResult::error(format!("eval: {why}")),
            };
            let kernel = match pool.send(GetKernel(lang)).await {
                Ok(k) => k,
                Err(e) => return ToolResult::error(format!("eval: the kernel pool is not running ({e})")),
            };
            match kernel.send(cell).await {
                Ok(Ok(outcome)) => render(lang, &description, outcome),
                Ok(Err(e)) => ToolResult::error(format!(
                    "eval: {e}. Check that {} is installed, or configure the run's enclosure",
                    match lang {
                        KernelLang::Python => "python3",
                        KernelLang::Javascript => "node",
                    }
                )),
                Err(e) => ToolResult::error(format!(
                    "eval: the kernel stopped unexpectedly ({e}); call again for a fresh one"
                )),
            }
        }))
    }
}

/// A note on the kernel, as the model reads it.
fn cell_note(note: &CellNote) -> String {
    match note {
        CellNote::Reset => "reset: started a fresh interpreter; earlier state is gone".into(),
        CellNote::LostWhileIdle { why } => {
            format!("{why}; this cell runs on a fresh kernel — earlier state was reset")
        }
        CellNote::CancelledBeforeStart => {
            "the call was cancelled before the cell started; it did not run".into()
        }
        CellNote::DiedBeforeRun { why } => {
            format!("{why} before the cell ran; the next cell starts on a fresh kernel")
        }
        CellNote::StrayOutput { shown } => format!(
            "output that arrived after the previous cell ended (from a thread, timer or child it left), not this cell's: {shown}"
        ),
        CellNote::Died { why } => format!("{why}; the next cell starts on a fresh kernel (state is lost)"),
        CellNote::Garbled { began } => format!(
            "the kernel sent a line tether could not read (it began: {began}); what it held is missing here"
        ),
        CellNote::CancelledDuringRun => {
            "the call was cancelled: the cell was interrupted; the kernel and its state are kept".into()
        }
        CellNote::Walled { limit } => format!(
            "interrupted after running for {}, the most a cell may; the kernel and its state are kept",
            human_duration(*limit)
        ),
        CellNote::Idle { budget } => format!(
            "interrupted after {} without progress (the idle budget); the kernel and its state are kept; pass `idle_timeout_seconds` for a longer budget",
            human_duration(*budget)
        ),
        CellNote::CallsCancelled { count } => format!(
            "{count} tool call(s) the cell started were still running when it ended and were cancelled; what they would have done may or may not have happened — check, or await them in the cell"
        ),
        CellNote::Killed { why } => format!("{why}; its state is lost, the next cell starts a fresh kernel"),
        CellNote::Said(said) => said.clone(),
    }
}

fn render(lang: KernelLang, description: &str, outcome: CellOutcome) -> ToolResult {
    let mut text = String::new();
    if !outcome.output.is_empty() {
        text.push_str(&outcome.output);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if outcome.dropped_bytes > 0 {
        let _ = writeln!(
            text,
            "… {} bytes of output not shown (cap {} KiB); the last ones:",
            outcome.dropped_bytes,
            MAX_OUTPUT / 1024
        );
        text.push_str(&outcome.tail);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    let mut images = Vec::new();
    for d in &outcome.displays {
        match &d.png {
            Some(png) => {
                let _ = writeln!(
                    text,
                    "[image {}: PNG, {} KiB] {}",
                    images.len() + 1,
                    png.len() * 3 / 4 / 1024,
                    d.text
                );
                images.push(Image { mime: "image/png".into(), base64: png.clone() });
            }
            None => {
                text.push_str(&d.text);
                text.push('\n');
            }
        }
    }
    if let Some(echo) = &outcome.echo {
        // As IPython's prompt does: a value of several lines (a Series, a
        // 2-d array) starts on a line of its own, so its first line lines
        // up with the rest.
        let _ = writeln!(text, "Out:{}{echo}", if echo.contains('\n') { "\n" } else { " " });
    }
    if let Some(err) = &outcome.error {
        if outcome.status == CellStatus::Interrupted {
            let _ = writeln!(text, "{}: interrupted", err.kind);
        } else {
            text.push_str(err.traceback.trim_end());
            text.push('\n');
        }
    }
    let notes: Vec<String> = outcome.notes.iter().map(cell_note).collect();
    for note in &notes {
        let _ = writeln!(text, "note: {note}");
    }
    if text.is_empty() {
        text = format!("({} cell ran: no output)", lang.as_str());
    }
    let is_error = !matches!(outcome.status, CellStatus::Ok);
    let data = json!({
        "description": description,
        "language": lang.as_str(),
        "status": outcome.status,
        "echo": outcome.echo,
        "error": outcome.error,
        "displays": outcome.displays.iter().map(|d| json!({"text": d.text, "html": d.html, "image": d.png.is_some()})).collect::<Vec<_>>(),
        "dropped_bytes": outcome.dropped_bytes,
        "elapsed_ms": outcome.elapsed_ms,
        "notes": notes,
    });
    ToolResult { is_error, text: text.trim_end().to_string(), data: Some(data), images }
}
