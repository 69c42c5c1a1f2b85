//! The pending-request map. Every entry leaves by exactly one of three
//! exits: **answered** ([`Pending::complete`]); **timed out or dropped**
//! (the waiter goes away; [`Pending::forget`] removes the entry and the
//! caller sends the peer a cancel); **stream closed** ([`Pending::close`]
//! fails every waiter with the reason, and refuses new entries).

use std::collections::HashMap;

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::oneshot;

use super::jsonrpc::RpcError;

/// How a request ended without a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    /// The peer answered with a JSON-RPC error.
    #[error("{} (code {})", .0.message, .0.code)]
    Rpc(RpcError),
    /// A debug adapter answered `success: false`: its words (DAP's
    /// failures carry no code).
    #[error("{0}")]
    Refused(String),
    /// No answer within the bound.
    #[error("no answer within {0} ms")]
    TimedOut(u64),
    /// The peer went away; the text says how (exit status, last stderr lines).
    #[error("{0}")]
    Closed(String),
    /// Not sent: the peer said at start it does not offer this request.
    #[error("{0}")]
    Unsupported(String),
    /// Answered, but the peer said meanwhile (in a log) that the answer
    /// is partial, every time it was asked; the text says what it logged.
    #[error("{0}")]
    Partial(String),
}

type Waiter = oneshot::Sender<Result<Value, RequestError>>;

#[derive(Default)]
struct Inner {
    next_id: i64,
    waiters: HashMap<i64, Waiter>,
    closed: Option<String>,
}

/// Requests sent and not yet answered.
#[derive(Default)]
pub struct Pending {
    inner: Mutex<Inner>,
}

impl Pending {
    /// Allocates an id and a receiver for its answer; fails at once if the
    /// stream is already closed.
    pub fn register(&self) -> Result<(i64, oneshot::Receiver<Result<Value, RequestError>>), RequestError> {
        let mut inner = self.inner.lock();
        if let Some(reason) = &inner.closed {
            return Err(RequestError::Closed(reason.clone()));
        }
        inner.next_id += 1;
        let id = inner.next_id;
        let (tx, rx) = oneshot::channel();
        inner.waiters.insert(id, tx);
        Ok((id, rx))
    }

    /// Exit one: the answer arrived.
    pub fn complete(&self, id: i64, result: Result<Value, RpcError>) {
        self.answer(id, result.map_err(RequestError::Rpc));
    }

    /// Exit one, for a protocol whose failures are not JSON-RPC errors
    /// (DAP's `success: false`).
    pub fn answer(&self, id: i64, result: Result<Value, RequestError>) {
        if let Some(waiter) = self.inner.lock().waiters.remove(&id) {
            let _ = waiter.send(result);
        }
    }

    /// Exit two: the waiter gave up. Returns whether the entry was still
    /// there (so the caller should tell the peer to cancel).
    pub fn forget(&self, id: i64) -> bool {
        self.inner.lock().waiters.remove(&id).is_some()
    }

    /// Exit three: the stream closed; every waiter gets `reason`. The first
    /// reason given sticks (the exit report is more useful than "EOF").
    pub fn close(&self, reason: &str) {
        let mut inner = self.inner.lock();
        if inner.closed.is_none() {
            inner.closed = Some(reason.to_string());
        }
        for (_, waiter) in inner.waiters.drain() {
            let _ = waiter.send(Err(RequestError::Closed(reason.to_string())));
        }
    }

    /// Whether the stream has closed (every new request fails at once).
    pub fn is_closed(&self) -> bool {
        self.inner.lock().closed.is_some()
    }

    /// How many requests are waiting.
    pub fn len(&self) -> usize {
        self.inner.lock().waiters.len()
    }

    /// Whether none is waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_entry_leaves_by_one_of_three_exits() {
        let pending = Pending::default();
        let (a, rx_a) = pending.register().unwrap();
        let (b, _rx_b) = pending.register().unwrap();
        let (_c, rx_c) = pending.register().unwrap();
        pending.complete(a, Ok(Value::Bool(true)));
        assert_eq!(rx_a.await.unwrap(), Ok(Value::Bool(true)));
        assert!(pending.forget(b));
        assert!(!pending.forget(b), "forgotten once");
        pending.close("server exited with status 9");
        assert_eq!(rx_c.await.unwrap(), Err(RequestError::Closed("server exited with status 9".into())));
        assert!(pending.is_empty());
        assert!(matches!(pending.register(), Err(RequestError::Closed(_))));
    }
}
