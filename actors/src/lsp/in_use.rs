//! Whether a server is in use: a caller holding an [`crate::lsp::Opened`]
//! session on it is using it, whether or not a request is on the wire.
//!
//! A call opens a session and may then wait — for the server to load the
//! document, to end the work it announced, to finish its checker run —
//! before it sends the request it came for. Counting only requests on the
//! wire, a slow start on a busy machine read as idleness, and the idle
//! limit stopped the very server a call was waiting for. Each session holds
//! a [`Hold`]; the server is idle only when no hold is left, and idle since
//! the last was let go.

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

/// The holds on one server, kept across its restarts.
#[derive(Clone)]
pub struct Holds(Arc<Mutex<Count>>);

struct Count {
    held: usize,
    /// When the last hold was let go (or the holds were made).
    released: Instant,
}

impl Default for Holds {
    fn default() -> Self {
        Holds(Arc::new(Mutex::new(Count { held: 0, released: Instant::now() })))
    }
}

impl Holds {
    /// A new hold, let go when it (and every clone of it) is dropped.
    pub fn hold(&self) -> Hold {
        self.0.lock().held += 1;
        Hold(self.clone())
    }

    /// How many sessions hold the server now.
    pub fn held(&self) -> usize {
        self.0.lock().held
    }

    /// When the last hold was let go.
    pub fn released(&self) -> Instant {
        self.0.lock().released
    }
}

/// One caller's use of a server; cloning it is another hold.
pub struct Hold(Holds);

impl Clone for Hold {
    fn clone(&self) -> Self {
        self.0.hold()
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut count = self.0.0.lock();
        count.held = count.held.saturating_sub(1);
        count.released = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_held_until_every_clone_of_every_hold_is_let_go() {
        let holds = Holds::default();
        let before = holds.released();
        let a = holds.hold();
        let b = a.clone();
        let c = holds.hold();
        assert_eq!(holds.held(), 3);
        drop(a);
        drop(c);
        assert_eq!(holds.held(), 1);
        drop(b);
        assert_eq!(holds.held(), 0);
        assert!(holds.released() >= before, "idle since the last hold was let go");
    }
}
