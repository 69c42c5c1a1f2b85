//! `ask_user`: ask the human (S9), level read. The card goes through the
//! run's question gate; a skip is a success that tells the model to go on
//! under a stated assumption, a timeout is an error with the same
//! instruction, and with nobody connected the call fails at once.

use std::collections::HashSet;
use std::time::Duration;

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_actors::question::gate::{Ask, AskError, QuestionGateActor};
use tether_actors::question::{Card, CardKind, Choice, Reply};
use tether_actors::text::human_duration;

use crate::args::parse;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "ask_user";

/// The most options a card may carry.
pub const MAX_OPTIONS: usize = 12;
/// The longest question, context or label, in characters.
pub const MAX_TEXT_CHARS: usize = 2000;
/// How long the human has when the run sets nothing.
pub const DEFAULT_QUESTION_TIMEOUT: Duration = Duration::from_secs(600);

/// What a skip or a timeout tells the model to do.
const PROCEED: &str = "Proceed on your own best assumption, state that assumption plainly in your reply, and do not ask this question again";

/// Arguments of `ask_user`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserArgs {
    pub question: String,
    pub context: Option<String>,
    #[serde(default)]
    pub options: Vec<OptionArg>,
    pub allow_free_text: Option<bool>,
    #[serde(default)]
    pub multi_select: bool,
}

/// One choice.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionArg {
    pub label: String,
    pub description: Option<String>,
}

/// The `ask_user` tool.
pub struct AskUser {
    /// The run's gate.
    pub gate: Addr<QuestionGateActor>,
    /// How long the human has.
    pub timeout: Duration,
}

impl AskUser {
    fn card(&self, a: AskUserArgs) -> Result<Card, ToolError> {
        let err = |m: String| ToolError::new(format!("ask_user: {m}"));
        let question = a.question.trim().to_string();
        if question.is_empty() {
            return Err(err(
                "argument `question` is empty; write the one question the operator should answer".into(),
            ));
        }
        check_len("question", &question)?;
        let context = a.context.map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
        if let Some(c) = &context {
            check_len("context", c)?;
        }
        if a.options.len() > MAX_OPTIONS {
            return Err(err(format!(
                "argument `options` has {} entries; give at most {MAX_OPTIONS} (or ask a narrower question)",
                a.options.len()
            )));
        }
        let mut seen = HashSet::new();
        let mut options = Vec::new();
        for (i, o) in a.options.into_iter().enumerate() {
            let label = o.label.trim().to_string();
            if label.is_empty() {
                return Err(err(format!(
                    "argument `options[{i}].label` is empty; give every option a short label"
                )));
            }
            check_len(&format!("options[{i}].label"), &label)?;
            if !seen.insert(label.to_lowercase()) {
                return Err(err(format!(
                    "argument `options`: the label `{label}` appears twice; labels must be unique so the answer is unambiguous"
                )));
            }
            let description = o.description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
            options.push(Choice { label, description });
        }
        if a.multi_select && options.is_empty() {
            return Err(err(
                "argument `multi_select` is true but there are no `options` to select from; add options or drop multi_select".into(),
            ));
        }
        let allow_free_text = a.allow_free_text.unwrap_or(options.is_empty());
        if !allow_free_text && options.is_empty() {
            return Err(err(
                "there is nothing to answer with: no `options` and `allow_free_text` is false; add options or allow free text".into(),
            ));
        }
        Ok(Card {
            kind: CardKind::Question,
            question,
            context,
            options,
            allow_free_text,
            multi_select: a.multi_select,
            timeout: self.timeout,
            conversation: None,
        })
    }
}

fn check_len(field: &str, text: &str) -> Result<(), ToolError> {
    let n = text.chars().count();
    if n > MAX_TEXT_CHARS {
        return Err(ToolError::new(format!(
            "ask_user: argument `{field}` has {n} characters; keep it under {MAX_TEXT_CHARS} (put details in the files you point to)"
        )));
    }
    Ok(())
}

impl ToolHandler for AskUser {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Read,
            parallel_safe: true,
            description: format!(
                "Ask the human and wait; never ask in chat.\n\nAsk the human a question and wait (up to {}) for the answer; never ask in chat instead. A skip means: go on under a stated assumption, do not ask again.\n\nThe card shows the question, `context` (why it is asked, what depends on it) and the numbered `options` (`label` short and unique, `description` what picking it means). `allow_free_text`: whether a typed answer is accepted (default: true without options, else false); `multi_select`: whether several options may be chosen.",
                human_duration(self.timeout)
            ),
            input_schema: schema_of::<AskUserArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let mut card = self.card(parse("ask_user", args)?)?;
        card.conversation = Some(ctx.conversation.to_string());
        let gate = self.gate.clone();
        let cancel = ctx.cancel.clone();
        Ok(Box::pin(async move {
            let asked = gate.send(Ask { card: card.clone(), cancel }).await;
            match asked {
                Ok(Ok(reply)) => answered(&card, reply),
                Ok(Err(AskError::TimedOut(d))) => ToolResult::error(format!(
                    "ask_user: no answer within {} (the card's time limit); the question timed out. {PROCEED}.",
                    human_duration(d)
                ))
                .with_data(json!({"reply": "timed_out", "timeout_seconds": d.as_secs()})),
                Ok(Err(AskError::NoHuman(why))) => ToolResult::error(format!(
                    "ask_user: no human is connected to answer ({why}), so the question was not shown. {PROCEED}."
                ))
                .with_data(json!({"reply": "no_human"})),
                Ok(Err(e)) => ToolResult::error(format!("ask_user: {e}. {PROCEED}.")),
                Err(e) => ToolResult::error(format!("ask_user: the question gate is not running ({e}). {PROCEED}.")),
            }
        }))
    }
}

fn answered(card: &Card, reply: Reply) -> ToolResult {
    match reply {
        Reply::Skipped => ToolResult::text(format!("The operator skipped this question. {PROCEED}."))
            .with_data(json!({"reply": "skipped"})),
        Reply::Answered { labels, text } => {
            let mut parts = Vec::new();
            if !labels.is_empty() {
                let chosen: Vec<String> = labels
                    .iter()
                    .map(|l| {
                        let n = card.options.iter().position(|o| &o.label == l).map(|i| i + 1).unwrap_or(0);
                        format!("{n}. {l}")
                    })
                    .collect();
                let noun = if labels.len() == 1 { "option" } else { "options" };
                parts.push(format!("The operator chose {noun} {}", chosen.join(", ")));
            }
            if let Some(t) = &text {
                parts.push(format!("The operator answered: {t}"));
            }
            if parts.is_empty() {
                parts.push("The operator answered without choosing anything".into());
            }
            ToolResult::text(parts.join("\n"))
                .with_data(json!({"reply": "answered", "labels": labels, "text": text}))
        }
    }
}
