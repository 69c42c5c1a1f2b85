//! Who gets in: the run's bearer token, the tokens minted for vibe
//! workers, and the constant-time check every request passes first.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use super::TOKEN_ENV;

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

    pub(super) fn admits(&self, header: Option<&http::HeaderValue>) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
