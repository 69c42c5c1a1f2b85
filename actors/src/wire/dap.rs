//! A Debug Adapter Protocol client over any byte stream pair, on the
//! transport and pending map the JSON-RPC client uses: DAP differs only in
//! its envelope (`seq`, `type`, `command`, `arguments` / `request_seq`,
//! `success`, `message`, `body` / `event`). What the connection delivers —
//! events, the child sessions an adapter asks for, and its end — comes on
//! one channel as a [`Delivery`]; of the adapter's reverse requests,
//! `startDebugging` is answered and handed on, the others answered "not
//! supported". A request goes typed ([`DapClient::send`], one of
//! `dap_types::requests`) or, where an adapter's answer needs reading
//! before DAP's types take it (js-debug's frame hints), as JSON
//! ([`DapClient::request`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use super::pending::{Pending, RequestError};
use super::transport::{self, InFlight, spawn_reader, spawn_writer};

/// How much of an answer that does not fit its type is quoted.
pub(crate) const MAX_UNFIT_QUOTED: usize = 200;

/// Why a typed request got no typed answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SendError {
    /// It failed on the wire, or the adapter refused it.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The answer does not fit DAP's type for it: the parser's error and
    /// the answer's start.
    #[error("the answer to `{command}` does not fit DAP's type ({error}); it began: {began}")]
    Unfit { command: &'static str, error: String, began: String },
}

/// Leaves out the members a typed argument left unset.
fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, v| !v.is_null());
            members.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// An event from the adapter: its name and body (kept raw, so events
/// tether does not know — debugpy's `debugpySockets` — are never errors).
#[derive(Debug, Clone, PartialEq)]
pub struct DapEvent {
    /// The event's name.
    pub event: String,
    /// Its body.
    pub body: Value,
}

impl DapEvent {
    /// An event of tether's own making, in the adapter's vocabulary (the
    /// exit a program that is its own adapter reports through its process).
    pub fn new(event: &str, body: Value) -> DapEvent {
        DapEvent { event: event.to_string(), body }
    }
}

/// What an adapter connection delivers, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// An event the adapter sent.
    Event(DapEvent),
    /// A `startDebugging` reverse request, already answered: its arguments,
    /// the child session's `configuration` and `request`.
    StartDebugging(Value),
    /// The connection ended; nothing more comes.
    Ended(Ended),
}

/// How an adapter's connection or process ended: a typed end, so that
/// whoever waits can tell "the stream closed" (the cause may follow) from
/// "the process exited" (the cause is known).
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The stream closed or broke. If the adapter is a process of ours, its
    /// exit status comes soon after.
    Stream(String),
    /// The adapter's process exited: how, with its last stderr lines.
    Exited(String),
}

impl Ended {
    /// The sentence that says how.
    pub fn reason(&self) -> &str {
        match self {
            Ended::Stream(why) | Ended::Exited(why) => why,
        }
    }

    /// Whether the process's exit is known (nothing more will be learnt).
    pub fn is_exit(&self) -> bool {
        matches!(self, Ended::Exited(_))
    }
}

/// Where the `seq` numbers of tether's answers to reverse requests start:
/// a range of their own, far from the request ids the pending map hands
/// out from 1, so a log shows at a glance which is which. (DAP asks each
/// message's `seq` to be one more than its sender's last; no adapter tether
/// drives checks it, and two ranges keep request ids unambiguous.)
const REVERSE_SEQ_START: i64 = 1_000_000;

/// A message from the adapter, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Incoming {
    // Read loosely past `request_seq`: a response with an odd `success`
    // or `message` still completes its request (as failed), never leaves
    // it waiting out its bound.
    Response {
        request_seq: i64,
        #[serde(default)]
        success: Value,
        #[serde(default)]
        message: Value,
        #[serde(default)]
        body: Option<Value>,
    },
    Event {
        event: String,
        #[serde(default)]
        body: Option<Value>,
    },
    Request {
        #[serde(default)]
        seq: Value,
        command: String,
        #[serde(default)]
        arguments: Option<Value>,
    },
}

/// The client end; cheap to clone.
#[derive(Clone)]
pub struct DapClient {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    name: Arc<str>,
}

