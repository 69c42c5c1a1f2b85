//! A Debug Adapter Protocol client over any byte stream pair, on the same
//! framing and pending-request map as the JSON-RPC client: DAP differs only
//! in its envelope (`seq`, `type`, `command`, `arguments` / `request_seq`,
//! `success`, `message`, `body` / `event`). Events go to a channel; of the
//! adapter's reverse requests, `startDebugging` is taken and handed on as
//! an event ([`START_DEBUGGING`]), the others answered "not supported".

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::client::EXIT_REPORT_GRACE;
use super::framing::{encode, read_message};
use super::jsonrpc::RpcError;
use super::pending::{Pending, RequestError};

/// An event from the adapter: its name and body (kept raw, so events
/// tether does not know — debugpy's `debugpySockets` — are never errors).
#[derive(Debug, Clone, PartialEq)]
pub struct DapEvent {
    /// The event's name.
    pub event: String,
    /// Its body.
    pub body: Value,
}

/// The event a `startDebugging` reverse request becomes (already
/// answered): its body is the request's arguments, the child session's
/// `configuration` and `request`.
pub const START_DEBUGGING: &str = "tether/startDebugging";

/// The client end; cheap to clone.
#[derive(Clone)]
pub struct DapClient {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    seq: Arc<AtomicI64>,
    name: Arc<str>,
}

impl DapClient {
    /// Starts the reader and writer tasks; events arrive on the returned channel.
    pub fn connect<R, W>(name: &str, reader: R, writer: W) -> (DapClient, mpsc::UnboundedReceiver<DapEvent>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let (events_tx, events) = mpsc::unbounded_channel();
        let client = DapClient {
            out,
            pending: Arc::new(Pending::default()),
            seq: Arc::new(AtomicI64::new(1_000_000)),
            name: Arc::from(name),
        };
        let mut writer = writer;
        tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if writer.write_all(&bytes).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
        });
        // The reader holds the writer only weakly: once every client clone
        // is gone the writer ends and closes its half (a TCP connection to
        // a `debugpy --listen` or `dlv --headless` server is let go, not
        // held open until the server hangs up).
        let reader_side = ReaderSide {
            out: client.out.downgrade(),
            pending: client.pending.clone(),
            seq: client.seq.clone(),
            name: client.name.clone(),
        };
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            let reason = loop {
                match read_message(&mut reader).await {
                    Ok(Some(body)) => reader_side.dispatch(&body, &events_tx),
                    Ok(None) => break format!("{} closed its output", reader_side.name),
                    Err(e) => break format!("{} sent a malformed message: {e}", reader_side.name),
                }
            };
            let _ =
                events_tx.send(DapEvent { event: "tether/closed".into(), body: json!({"reason": reason}) });
            tokio::time::sleep(EXIT_REPORT_GRACE).await;
            reader_side.pending.close(&reason);
        });
        (client, events)
    }

    fn send(&self, v: &Value) -> bool {
        tracing::trace!(target: "tether_actors::wire", peer = %self.name, "-> {v}");
        self.out.send(encode(&serde_json::to_vec(v).unwrap_or_default())).is_ok()
    }

    /// Sends `command` and returns a future of its response body, bounded by
    /// `timeout`. The request is on the wire when this returns, so a caller
    /// may send it and wait for events before awaiting the answer (debugpy
    /// answers `launch` only after `configurationDone`).
    pub fn request(
        &self,
        command: &str,
        arguments: Value,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<Value, RequestError>> + Send + 'static {
        let registered = self.pending.register();
        let pending = self.pending.clone();
        let sent: Result<bool, RequestError> = match &registered {
            Ok((id, _)) => {
                Ok(self
                    .send(&json!({"seq": id, "type": "request", "command": command, "arguments": arguments})))
            }
            Err(e) => Err(e.clone()),
        };
        let name = self.name.clone();
        async move {
            let (id, rx) = registered?;
            if sent != Ok(true) {
                pending.forget(id);
                return Err(RequestError::Closed(format!("{name} is not running")));
            }
            match tokio::time::timeout(timeout, rx).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(RequestError::Closed(format!("{name} stopped answering"))),
                Err(_) => {
                    pending.forget(id);
                    Err(RequestError::TimedOut(timeout.as_millis() as u64))
                }
            }
        }
    }

    /// Whether `other` is a clone of this client (the same connection).
    pub fn same(&self, other: &DapClient) -> bool {
        Arc::ptr_eq(&self.pending, &other.pending)
    }

    /// Fails every waiter with `reason`.
    pub fn close(&self, reason: &str) {
        self.pending.close(reason);
    }
}

/// What the reader task holds: the pending requests to complete, and the
/// writer, weakly, to refuse the adapter's reverse requests.
struct ReaderSide {
    out: mpsc::WeakUnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    seq: Arc<AtomicI64>,
    name: Arc<str>,
}

