//! A JSON-RPC client over any byte stream pair, on the shared transport
//! (`wire::transport`: writer and reader tasks, the request handle) and the
//! pending map. Requests time out (sending `$/cancelRequest`
//! and removing their entry), or are dropped (same), or fail together when
//! the stream closes. Requests and notifications from the peer go to a
//! [`PeerEvents`] handler, which answers requests synchronously.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use super::jsonrpc::{self, Id, Incoming, RpcError};
use super::pending::{Pending, RequestError};
use super::transport::{self, spawn_reader, spawn_writer};
pub use super::transport::{EXIT_REPORT_GRACE, InFlight};

/// What the peer sends us that is not an answer.
pub trait PeerEvents: Send + Sync + 'static {
    /// A notification.
    fn notification(&self, method: &str, params: Value);
    /// A request; the return value is sent back as the response.
    fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError>;
}

/// The client end; cheap to clone.
#[derive(Clone)]
pub struct Client {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    name: Arc<str>,
}

impl Client {
    /// Starts the reader and writer tasks over `reader`/`writer`.
    pub fn connect<R, W>(name: &str, reader: R, writer: W, events: Arc<dyn PeerEvents>) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let name: Arc<str> = Arc::from(name);
        let client =
            Client { out: spawn_writer(name.clone(), writer), pending: Arc::new(Pending::default()), name };
        let reader_client = client.clone();
        spawn_reader(
            client.name.clone(),
            reader,
            client.pending.clone(),
            move |value| reader_client.dispatch(value, events.as_ref()),
            |_| {},
        );
        client
    }

    fn dispatch(&self, value: Value, events: &dyn PeerEvents) {
        match Incoming::parse(value) {
            Some(Incoming::Response { id: Id::Num(id), result }) => self.pending.complete(id, result),
            Some(Incoming::Response { .. }) | None => {}
            Some(Incoming::Request { id, method, params }) => {
                let answer = events.request(&method, &params);
                self.send(&jsonrpc::response(&id, answer));
            }
            Some(Incoming::Notification { method, params }) => events.notification(&method, params),
        }
    }

    fn send(&self, message: &Value) -> bool {
        transport::send(&self.out, &self.name, message)
    }

    /// Sends a request and waits at most `timeout` for its answer.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RequestError> {
        self.send_request(method, params)?.answer(timeout).await
    }

    /// Sends a request now — queued behind everything sent before it, ahead
    /// of everything sent after — and returns the handle its answer comes
    /// through. Dropping the handle unanswered cancels the request
    /// (`$/cancelRequest`).
    pub fn send_request(&self, method: &str, params: Value) -> Result<InFlight, RequestError> {
        InFlight::send(
            &self.pending,
            &self.name,
            &self.out,
            |id| jsonrpc::request(id, method, params),
            |id| Some(jsonrpc::notification("$/cancelRequest", json!({"id": id}))),
        )
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), RequestError> {
        if self.send(&jsonrpc::notification(method, params)) {
            Ok(())
        } else {
            Err(RequestError::Closed(format!("{} is not running", self.name)))
        }
    }

    /// Fails every waiter with `reason` and refuses new requests.
    pub fn close(&self, reason: &str) {
        self.pending.close(reason);
    }

    /// Whether the peer is gone (or was given up on): requests fail at once.
    pub fn is_closed(&self) -> bool {
        self.pending.is_closed()
    }

    /// Requests waiting for an answer.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::framing::{encode, read_message};
    use parking_lot::Mutex;
    use tokio::io::{AsyncWriteExt, BufReader};

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl PeerEvents for Recorder {
        fn notification(&self, method: &str, _params: Value) {
            self.0.lock().push(method.to_string());
        }
        fn request(&self, method: &str, _params: &Value) -> Result<Value, RpcError> {
            Ok(json!(format!("handled {method}")))
        }
    }

    #[tokio::test]
    async fn answers_timeouts_cancels_and_closure_over_duplex_pipes() {
        let (client_side, server_side) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client_side);
        let (server_read, mut server_write) = tokio::io::split(server_side);
        let mut server_read = BufReader::new(server_read);
        let events = Arc::new(Recorder::default());
        let client = Client::connect("fake", client_read, client_write, events.clone());

        // Answered.
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.request("a", json!({}), Duration::from_secs(5)).await }
        });
        let req = next_from(&mut server_read).await;
        assert_eq!(req["method"], "a");
        let reply = json!({"jsonrpc": "2.0", "id": req["id"], "result": 7});
        server_write.write_all(&encode(reply.to_string().as_bytes())).await.unwrap();
        assert_eq!(call.await.unwrap(), Ok(json!(7)));

        // Timed out: the peer is told to cancel and the entry is gone.
        let err = client.request("slow", json!({}), Duration::from_millis(50)).await.unwrap_err();
        assert_eq!(err, RequestError::TimedOut(50));
        let slow = next_from(&mut server_read).await;
        let cancel = next_from(&mut server_read).await;
        assert_eq!(cancel["method"], "$/cancelRequest");
        assert_eq!(cancel["params"]["id"], slow["id"]);
        assert_eq!(client.pending(), 0);

        // A request from the peer is answered by the handler; a notification recorded.
        let ask = json!({"jsonrpc": "2.0", "id": 99, "method": "workspace/configuration", "params": {}});
        server_write.write_all(&encode(ask.to_string().as_bytes())).await.unwrap();
        let note = json!({"jsonrpc": "2.0", "method": "$/progress", "params": {}});
        server_write.write_all(&encode(note.to_string().as_bytes())).await.unwrap();
        let answer = next_from(&mut server_read).await;
        assert_eq!(answer["id"], 99);
        assert_eq!(answer["result"], "handled workspace/configuration");

        // Closed: every waiter fails, at most the grace period later.
        let waiting = tokio::spawn({
            let client = client.clone();
            async move { client.request("never", json!({}), Duration::from_secs(30)).await }
        });
        next_from(&mut server_read).await;
        drop(server_write);
        drop(server_read);
        let err = tokio::time::timeout(Duration::from_secs(2), waiting).await.unwrap().unwrap().unwrap_err();
        assert!(matches!(err, RequestError::Closed(ref why) if why.contains("fake")), "{err:?}");
        assert_eq!(events.0.lock().as_slice(), ["$/progress"]);
    }

    async fn next_from(reader: &mut BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>) -> Value {
        let body = read_message(reader).await.unwrap().unwrap();
        serde_json::from_slice(&body).unwrap()
    }
}
