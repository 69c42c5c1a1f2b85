//! Errors a server reports of itself — logged as errors
//! (`window/logMessage`/`showMessage` of type Error), or jdtls's
//! `language/status` of type Error ("Failed to import projects") — kept,
//! a few and short, for `status` and for explaining an empty answer.

use std::collections::VecDeque;

use parking_lot::Mutex;

/// Errors kept per server.
pub const MAX_REPORTED: usize = 3;
/// The longest error kept, in characters.
const REPORTED_CHARS: usize = 400;

/// The last errors a server reported, newest last.
#[derive(Default)]
pub struct Reported(Mutex<VecDeque<String>>);

impl Reported {
    /// Keeps `line` (cut to [`REPORTED_CHARS`]). The status line and the
    /// log entry of one failure say it twice: the longer, which holds the
    /// other, is kept.
    pub fn push(&self, line: String) {
        let line: String = line.chars().take(REPORTED_CHARS).collect();
        let mut kept = self.0.lock();
        if line.is_empty() || kept.iter().any(|r| r.contains(&line)) {
            return;
        }
        kept.retain(|r| !line.contains(r.as_str()));
        if kept.len() == MAX_REPORTED {
            kept.pop_front();
        }
        kept.push_back(line);
    }

    /// What is kept, oldest first.
    pub fn list(&self) -> Vec<String> {
        self.0.lock().iter().cloned().collect()
    }
}

/// A logged error in a line: its first line (less a leading timestamp
/// such as jdtls's "Dec 2, 2026, 1:32:20 AM "), and the message of the
/// first exception quoted below it — the cause, where the first line is
/// only "Failed to import projects".
pub fn error_summary(message: &str) -> String {
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = without_timestamp(lines.next().unwrap_or(""));
    let cause = lines.find_map(|l| l.split_once("Exception: ").map(|(_, m)| m.trim()));
    match cause {
        Some(cause) if !first.contains(cause) => format!("{first}: {cause}"),
        _ => first.to_string(),
    }
}

/// `line` after a leading "… H:MM:SS AM " / "PM " (within its first 40
/// bytes), else all of it.
fn without_timestamp(line: &str) -> &str {
    for marker in [" AM ", " PM "] {
        let Some(at) = line.find(marker).filter(|at| *at < 40) else { continue };
        let time = line[..at].rsplit(' ').next().unwrap_or("");
        let parts: Vec<&str> = time.split(':').collect();
        if parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
            return &line[at + marker.len()..];
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_go_and_the_longer_of_two_sayings_stays() {
        assert_eq!(without_timestamp("NPM registry unreachable: x"), "NPM registry unreachable: x");
        assert_eq!(without_timestamp("Dec 2, 2026, 11:02:03 PM Boom"), "Boom");
        let r = Reported::default();
        r.push("Failed".into());
        r.push("Failed: because".into());
        r.push("Failed".into());
        assert_eq!(r.list(), ["Failed: because"]);
        for k in 0..5 {
            r.push(format!("e{k}"));
        }
        assert_eq!(r.list().len(), MAX_REPORTED);
    }
}
