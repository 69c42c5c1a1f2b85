//! `write`: replace or create a file, level write, atomically. Replacing
//! a file needs this conversation to have seen it as it is: read (or
//! written) through tether, unchanged since — whoever else works on the
//! run, nothing they wrote is written over unseen.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{confined, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    pub path: String,
    pub content: String,
}

/// The `write` tool.
pub struct Write;

impl ToolHandler for Write {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write".into(),
            level: Level::Write,
            parallel_safe: false,
            description: "Create or replace a file.\n\nCreate or replace a file with `content`, atomically; missing directories are created. An existing file must have been read first, and be unchanged since (otherwise read it again, or use `edit`).".into(),
            input_schema: schema_of::<WriteArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: WriteArgs = parse("write", args)?;
        let path = confined(ctx.root(), "path", &args.path)?;
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        let ctx = ctx.clone();
        Ok(Box::pin(async move {
            let before = ctx.before_write(std::slice::from_ref(&path)).await;
            let target = path.clone();
            let seen_by = ctx.clone();
            let result = super::blocking("write", move || {
                if target.is_dir() {
                    return ToolResult::error(format!("write: `{rel}` is a directory; give a file path"));
                }
                let now = match over_what_was_seen(&seen_by, &target, &rel) {
                    Ok(now) => now,
                    Err(why) => return ToolResult::error(why),
                };
                let existed = now.is_some();
                let bytes = args.content.len();
                // Through the run's one commit path: written only if the
                // file still holds what was just checked.
                let change = tether_actors::fs::FileChange {
                    path: target.clone(),
                    before: now,
                    after: Some(args.content.into_bytes()),
                    mode: None,
                };
                match crate::writes::commit(&seen_by, &[change]) {
                    Ok(committed) => ToolResult::text(super::with_note(
                        format!("{} `{rel}` ({bytes} bytes)", if existed { "replaced" } else { "created" }),
                        committed.linked.first().and_then(|(_, n)| super::linked_note(&[(rel.clone(), *n)])),
                    )),
                    Err(e) => ToolResult::error(format!("write: `{rel}` was not written: {e}")),
                }
            })
            .await;
            if result.is_error {
                return result;
            }
            ctx.report_write(vec![path], before, result).await
        }))
    }
}

/// Whether `write` may replace `path`: it does not exist (`None`), or
/// this call's conversation saw it as it is now (its content). Otherwise
/// why not, and what to do.
fn over_what_was_seen(
    ctx: &CallContext,
    path: &std::path::Path,
    rel: &str,
) -> Result<Option<Vec<u8>>, String> {
    let now = match std::fs::read(path) {
        Ok(now) => now,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("write: cannot read `{rel}` to check it: {e}; the file is unchanged")),
    };
    if std::str::from_utf8(&now).is_err() {
        return Err(format!(
            "write: `{rel}` is a binary file ({} bytes, not UTF-8 text); write replaces text files only, and it is unchanged",
            now.len()
        ));
    }
    let Some(seen) = ctx.views.seen(&ctx.conversation, path) else {
        return Err(format!(
            "write: `{rel}` exists and this conversation has not read it, so its content would be lost unseen; read it first, or use `edit`"
        ));
    };
    match ctx.views.moved(&ctx.conversation, path, &now) {
        None => Ok(Some(now)),
        Some(moved) => Err(format!(
            "write: `{rel}` changed since you read it at {} ({}): read it again, then write; the file is unchanged",
            crate::views::clock(seen.at),
            moved.who.phrase()
        )),
    }
}
