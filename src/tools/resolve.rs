//! `resolve`: accept or discard a staged rewrite (S6), level write, not
//! parallel-safe. Acceptance re-checks every file against what was staged
//! and writes all of them or none.

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use tether_actors::ast::actor::{AstActor, Resolve as ResolveMsg, ResolveAction, StagedPaths};

use tether_actors::ast::staging::{Committer, Resolution};
use tether_actors::fs::FileChange;

use super::plural;
use crate::args::parse;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "resolve";

/// What to do with the staged change.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Write every file of the change (or none, if any moved).
    Accept,
    /// Drop the change.
    Discard,
}

/// Arguments of `resolve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    pub edit_id: String,
    pub action: Action,
}

/// The `resolve` tool.
pub struct Resolve {
    /// The parser set's actor, which holds the staged edits.
    pub ast: Addr<AstActor>,
}

impl ToolHandler for Resolve {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Write,
            parallel_safe: false,
            description: "Accept or discard a staged change: every file or none.\n\nAccept or discard a staged change (ast_edit, lsp_rename): accept writes every file or none, refused if one changed since.\n\n`edit_id` is the id the staging call answered, such as `edit_1`.".into(),
            input_schema: schema_of::<ResolveArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: ResolveArgs = parse("resolve", args)?;
        let action = match args.action {
            Action::Accept => ResolveAction::Accept,
            Action::Discard => ResolveAction::Discard,
        };
        let ast = self.ast.clone();
        let ctx = ctx.clone();
        let id = args.edit_id;
        let conversation = ctx.conversation.to_string();
        Ok(Box::pin(async move {
            // What accepting replaces, while the files still hold it.
            let before = if action == ResolveAction::Accept {
                let asked = StagedPaths { edit_id: id.clone(), conversation: conversation.clone() };
                let paths = ast.send(asked).await.unwrap_or_default();
                ctx.before_write(&paths).await
            } else {
                None
            };
            // Written through the run's one commit path.
            let writer = ctx.clone();
            let committer: Committer =
                Arc::new(move |changes: &[FileChange]| crate::writes::commit_changes(&writer, changes));
            let sent = ast
                .send(ResolveMsg { edit_id: id.clone(), action, conversation, committer: Some(committer) })
                .await;
            let resolution = match sent {
                Ok(Ok(resolution)) => resolution,
                Ok(Err(e)) => {
                    return ToolResult::error(format!(
                        "resolve: {}",
                        crate::tools::structural::ast_error(&e)
                    ));
                }
                Err(e) => {
                    return ToolResult::error(format!(
                        "resolve: the parser set is not running ({e}); try again"
                    ));
                }
            };
            let mut result = render(&id, &resolution).with_data(&resolution);
            if let Resolution::Refused { moved } = &resolution {
                let moved: Vec<std::path::PathBuf> = moved.iter().map(|f| ctx.root().join(f)).collect();
                result.append(&format!("moved: {}", crate::writes::moved_by_whom(&ctx, &moved)));
            }
            match resolution {
                Resolution::Accepted { files, .. } => {
                    let paths: Vec<std::path::PathBuf> = files.iter().map(|f| ctx.root().join(f)).collect();
                    ctx.report_write(paths, before, result).await
                }
                _ => result,
            }
        }))
    }
}

fn render(id: &str, resolution: &Resolution) -> ToolResult {
    match resolution {
        Resolution::Accepted { files, replacements, linked } => ToolResult::text(super::with_note(
            format!(
                "accepted {id}: wrote {replacements} replacement{} in {} file{}: {}",
                plural(*replacements),
                files.len(),
                plural(files.len()),
                files.join(", ")
            ),
            super::linked_note(linked),
        )),
        Resolution::Discarded => ToolResult::text(format!("discarded {id}; nothing was written")),
        Resolution::Refused { moved } => ToolResult::error(format!(
            "refused {id}: {} changed since it was staged, so nothing was written (a partial rewrite would leave code in neither form). Run ast_edit again to stage against the current files",
            moved.join(", ")
        )),
        Resolution::Failed { reason } => {
            ToolResult::error(format!("{id} was not applied: {reason}. Fix the cause and stage it again"))
        }
    }
}
