//! `tether serve --http`: one warm run for many agents, over MCP's
//! streamable HTTP transport (rmcp's server side; hyper carries the bytes).
//!
//! Each MCP session (`Mcp-Session-Id`) gets its own [`TetherServer`] and,
//! from its `initialize`, its own conversation — its kernels and debug
//! session — named after its client; language servers, parsers and the
//! write lane are the run's, shared. A session that ends (DELETE, or idle
//! past [`SESSION_IDLE`]) closes its conversation, which kills its
//! children; the run goes on.
//!
//! Nobody gets in who should not: every request carries the run's bearer
//! token (else 401, nothing more said); `Host` and `Origin` must be this
//! machine's (else 403: DNS rebinding); the listener binds loopback unless
//! `--allow-remote`; sessions at once, body size and calls in flight per
//! session are bounded by named constants.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{TetherServer, idle};
use crate::runtime::Runtime;
use crate::spec::Surface;
use listen::{accept_until_stopped, bind_unix};

mod auth;
mod listen;
mod sessions;

pub use auth::{Tokens, token, worker_env};
pub use listen::Listen;
pub use sessions::{SessionSlots, SessionState, asked_surface, conversation_id};

/// The endpoint's path.
pub const MCP_PATH: &str = "/mcp";
/// Sessions open at once; past it a new session is refused (503).
pub const MAX_SESSIONS: usize = 64;
/// A request body's size, at most: room for a call whose arguments are
/// over [`crate::args::MAX_ARGUMENT_BYTES`] (and escaped as JSON), so that
/// the router refuses it naming its largest field, as over stdio. A larger
/// body is answered with a JSON-RPC error ([`too_large`]), never read whole.
pub const MAX_REQUEST_BYTES: usize = 4 * crate::args::MAX_ARGUMENT_BYTES;
/// Calls one session may have running at once; past it a call is refused.
pub const MAX_CALLS_IN_FLIGHT: usize = 16;
/// A session idle this long ends, and its conversation with it (the
/// default of `--session-idle`).
pub const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// How the run is served.
#[derive(Debug, Clone)]
pub struct Options {
    /// The run's surface; a session may narrow it.
    pub surface: Surface,
    /// Where to listen.
    pub listen: Listen,
    /// How long a session may stay idle.
    pub session_idle: Duration,
}
/// An oversized body up to this size is read to its end before the 413,
/// so that the client, still sending, gets the answer and not a reset.
const DRAIN_AT_MOST: u64 = 64 * 1024 * 1024;
/// ... for this long at most; then the connection is dropped.
const DRAIN_WAIT: Duration = Duration::from_secs(10);
/// Connections at once: every session's calls and its event stream. Past
/// it new connections wait in the listen queue; none is refused.
pub const MAX_CONNECTIONS: usize = MAX_SESSIONS * (MAX_CALLS_IN_FLIGHT + 2);
/// The environment variable a token may come from.
pub const TOKEN_ENV: &str = "TETHER_TOKEN";

type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// The `Mcp-Session-Id` of a request or response.
fn session_id(headers: &http::HeaderMap) -> Option<String> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// A body over [`MAX_REQUEST_BYTES`], answered as a JSON-RPC error (with
/// status 413): what a client library shows its caller, which a plain-text
/// status is not. Its id is unknown (the body was not read whole): `null`.
fn too_large(size: &str) -> http::Response<Body> {
    let message = format!(
        "tether: a request body may hold at most {} MiB; this one {size}. A call's arguments hold at most {} MiB on every host: send the change in parts (`edit`, `apply_patch`), or have a program write the file",
        MAX_REQUEST_BYTES / (1024 * 1024),
        crate::args::MAX_ARGUMENT_BYTES / (1024 * 1024),
    );
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": message},
    });
    let mut response = http::Response::new(Full::new(Bytes::from(error.to_string())).boxed());
    *response.status_mut() = http::StatusCode::PAYLOAD_TOO_LARGE;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

