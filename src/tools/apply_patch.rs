//! `apply_patch`: apply a unified diff to one or more files, all or nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use tether_actors::fs::FileChange;

use super::patch;
use crate::args::{confined, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// A unified diff (as from `diff -u` or `git diff`); paths relative to the working directory, `a/` and `b/` prefixes allowed, /dev/null to create or delete.
    pub patch: String,
}

/// The `apply_patch` tool.
pub struct ApplyPatch;

impl ToolHandler for ApplyPatch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "apply_patch".into(),
            level: Level::Write,
            parallel_safe: false,
            description: "Apply a unified diff to files in the working directory. Every file is changed or none: a hunk that does not apply fails the whole patch.".into(),
            input_schema: schema_of::<ApplyPatchArgs>(),
        }
    }

    fn start(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: ApplyPatchArgs = parse("apply_patch", args)?;
        let files = patch::parse(&args.patch)
            .map_err(|e| ToolError::new(format!("apply_patch: argument `patch`: {e}")))?;
        let mut targets = Vec::with_capacity(files.len());
        for file in files {
            let old = match &file.old_path {
                Some(p) => Some(confined(ctx.root(), "patch", p)?),
                None => None,
            };
            let new = match &file.new_path {
                Some(p) => Some(confined(ctx.root(), "patch", p)?),
                None => None,
            };
            targets.push((file, old, new));
        }
        let ctx = ctx.clone();
        Ok(Box::pin(async move {
            let root = ctx.root().to_path_buf();
            let outcome = super::blocking("apply_patch", move || {
                apply_all(&root, targets).map_or_else(ToolResult::error, |(changes, summary)| {
                    match tether_actors::fs::commit(&changes) {
                        Ok(()) => {
                            let mut result = ToolResult::text(summary);
                            result.data = Some(serde_json::json!({
                                "files": changes.iter().map(|c| tether_actors::fs::relative(&root, &c.path)).collect::<Vec<_>>()
                            }));
                            result
                        }
                        Err(e) => ToolResult::error(format!("apply_patch: nothing was changed: {e}")),
                    }
                })
            })
            .await;
            if outcome.is_error {
                return outcome;
            }
            let written = outcome
                .data
                .as_ref()
                .and_then(|d| d["files"].as_array())
                .map(|files| {
                    files
                        .iter()
                        .filter_map(|f| f.as_str())
                        .map(|f| ctx.root().join(f))
                        .collect()
                })
                .unwrap_or_default();
            ctx.report_write(written, outcome).await
        }))
    }
}

type Target = (
    patch::FilePatch,
    Option<std::path::PathBuf>,
    Option<std::path::PathBuf>,
);

/// Computes every file's new content in memory; nothing is written here.
fn apply_all(
    root: &std::path::Path,
    targets: Vec<Target>,
) -> Result<(Vec<FileChange>, String), String> {
    let mut changes: Vec<FileChange> = Vec::new();
    let mut lines = Vec::new();
    for (file, old, new) in targets {
        let source = old.as_ref().or(new.as_ref()).cloned().unwrap_or_default();
        let rel = tether_actors::fs::relative(root, &source);
        let before = match &old {
            Some(path) => match std::fs::read_to_string(path) {
                Ok(text) => Some(text),
                Err(e) => {
                    return Err(format!(
                        "apply_patch: cannot read `{rel}` ({e}); nothing was changed. Check the paths in the patch headers"
                    ));
                }
            },
            None => {
                if new.as_ref().is_some_and(|p| p.exists()) {
                    return Err(format!(
                        "apply_patch: the patch creates `{rel}`, which already exists; nothing was changed. Diff against the current file instead"
                    ));
                }
                None
            }
        };
        let after = match &new {
            Some(_) => Some(
                patch::apply(&file, before.as_deref().unwrap_or(""))
                    .map_err(|e| format!("apply_patch: {e}; nothing was changed"))?,
            ),
            None => None,
        };
        let verb = match (&before, &after) {
            (None, _) => "created",
            (_, None) => "deleted",
            _ => "patched",
        };
        lines.push(format!("{verb} `{rel}`"));
        // A rename: the old path goes, the new path comes.
        if let (Some(old_path), Some(new_path)) = (&old, &new)
            && old_path != new_path
        {
            changes.push(FileChange {
                path: old_path.clone(),
                before: before.clone().map(String::into_bytes),
                after: None,
            });
            changes.push(FileChange {
                path: new_path.clone(),
                before: None,
                after: after.map(String::into_bytes),
            });
            continue;
        }
        changes.push(FileChange {
            path: source,
            before: before.map(String::into_bytes),
            after: after.map(String::into_bytes),
        });
    }
    Ok((changes, format!("applied the patch: {}", lines.join(", "))))
}
