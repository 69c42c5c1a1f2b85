//! The embedding API: [`Runtime::builder`] → [`RuntimeBuilder::start`] →
//! [`Runtime`], whose handle lists tools, calls them and dumps the
//! supervision tree.
//!
//! When the host already runs inside an actix system (on one of its
//! threads), the actors join it; otherwise the runtime starts its own
//! system on a dedicated thread, and stops it when the handle is dropped.
//! Either way [`Runtime::call`] is a plain future any executor can await.

mod api;
mod builder;
mod parts;
mod shutdown;

pub use api::{Runtime, Tree};
pub use builder::RuntimeBuilder;
pub use shutdown::STOP_TIMEOUT;

/// The conversation id used when the host gives none.
pub const DEFAULT_CONVERSATION: &str = "default";

/// Why a runtime did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The working directory is missing or unreadable.
    #[error("working directory: {0}")]
    Workdir(#[from] tether_actors::fs::PathError),
    /// The actor system thread could not be started.
    #[error("could not start the actor system: {0}")]
    System(String),
    /// The run's conversation id is not usable.
    #[error("{0}")]
    Conversation(String),
}
