//! The terminal port: the card printed on the controlling terminal
//! (`/dev/tty`, not stdout, which carries results), the answer read from it.
//!
//! Reading happens on a blocking thread that polls the terminal in short
//! slices, so a withdrawn card (timeout, cancel) stops reading promptly
//! instead of swallowing the human's next line.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use super::port::{AskFuture, QuestionPort};
use super::{Card, Reply};

/// How often the reading thread looks whether the card was withdrawn.
const POLL_SLICE: Duration = Duration::from_millis(100);
/// The longest answer line read; the rest is ignored.
const MAX_LINE: usize = 16 * 1024;

/// A port on the process's controlling terminal.
pub struct TerminalPort {
    tty: Arc<Mutex<File>>,
}

impl TerminalPort {
    /// The controlling terminal, or `None` when the process has none
    /// (started by a service, a pipe-only parent, CI).
    pub fn open() -> Option<Self> {
        let tty = OpenOptions::new().read(true).write(true).open("/dev/tty").ok()?;
        Some(Self { tty: Arc::new(Mutex::new(tty)) })
    }
}

/// Cleared when the asking future is dropped.
struct Withdraw(Arc<AtomicBool>);

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl QuestionPort for TerminalPort {
    fn reachable(&self) -> Result<(), String> {
        Ok(())
    }

    fn ask(&self, _target: &str, card: &Card) -> AskFuture {
        let tty = self.tty.clone();
        let card = card.clone();
        let withdrawn = Arc::new(AtomicBool::new(false));
        let guard = Withdraw(withdrawn.clone());
        Box::pin(async move {
            let _guard = guard;
            let task = tokio::task::spawn_blocking(move || converse(&tty, &card, &withdrawn));
            task.await.map_err(|e| format!("the terminal reader failed: {e}"))?
        })
    }

    fn name(&self) -> String {
        "terminal".into()
    }
}

/// Shows the card, then reads lines until one parses or the card is withdrawn.
fn converse(tty: &Mutex<File>, card: &Card, withdrawn: &AtomicBool) -> Result<Reply, String> {
    let mut tty = tty.lock();
    let title = if card.is_permission() { "permission" } else { "question" };
    let how = card.how_to_answer();
    let mut chars = how.chars();
    let how: String = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
    let text = format!("\n── tether {title} ──\n{}\n{how}\n> ", card.render());
    tty.write_all(text.as_bytes()).map_err(|e| format!("cannot write to the terminal: {e}"))?;
    loop {
        let Some(line) = read_line(&mut tty, withdrawn)? else {
            let _ = tty.write_all(b"\n(the question was withdrawn)\n");
            return Err("withdrawn".into());
        };
        match card.parse_typed(&line) {
            Ok(reply) => return Ok(reply),
            Err(hint) => {
                let _ = tty.write_all(format!("{hint}\n> ").as_bytes());
            }
        }
    }
}

/// One line from the terminal; `None` once the card is withdrawn.
fn read_line(tty: &mut File, withdrawn: &AtomicBool) -> Result<Option<String>, String> {
    let mut line = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if withdrawn.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let mut pfd = libc::pollfd { fd: tty.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut pfd, 1, POLL_SLICE.as_millis() as i32) };
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("cannot read the terminal: {err}"));
        }
        if ready == 0 {
            continue;
        }
        let n = tty.read(&mut buf).map_err(|e| format!("cannot read the terminal: {e}"))?;
        if n == 0 {
            return Err("the terminal closed".into());
        }
        if line.len() < MAX_LINE {
            line.extend_from_slice(&buf[..n]);
        }
        if let Some(end) = line.iter().position(|&b| b == b'\n' || b == b'\r') {
            line.truncate(end);
            return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
        }
    }
}
