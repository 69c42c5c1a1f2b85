//! A text cross-check of a `references` answer, for servers that leave
//! out what they cannot fully resolve and say nothing (`ServerConfig::
//! omits_unresolved`): jdtls drops every match the Java search engine
//! rates "inaccurate" — a use inside code whose dependencies are missing
//! (an Android SDK, Maven artifacts not fetched) — so on such a project
//! `references` of a class lists its import lines and reads as complete.
//! The files of the queried file's extension under the server's root that
//! hold the name as a whole word, and appear nowhere in the answer, are
//! counted and named.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
) -> Unlisted {
    let Some(ext) = file.extension().map(|e| e.to_os_string()) else {
        return Unlisted { files: Vec::new(), capped: false };
    };
    let mut files = Vec::new();
    let (mut seen, mut bytes, mut capped) = (0usize, 0u64, false);
    for entry in ignore::WalkBuilder::new(server_root).build().flatten() {
        let path: PathBuf = entry.into_path();
        if path.extension() != Some(ext.as_os_str()) || !path.is_file() {
            continue;
        }
        seen += 1;
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if seen > MAX_FILES || bytes + len > MAX_BYTES {
            capped = true;
            break;
        }
        bytes += len;
        let rel = tether_actors::fs::relative(workdir, &path);
        if answered.contains(&rel) {
            continue;
        }
        if std::fs::read(&path).is_ok_and(|text| in_code(&text, symbol.as_bytes())) {
            files.push(rel);
        }
    }
    Unlisted { files, capped }
}

/// Whether a line of `text` that is not a comment line (`//`, `/*`, `*`,
/// `#`) holds `word`: a name a doc comment mentions is not a use.
fn in_code(text: &[u8], word: &[u8]) -> bool {
    text.split(|b| *b == b'\n').any(|line| {
        let t = line.trim_ascii_start();
        let comment =
            t.starts_with(b"//") || t.starts_with(b"/*") || t.starts_with(b"*") || t.starts_with(b"#");
        !comment && holds_word(line, word)
    })
}

/// Whether `text` holds `word` with no identifier character either side.
fn holds_word(text: &[u8], word: &[u8]) -> bool {
    if word.is_empty() || word.len() > text.len() {
        return false;
    }
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    text.windows(word.len()).enumerate().any(|(at, w)| {
        w == word && (at == 0 || !ident(text[at - 1])) && text.get(at + word.len()).is_none_or(|b| !ident(*b))
    })
}

impl Unlisted {
    /// The note for the answer, if there is anything to say.
    pub(super) fn note(&self, server: &str, symbol: &str) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let named: Vec<&str> = self.files.iter().take(NAMED).map(String::as_str).collect();
        let more = self.files.len().saturating_sub(NAMED);
        Some(format!(
            "note: `{symbol}` also appears as a word in {} file(s) this answer does not list ({}{}){}; {server} leaves out uses it cannot fully resolve (a missing dependency) and does not say so — search the text (`ast_grep`) to see them",
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
        std::fs::write(root.join("A.java"), "class A { PluginCall c; }").unwrap();
        std::fs::write(root.join("B.java"), "class B { PluginCall c; }").unwrap();
        std::fs::write(root.join("C.java"), "class C { PluginCallData c; }").unwrap();
        std::fs::write(root.join("D.java"), "/**\n * Like PluginCall.\n */\nclass D {}\n// PluginCall\n")
            .unwrap();
        std::fs::write(root.join("d.txt"), "PluginCall").unwrap();
        let answered: BTreeSet<String> = ["A.java".to_string()].into();
        let u = unlisted(root, root, &root.join("A.java"), "PluginCall", &answered);
        assert_eq!(u, Unlisted { files: vec!["B.java".into()], capped: false });
        assert!(
            u.note("jdtls", "PluginCall")
                .unwrap()
                .contains("in 1 file(s) this answer does not list (B.java)")
        );
    }
}
