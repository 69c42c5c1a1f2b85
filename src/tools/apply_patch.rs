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
            description: "Apply a unified diff, all files or none.\n\nApply a unified diff (`diff -u`, `git diff`; /dev/null creates or deletes): every file changes or none.\n\n`a/` and `b/` prefixes are allowed; a hunk that does not apply fails the whole patch.".into(),
            input_schema: schema_of::<ApplyPatchArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: ApplyPatchArgs = parse("apply_patch", args)?;
        let files = patch::parse(&args.patch)
            .map_err(|e| ToolError::new(format!("apply_patch: argument `patch`: {e}")))?;
        let mut targets = Vec::with_capacity(files.len());
        for file in files {
            let old = match &file.old_path {
                Some(p) => Some(confined(ctx.root(), "patch", p)?),
                None => None,
            };
            // Deleting or renaming goes through a link to the file it names:
            // the link's target would go, not the link.
            if let Some(p) = file.old_path.as_deref().filter(|_| file.new_path.is_none() || file.rename)
                && std::fs::symlink_metadata(ctx.root().join(p)).is_ok_and(|m| m.file_type().is_symlink())
            {
                return Err(ToolError::new(format!(
                    "apply_patch: argument `patch`: `{p}` is a symbolic link; a patch deletes or renames files, not links — patch the file it points to, or remove the link another way"
                )));
            }
            let new = match &file.new_path {
                Some(p) => Some(confined(ctx.root(), "patch", p)?),
                None => None,
            };
            targets.push((file, old, new));
        }
        let ctx = ctx.clone();
        let touched: Vec<std::path::PathBuf> =
            targets.iter().flat_map(|(_, old, new)| old.iter().chain(new.iter()).cloned()).collect();
        Ok(Box::pin(async move {
            let before = ctx.before_write(&touched).await;
            let root = ctx.root().to_path_buf();
            let seen_by = ctx.clone();
            let outcome = super::blocking("apply_patch", move || {
                apply_all(&root, targets).map_or_else(ToolResult::error, |(changes, summary)| {
                    // What moved under each file since this conversation
                    // saw it (its snapshot is what the commit checks).
                    let moved: Vec<String> = changes
                        .iter()
                        .filter_map(|c| {
                            let rel = tether_actors::fs::relative(&root, &c.path);
                            super::moved_note(&seen_by, &c.path, &rel, c.before.as_deref()?)
                        })
                        .collect();
                    match crate::writes::commit(&seen_by, &changes) {
                        Ok(committed) => {
                            let mut result = ToolResult::text(super::with_note(
                                summary,
                                super::committed_note(&root, &committed),
                            ));
                            for note in &moved {
                                result.append(note);
                            }
                            result.data = Some(serde_json::json!({
                                "files": changes.iter().map(|c| tether_actors::fs::relative(&root, &c.path)).collect::<Vec<_>>()
                            }));
                            result
                        }
                        Err(e) => ToolResult::error(format!("apply_patch: {e}")),
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
                .map(|files| files.iter().filter_map(|f| f.as_str()).map(|f| ctx.root().join(f)).collect())
                .unwrap_or_default();
            ctx.report_write(written, before, outcome).await
        }))
    }
}

type Target = (patch::FilePatch, Option<std::path::PathBuf>, Option<std::path::PathBuf>);

fn read_regular(path: &std::path::Path, rel: &str) -> Result<String, String> {
    if !path.is_file() {
        let what = if path.exists() { "is not a regular file" } else { "does not exist" };
        return Err(format!(
            "apply_patch: `{rel}` {what}; nothing was changed. Check the paths in the patch headers"
        ));
    }
    super::editable_size("apply_patch", path, rel).map_err(|why| format!("{why}; nothing was changed"))?;
    std::fs::read_to_string(path)
        .map_err(|e| format!("apply_patch: cannot read `{rel}` as text ({e}); nothing was changed"))
}

/// Computes every file's new content in memory; nothing is written here.
/// A path may be touched once per patch: two sections for one file would
/// each start from the file on disk and the first would be lost.
fn apply_all(root: &std::path::Path, targets: Vec<Target>) -> Result<(Vec<FileChange>, String), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut changes: Vec<FileChange> = Vec::new();
    let mut lines = Vec::new();
    let rel = |p: &std::path::Path| tether_actors::fs::relative(root, p);
    let failed = |file: &patch::FilePatch, e: patch::PatchError| {
        format!("apply_patch: {e}; nothing was changed (in the section for {})", file.path())
    };
    for (file, old, new) in targets {
        match (old, new) {
            (None, Some(new)) => {
                if new.exists() {
                    return Err(format!(
                        "apply_patch: the patch creates `{}`, which already exists; nothing was changed. Diff against the current file instead",
                        rel(&new)
                    ));
                }
                let after = patch::apply(&file, "").map_err(|e| failed(&file, e))?;
                lines.push(format!("created `{}`", rel(&new)));
                changes.push(FileChange {
                    path: new,
                    before: None,
                    after: Some(after.into_bytes()),
                    mode: None,
                });
            }
            (Some(old), None) => {
                let before = read_regular(&old, &rel(&old))?;
                let after = patch::apply(&file, &before).map_err(|e| failed(&file, e))?;
                if !after.is_empty() {
                    return Err(format!(
                        "apply_patch: the patch deletes `{}`, but its `-` lines do not cover the whole file; nothing was changed. Regenerate the patch from the current file",
                        rel(&old)
                    ));
                }
                lines.push(format!("deleted `{}`", rel(&old)));
                changes.push(FileChange {
                    path: old,
                    before: Some(before.into_bytes()),
                    after: None,
                    mode: None,
                });
            }
            (Some(old), Some(new)) if file.rename && old != new => {
                if new.exists() {
                    return Err(format!(
                        "apply_patch: the patch renames `{}` to `{}`, which already exists; nothing was changed",
                        rel(&old),
                        rel(&new)
                    ));
                }
                let before = read_regular(&old, &rel(&old))?;
                let after = patch::apply(&file, &before).map_err(|e| failed(&file, e))?;
                let mode = std::fs::metadata(&old).ok().map(|m| m.permissions().mode());
                lines.push(format!("renamed `{}` to `{}`", rel(&old), rel(&new)));
                changes.push(FileChange {
                    path: old,
                    before: Some(before.into_bytes()),
                    after: None,
                    mode: None,
                });
                changes.push(FileChange { path: new, before: None, after: Some(after.into_bytes()), mode });
            }
            (Some(old), Some(new)) => {
                // `diff -u f.orig f` names two files for one: patch the one that exists.
                let target = if new.exists() { new } else { old };
                let before = read_regular(&target, &rel(&target))?;
                let after = patch::apply(&file, &before).map_err(|e| failed(&file, e))?;
                lines.push(format!("patched `{}`", rel(&target)));
                changes.push(FileChange {
                    path: target,
                    before: Some(before.into_bytes()),
                    after: Some(after.into_bytes()),
                    mode: None,
                });
            }
            (None, None) => {
                return Err(
                    "apply_patch: a section names /dev/null on both sides; nothing was changed".into()
                );
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = changes.iter().find(|c| !seen.insert(c.path.clone())) {
        return Err(format!(
            "apply_patch: the patch touches `{}` more than once; merge its sections into one (nothing was changed)",
            rel(&dup.path)
        ));
    }
    Ok((changes, format!("applied the patch: {}", lines.join(", "))))
}
