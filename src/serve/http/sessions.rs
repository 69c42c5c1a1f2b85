//! The sessions table: slots against [`MAX_SESSIONS`], each session's
//! state (conversation, surface, calls in flight), and what names them.

use std::sync::Arc;

use super::{MAX_CALLS_IN_FLIGHT, MAX_SESSIONS};
use crate::runtime::Runtime;
use crate::spec::Surface;

/// Sessions open and being opened, against [`MAX_SESSIONS`].
#[derive(Default)]
pub struct SessionSlots {
    counts: parking_lot::Mutex<SlotCounts>,
}

#[derive(Default)]
struct SlotCounts {
    open: usize,
    opening: usize,
}

/// A session being opened: its slot is held until the request is answered.
/// (A session made meanwhile counts as open too, for that short while.)
pub(super) struct Opening(Arc<SessionSlots>);

impl Drop for Opening {
    fn drop(&mut self) {
        let mut counts = self.0.counts.lock();
        counts.opening = counts.opening.saturating_sub(1);
    }
}

impl SessionSlots {
    /// A slot for a new session, if one is free.
    pub(super) fn reserve(self: &Arc<Self>) -> Option<Opening> {
        let mut counts = self.counts.lock();
        if counts.open + counts.opening >= MAX_SESSIONS {
            return None;
        }
        counts.opening += 1;
        Some(Opening(self.clone()))
    }
}

/// One session's state: its conversation (named at `initialize` after the
/// client), its surface, its calls in flight. Dropped with the session's
/// last handler clone, it closes the conversation.
pub struct SessionState {
    runtime: Arc<Runtime>,
    slots: Arc<SessionSlots>,
    /// Where this session's cards are routed.
    pub port: Arc<crate::serve::elicit::SessionsPort>,
    /// The conversation, once the client said who it is.
    pub conversation: std::sync::OnceLock<String>,
    /// The surface the client asked for at `initialize`.
    pub surface: std::sync::OnceLock<Surface>,
    /// Calls running now.
    pub in_flight: Arc<tokio::sync::Semaphore>,
}

impl SessionState {
    pub(in crate::serve) fn new(
        runtime: Arc<Runtime>,
        slots: Arc<SessionSlots>,
        port: Arc<crate::serve::elicit::SessionsPort>,
    ) -> Self {
        slots.counts.lock().open += 1;
        Self {
            runtime,
            slots,
            port,
            conversation: std::sync::OnceLock::new(),
            surface: std::sync::OnceLock::new(),
            in_flight: Arc::new(tokio::sync::Semaphore::new(MAX_CALLS_IN_FLIGHT)),
        }
    }
}

impl Drop for SessionState {
    fn drop(&mut self) {
        let mut counts = self.slots.counts.lock();
        counts.open = counts.open.saturating_sub(1);
        drop(counts);
        if let Some(conversation) = self.conversation.get() {
            self.port.unregister(conversation);
            self.runtime.close_conversation(conversation);
        }
    }
}

/// The surface a client asks for in the endpoint's query
/// (`/mcp?surface=read-only`) or the `X-Tether-Surface` header; none: the
/// run's.
pub fn asked_surface(parts: &http::request::Parts) -> Result<Option<Surface>, String> {
    let from_query = parts
        .uri
        .query()
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("surface=").map(str::to_string)));
    let from_header = parts.headers.get("x-tether-surface").and_then(|h| h.to_str().ok()).map(str::to_string);
    match from_query.or(from_header) {
        None => Ok(None),
        Some(s) => s.parse::<Surface>().map(Some),
    }
}

/// A conversation id for a session, from its client's name and version.
pub fn conversation_id(name: &str, version: &str, n: usize) -> String {
    let clean = |s: &str| -> String {
        s.chars().filter(|c| !c.is_control()).take(40).collect::<String>().trim().to_string()
    };
    format!("mcp {} {} #{n}", clean(name), clean(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_ids_name_the_client() {
        assert_eq!(conversation_id("claude\n", "1.2", 3), "mcp claude 1.2 #3");
    }
}
