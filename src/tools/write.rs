//! `write`: replace or create a file, level write, atomically.

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
            description: "Create or replace a file.\n\nCreate or replace a file with `content`, atomically; missing directories are created.".into(),
            input_schema: schema_of::<WriteArgs>(),
            ..ToolSpec::default()
        }
    }

    fn start(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: WriteArgs = parse("write", args)?;
        let path = confined(ctx.root(), "path", &args.path)?;
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        let ctx = ctx.clone();
        Ok(Box::pin(async move {
            let before = ctx.before_write(std::slice::from_ref(&path)).await;
            let target = path.clone();
            let result = super::blocking("write", move || {
                if target.is_dir() {
                    return ToolResult::error(format!("write: `{rel}` is a directory; give a file path"));
                }
                let existed = target.exists();
                let linked = tether_actors::fs::other_links(&target);
                match tether_actors::fs::atomic_write(&target, args.content.as_bytes()) {
                    Ok(()) => ToolResult::text(super::with_note(
                        format!(
                            "{} `{rel}` ({} bytes)",
                            if existed { "replaced" } else { "created" },
                            args.content.len()
                        ),
                        linked.and_then(|n| super::linked_note(&[(rel.clone(), n)])),
                    )),
                    Err(e) => {
                        ToolResult::error(format!("write: cannot write `{rel}`: {e}; the file is unchanged"))
                    }
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
