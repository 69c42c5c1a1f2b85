//! The one wait-for-change loop: a condition re-checked each time the
//! state it reads is notified as changed, bounded by a deadline. The LSP
//! side (what a server published) and the DAP side (what an adapter sent)
//! both wait through it.

use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Waits until `ready` answers `Some`, asking it again each time `changed`
/// is notified and at least every `recheck` (for conditions that also turn
/// with time, as a grace period running out); at `timeout`, its last
/// answer. The notification is armed before each check, so a change
/// between the check and the wait is never missed.
pub async fn until<T>(
    changed: &Notify,
    timeout: Duration,
    recheck: Duration,
    mut ready: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        let notified = changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(value) = ready() {
            return Some(value);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return ready();
        }
        let _ = tokio::time::timeout(left.min(recheck), notified).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[tokio::test]
    async fn a_notified_change_ends_the_wait_and_the_deadline_bounds_it() {
        let changed = Arc::new(Notify::new());
        let flag = Arc::new(AtomicBool::new(false));
        let setter = tokio::spawn({
            let (changed, flag) = (changed.clone(), flag.clone());
            async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                flag.store(true, Ordering::SeqCst);
                changed.notify_waiters();
            }
        });
        let seen = until(&changed, Duration::from_secs(10), Duration::from_secs(10), || {
            flag.load(Ordering::SeqCst).then_some(7)
        })
        .await;
        assert_eq!(seen, Some(7));
        setter.await.unwrap();
        let started = std::time::Instant::now();
        let never = until(&changed, Duration::from_millis(50), Duration::from_secs(10), || None::<()>).await;
        assert_eq!(never, None);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
