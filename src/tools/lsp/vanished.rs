//! Locations in what no longer exists on disk.
//!
//! A server's index catches up with files deleted or cut short outside
//! (a `git checkout` of another branch) in its own time: clangd, on a
//! busy machine, went on listing a reference in a file the checkout had
//! removed, and the answer read as complete with one use too many. A
//! location in a file that is gone, or past its last line, is about
//! nothing that exists: the question is asked again after a short wait,
//! and what the server still lists after [`MAX_REASKS`] is left out and
//! named.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// How many times a cross-file question is asked again because its answer
/// holds locations in what no longer exists.
pub const MAX_REASKS: usize = 3;
/// How long the server is given to catch up before each of those asks.
pub const REASK_WAIT: Duration = Duration::from_millis(500);
/// Files named in the note.
const NAMED: usize = 3;

/// One location of an answer that points at nothing on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Vanished {
    /// The file it names.
    pub path: PathBuf,
    /// Its 0-based line.
    pub line: u32,
    /// Whether the file itself is gone (else it is shorter than `line`).
    pub file_gone: bool,
}

/// The locations of `answer` (a list of `Location`s; anything else has
/// none) that point at a file that does not exist or past its last line.
/// Reads each file once; off the async threads.
pub async fn of(answer: &Value) -> Vec<Vanished> {
    let places = located(answer);
    if places.is_empty() {
        return Vec::new();
    }
    tokio::task::spawn_blocking(move || check(&places)).await.unwrap_or_default()
}

/// `answer` without the locations of `vanished`.
pub fn leave_out(answer: &mut Value, vanished: &[Vanished]) {
    if let Some(list) = answer.as_array_mut() {
        list.retain(|entry| match place(entry) {
            Some((path, line)) => !vanished.iter().any(|v| v.path == path && v.line == line),
            None => true,
        });
    }
}

/// What the answer says of the locations left out.
pub fn note(server: &str, root: &Path, vanished: &[Vanished]) -> String {
    let mut files: Vec<String> = Vec::new();
    for v in vanished {
        let rel = tether_actors::fs::relative(root, &v.path);
        let shown = if v.file_gone {
            format!("{rel}, deleted")
        } else {
            format!("{rel}:{}, past its end", v.line + 1)
        };
        if !files.contains(&shown) {
            files.push(shown);
        }
    }
    let more = files.len().saturating_sub(NAMED);
    files.truncate(NAMED);
    format!(
        "note: {server} still listed {} location{} in what no longer exists on disk ({}{}), after {} asks; left out: its index has not caught up with the change. Ask again in a moment for a complete answer",
        vanished.len(),
        crate::tools::plural(vanished.len()),
        files.join("; "),
        if more > 0 { format!("; {more} more") } else { String::new() },
        MAX_REASKS + 1
    )
}

/// Each location's file and 0-based line.
fn located(answer: &Value) -> Vec<(PathBuf, u32)> {
    answer.as_array().map(|list| list.iter().filter_map(place).collect()).unwrap_or_default()
}

fn place(entry: &Value) -> Option<(PathBuf, u32)> {
    let uri = lsp_types::Url::parse(entry.get("uri")?.as_str()?).ok()?;
    let line = u32::try_from(entry.pointer("/range/start/line")?.as_u64()?).ok()?;
    Some((uri.to_file_path().ok()?, line))
}

fn check(places: &[(PathBuf, u32)]) -> Vec<Vanished> {
    // Lines per file; `None`: the file is gone. Unreadable for another
    // reason (permissions): counted as there.
    let mut lines: HashMap<&Path, Option<usize>> = HashMap::new();
    let mut vanished = Vec::new();
    for (path, line) in places {
        let count = *lines.entry(path.as_path()).or_insert_with(|| match std::fs::read(path) {
            Ok(bytes) => Some(line_count(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => Some(usize::MAX),
        });
        match count {
            None => vanished.push(Vanished { path: path.clone(), line: *line, file_gone: true }),
            Some(n) if *line as usize >= n => {
                vanished.push(Vanished { path: path.clone(), line: *line, file_gone: false })
            }
            Some(_) => {}
        }
    }
    vanished
}

/// Lines a text has, a last one without its newline included.
fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(path: &Path, line: u32) -> Value {
        let uri = lsp_types::Url::from_file_path(path).unwrap();
        json!({"uri": uri.as_str(), "range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 5}}})
    }

    #[tokio::test]
    async fn a_location_in_a_gone_file_or_past_an_end_vanished_the_rest_stays() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, gone) = (dir.path().join("a.c"), dir.path().join("b.c"), dir.path().join("many/m2.c"));
        std::fs::write(&a, "int f(void);\nint g(void) { return f(); }\n").unwrap();
        std::fs::write(&b, "f();").unwrap();
        let mut answer = json!([at(&a, 0), at(&a, 1), at(&a, 2), at(&b, 0), at(&gone, 3)]);
        let vanished = of(&answer).await;
        assert_eq!(
            vanished,
            [
                Vanished { path: a.clone(), line: 2, file_gone: false },
                Vanished { path: gone.clone(), line: 3, file_gone: true },
            ]
        );
        leave_out(&mut answer, &vanished);
        assert_eq!(answer, json!([at(&a, 0), at(&a, 1), at(&b, 0)]));
        let said = note("clangd", dir.path(), &vanished);
        assert!(
            said.starts_with("note: clangd still listed 2 locations in what no longer exists on disk (a.c:3, past its end; many/m2.c, deleted), after 4 asks"),
            "{said}"
        );
        assert!(of(&json!(null)).await.is_empty() && of(&json!({"contents": "x"})).await.is_empty());
    }

    #[test]
    fn lines_count_a_last_one_without_its_newline() {
        assert_eq!(
            (line_count(b""), line_count(b"a"), line_count(b"a\n"), line_count(b"a\nb")),
            (0, 1, 1, 2)
        );
    }
}
