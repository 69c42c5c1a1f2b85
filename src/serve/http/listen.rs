//! Where the run listens and how connections are taken: the address or
//! Unix socket, the accept loop under [`MAX_CONNECTIONS`], one hyper
//! connection each.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio_util::sync::CancellationToken;

use super::{Body, MAX_CONNECTIONS};

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

/// Serves every connection `accept` yields until `stop` fires.
pub(super) async fn accept_until_stopped<S, A, AFut, F, Fut>(
    mut accept: A,
    handle: F,
    stop: &CancellationToken,
) where
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
pub(super) fn bind_unix(path: &Path) -> Result<tokio::net::UnixListener, String> {
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
}