impl ReaderSide {
    fn dispatch(&self, body: &[u8], events: &mpsc::UnboundedSender<DapEvent>) {
        let Ok(v) = serde_json::from_slice::<Value>(body) else { return };
        tracing::trace!(target: "tether_actors::wire", peer = %self.name, "<- {v}");
        match v["type"].as_str() {
            Some("response") => {
                let id = v["request_seq"].as_i64().unwrap_or(-1);
                let result = if v["success"].as_bool().unwrap_or(false) {
                    Ok(v.get("body").cloned().unwrap_or(Value::Null))
                } else {
                    let message = v["message"].as_str().unwrap_or("failed").to_string();
                    let detail = v["body"]["error"]["format"].as_str().map(str::to_string);
                    Err(RpcError {
                        code: 0,
                        message: detail.unwrap_or(message),
                        data: v.get("body").cloned(),
                    })
                };
                self.pending.complete(id, result);
            }
            Some("event") => {
                let event = v["event"].as_str().unwrap_or("").to_string();
                let _ = events.send(DapEvent { event, body: v.get("body").cloned().unwrap_or(Value::Null) });
            }
            Some("request") => {
                // `startDebugging` (js-debug: each debuggee is a child
                // session, reached on a connection of its own) is taken
                // and handed on as an event; other reverse requests
                // (runInTerminal) are refused.
                let taken = v["command"] == "startDebugging";
                let seq = self.seq.fetch_add(1, Ordering::Relaxed);
                let mut answer = json!({
                    "seq": seq, "type": "response", "request_seq": v["seq"], "command": v["command"],
                    "success": taken,
                });
                if !taken {
                    answer["message"] = json!("not supported by tether");
                }
                self.send(&answer);
                if taken {
                    let body = v.get("arguments").cloned().unwrap_or(Value::Null);
                    let _ = events.send(DapEvent { event: START_DEBUGGING.to_string(), body });
                }
            }
            _ => {}
        }
    }

    fn send(&self, v: &Value) {
        if let Some(out) = self.out.upgrade() {
            tracing::trace!(target: "tether_actors::wire", peer = %self.name, "-> {v}");
            let _ = out.send(encode(&serde_json::to_vec(v).unwrap_or_default()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn the_last_client_gone_closes_the_write_half() {
        let (_their_w, our_r) = tokio::io::duplex(1024);
        let (our_w, their_r) = tokio::io::duplex(1024);
        let (client, _events) = DapClient::connect("fake-dap", our_r, our_w);
        let copy = client.clone();
        drop(client);
        drop(copy);
        // The peer reads end-of-stream, though it never closed its side.
        let mut their_r = BufReader::new(their_r);
        let read = tokio::time::timeout(Duration::from_secs(5), read_message(&mut their_r)).await;
        assert!(matches!(read, Ok(Ok(None))), "{read:?}");
    }

    #[tokio::test]
    async fn start_debugging_is_answered_and_handed_on_other_reverse_requests_refused() {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (r, w) = tokio::io::split(ours);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let (_client, mut events) = DapClient::connect("fake-dap", r, w);
        let mut their_r = BufReader::new(their_r);
        let reverse = |seq: i64, command: &str| json!({"seq": seq, "type": "request", "command": command, "arguments": {"request": "launch", "configuration": {"__pendingTargetId": "t1"}}});
        their_w.write_all(&encode(reverse(7, "runInTerminal").to_string().as_bytes())).await.unwrap();
        their_w.write_all(&encode(reverse(8, "startDebugging").to_string().as_bytes())).await.unwrap();
        let answer = |m: Vec<u8>| serde_json::from_slice::<Value>(&m).unwrap();
        let refused = answer(read_message(&mut their_r).await.unwrap().unwrap());
        assert_eq!((refused["request_seq"].as_i64(), refused["success"].as_bool()), (Some(7), Some(false)));
        let taken = answer(read_message(&mut their_r).await.unwrap().unwrap());
        assert_eq!((taken["request_seq"].as_i64(), taken["success"].as_bool()), (Some(8), Some(true)));
        let event = events.recv().await.unwrap();
        assert_eq!(event.event, START_DEBUGGING);
        assert_eq!(event.body["configuration"]["__pendingTargetId"], "t1");
    }

    #[tokio::test]
    async fn responses_events_and_unknown_events_over_a_duplex_pipe() {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (r, w) = tokio::io::split(ours);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let (client, mut events) = DapClient::connect("fake-dap", r, w);
        let answer = client.request("threads", json!({}), Duration::from_secs(5));
        let mut their_r = BufReader::new(their_r);
        let req: Value = serde_json::from_slice(&read_message(&mut their_r).await.unwrap().unwrap()).unwrap();
        assert_eq!(req["type"], "request");
        assert_eq!(req["command"], "threads");
        let unknown = json!({"seq": 1, "type": "event", "event": "debugpySockets", "body": {"sockets": []}});
        their_w.write_all(&encode(unknown.to_string().as_bytes())).await.unwrap();
        let resp = json!({"seq": 2, "type": "response", "request_seq": req["seq"], "success": true, "command": "threads", "body": {"threads": [{"id": 1, "name": "main"}]}});
        their_w.write_all(&encode(resp.to_string().as_bytes())).await.unwrap();
        assert_eq!(answer.await.unwrap()["threads"][0]["name"], "main");
        assert_eq!(events.recv().await.unwrap().event, "debugpySockets");
        let failing = client.request("evaluate", json!({}), Duration::from_secs(5));
        let req: Value = serde_json::from_slice(&read_message(&mut their_r).await.unwrap().unwrap()).unwrap();
        let resp = json!({"seq": 3, "type": "response", "request_seq": req["seq"], "success": false, "command": "evaluate", "message": "name 'x' is not defined"});
        their_w.write_all(&encode(resp.to_string().as_bytes())).await.unwrap();
        assert!(failing.await.unwrap_err().to_string().contains("name 'x' is not defined"));
    }
}
