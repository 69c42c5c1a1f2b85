//! Wire code shared by every protocol peer, language servers and debug
//! adapters alike: `Content-Length` framing, the transport (writer and
//! reader tasks, a request's handle that cancels when dropped), the
//! pending-request map, and the two envelopes on top — JSON-RPC
//! ([`client`], [`jsonrpc`]) and DAP ([`dap`]).
//!
//! Nothing here knows what a hover or a breakpoint is. To watch the traffic,
//! run with `RUST_LOG=tether_actors::wire=trace`.

pub mod client;
pub mod dap;
pub mod framing;
pub mod jsonrpc;
pub mod pending;
pub mod transport;
