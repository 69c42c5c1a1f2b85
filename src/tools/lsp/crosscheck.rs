//! A text cross-check of a `references` answer, for servers that leave
//! out what they cannot fully resolve and say nothing (`ServerConfig::
//! omits_unresolved`): jdtls drops every match the Java search engine
//! rates "inaccurate" — a use inside code whose dependencies are missing
//! (an Android SDK, Maven artifacts not fetched) — so on such a project
//! `references` of a class lists its import lines and reads as complete.
//! The files of the queried file's extension under the server's root that
//! can see the queried file's code — its package's directory, or an
//! `import` of its package — hold the name as a word outside comment lines,
//! and appear nowhere in the answer are counted and named. A name that
//! merely recurs elsewhere (a `get` of another class) in a file that cannot
//! see the declaration is not counted.
//!
//! The word counting ([`count_in_code`]) also serves `changed_under`, which holds
//! any server's `references` answer against the files written around it.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::Path;

use tether_actors::project_walk::{self, DEPENDENCIES, Entry, Rules};

/// Files read for the check; past this it says it stopped.
const MAX_FILES: usize = 5_000;
/// Bytes read for the check, all files together.
const MAX_BYTES: u64 = 64 << 20;
/// Files named in the note.
const NAMED: usize = 3;

/// What the text holds that the answer does not.
#[derive(Debug, PartialEq)]
pub(super) struct Unlisted {
    /// Files holding the word that the answer does not list, relative.
    pub files: Vec<String>,
    /// Whether the walk stopped at a bound before the end.
    pub capped: bool,
}

/// Files under `server_root` with `file`'s extension that hold `symbol`
/// as a word and are not among `answered` (paths relative to `workdir`).
pub(super) fn unlisted(
    workdir: &Path,
    server_root: &Path,
    file: &Path,
    symbol: &str,
    answered: &BTreeSet<String>,
    window: std::time::Duration,
) -> Unlisted {
    let Some(ext) = file.extension().map(|e| e.to_os_string()) else {
        return Unlisted { files: Vec::new(), capped: false };
    };
    let home = file.parent().map(Path::to_path_buf);
    // `import com.example.` — any import of the declaring package.
    let import = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| package_of(&text))
        .map(|package| format!("import {package}."));
    let mut files = Vec::new();
    let (mut seen, mut bytes, mut capped) = (0usize, 0u64, false);
    let rules = Rules { ignore_files: true, skip: DEPENDENCIES, max_depth: None };
    project_walk::walk(server_root, rules, |entry| {
        let Entry::File(path) = entry else { return ControlFlow::Continue(()) };
        if path.extension() != Some(ext.as_os_str()) {
            return ControlFlow::Continue(());
        }
        seen += 1;
        let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if seen > MAX_FILES || bytes + len > MAX_BYTES {
            capped = true;
            return ControlFlow::Break(());
        }
        bytes += len;
        let rel = tether_actors::fs::relative(workdir, path);
        if answered.contains(&rel) {
            return ControlFlow::Continue(());
        }
        let Some(text) = read_written(path, window) else { return ControlFlow::Continue(()) };
        let sees = path.parent() == home.as_deref()
            || import.as_ref().is_some_and(|i| text.windows(i.len()).any(|w| w == i.as_bytes()));
        if sees && in_code(&text, symbol.as_bytes()) {
            files.push(rel);
        }
        ControlFlow::Continue(())
    });
    files.sort();
    Unlisted { files, capped }
}

/// The `package a.b;` a Java file declares.
fn package_of(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("package "))
        .map(|p| p.trim_end_matches(';').trim().to_string())
}

/// How often a file caught empty just after a write is read again.
const REREAD_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// `path`'s bytes, not caught between a writer's truncation and its
/// write: an empty file modified within `window` (the callers'
/// `HALF_WRITTEN_WINDOW`) is read again until it holds something or the
/// window has passed since its change (a writer descheduled on a busy
/// machine leaves it empty for that long). Blocks: for a blocking task.
pub(super) fn read_written(path: &Path, window: std::time::Duration) -> Option<Vec<u8>> {
    loop {
        let text = std::fs::read(path).ok()?;
        // Only an empty file is asked when it changed: the walk of the
        // cross-check reads thousands, and a stat each would double that.
        if !text.is_empty() {
            return Some(text);
        }
        let changed = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
        let since = std::time::SystemTime::now().duration_since(changed).unwrap_or_default();
        if since >= window {
            return Some(text);
        }
        std::thread::sleep(REREAD_EVERY.min(window - since));
    }
}

/// Whether a line of `text` that is not a comment line (`//`, `/*`, `*`,
/// `#`) holds `word`: a name a doc comment mentions is not a use.
fn in_code(text: &[u8], word: &[u8]) -> bool {
    text.split(|b| *b == b'\n').any(|line| !is_comment_line(line) && holds_word(line, word))
}

/// How many times lines of `text` that are not comment lines hold `word`
/// as a word.
pub(super) fn count_in_code(text: &[u8], word: &[u8]) -> usize {
    text.split(|b| *b == b'\n').filter(|line| !is_comment_line(line)).map(|line| words_in(line, word)).sum()
}

