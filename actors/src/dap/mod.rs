//! Debug adapters as live resources: the adapter table, detection and each
//! adapter's own ways ([`adapters`]), what a session is asked for
//! ([`asked`]), why a session could not start ([`start_failure`]), and
//! one [`session::DebugSessionActor`] per conversation, speaking DAP through [`client`]'s typed requests over
//! [`crate::wire::dap`] (the same framing and pending map the language
//! servers use).

pub mod adapters;
pub mod asked;
pub mod client;
pub mod session;
pub mod start_failure;
