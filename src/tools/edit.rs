//! `edit`: replace one exact occurrence of a string in a file, level write.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{confined, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    pub path: String,
    pub old_string: String,
    pub new_string: String,
}

/// The `edit` tool.
pub struct Edit;

impl ToolHandler for Edit {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "edit".into(),
            level: Level::Write,
            parallel_safe: false,
            description: "Replace the one `old_string` with `new_string`.\n\nReplace `old_string`, which must occur exactly once (add surrounding lines if not), with `new_string`; written atomically.".into(),
            input_schema: schema_of::<EditArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: EditArgs = parse("edit", args)?;
        if args.old_string.is_empty() {
            return Err(ToolError::new(
                "edit: argument `old_string` is empty; give the exact text to replace (use write to create a file)",
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::new(
                "edit: `old_string` and `new_string` are the same, so nothing would change; give the new text",
            ));
        }
        let path = confined(ctx.root(), "path", &args.path)?;
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        let ctx = ctx.clone();
        Ok(Box::pin(async move {
            let before = ctx.before_write(std::slice::from_ref(&path)).await;
            let target = path.clone();
            let seen_by = ctx.clone();
            let result = super::blocking("edit", move || edit(&seen_by, &target, &rel, &args)).await;
            if result.is_error {
                return result;
            }
            ctx.report_write(vec![path], before, result).await
        }))
    }
}

fn edit(ctx: &CallContext, path: &std::path::Path, rel: &str, args: &EditArgs) -> ToolResult {
    if path.exists() && !path.is_file() {
        return ToolResult::error(format!("edit: `{rel}` is not a regular file; give a file path"));
    }
    if let Err(why) = super::editable_size("edit", path, rel) {
        return ToolResult::error(why);
    }
    let before = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolResult::error(format!(
                "edit: `{rel}` does not exist; check the path, or use write to create it"
            ));
        }
        Err(e) => return ToolResult::error(format!("edit: cannot read `{rel}` as text: {e}")),
    };
    // In a CRLF file, text given with bare `\n` line breaks means the
    // file's own: it matches lines as they are and adds lines like them.
    let crlf = |t: &str| if t.contains('\r') { t.to_string() } else { t.replace('\n', "\r\n") };
    let (old_string, new_string) = if super::patch::usual_ending(&before) == "\r\n" {
        (crlf(&args.old_string), crlf(&args.new_string))
    } else {
        (args.old_string.clone(), args.new_string.clone())
    };
    let count = before.matches(&old_string).count();
    match count {
        0 => {
            return ToolResult::error(format!(
                "edit: `old_string` does not occur in `{rel}`; read the file and copy the text exactly, whitespace included"
            ));
        }
        1 => {}
        n => {
            return ToolResult::error(format!(
                "edit: `old_string` occurs {n} times in `{rel}`; include enough surrounding lines to make it unique"
            ));
        }
    }
    let after = before.replacen(&old_string, &new_string, 1);
    let line = before[..before.find(&old_string).unwrap_or(0)].matches('\n').count() + 1;
    // Content-addressed, the edit lands; what moved under it since this
    // conversation last saw the file is said with it.
    let moved = super::moved_note(ctx, path, rel, before.as_bytes());
    let change = tether_actors::fs::FileChange {
        path: path.to_path_buf(),
        before: Some(before.into_bytes()),
        after: Some(after.into_bytes()),
        mode: None,
    };
    match crate::writes::commit(ctx, &[change]) {
        Ok(committed) => {
            let mut result = ToolResult::text(super::with_note(
                format!("edited `{rel}` at line {line}"),
                committed.linked.first().and_then(|(_, n)| super::linked_note(&[(rel.to_string(), *n)])),
            ));
            if let Some(moved) = moved {
                result.append(&moved);
            }
            result
        }
        Err(e) => ToolResult::error(format!("edit: `{rel}` was not changed: {e}")),
    }
}