impl DapClient {
    /// Starts the reader and writer tasks; what the adapter sends arrives
    /// on the returned channel, its end last.
    pub fn connect<R, W>(name: &str, reader: R, writer: W) -> (DapClient, mpsc::UnboundedReceiver<Delivery>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (deliveries_tx, deliveries) = mpsc::unbounded_channel();
        let name: Arc<str> = Arc::from(name);
        let client = DapClient {
            out: spawn_writer(name.clone(), writer),
            pending: Arc::new(Pending::default()),
            name,
        };
        // The reader holds the writer only weakly: once every client clone
        // is gone the writer ends and closes its half (a TCP connection to
        // a `debugpy --listen` or `dlv --headless` server is let go, not
        // held open until the server hangs up).
        let reader_side = ReaderSide {
            out: client.out.downgrade(),
            pending: client.pending.clone(),
            seq: AtomicI64::new(REVERSE_SEQ_START),
            name: client.name.clone(),
            deliveries: deliveries_tx.clone(),
        };
        spawn_reader(
            client.name.clone(),
            reader,
            client.pending.clone(),
            move |value| reader_side.dispatch(value),
            move |reason| {
                let _ = deliveries_tx.send(Delivery::Ended(Ended::Stream(reason.to_string())));
            },
        );
        (client, deliveries)
    }

    /// Sends `command` and returns a future of its response body, bounded by
    /// `timeout`. The request is on the wire when this returns, so a caller
    /// may send it and wait for events before awaiting the answer (debugpy
    /// answers `launch` only after `configurationDone`). Dropping the future
    /// unanswered forgets the request.
    pub fn request(
        &self,
        command: &str,
        arguments: Value,
        timeout: Duration,
    ) -> impl std::future::Future<Output = Result<Value, RequestError>> + Send + 'static {
        let started = InFlight::send(
            &self.pending,
            &self.name,
            &self.out,
            |seq| json!({"seq": seq, "type": "request", "command": command, "arguments": arguments}),
            // DAP's `cancel` is itself a request, offered by few adapters
            // (supportsCancelRequest), and answered late or never: the
            // waiter forgets, the adapter's late answer is dropped.
            |_| None,
        );
        async move { started?.answer(timeout).await }
    }

    /// Sends DAP's request `R` (helix-dap's shape: `R::COMMAND` with
    /// `R::Arguments`, answered as `R::Response`), bounded by `timeout`.
    /// Arguments left unset are left out, not sent as `null` (an adapter
    /// may read `null` as a value); an answer that does not fit
    /// `R::Response` is an error quoting its start, never a default.
    pub async fn send<R: dap_types::requests::Request>(
        &self,
        arguments: &R::Arguments,
        timeout: Duration,
    ) -> Result<R::Response, SendError> {
        let mut arguments = serde_json::to_value(arguments).unwrap_or(Value::Null);
        strip_nulls(&mut arguments);
        if arguments.is_null() {
            arguments = json!({});
        }
        let body = self.request(R::COMMAND, arguments, timeout).await?;
        // No body, or an empty one, is the answer of a request with none
        // (`next`) or with only optional members (`continue`).
        let empty = body.is_null() || body.as_object().is_some_and(|o| o.is_empty());
        serde_json::from_value(body.clone())
            .or_else(|e| match empty {
                true => serde_json::from_value(Value::Null)
                    .or_else(|_| serde_json::from_value(json!({})))
                    .map_err(|_| e),
                false => Err(e),
            })
            .map_err(|e| {
                let (began, _) = crate::text::cut(&body.to_string(), MAX_UNFIT_QUOTED);
                SendError::Unfit { command: R::COMMAND, error: e.to_string(), began }
            })
    }

    /// Whether `other` is a clone of this client (the same connection).
    pub fn same(&self, other: &DapClient) -> bool {
        Arc::ptr_eq(&self.pending, &other.pending)
    }

    /// Fails every waiter with `reason`.
    pub fn close(&self, reason: &str) {
        self.pending.close(reason);
    }

    /// Requests waiting for an answer.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// What the reader task holds: the pending requests to complete, the
/// channel deliveries go to, and the writer, weakly, to answer the
/// adapter's reverse requests.
struct ReaderSide {
    out: mpsc::WeakUnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    seq: AtomicI64,
    name: Arc<str>,
    deliveries: mpsc::UnboundedSender<Delivery>,
}

