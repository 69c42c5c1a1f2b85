//! What the JSON-RPC client (language servers) and the DAP client (debug
//! adapters) share below their envelopes: a writer task, a reader task
//! that hands on each message and says why the stream ended, and the
//! handle of a request on its way, which forgets the request — and tells
//! the peer, where its protocol has a way — when its waiter goes away.
//!
//! The envelopes differ (`id`/`method`/`params` against `seq`/`command`/
//! `arguments`); the lifecycle of a request does not, so it lives here once.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::framing::{encode, read_message};
use super::pending::{Pending, RequestError};

/// How long after the peer's output closes the waiters are failed with a
/// generic reason, if no exit report (status, stderr) came first.
pub const EXIT_REPORT_GRACE: Duration = Duration::from_millis(500);

/// How much of a body that is not JSON the log quotes.
const QUOTED_BYTES: usize = 200;

/// Starts the task that writes framed messages to `writer`, in the order
/// sent. It ends when every sender is gone (closing the write half, so a
/// TCP peer sees the connection let go) or when a write fails; a failed
/// write is logged, and the requests waiting learn the cause from the
/// reader or the process monitor, whose reason is the more useful one.
pub(crate) fn spawn_writer<W>(name: Arc<str>, writer: W) -> mpsc::UnboundedSender<Vec<u8>>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let mut writer = writer;
    tokio::spawn(async move {
        while let Some(bytes) = rx.recv().await {
            if let Err(e) = writer.write_all(&bytes).await.and(writer.flush().await) {
                tracing::debug!(peer = %name, "write failed: {e}");
                break;
            }
        }
    });
    out
}

/// Starts the task that reads framed messages from `reader` and hands each
/// JSON body to `on_message`. When the stream ends or breaks, `on_end` is
/// told why; then, after [`EXIT_REPORT_GRACE`] (room for the process
/// monitor to report an exit status first), every waiter in `pending` is
/// failed. A body that is not JSON is logged, quoted, and skipped.
pub(crate) fn spawn_reader<R>(
    name: Arc<str>,
    reader: R,
    pending: Arc<Pending>,
    mut on_message: impl FnMut(Value) + Send + 'static,
    on_end: impl FnOnce(&str) + Send + 'static,
) where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let reason = loop {
            match read_message(&mut reader).await {
                Ok(Some(body)) => match serde_json::from_slice::<Value>(&body) {
                    Ok(value) => {
                        tracing::trace!(target: "tether_actors::wire", peer = %name, "<- {value}");
                        on_message(value);
                    }
                    Err(e) => {
                        let quoted =
                            String::from_utf8_lossy(&body[..body.len().min(QUOTED_BYTES)]).into_owned();
                        tracing::warn!(peer = %name, "skipped a message that is not JSON ({e}): {quoted:?}");
                    }
                },
                Ok(None) => break format!("{name} closed its output"),
                Err(e) => break format!("{name} sent a malformed message: {e}"),
            }
        };
        on_end(&reason);
        tokio::time::sleep(EXIT_REPORT_GRACE).await;
        pending.close(&reason);
    });
}

/// Sends one framed message; false when the writer is gone.
pub(crate) fn send(out: &mpsc::UnboundedSender<Vec<u8>>, name: &str, message: &Value) -> bool {
    tracing::trace!(target: "tether_actors::wire", peer = %name, "-> {message}");
    out.send(encode(&serde_json::to_vec(message).unwrap_or_default())).is_ok()
}

/// What to tell the peer when a request is given up: the protocol's cancel
/// message for it, and where to send it.
pub(crate) struct Cancel {
    pub(crate) out: mpsc::UnboundedSender<Vec<u8>>,
    pub(crate) message: Value,
}

/// A request on its way. A request whose waiter goes away — timed out, or
/// its future dropped — is forgotten (its entry leaves the pending map) and
/// the peer told to cancel it where the protocol has a cancel message.
pub struct InFlight {
    pending: Arc<Pending>,
    name: Arc<str>,
    id: i64,
    rx: Option<oneshot::Receiver<Result<Value, RequestError>>>,
    cancel: Option<Cancel>,
}

impl InFlight {
    /// Registers a request and sends what `message` builds from its id.
    /// Fails at once if the stream closed or the writer is gone.
    pub(crate) fn send(
        pending: &Arc<Pending>,
        name: &Arc<str>,
        out: &mpsc::UnboundedSender<Vec<u8>>,
        message: impl FnOnce(i64) -> Value,
        cancel: impl FnOnce(i64) -> Option<Value>,
    ) -> Result<InFlight, RequestError> {
        let (id, rx) = pending.register()?;
        if !send(out, name, &message(id)) {
            pending.forget(id);
            return Err(RequestError::Closed(format!("{name} is not running")));
        }
        let cancel = cancel(id).map(|message| Cancel { out: out.clone(), message });
        Ok(InFlight { pending: pending.clone(), name: name.clone(), id, rx: Some(rx), cancel })
    }

    /// Waits at most `timeout` for the answer.
    pub async fn answer(mut self, timeout: Duration) -> Result<Value, RequestError> {
        let Some(rx) = self.rx.as_mut() else {
            return Err(RequestError::Closed(format!("{} stopped answering", self.name)));
        };
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(result)) => {
                self.rx = None;
                result
            }
            Ok(Err(_)) => {
                self.rx = None;
                Err(RequestError::Closed(format!("{} stopped answering", self.name)))
            }
            Err(_) => Err(RequestError::TimedOut(timeout.as_millis() as u64)),
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.rx.is_some()
            && self.pending.forget(self.id)
            && let Some(cancel) = &self.cancel
        {
            send(&cancel.out, &self.name, &cancel.message);
        }
    }
}
