//! Wire code shared by every stdio protocol peer (language servers now,
//! debug adapters later): `Content-Length` framing, JSON-RPC message shapes,
//! and the pending-request map.
//!
//! Nothing here knows what a hover or a breakpoint is. To watch the traffic,
//! run with `RUST_LOG=tether_actors::wire=trace`.

pub mod client;
pub mod dap;
pub mod framing;
pub mod jsonrpc;
pub mod pending;