impl ReaderSide {
    fn dispatch(&self, v: Value) {
        let incoming = match Incoming::deserialize(&v) {
            Ok(incoming) => incoming,
            Err(e) => {
                tracing::warn!(peer = %self.name, "skipped a message outside the protocol ({e}): {v}");
                return;
            }
        };
        match incoming {
            Incoming::Response { request_seq, success, message, body } => {
                let message = message.as_str().map(str::to_string);
                let result = if success.as_bool() == Some(true) {
                    Ok(body.unwrap_or(Value::Null))
                } else {
                    let detail =
                        body.as_ref().and_then(|b| b["error"]["format"].as_str()).map(str::to_string);
                    Err(RequestError::Refused(detail.or(message).unwrap_or_else(|| "failed".to_string())))
                };
                self.pending.answer(request_seq, result);
            }
            Incoming::Event { event, body } => {
                let _ = self
                    .deliveries
                    .send(Delivery::Event(DapEvent { event, body: body.unwrap_or(Value::Null) }));
            }
            Incoming::Request { seq, command, arguments } => {
                // `startDebugging` (js-debug: each debuggee is a child
                // session, reached on a connection of its own) is taken
                // and handed on; other reverse requests (runInTerminal)
                // are refused.
                let taken = command == "startDebugging";
                let mut answer = json!({
                    "seq": self.seq.fetch_add(1, Ordering::Relaxed), "type": "response",
                    "request_seq": seq, "command": command, "success": taken,
                });
                if !taken {
                    answer["message"] = json!("not supported by tether");
                }
                if let Some(out) = self.out.upgrade() {
                    transport::send(&out, &self.name, &answer);
                }
                if taken {
                    let _ = self.deliveries.send(Delivery::StartDebugging(arguments.unwrap_or(Value::Null)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::framing::{encode, read_message};
    use tokio::io::{AsyncWriteExt, BufReader};

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
        let Some(Delivery::StartDebugging(asked)) = events.recv().await else {
            panic!("startDebugging handed on")
        };
        assert_eq!(asked["configuration"]["__pendingTargetId"], "t1");
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
        assert!(matches!(events.recv().await, Some(Delivery::Event(e)) if e.event == "debugpySockets"));
        let failing = client.request("evaluate", json!({}), Duration::from_secs(5));
        let req: Value = serde_json::from_slice(&read_message(&mut their_r).await.unwrap().unwrap()).unwrap();
        let resp = json!({"seq": 3, "type": "response", "request_seq": req["seq"], "success": false, "command": "evaluate", "message": "name 'x' is not defined"});
        their_w.write_all(&encode(resp.to_string().as_bytes())).await.unwrap();
        assert_eq!(
            failing.await.unwrap_err(),
            RequestError::Refused("name 'x' is not defined".into()),
            "the adapter's words, with no JSON-RPC code"
        );
        // A response with odd fields still completes its request, as failed.
        let odd = client.request("stepIn", json!({}), Duration::from_secs(5));
        let req: Value = serde_json::from_slice(&read_message(&mut their_r).await.unwrap().unwrap()).unwrap();
        let resp =
            json!({"seq": 4, "type": "response", "request_seq": req["seq"], "success": "yes", "message": 7});
        their_w.write_all(&encode(resp.to_string().as_bytes())).await.unwrap();
        let started = std::time::Instant::now();
        assert!(odd.await.unwrap_err().to_string().contains("failed"));
        assert!(started.elapsed() < Duration::from_secs(4), "answered, not timed out");
    }

    #[tokio::test]
    async fn typed_requests_leave_unset_arguments_out_and_refuse_answers_that_do_not_fit() {
        use dap_types::requests::{Next, Scopes, Threads};
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (r, w) = tokio::io::split(ours);
        let (their_r, mut their_w) = tokio::io::split(theirs);
        let (client, _events) = DapClient::connect("fake-dap", r, w);
        let mut their_r = BufReader::new(their_r);
        let mut answer_with = async |body: Value| {
            let req: Value =
                serde_json::from_slice(&read_message(&mut their_r).await.unwrap().unwrap()).unwrap();
            let resp = json!({"seq": 1, "type": "response", "request_seq": req["seq"], "success": true, "command": req["command"], "body": body});
            their_w.write_all(&encode(resp.to_string().as_bytes())).await.unwrap();
            req
        };
        let step = dap_types::NextArguments { thread_id: 3, single_thread: None, granularity: None };
        let (sent, answered) =
            tokio::join!(answer_with(json!({})), client.send::<Next>(&step, Duration::from_secs(5)));
        assert_eq!(sent["arguments"], json!({"threadId": 3}), "no nulls for what was left unset");
        assert!(answered.is_ok(), "an empty body is a unit answer: {answered:?}");
        let (sent, answered) = tokio::join!(
            answer_with(json!({"threads": [{"id": 1, "name": "main"}]})),
            client.send::<Threads>(&(), Duration::from_secs(5))
        );
        assert_eq!(sent["arguments"], json!({}));
        assert_eq!(answered.unwrap().threads[0].name, "main");
        let scopes = dap_types::ScopesArguments { frame_id: 7 };
        let (_, answered) = tokio::join!(
            answer_with(json!({"scopes": 5})),
            client.send::<Scopes>(&scopes, Duration::from_secs(5))
        );
        let Err(SendError::Unfit { command, began, .. }) = answered else { panic!("{answered:?}") };
        assert_eq!((command, began.as_str()), ("scopes", "{\"scopes\":5}"));
    }
}
