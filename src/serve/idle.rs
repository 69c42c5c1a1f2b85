//! When a `tether serve --http` session is idle, and ending it then.
//!
//! A session is idle when no request of its came in for `--session-idle`
//! and none is still being answered. rmcp's own keep-alive counts only
//! messages, so a long call without progress notifications (an `eval`
//! that computes for an hour, a question the human takes long to answer)
//! would end its session mid-call; tether keeps the account itself, per
//! `Mcp-Session-Id`, and ends idle sessions through the session manager.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

/// How often idle sessions are looked for, at least (short idle limits
/// are checked a few times per limit).
const REAP_EVERY_AT_MOST: Duration = Duration::from_secs(30);
/// How often idle sessions are looked for, at most.
const REAP_EVERY_AT_LEAST: Duration = Duration::from_millis(200);

/// Each session's last request and its requests still being answered.
#[derive(Default)]
pub struct Activity {
    seen: parking_lot::Mutex<HashMap<String, Seen>>,
}

struct Seen {
    last: Instant,
    open: usize,
}

/// A request being answered; dropped with its response body (sent, or
/// the client gone), it marks the session active from then on.
pub struct Open {
    activity: Arc<Activity>,
    id: String,
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(s) = self.activity.seen.lock().get_mut(&self.id) {
            s.open = s.open.saturating_sub(1);
            s.last = Instant::now();
        }
    }
}

impl Activity {
    /// A session `id` opened now.
    pub fn opened(&self, id: &str) {
        self.seen.lock().insert(id.to_string(), Seen { last: Instant::now(), open: 0 });
    }

    /// A request of session `id` begins; it is answered when the guard
    /// drops. `None` for a session not (or no longer) known.
    pub fn begin(self: &Arc<Self>, id: &str) -> Option<Open> {
        let mut seen = self.seen.lock();
        let s = seen.get_mut(id)?;
        s.open += 1;
        s.last = Instant::now();
        Some(Open { activity: self.clone(), id: id.to_string() })
    }

    /// Session `id` ended.
    pub fn ended(&self, id: &str) {
        self.seen.lock().remove(id);
    }

    /// The sessions idle for `idle` with nothing being answered, forgotten.
    fn take_idle(&self, idle: Duration) -> Vec<String> {
        let mut seen = self.seen.lock();
        let idle_ids: Vec<String> = seen
            .iter()
            .filter(|(_, s)| s.open == 0 && s.last.elapsed() >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle_ids {
            seen.remove(id);
        }
        idle_ids
    }

    /// Forgets sessions the manager no longer holds (ended by rmcp itself:
    /// no `initialize` in time, a transport that closed).
    fn retain(&self, live: impl Fn(&str) -> bool) {
        self.seen.lock().retain(|id, _| live(id));
    }
}

/// Ends sessions idle past `idle` until `stop` fires.
pub async fn reap(
    activity: Arc<Activity>,
    manager: Arc<LocalSessionManager>,
    idle: Duration,
    stop: CancellationToken,
) {
    let every = (idle / 4).clamp(REAP_EVERY_AT_LEAST, REAP_EVERY_AT_MOST);
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = stop.cancelled() => return,
        }
        {
            let sessions = manager.sessions.read().await;
            activity.retain(|id| sessions.contains_key(id));
        }
        for id in activity.take_idle(idle) {
            let _ = manager.close_session(&Arc::from(id.as_str())).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_with_a_request_being_answered_is_never_idle() {
        let activity = Arc::new(Activity::default());
        activity.opened("a");
        activity.opened("b");
        let open = activity.begin("a").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(activity.take_idle(Duration::from_millis(20)), vec!["b".to_string()]);
        drop(open);
        // Its answer just went out: idle counts from there.
        assert!(activity.take_idle(Duration::from_millis(20)).is_empty());
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(activity.take_idle(Duration::from_millis(20)), vec!["a".to_string()]);
        assert!(activity.begin("a").is_none(), "a forgotten session is not revived");
    }
}
