//! Reading an adapter's replies: a typed request's failure told apart from
//! an answer that did not fit DAP's types (quoted, never read as empty),
//! and the paths they name shown from the working directory. Both the ops
//! and the stop snapshot read through here.

use std::path::Path;

use super::failure::Unfit;
use crate::wire::dap::SendError;
use crate::wire::pending::RequestError;

/// A typed request's answer as `op` reads it: the answer, or why not — a
/// reply that did not fit DAP's type for `field` (quoted), or the
/// request's own failure in words.
pub(super) fn typed<T>(op: &str, field: &str, sent: Result<T, SendError>) -> Result<T, NotRead> {
    sent.map_err(|e| match e {
        SendError::Unfit { error, began, .. } => {
            NotRead::Unfit(Unfit { op: op.to_string(), field: field.to_string(), error, began })
        }
        SendError::Request(e) => NotRead::Failed(e),
    })
}

/// Why a typed request's answer could not be read.
pub(super) enum NotRead {
    /// It came, and does not fit DAP's type.
    Unfit(Unfit),
    /// It did not come: the request failed or was refused.
    Failed(RequestError),
}

/// A path an adapter named, as the answer shows it ([`crate::fs::display_path`]).
pub(super) fn display(workdir: &Path, p: &str) -> String {
    crate::fs::display_path(workdir, Path::new(p))
}
