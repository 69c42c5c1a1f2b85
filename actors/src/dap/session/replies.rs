//! Reading an adapter's replies: a body read as DAP's types (or an error
//! quoting what came), stack frames with js-debug's hints mapped, and the
//! paths they name shown from the working directory. Both the ops and the
//! stop snapshot read through here.

use std::path::Path;

use serde_json::Value;

use super::MAX_RAW_QUOTED;
use super::failure::Unfit;
use crate::text::cut;

/// `body[field]` read as `T`, or an error naming the op and quoting the
/// start of the adapter's reply: a reply that does not fit is never read as
/// an empty list.
pub(super) fn parse_body<T: serde::de::DeserializeOwned>(
    op: &str,
    body: &Value,
    field: &str,
) -> Result<T, Unfit> {
    serde_json::from_value(body[field].clone()).map_err(|e| {
        let (raw, _) = cut(&body.to_string(), MAX_RAW_QUOTED);
        Unfit { op: op.to_string(), field: field.to_string(), error: e.to_string(), began: raw }
    })
}

/// A `stackTrace` answer's frames. js-debug marks the frames it skips
/// (node's own) `deemphasize`, a hint DAP gives sources, not frames: read
/// as `subtle`, the frame hint for the same thing.
pub(super) fn parse_frames(body: &Value) -> Result<Vec<dap_types::StackFrame>, Unfit> {
    let mut body = body.clone();
    for frame in body["stackFrames"].as_array_mut().into_iter().flatten() {
        if frame["presentationHint"] == "deemphasize" {
            frame["presentationHint"] = Value::from("subtle");
        }
    }
    parse_body("stack", &body, "stackFrames")
}

/// A path an adapter named, as the answer shows it ([`crate::fs::display_path`]).
pub(super) fn display(workdir: &Path, p: &str) -> String {
    crate::fs::display_path(workdir, Path::new(p))
}
