//! What the command line prints, and a reader that goes away.
//!
//! `tether status | head -1` closes the pipe after one line; the next
//! write fails with `EPIPE` (Rust ignores `SIGPIPE`, so no signal ends the
//! process first). `print!` would panic there. Every line goes through
//! [`out`] instead: a closed reader is remembered, later output is
//! dropped, and the command ends as it would have — its children stopped
//! by the runtime's shutdown, its exit code its own — with nothing on
//! stderr. Other write failures (a full disk) are said once on stderr and
//! make the exit code a failure.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// Nothing has gone wrong writing to stdout.
const OPEN: u8 = 0;
/// Its reader went away: output from now on is dropped quietly.
const READER_GONE: u8 = 1;
/// A write failed for another reason: said once, and the exit code fails.
const FAILED: u8 = 2;

/// What became of stdout.
static STDOUT: AtomicU8 = AtomicU8::new(OPEN);

/// Writes `text` to stdout and flushes it, unless stdout is gone.
pub(crate) fn out(text: &str) {
    if STDOUT.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT.store(READER_GONE, Ordering::Relaxed);
        } else if STDOUT.swap(FAILED, Ordering::Relaxed) == OPEN {
            err_line(&format!("tether: cannot write to stdout: {e}"));
        }
    }
}

/// Writes `line` and a newline to stdout ([`out`]).
pub(crate) fn out_line(line: &str) {
    out(&format!("{line}\n"));
}

/// Writes `line` and a newline to stderr; a closed stderr is ignored.
pub(crate) fn err_line(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Whether whoever read stdout has gone (nothing more is worth printing).
pub(crate) fn reader_gone() -> bool {
    STDOUT.load(Ordering::Relaxed) != OPEN
}

/// `code`, or a failure when stdout could not be written for a reason
/// other than its reader leaving.
pub(crate) fn exit_code(code: std::process::ExitCode, failed: u8) -> std::process::ExitCode {
    if STDOUT.load(Ordering::Relaxed) == FAILED { std::process::ExitCode::from(failed) } else { code }
}

/// `println!` through [`out_line`]: a closed reader is no panic.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::output::out_line(&format!($($arg)*)) };
}

/// `eprintln!` through [`err_line`]: a closed stderr is no panic.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::cli::output::err_line(&format!($($arg)*)) };
}

pub(crate) use {errln, outln};
