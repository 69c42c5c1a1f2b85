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

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{TetherServer, idle};
use crate::runtime::Runtime;
use crate::spec::Surface;

/// The endpoint's path.
pub const MCP_PATH: &str = "/mcp";
/// Sessions open at once; past it a new session is refused (503).
pub const MAX_SESSIONS: usize = 64;
/// A request body's size, at most.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
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
/// A connection that sends no complete request head for this long is
/// closed: a client that connects and says nothing, or an idle keep-alive
/// connection, holds nothing for ever. (A response being sent is not idle.)
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// After a failed accept (out of file descriptors, say), the pause before
/// the next: the listener stays readable, and retrying at once would spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);
/// At stop, how long connections may take to finish the response they
/// are sending.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// The environment variable a token may come from.
pub const TOKEN_ENV: &str = "TETHER_TOKEN";

/// Where to listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket path.
    Unix(PathBuf),
}

impl Listen {
    /// `127.0.0.1:PORT`, `[::1]:PORT`, `HOST:PORT` (remote only with
    /// `allow_remote`) or `unix:PATH`.
    pub fn parse(text: &str, allow_remote: bool) -> Result<Self, String> {
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err("--http unix:PATH needs a path for the socket".into());
            }
            return Ok(Self::Unix(PathBuf::from(path)));
        }
        let addr: SocketAddr = text.parse().map_err(|_| {
            format!("--http `{text}`: expected IP:PORT (such as 127.0.0.1:8765) or unix:PATH")
        })?;
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(format!(
                "--http `{text}` is not a loopback address; tether serves other machines only with --allow-remote (and always with a token)"
            ));
        }
        // Clients must name the address in `Host` (DNS rebinding), and
        // nobody names 0.0.0.0: every request would be refused.
        if addr.ip().is_unspecified() {
            return Err(format!(
                "--http `{text}`: give the address clients will reach (such as 192.168.1.5:{}); every request's Host must name it",
                addr.port()
            ));
        }
        Ok(Self::Tcp(addr))
    }
}

/// The run's bearer token: `TETHER_TOKEN`, or 32 random bytes written
/// (mode 0600) to a file whose path is returned with it.
pub fn token() -> Result<(String, Option<PathBuf>), String> {
    if let Ok(t) = std::env::var(TOKEN_ENV) {
        if t.len() < 16 {
            return Err(format!("{TOKEN_ENV} is too short to guard a server: give at least 16 characters"));
        }
        // The run's token opens every session: no kernel, server or
        // worker of the run inherits it (a worker gets one of its own).
        tether_actors::process::withhold_from_children(TOKEN_ENV);
        return Ok((t, None));
    }
    let token = random_hex(32)?;
    let path = std::env::temp_dir().join(format!("tether-{}.token", std::process::id()));
    // A file a killed run with this pid left behind; `create_new` below
    // still refuses anything that appears in between (a planted link).
    let _ = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("cannot write the token file {}: {e}", path.display()))?;
    file.write_all(token.as_bytes()).map_err(|e| format!("cannot write the token file: {e}"))?;
    Ok((token, Some(path)))
}

type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// The `Mcp-Session-Id` of a request or response.
fn session_id(headers: &http::HeaderMap) -> Option<String> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string)
}

fn plain(status: http::StatusCode, text: &str) -> http::Response<Body> {
    let mut response = http::Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *response.status_mut() = status;
    response
}