fn is_comment_line(line: &[u8]) -> bool {
    let t = line.trim_ascii_start();
    t.starts_with(b"//") || t.starts_with(b"/*") || t.starts_with(b"*") || t.starts_with(b"#")
}

/// How many times `text` holds `word` with no identifier character either side.
fn words_in(text: &[u8], word: &[u8]) -> usize {
    if word.is_empty() || word.len() > text.len() {
        return 0;
    }
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    text.windows(word.len())
        .enumerate()
        .filter(|(at, w)| {
            *w == word
                && (*at == 0 || !ident(text[at - 1]))
                && text.get(at + word.len()).is_none_or(|b| !ident(*b))
        })
        .count()
}

/// Whether `text` holds `word` with no identifier character either side.
fn holds_word(text: &[u8], word: &[u8]) -> bool {
    words_in(text, word) > 0
}

impl Unlisted {
    /// The note for the answer, if there is anything to say.
    pub(super) fn note(&self, server: &str, symbol: &str) -> Option<String> {
        if self.files.is_empty() {
            return self.capped.then(|| {
                format!(
                    "note: the text check of this answer stopped at {MAX_FILES} files or {} MiB before the end",
                    MAX_BYTES >> 20
                )
            });
        }
        let named: Vec<&str> = self.files.iter().take(NAMED).map(String::as_str).collect();
        let more = self.files.len().saturating_sub(NAMED);
        Some(format!(
            "note: `{symbol}` also appears as a word in {} file(s) that can see its declaration and that this answer does not list ({}{}){}; {server} leaves out, unsaid, the uses it cannot fully resolve (a missing dependency), so these may be uses — search the text (`ast_grep`) to see them",
            self.files.len(),
            named.join(", "),
            if more > 0 { format!(", and {more} more") } else { String::new() },
            if self.capped { " — the check stopped early" } else { "" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_caught_between_truncation_and_write_is_read_once_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("M0.java");
        std::fs::write(&path, "").unwrap();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(150));
                std::fs::write(&path, "return Core.target(0);\n").unwrap();
            })
        };
        let window = std::time::Duration::from_secs(1);
        let text = read_written(&path, window).unwrap();
        writer.join().unwrap();
        assert_eq!(count_in_code(&text, b"target"), 1, "{}", String::from_utf8_lossy(&text));
        // An empty file no one wrote lately is empty.
        let old = dir.path().join("old.java");
        std::fs::write(&old, "").unwrap();
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&old).unwrap().set_modified(long_ago).unwrap();
        let started = std::time::Instant::now();
        assert_eq!(read_written(&old, window).unwrap(), b"");
        assert!(started.elapsed() < window);
    }

    #[test]
    fn uses_are_counted_on_code_lines_only() {
        let text = b"from pkg.core import target\n# target is called below\nx = target(1) + target(2)\ntargets = 1\n";
        assert_eq!(count_in_code(text, b"target"), 3);
        assert_eq!(count_in_code(b"", b"target"), 0);
    }

    #[test]
    fn words_are_whole() {
        assert!(holds_word(b"void f(PluginCall call)", b"PluginCall"));
        assert!(!holds_word(b"PluginCallData x", b"PluginCall"));
        assert!(!holds_word(b"MyPluginCall", b"PluginCall"));
        assert!(holds_word(b"PluginCall", b"PluginCall"));
        assert!(!holds_word(b"$PluginCall", b"PluginCall"));
    }

    #[test]
    fn files_the_answer_lists_are_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("app/x")).unwrap();
        std::fs::create_dir_all(root.join("other")).unwrap();
        let write = |p: &str, t: &str| std::fs::write(root.join(p), t).unwrap();
        write("app/A.java", "package app;\nclass A { PluginCall c; }");
        write("app/B.java", "package app;\nclass B { PluginCall c; }");
        write("app/C.java", "package app;\nclass C { PluginCallData c; }");
        write("app/D.java", "/**\n * Like PluginCall.\n */\nclass D {}\n// PluginCall\n");
        write("app/x/E.java", "package app.x;\nimport app.A;\nclass E { PluginCall c; }");
        // Another package's own PluginCall: it cannot see app's.
        write("other/F.java", "package other;\nclass F { PluginCall c; }");
        write("app/d.txt", "PluginCall");
        let answered: BTreeSet<String> = ["app/A.java".to_string()].into();
        let u = unlisted(
            root,
            root,
            &root.join("app/A.java"),
            "PluginCall",
            &answered,
            std::time::Duration::from_secs(1),
        );
        assert_eq!(u, Unlisted { files: vec!["app/B.java".into(), "app/x/E.java".into()], capped: false });
        let note = u.note("jdtls", "PluginCall").unwrap();
        assert!(
            note.contains("in 2 file(s) that can see its declaration and that this answer does not list (app/B.java, app/x/E.java)"),
            "{note}"
        );
        assert_eq!(Unlisted { files: vec![], capped: false }.note("jdtls", "x"), None);
    }
}
