//! The driver's side of the pipes: what the interpreter's reader hands
//! the actor ([`Event`]), a request written to the driver, a line read
//! back (mending lone surrogates), and the wait for `ready`.

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::outcome::START_TIMEOUT;
use crate::process::{ExitInfo, StderrTail};

/// What the interpreter's reader hands the actor: a protocol line, or the
/// process's exit.
pub(super) enum Event {
    Line(Value),
    Exited(ExitInfo),
}

pub(super) fn send(stdin: &mpsc::UnboundedSender<String>, v: Value) -> bool {
    stdin.send(format!("{v}\n")).is_ok()
}

pub(super) async fn wait_ready(
    events: &mut mpsc::UnboundedReceiver<Event>,
    stderr: &StderrTail,
) -> Result<(), String> {
    let ready = async {
        while let Some(ev) = events.recv().await {
            match ev {
                Event::Line(v) if v["ev"] == "ready" => return Ok(()),
                Event::Line(_) => {}
                Event::Exited(info) => return Err(info.describe("the interpreter")),
            }
        }
        Err("the interpreter closed its output".to_string())
    };
    match tokio::time::timeout(START_TIMEOUT, ready).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no ready signal within {} s; last stderr: {}",
            START_TIMEOUT.as_secs(),
            stderr.lines().join(" | ")
        )),
    }
}

/// A line of the driver's protocol. A string the cell made may hold a
/// lone UTF-16 surrogate (`"😀".slice(0, 1)` in JavaScript), which the
/// drivers' JSON writers escape as `\ud83d` and a strict reader refuses:
/// such escapes read as U+FFFD, so the line — perhaps the cell's `done` —
/// is not lost. A line that still does not read is a `garbled` event.
pub(super) fn read_line(line: &str) -> Value {
    serde_json::from_str(line).or_else(|_| serde_json::from_str(&mend_surrogates(line))).unwrap_or_else(
        |_| {
            let shown: String = line.chars().take(200).collect();
            json!({"ev": "garbled", "text": shown})
        },
    )
}

/// `line` with each unpaired surrogate escape replaced by `\ufffd`.
fn mend_surrogates(line: &str) -> String {
    let unit = |at: usize| -> Option<u32> {
        let escape = line.get(at..at + 6)?;
        let hex = escape.strip_prefix("\\u")?;
        u32::from_str_radix(hex, 16).ok()
    };
    let is_high = |u: u32| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u32| (0xDC00..0xE000).contains(&u);
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while let Some(c) = line[i..].chars().next() {
        if c != '\\' {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        match unit(i) {
            Some(high) if is_high(high) && unit(i + 6).is_some_and(is_low) => {
                out.push_str(&line[i..i + 12]);
                i += 12;
            }
            Some(u) if is_high(u) || is_low(u) => {
                out.push_str("\\ufffd");
                i += 6;
            }
            // Any other escape: the backslash and the character it escapes.
            _ => {
                out.push('\\');
                i += 1;
                if let Some(next) = line[i..].chars().next() {
                    out.push(next);
                    i += next.len_utf8();
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_read_as_replacement_characters_and_pairs_stay() {
        let v = read_line(r#"{"ev": "done", "id": 3, "error": {"message": "bad \ud83d here"}}"#);
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["message"], "bad \u{fffd} here");
        let v = read_line(r#"{"ev": "out", "text": "pair \ud83d\ude00, escaped \\ud83d, low \udc00"}"#);
        assert_eq!(v["text"], "pair 😀, escaped \\ud83d, low \u{fffd}");
        assert_eq!(read_line("not json é")["ev"], "garbled");
        assert_eq!(mend_surrogates("tail \\"), "tail \\", "a trailing backslash");
    }
}