fn plain(status: http::StatusCode, text: &str) -> http::Response<Body> {
    let mut response = http::Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *response.status_mut() = status;
    response
}

/// Serves `runtime` until `stop` fires; every session ends with it.
/// `port` is the run's question port ([`super::elicit::SessionsPort`]):
/// each session's cards go to its own client.
pub async fn serve(
    runtime: Arc<Runtime>,
    options: Options,
    tokens: Arc<Tokens>,
    port: Arc<super::elicit::SessionsPort>,
    url: Arc<std::sync::OnceLock<String>>,
    stop: CancellationToken,
) -> Result<(), String> {
    let Options { surface, listen, session_idle } = options;
    let slots = Arc::new(SessionSlots::default());
    let factory = {
        let (runtime, slots) = (runtime.clone(), slots.clone());
        move || Ok(TetherServer::for_session(runtime.clone(), surface, slots.clone(), port.clone()))
    };
    let mut sessions = LocalSessionManager::default();
    let mut session_config = SessionConfig::default();
    // Idle sessions are tether's to end (`idle`): rmcp's keep-alive would
    // end a session whose one long call sends nothing for a while.
    session_config.keep_alive = None;
    sessions.session_config = session_config;
    let sessions = Arc::new(sessions);
    let activity = Arc::new(idle::Activity::default());
    tokio::spawn(idle::reap(activity.clone(), sessions.clone(), session_idle, stop.child_token()));
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(MAX_REQUEST_BYTES)
        .with_allowed_origins(["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]);
    // rmcp allows `localhost`, 127.0.0.1 and ::1; any other address bound
    // (another loopback address, a remote one) is allowed by name too.
    if let Listen::Tcp(addr) = &listen
        && !["127.0.0.1", "::1"].contains(&addr.ip().to_string().as_str())
    {
        let mut hosts = config.allowed_hosts.clone();
        hosts.push(addr.ip().to_string());
        config = config.with_allowed_hosts(hosts);
    }
    let mcp = StreamableHttpService::new(factory, sessions, config);
    let handle = move |req: http::Request<Incoming>| {
        let (mut mcp, tokens, slots, activity) =
            (mcp.clone(), tokens.clone(), slots.clone(), activity.clone());
        async move {
            // Every answer given before the body is read waits for the body
            // first (what a stranger may send is bounded by the largest
            // body taken): answered while the client still sends, the
            // connection cannot be kept, and the client's next request on
            // it meets a closed connection.
            if !tokens.admits(req.headers().get(http::header::AUTHORIZATION)) {
                drain(req.into_body(), MAX_REQUEST_BYTES as u64).await;
                return Ok::<_, std::convert::Infallible>(plain(http::StatusCode::UNAUTHORIZED, ""));
            }
            if req.uri().path() != MCP_PATH {
                drain(req.into_body(), MAX_REQUEST_BYTES as u64).await;
                return Ok(plain(http::StatusCode::NOT_FOUND, "tether serves MCP at /mcp"));
            }
            let opens_session =
                req.method() == http::Method::POST && !req.headers().contains_key("mcp-session-id");
            // Held until the session is made (or not): the session is made
            // only once the body is read, and requests that arrive together
            // must not all count the same free slot.
            let _opening = match opens_session.then(|| slots.reserve()) {
                None => None,
                Some(Some(opening)) => Some(opening),
                Some(None) => {
                    // Read what the client is still sending, so that it
                    // gets the answer rather than a reset connection.
                    drain(req.into_body(), DRAIN_AT_MOST).await;
                    return Ok(plain(
                        http::StatusCode::SERVICE_UNAVAILABLE,
                        &format!(
                            "tether: {MAX_SESSIONS} sessions are open, the most one run serves; end one (DELETE) and try again"
                        ),
                    ));
                }
            };
            let declared = req
                .headers()
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            if let Some(len) = declared.filter(|l| *l > MAX_REQUEST_BYTES as u64) {
                if len <= DRAIN_AT_MOST {
                    drain(req.into_body(), DRAIN_AT_MOST).await;
                }
                return Ok(too_large(&format!("declared {len} bytes")));
            }
            // rmcp answers some refusals (a foreign Origin or Host, a wrong
            // content type, an unknown session) before it reads the body:
            // it gets the body whole.
            let (parts, body) = req.into_parts();
            let body = match read_whole(body).await {
                Ok(body) => body,
                Err(read) => {
                    return Ok(too_large(&format!("sent {read} bytes or more")));
                }
            };
            let req = http::Request::from_parts(parts, Full::new(body));
            let ends_session = req.method() == http::Method::DELETE;
            let session = session_id(req.headers());
            let open = session
                .as_deref()
                .filter(|_| req.method() == http::Method::POST)
                .and_then(|id| activity.begin(id));
            let mut response = tower_service::Service::call(&mut mcp, req).await?;
            if opens_session && let Some(id) = session_id(response.headers()) {
                activity.opened(&id);
            }
            // A session ended by DELETE is done, not merely accepted.
            if ends_session && response.status() == http::StatusCode::ACCEPTED {
                *response.status_mut() = http::StatusCode::OK;
            }
            if ends_session && let Some(id) = &session {
                activity.ended(id);
            }
            // The request is being answered until its body (an SSE stream
            // for a call) has gone out or the client has left.
            Ok(match open {
                None => response,
                Some(open) => response.map(|body| {
                    body.map_frame(move |frame| {
                        let _answering = &open;
                        frame
                    })
                    .boxed()
                }),
            })
        }
    };
    match listen {
        Listen::Tcp(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            let _ = url.set(format!("http://{bound}{MCP_PATH}"));
            crate::cli::output::errln!("tether serve: MCP over HTTP at http://{bound}{MCP_PATH}");
            let listener = &listener;
            accept_until_stopped(
                move || async move { listener.accept().await.map(|(s, _)| s) },
                handle,
                &stop,
            )
            .await;
        }
        Listen::Unix(path) => {
            let listener = bind_unix(&path)?;
            let _ = url.set(format!("unix:{}", path.display()));
            crate::cli::output::errln!(
                "tether serve: MCP over HTTP on the Unix socket {} at {MCP_PATH}",
                path.display()
            );
            let listener = &listener;
            accept_until_stopped(
                move || async move { listener.accept().await.map(|(s, _)| s) },
                handle,
                &stop,
            )
            .await;
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

/// Reads a body to its end, keeping nothing: `at_most` bytes in
/// [`DRAIN_WAIT`] at most.
async fn drain(mut body: Incoming, at_most: u64) {
    let _ = tokio::time::timeout(DRAIN_WAIT, async {
        let mut read = 0u64;
        while let Some(Ok(frame)) = body.frame().await {
            read += frame.data_ref().map_or(0, |d| d.len() as u64);
            if read > at_most {
                break;
            }
        }
    })
    .await;
}

/// The whole body, when it holds at most [`MAX_REQUEST_BYTES`]; otherwise
/// how much was read (on to [`DRAIN_AT_MOST`], so the client gets the 413).
/// A body that stops coming is cut at [`DRAIN_WAIT`] and handed on as read:
/// rmcp then answers it as malformed.
async fn read_whole(mut body: Incoming) -> Result<Bytes, u64> {
    let mut whole = bytes::BytesMut::new();
    let mut read = 0u64;
    let _ = tokio::time::timeout(DRAIN_WAIT, async {
        while let Some(Ok(frame)) = body.frame().await {
            let Some(data) = frame.data_ref() else { continue };
            read += data.len() as u64;
            if read > DRAIN_AT_MOST {
                break;
            }
            if read <= MAX_REQUEST_BYTES as u64 {
                whole.extend_from_slice(data);
            }
        }
    })
    .await;
    if read > MAX_REQUEST_BYTES as u64 { Err(read) } else { Ok(whole.freeze()) }
}
