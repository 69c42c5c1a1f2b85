//! `ast_grep`: structural search (S5), level read, parallel-safe.

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use tether_actors::ast::actor::{AstActor, Search};
use tether_actors::ast::search::{MAX_RESULTS_LIMIT, SearchOutcome};

use super::plural;
use super::structural::{coverage_phrase, lower_case_hint, nothing_to_search, scope};
use crate::args::{in_range, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// The tool's name, as models call it and the runtime wires it.
pub const NAME: &str = "ast_grep";

/// Matches listed in the text when `max_results` is not given.
const DEFAULT_MAX_RESULTS: usize = 50;

/// Arguments of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepArgs {
    pub pattern: String,
    pub path: Option<String>,
    pub language: Option<String>,
    pub max_results: Option<usize>,
}

/// The `ast_grep` tool.
pub struct AstGrep {
    /// The parser set's actor.
    pub ast: Addr<AstActor>,
}

impl ToolHandler for AstGrep {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            level: Level::Read,
            parallel_safe: true,
            description: "Structural code search (never in strings or comments): `$X` one node, `$$$X` a sequence, `$_` any.\n\nFind code by syntax-tree shape, never inside strings or comments: `$X` one node, `$$$X` a sequence, `$_` any; a repeated metavariable matches the same text. Answers path:line:col and the line.\n\nExample: pattern `if ($X != null) $X.dispose()` with language dart. `path`: a file or directory (default: the whole workspace). `language`: any grammar the ast-grep CLI knows (python, java, csharp, kotlin, ruby, php, swift, go, rust, tsx, yaml, …; `tether status` lists them), inferred from a file's extension; a directory search without it searches every language present. `max_results`: default 50, at most 100000.".into(),
            input_schema: schema_of::<AstGrepArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: AstGrepArgs = parse("ast_grep", args)?;
        let max_results =
            in_range("max_results", args.max_results.unwrap_or(DEFAULT_MAX_RESULTS), 1, MAX_RESULTS_LIMIT)?;
        let scope = scope(ctx, args.path.as_deref(), args.language.as_deref())?;
        let rel = tether_actors::fs::relative(ctx.root(), &scope.path);
        let ast = self.ast.clone();
        let pattern = args.pattern;
        Ok(Box::pin(async move {
            let sent = ast.send(Search { scope: scope.clone(), pattern: pattern.clone(), max_results });
            match sent.await {
                Ok(Ok(outcome)) => render(&pattern, &rel, &scope, outcome),
                Ok(Err(e)) => {
                    ToolResult::error(format!("ast_grep: {}", crate::tools::structural::ast_error(&e)))
                }
                Err(e) => {
                    ToolResult::error(format!("ast_grep: the parser set is not running ({e}); try again"))
                }
            }
        }))
    }
}

fn render(
    pattern: &str,
    rel: &str,
    scope: &tether_actors::ast::scan::Scope,
    outcome: SearchOutcome,
) -> ToolResult {
    let cov = &outcome.coverage;
    if cov.files == 0
        && let Some(text) = nothing_to_search(scope, rel)
    {
        return ToolResult::text(text).with_data(&outcome);
    }
    let loose = &cov.pattern_loose_in;
    let searched_strictly = cov
        .per_language
        .keys()
        .chain(cov.embedded.keys())
        .any(|l| !loose.contains_key(l) && !cov.pattern_unparseable_in.contains_key(l));
    if outcome.total == 0 && !loose.is_empty() && !searched_strictly {
        // A pattern that parses nowhere and found nothing is a pattern to
        // fix, not an answer that the code has no such thing.
        let why: Vec<&str> = loose.values().map(String::as_str).collect();
        let hint = lower_case_hint(pattern).map(|h| format!(". {h}")).unwrap_or_default();
        return ToolResult::error(format!(
            "ast_grep: {}; read loosely, as the ast-grep CLI reads such a pattern, it matched nothing{hint}",
            why.join("; ")
        ))
        .with_data(&outcome);
    }
    let files: std::collections::BTreeSet<&str> = outcome.matches.iter().map(|m| m.path.as_str()).collect();
    let mut text = String::new();
    if outcome.total == 0 {
        let _ = write!(text, "no matches for `{pattern}`; {}", coverage_phrase(cov));
        if let Some(hint) = lower_case_hint(pattern) {
            let _ = write!(text, "\nnote: {hint}");
        }
    } else {
        let _ = writeln!(
            text,
            "{} match{} for `{pattern}`; {}",
            outcome.total,
            if outcome.total == 1 { "" } else { "es" },
            coverage_phrase(cov)
        );
        for m in &outcome.matches {
            let _ = writeln!(text, "{}:{}:{}: {}", m.path, m.line, m.column, m.line_text.trim());
        }
        if outcome.total > outcome.matches.len() {
            let _ = write!(
                text,
                "showing {} of {} matches (in {} file{}; max_results={}); raise max_results or narrow `path`",
                outcome.matches.len(),
                outcome.total,
                files.len(),
                plural(files.len()),
                outcome.max_results
            );
        }
    }
    if !loose.is_empty() {
        let langs: Vec<&str> = loose.keys().map(String::as_str).collect();
        let _ = write!(
            text,
            "\nnote: the pattern has syntax errors as {} code, so it was read as the ast-grep CLI reads it (its error node matching by its children); check that the matches are what you meant",
            langs.join(", ")
        );
    }
    ToolResult::text(text.trim_end()).with_data(&outcome)
}
