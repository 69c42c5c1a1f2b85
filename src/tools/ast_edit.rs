//! `ast_edit`: stage a structural rewrite (S6), level write. Nothing is
//! written here; `resolve` does that.

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use tether_actors::ast::actor::{AstActor, Stage, StageOutcome};

use super::plural;
use super::structural::{coverage_phrase, lower_case_hint, nothing_to_search, scope};
use crate::args::parse;
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "ast_edit";

/// Arguments of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditArgs {
    pub pattern: String,
    pub rewrite: String,
    pub path: Option<String>,
    pub language: Option<String>,
}

/// The `ast_edit` tool.
pub struct AstEdit {
    /// The parser set's actor.
    pub ast: Addr<AstActor>,
}

impl ToolHandler for AstEdit {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Write,
            parallel_safe: true,
            description: "Stage a rewrite of each `pattern` match into `rewrite`; resolve applies it.\n\nStage a structural rewrite: each match of `pattern` (as in ast_grep) becomes `rewrite`, using what the pattern binds. Writes nothing; answers a diff and an edit_id for resolve.\n\n`rewrite` may use only the metavariables the pattern binds. `path`: a file or directory (default: the whole workspace); `language` as for ast_grep, inferred from a file's extension.".into(),
            input_schema: schema_of::<AstEditArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: AstEditArgs = parse("ast_edit", args)?;
        let scope = scope(ctx, args.path.as_deref(), args.language.as_deref())?;
        let rel = tether_actors::fs::relative(ctx.root(), &scope.path);
        let ast = self.ast.clone();
        let owner = ctx.conversation.clone();
        Ok(Box::pin(async move {
            let stage = Stage {
                scope: scope.clone(),
                pattern: args.pattern.clone(),
                rewrite: args.rewrite,
                owner: owner.to_string(),
            };
            match ast.send(stage).await {
                Ok(Ok(outcome)) => render(&args.pattern, &rel, &scope, outcome),
                Ok(Err(e)) => {
                    ToolResult::error(format!("ast_edit: {}", crate::tools::structural::ast_error(&e)))
                }
                Err(e) => {
                    ToolResult::error(format!("ast_edit: the parser set is not running ({e}); try again"))
                }
            }
        }))
    }
}

fn render(
    pattern: &str,
    rel: &str,
    scope: &tether_actors::ast::scan::Scope,
    outcome: StageOutcome,
) -> ToolResult {
    let Some(staged) = &outcome.staged else {
        let text = match nothing_to_search(scope, rel).filter(|_| outcome.coverage.files == 0) {
            Some(text) => text,
            None => {
                let mut text = format!(
                    "no matches for `{pattern}`, so nothing was staged; {}",
                    coverage_phrase(&outcome.coverage)
                );
                if let Some(hint) = lower_case_hint(pattern) {
                    text.push_str(&format!("\nnote: {hint}"));
                }
                text
            }
        };
        return ToolResult::text(text).with_data(&outcome);
    };
    let mut text = String::new();
    let n_files = staged.files.len();
    let _ = writeln!(
        text,
        "(proposed) {} replacement{} in {} file{}; nothing is written yet: call resolve with edit_id \"{}\" and action \"accept\" to write them all, or \"discard\".",
        staged.replacements,
        plural(staged.replacements),
        n_files,
        plural(n_files),
        staged.edit_id
    );
    // What the rewrite could not see: those occurrences stay as they are.
    let cov = &outcome.coverage;
    if staged.nested > 0 || staged.nested_left > 0 {
        let one = staged.nested == 1;
        let _ = write!(
            text,
            "{} replacement{} inside another match and {} rewritten first (inside out)",
            staged.nested,
            if one { " sits" } else { "s sit" },
            if one { "was" } else { "were" }
        );
        if staged.nested_left > 0 {
            let _ = write!(
                text,
                "; {} nested match{} went with text the rewrite does not keep",
                staged.nested_left,
                if staged.nested_left == 1 { "" } else { "es" }
            );
        }
        text.push('\n');
    }
    if cov.skipped() > 0 || !cov.unparseable_files.is_empty() {
        let _ = writeln!(
            text,
            "not every file was covered: {}; matches there are not in this edit",
            coverage_phrase(cov)
        );
    }
    for (file, count) in &staged.files {
        let _ = writeln!(text, "  {file}: {count}");
    }
    text.push_str(&staged.preview);
    if staged.preview_lines_omitted > 0 {
        let _ = writeln!(text, "… preview cut: {} more diff lines not shown", staged.preview_lines_omitted);
    }
    ToolResult::text(text.trim_end()).with_data(&outcome)
}
