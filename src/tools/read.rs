//! `read`: a file's text, level read. A minimal host tool; an embedding
//! host usually brings its own.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::args::{confined, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// Most bytes returned; the rest is cut and the cut stated.
pub const MAX_READ_BYTES: usize = 256 * 1024;

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    pub path: String,
}

/// The `read` tool.
pub struct Read;

impl ToolHandler for Read {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read".into(),
            level: Level::Read,
            parallel_safe: true,
            description: "Read a text file.".into(),
            input_schema: schema_of::<ReadArgs>(),
            ..ToolSpec::default()
        }
    }

    fn call(&self, ctx: &CallContext, args: serde_json::Value) -> Result<ToolFuture, ToolError> {
        let args: ReadArgs = parse("read", args)?;
        let path = confined(ctx.root(), "path", &args.path)?;
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        let ctx = ctx.clone();
        Ok(Box::pin(super::blocking("read", move || {
            let (result, whole) = read(&path, &rel);
            // What this conversation saw, for a later `write`'s check: the
            // whole file, even when the answer was cut.
            if !result.is_error
                && let Some(whole) = whole.or_else(|| std::fs::read(&path).ok())
            {
                ctx.saw(&path, &whole);
            }
            result
        })))
    }
}

/// The answer, and the file's bytes when they were read whole.
fn read(path: &std::path::Path, rel: &str) -> (ToolResult, Option<Vec<u8>>) {
    let fail = |r: ToolResult| (r, None);
    if path.is_dir() {
        return fail(ToolResult::error(format!("read: `{rel}` is a directory; give a file path")));
    }
    if path.exists() && !path.is_file() {
        return fail(ToolResult::error(format!(
            "read: `{rel}` is not a regular file (a pipe or device); give a file path"
        )));
    }
    let total = match std::fs::metadata(path) {
        Ok(meta) => meta.len() as usize,
        Err(_) => 0,
    };
    let read_capped = || -> std::io::Result<Vec<u8>> {
        use std::io::Read as _;
        let mut bytes = Vec::with_capacity(total.min(MAX_READ_BYTES));
        std::fs::File::open(path)?.take(MAX_READ_BYTES as u64).read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    let bytes = match read_capped() {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return fail(ToolResult::error(format!(
                "read: `{rel}` does not exist; check the path (relative to the working directory)"
            )));
        }
        Err(e) => return fail(ToolResult::error(format!("read: cannot read `{rel}`: {e}"))),
    };
    let total = total.max(bytes.len());
    let shown = &bytes[..];
    let text = match std::str::from_utf8(shown) {
        Ok(text) => text.to_string(),
        // A cut may split a character; only the tail is allowed to be ragged.
        Err(e) if total > MAX_READ_BYTES && e.valid_up_to() + 4 >= shown.len() => {
            String::from_utf8_lossy(&shown[..e.valid_up_to()]).into_owned()
        }
        Err(_) => {
            return fail(ToolResult::error(format!(
                "read: `{rel}` is not UTF-8 text ({total} bytes); it looks binary"
            )));
        }
    };
    let mut result = ToolResult::text(text);
    if total > MAX_READ_BYTES {
        result.append(&format!(
            "… cut at {} KiB of {total} bytes; the file is larger than read returns",
            MAX_READ_BYTES / 1024
        ));
    }
    let whole = (total <= MAX_READ_BYTES).then_some(bytes);
    (
        result
            .with_data(serde_json::json!({"path": rel, "bytes": total, "truncated": total > MAX_READ_BYTES})),
        whole,
    )
}