/// Whether `header` is `Bearer <token>`, compared in constant time.
fn authorized(header: Option<&http::HeaderValue>, token: &str) -> bool {
    // The scheme's name is case-insensitive (RFC 9110); the token is not.
    let bearer = |h: &str| match h.get(..7) {
        Some(scheme) if scheme.eq_ignore_ascii_case("bearer ") => Some(h[7..].to_string()),
        _ => None,
    };
    let Some(given) = header.and_then(|h| h.to_str().ok()).and_then(bearer) else {
        return false;
    };
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The tokens that open sessions: the run's, and one minted per vibe
/// worker, so a worker never holds the run's own. (No `Default`: an empty
/// run token would admit `Bearer ` with nothing after it.)
pub struct Tokens {
    run: String,
    minted: parking_lot::Mutex<Vec<String>>,
}

impl Tokens {
    /// The run's token.
    pub fn new(run: String) -> Self {
        Self { run, minted: parking_lot::Mutex::new(Vec::new()) }
    }

    /// A fresh token for a worker.
    pub fn mint(&self) -> Result<String, String> {
        let token = random_hex(24)?;
        self.minted.lock().push(token.clone());
        Ok(token)
    }

    fn admits(&self, header: Option<&http::HeaderValue>) -> bool {
        authorized(header, &self.run) || self.minted.lock().iter().any(|t| authorized(header, t))
    }

    /// A worker's token no longer opens anything (its run ended).
    pub fn revoke(&self, token: &str) {
        self.minted.lock().retain(|t| t != token);
    }
}

fn random_hex(bytes: usize) -> Result<String, String> {
    let mut raw = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut raw))
        .map_err(|e| format!("no randomness for a token ({e}); set {TOKEN_ENV}"))?;
    Ok(raw.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a vibe worker's command gets to reach the run: `TETHER_URL` and a
/// `TETHER_TOKEN` of its own (its session is a conversation of its own),
/// revoked when the worker's run ends. `url` is filled in once the
/// listener is bound; before that a worker gets nothing.
pub fn worker_env(
    url: Arc<std::sync::OnceLock<String>>,
    tokens: Arc<Tokens>,
) -> tether_actors::workers::command::WorkerEnv {
    use tether_actors::workers::command::WorkerGrant;
    Arc::new(move |_job| {
        let Some(url) = url.get() else { return WorkerGrant::default() };
        let Ok(token) = tokens.mint() else { return WorkerGrant::default() };
        let tokens = tokens.clone();
        let revoked = token.clone();
        WorkerGrant {
            env: vec![("TETHER_URL".to_string(), url.clone()), ("TETHER_TOKEN".to_string(), token)],
            on_end: Some(Box::new(move || tokens.revoke(&revoked))),
        }
    })
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
            if !tokens.admits(req.headers().get(http::header::AUTHORIZATION)) {
                return Ok::<_, std::convert::Infallible>(plain(http::StatusCode::UNAUTHORIZED, ""));
            }
            if req.uri().path() != MCP_PATH {
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
                    drain(req.into_body()).await;
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
                    drain(req.into_body()).await;
                }
                return Ok(plain(
                    http::StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "tether: a request body may hold at most {MAX_REQUEST_BYTES} bytes; this one declared {len}"
                    ),
                ));
            }
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
            eprintln!("tether serve: MCP over HTTP at http://{bound}{MCP_PATH}");
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
            eprintln!("tether serve: MCP over HTTP on the Unix socket {} at {MCP_PATH}", path.display());
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

/// Reads a body to its end, keeping nothing: [`DRAIN_AT_MOST`] bytes in
/// [`DRAIN_WAIT`] at most.
async fn drain(mut body: Incoming) {
    let _ = tokio::time::timeout(DRAIN_WAIT, async {
        let mut read = 0u64;
        while let Some(Ok(frame)) = body.frame().await {
            read += frame.data_ref().map_or(0, |d| d.len() as u64);
            if read > DRAIN_AT_MOST {
                break;
            }
        }
    })
    .await;
}

/// Serves every connection `accept` yields until `stop` fires.
async fn accept_until_stopped<S, A, AFut, F, Fut>(mut accept: A, handle: F, stop: &CancellationToken)
where
    A: FnMut() -> AFut,
    AFut: std::future::Future<Output = std::io::Result<S>>,
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    F: Fn(http::Request<Incoming>) -> Fut + Send + Sync + Clone + 'static,
    Fut:
        std::future::Future<Output = Result<http::Response<Body>, std::convert::Infallible>> + Send + 'static,
{
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot,
            () = stop.cancelled() => break,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            accepted = accept() => accepted,
            () = stop.cancelled() => break,
        };
        match accepted {
            Ok(stream) => spawn_connection(TokioIo::new(stream), handle.clone(), stop.clone(), slot),
            Err(_) => {
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_RETRY) => {}
                    () = stop.cancelled() => break,
                }
            }
        }
    }
}

