//! Why a session is over: the caller ended it, its time-to-live passed,
//! its program exited or terminated, or its adapter went away. The
//! `debug` tool words it; the supervision tree keeps a few words of it.

use std::time::Duration;

/// Why a session is over.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEnd {
    /// The caller terminated it (or detached from an attached program).
    Requested,
    /// Its time-to-live passed; adapter and program were killed.
    Expired { ttl: Duration },
    /// The program exited with this code.
    Exited(i64),
    /// The program ended and its adapter gave no exit code (delve,
    /// js-debug).
    Terminated,
    /// The connection to the adapter ended, as the transport saw it.
    AdapterGone(crate::wire::dap::Ended),
}
