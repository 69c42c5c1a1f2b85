//! Which server: a table entry on a project root. Everything that keeps
//! or reports on running servers — the actors, their open sessions, the
//! budget — names one by this.

use std::path::PathBuf;

/// Identifies a server instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey {
    /// The table entry's id.
    pub server: String,
    /// The project root.
    pub root: PathBuf,
}
