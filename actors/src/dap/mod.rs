//! Debug adapters as live resources: the adapter table and detection
//! ([`adapters`]) and one [`session::DebugSessionActor`] per conversation,
//! speaking DAP over [`crate::wire::dap`] (the same framing and pending map
//! the language servers use).

pub mod adapters;
pub mod session;