/// Listens on a Unix socket at `path` that only the owner may connect to.
/// What is at `path` already is never lost: a stale socket is replaced, a
/// live one or any other file is an error. The socket is bound in a 0700
/// directory beside `path`, made 0600, then linked into place (a link
/// fails rather than replace what appeared meanwhile), so it is never
/// reachable with looser permissions.
fn bind_unix(path: &Path) -> Result<tokio::net::UnixListener, String> {
    use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(format!(
                    "{shown}: a server already listens there; stop it or choose another path"
                ));
            }
            std::fs::remove_file(path)
                .map_err(|e| format!("cannot replace the stale socket {shown}: {e}"))?;
        }
        Ok(_) => {
            return Err(format!(
                "{shown} exists and is not a socket; tether does not replace it — choose another path"
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot look at {shown}: {e}")),
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let private = parent.join(format!(".tether-socket-{}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&private)
        .map_err(|e| format!("cannot create {}: {e}", private.display()))?;
    let staged = private.join("socket");
    let bound = (|| {
        let listener =
            tokio::net::UnixListener::bind(&staged).map_err(|e| format!("cannot listen on {shown}: {e}"))?;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("cannot restrict {shown} to its owner: {e}"))?;
        std::fs::hard_link(&staged, path).map_err(|e| format!("cannot put the socket at {shown}: {e}"))?;
        Ok(listener)
    })();
    let _ = std::fs::remove_file(&staged);
    let _ = std::fs::remove_dir(&private);
    bound
}

/// Serves one connection, holding its `slot` until it closes.
fn spawn_connection<I, F, Fut>(
    io: I,
    handle: F,
    stop: CancellationToken,
    slot: tokio::sync::OwnedSemaphorePermit,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    F: Fn(http::Request<Incoming>) -> Fut + Send + Sync + Clone + 'static,
    Fut:
        std::future::Future<Output = Result<http::Response<Body>, std::convert::Infallible>> + Send + 'static,
{
    tokio::spawn(async move {
        let _slot = slot;
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(io, service_fn(handle));
        tokio::pin!(conn);
        tokio::select! {
            _ = conn.as_mut() => {}
            () = stop.cancelled() => {
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn.as_mut()).await;
            }
        }
    });
}

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
struct Opening(Arc<SessionSlots>);

impl Drop for Opening {
    fn drop(&mut self) {
        let mut counts = self.0.counts.lock();
        counts.opening = counts.opening.saturating_sub(1);
    }
}

impl SessionSlots {
    /// A slot for a new session, if one is free.
    fn reserve(self: &Arc<Self>) -> Option<Opening> {
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
    pub port: Arc<super::elicit::SessionsPort>,
    /// The conversation, once the client said who it is.
    pub conversation: std::sync::OnceLock<String>,
    /// The surface the client asked for at `initialize`.
    pub surface: std::sync::OnceLock<Surface>,
    /// Calls running now.
    pub in_flight: Arc<tokio::sync::Semaphore>,
}

impl SessionState {
    pub(super) fn new(
        runtime: Arc<Runtime>,
        slots: Arc<SessionSlots>,
        port: Arc<super::elicit::SessionsPort>,
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
    fn only_loopback_without_allow_remote() {
        assert!(matches!(Listen::parse("127.0.0.1:0", false), Ok(Listen::Tcp(_))));
        assert!(Listen::parse("0.0.0.0:8765", false).unwrap_err().contains("--allow-remote"));
        assert!(Listen::parse("0.0.0.0:8765", true).unwrap_err().contains("Host must name it"));
        assert!(matches!(Listen::parse("192.168.1.5:8765", true), Ok(Listen::Tcp(_))));
        assert_eq!(Listen::parse("unix:/tmp/t.sock", false), Ok(Listen::Unix("/tmp/t.sock".into())));
        assert!(Listen::parse("localhost", false).unwrap_err().contains("IP:PORT"));
    }

    #[test]
    fn the_token_must_match_exactly() {
        let h = |s: &str| http::HeaderValue::from_str(s).unwrap();
        assert!(authorized(Some(&h("Bearer abc")), "abc"));
        assert!(!authorized(Some(&h("Bearer abd")), "abc"));
        assert!(!authorized(Some(&h("Bearer ab")), "abc"));
        assert!(!authorized(Some(&h("abc")), "abc"));
        assert!(authorized(Some(&h("bearer abc")), "abc"), "the scheme is case-insensitive");
        assert!(!authorized(Some(&h("Bearer ABC")), "abc"), "the token is not");
        assert!(!authorized(None, "abc"));
    }

    #[test]
    fn conversation_ids_name_the_client() {
        assert_eq!(conversation_id("claude\n", "1.2", 3), "mcp claude 1.2 #3");
    }
}
