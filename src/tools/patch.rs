//! Unified diffs: parsing (`diff -u`, `git diff`) and applying to text.
//!
//! Strict on purpose, because a patch applied in part is worse than one
//! refused: hunk line counts must add up (a model that miscounts gets an
//! error, not half its change), a hunk must match the file exactly (context
//! and removed lines; the nearest exact match within [`MAX_OFFSET`] lines of
//! its header wins), and git headers this applier cannot honour (binary
//! files, mode changes, content-less renames) are refused rather than
//! skipped. CRLF files stay CRLF.

use std::fmt;

/// How far from its header's line a hunk may be found.
pub const MAX_OFFSET: usize = 2000;

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before (`None` for `/dev/null`: the file is created).
    pub old_path: Option<String>,
    /// The path after (`None` for `/dev/null`: the file is deleted).
    pub new_path: Option<String>,
    /// Whether git declared a rename (`rename from` / `rename to`).
    pub rename: bool,
    /// The hunks, in order.
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// The path the patch is about, for messages.
    pub fn path(&self) -> &str {
        self.new_path.as_deref().or(self.old_path.as_deref()).unwrap_or("?")
    }
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based start line in the old file, from the header.
    pub old_start: usize,
    /// Number of old lines, from the header (0: a pure insertion after `old_start`).
    pub old_len: usize,
    /// The header as written, for messages.
    pub header: String,
    /// Context and removed lines: what the file must contain.
    pub old_lines: Vec<String>,
    /// Context and added lines: what replaces them.
    pub new_lines: Vec<String>,
    /// The old side's last line has no newline.
    pub old_no_newline: bool,
    /// The new side's last line has no newline.
    pub new_no_newline: bool,
}

/// Why a patch could not be read or applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError(pub String);

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A header path: tab-separated timestamps dropped, git's side prefix
/// (`a/` on the old side, `b/` on the new) removed.
fn header_path(path: &str, prefix: &str) -> Result<Option<String>, PatchError> {
    let path = path.split('\t').next().unwrap_or(path).trim_end();
    if path == "/dev/null" {
        return Ok(None);
    }
    if path.starts_with('"') {
        return Err(PatchError(format!(
            "quoted path {path} is not supported; rename the file to plain characters or edit it with write"
        )));
    }
    Ok(Some(path.strip_prefix(prefix).unwrap_or(path).to_string()))
}

fn parse_header(line: &str) -> Option<(usize, usize, usize)> {
    // @@ -12,3 +12,4 @@ optional section
    let inner = line.strip_prefix("@@ -")?;
    let (old, rest) = inner.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (_, new_len) = range(new)?;
    Some((old_start, old_len, new_len))
}

/// Git extended header lines that change what a patch means without `---`
/// / `+++` lines; refused, since applying the rest would be partial.
const UNSUPPORTED_GIT_HEADERS: &[&str] =
    &["old mode ", "new mode ", "deleted file mode 12", "new file mode 12", "copy from ", "copy to "];

/// Parses a unified diff of one or more files.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, PatchError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files = Vec::new();
    let mut i = 0;
    let mut git_rename = false;
    let mut in_git_block = false;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("diff --git ") {
            if in_git_block && git_rename {
                return Err(PatchError(format!(
                    "line {i}: a rename without content changes is not supported; use a patch that also shows the file's lines, or write the new file"
                )));
            }
            in_git_block = true;
            git_rename = false;
            i += 1;
            continue;
        }
        if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
            return Err(PatchError(format!("line {}: binary patches are not supported", i + 1)));
        }
        if UNSUPPORTED_GIT_HEADERS.iter().any(|h| line.starts_with(h)) {
            return Err(PatchError(format!(
                "line {}: `{line}`: mode changes and symlinks are not supported by apply_patch",
                i + 1
            )));
        }
        if line.starts_with("rename from ") || line.starts_with("rename to ") {
            git_rename = true;
            i += 1;
            continue;
        }
        let Some(old) = line.strip_prefix("--- ") else {
            if line.starts_with("@@") || (!files.is_empty() && starts_like_hunk_body(line)) {
                return Err(PatchError(format!(
                    "line {}: `{line}` is outside any hunk; the previous hunk's line counts may be wrong",
                    i + 1
                )));
            }
            i += 1;
            continue;
        };
        let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
            return Err(PatchError(format!(
                "line {}: `--- {old}` is not followed by a `+++` line; give a unified diff (diff -u or git diff)",
                i + 1
            )));
        };
        let mut patch = FilePatch {
            old_path: header_path(old, "a/")?,
            new_path: header_path(new, "b/")?,
            rename: git_rename,
            hunks: Vec::new(),
        };
        in_git_block = false;
        git_rename = false;
        i += 2;
        while i < lines.len() && lines[i].starts_with("@@") {
            let (hunk, next) = parse_hunk(&lines, i, patch.path())?;
            patch.hunks.push(hunk);
            i = next;
        }
        if patch.hunks.is_empty() {
            return Err(PatchError(format!("the patch for {} has no hunks", patch.path())));
        }
        files.push(patch);
    }
    if in_git_block && git_rename {
        return Err(PatchError(
            "a rename without content changes is not supported; use a patch that also shows the file's lines, or write the new file".into(),
        ));
    }
    if files.is_empty() {
        return Err(PatchError(
            "no file headers (`--- a/path` / `+++ b/path`) found; give a unified diff".to_string(),
        ));
    }
    Ok(files)
}

fn starts_like_hunk_body(line: &str) -> bool {
    (line.starts_with('-') && !line.starts_with("--- "))
        || (line.starts_with('+') && !line.starts_with("+++ "))
        || line.starts_with(' ')
}

/// Parses the hunk whose header is `lines[at]`; returns it and the index
/// of the first line after it.
fn parse_hunk(lines: &[&str], at: usize, path: &str) -> Result<(Hunk, usize), PatchError> {
    let header = lines[at];
    let Some((old_start, old_len, new_len)) = parse_header(header) else {
        return Err(PatchError(format!("line {}: malformed hunk header `{header}`", at + 1)));
    };
    let mut hunk = Hunk {
        old_start,
        old_len,
        header: header.to_string(),
        old_lines: Vec::new(),
        new_lines: Vec::new(),
        old_no_newline: false,
        new_no_newline: false,
    };
    let (mut old_left, mut new_left) = (old_len, new_len);
    let mut i = at + 1;
    let mut last = ' ';
    while i < lines.len() && (old_left > 0 || new_left > 0 || lines[i].starts_with('\\')) {
        let line = lines[i];
        let (tag, body) = match line.chars().next() {
            Some(c @ (' ' | '-' | '+' | '\\')) => (c, &line[1..]),
            // Some tools drop the space of an empty context line.
            None => (' ', ""),
            Some(_) => {
                return Err(PatchError(format!(
                    "line {}: `{line}` in hunk `{header}` does not start with ' ', '-' or '+'; the hunk's line counts may be wrong",
                    i + 1
                )));
            }
        };
        match tag {
            ' ' if old_left > 0 && new_left > 0 => {
                hunk.old_lines.push(body.to_string());
                hunk.new_lines.push(body.to_string());
                old_left -= 1;
                new_left -= 1;
            }
            '-' if old_left > 0 => {
                hunk.old_lines.push(body.to_string());
                old_left -= 1;
            }
            '+' if new_left > 0 => {
                hunk.new_lines.push(body.to_string());
                new_left -= 1;
            }
            '\\' => match last {
                '-' => hunk.old_no_newline = true,
                '+' => hunk.new_no_newline = true,
                _ => {
                    hunk.old_no_newline = true;
                    hunk.new_no_newline = true;
                }
            },
            _ => {
                return Err(PatchError(format!(
                    "line {}: hunk `{header}` of {path} has more lines than its header counts; fix the counts",
                    i + 1
                )));
            }
        }
        last = tag;
        i += 1;
    }
    if old_left > 0 || new_left > 0 {
        return Err(PatchError(format!(
            "hunk `{header}` of {path} ends early: {old_left} old and {new_left} new line(s) missing; check its line counts"
        )));
    }
    if let Some(next) = lines.get(i)
        && starts_like_hunk_body(next)
    {
        return Err(PatchError(format!(
            "line {}: hunk `{header}` of {path} has more lines than its header counts; fix the counts",
            i + 1
        )));
    }
    Ok((hunk, i))
}

/// Applies `patch` to `text` (the old content; empty for a new file).
/// Each line keeps its own ending (a file with one CRLF line among LF
/// lines stays so); added lines take the file's usual one.
pub fn apply(patch: &FilePatch, text: &str) -> Result<String, PatchError> {
    let usual = usual_ending(text);
    let (mut lines, mut ends): (Vec<String>, Vec<&'static str>) = if text.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        text.strip_suffix('\n')
            .unwrap_or(text)
            .split('\n')
            .map(|l| match l.strip_suffix('\r') {
                Some(l) => (l.to_string(), "\r\n"),
                None => (l.to_string(), "\n"),
            })
            .unzip()
    };
    // The last line of a file without a final newline has no ending of its
    // own; one added there is the usual.
    if !text.ends_with('\n')
        && let Some(last) = ends.last_mut()
    {
        *last = usual;
    }
    let mut ends_with_newline = text.is_empty() || text.ends_with('\n');
    let mut offset: isize = 0;
    let mut floor = 0usize;
    for hunk in &patch.hunks {
        // A pure insertion (`-N,0`) goes *after* line N.
        let start = if hunk.old_len == 0 { hunk.old_start } else { hunk.old_start.max(1) - 1 };
        let expected = (start as isize).saturating_add(offset).max(0) as usize;
        let at = find_block(&lines, &hunk.old_lines, expected, floor).ok_or_else(|| {
            let first = hunk.old_lines.first().map(String::as_str).unwrap_or("");
            PatchError(format!(
                "hunk `{}` does not apply to {}: its {} context/removed line(s) (starting `{first}`) are not in the file near line {}; read the file again and regenerate the patch",
                hunk.header,
                patch.path(),
                hunk.old_lines.len(),
                hunk.old_start
            ))
        })?;
        let replaced = at..at + hunk.old_lines.len();
        let is_tail = replaced.end == lines.len();
        // Lines the hunk keeps (its context) keep their endings, matched in
        // order; the lines it adds take the usual one.
        let old: Vec<(&String, &str)> =
            lines[replaced.clone()].iter().zip(ends[replaced.clone()].iter().copied()).collect();
        let mut next = 0;
        let new_ends: Vec<&'static str> = hunk
            .new_lines
            .iter()
            .map(|l| match old[next..].iter().position(|(c, _)| *c == l) {
                Some(k) => {
                    let end = if old[next + k].1 == "\r\n" { "\r\n" } else { "\n" };
                    next += k + 1;
                    end
                }
                None => usual,
            })
            .collect();
        lines.splice(replaced.clone(), hunk.new_lines.iter().cloned());
        ends.splice(replaced, new_ends);
        if is_tail {
            if hunk.new_no_newline {
                ends_with_newline = false;
            } else if hunk.old_no_newline || !hunk.new_lines.is_empty() {
                ends_with_newline = true;
            }
        }
        offset = offset.saturating_add(hunk.new_lines.len() as isize - hunk.old_lines.len() as isize);
        floor = at + hunk.new_lines.len();
    }
    let mut out = String::with_capacity(text.len());
    for (i, (line, end)) in lines.iter().zip(&ends).enumerate() {
        out.push_str(line);
        if i + 1 < lines.len() || ends_with_newline {
            out.push_str(end);
        }
    }
    Ok(out)
}

/// The ending most of `text`'s lines have: CRLF when more than half do.
pub fn usual_ending(text: &str) -> &'static str {
    let all = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    if crlf * 2 > all { "\r\n" } else { "\n" }
}

/// Where `block` occurs in `lines`, at or after `floor`, nearest to
/// `expected` and within [`MAX_OFFSET`] of it.
fn find_block(lines: &[String], block: &[String], expected: usize, floor: usize) -> Option<usize> {
    if block.is_empty() {
        return (expected <= lines.len()).then_some(expected.max(floor).min(lines.len()));
    }
    let fits = |at: usize| at + block.len() <= lines.len() && lines[at..at + block.len()] == *block;
    let last = lines.len().checked_sub(block.len())?;
    (0..=MAX_OFFSET)
        .flat_map(|d| [expected.checked_add(d), expected.checked_sub(d)])
        .flatten()
        .filter(|&at| at >= floor && at <= last)
        .find(|&at| fits(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -1,3 +1,3 @@
 def f():
-    return 1
+    return 2
 
--- /dev/null
+++ b/new.txt
@@ -0,0 +1,2 @@
+hello
+world
";

    #[test]
    fn parses_several_files_and_creation() {
        let files = parse(PATCH).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path(), "src/a.py");
        assert_eq!(files[1].old_path, None);
        assert_eq!(files[1].new_path.as_deref(), Some("new.txt"));
    }

    #[test]
    fn applies_with_drifted_line_numbers() {
        let files = parse(PATCH).unwrap();
        let text = "# header\n# more\ndef f():\n    return 1\n\nprint(f())\n";
        let out = apply(&files[0], text).unwrap();
        assert_eq!(out, "# header\n# more\ndef f():\n    return 2\n\nprint(f())\n");
        assert_eq!(apply(&files[1], "").unwrap(), "hello\nworld\n");
    }

    #[test]
    fn a_hunk_that_matches_nowhere_fails() {
        let files = parse(PATCH).unwrap();
        let err = apply(&files[0], "def g():\n    return 1\n").unwrap_err();
        assert!(err.0.contains("does not apply to src/a.py"), "{err}");
    }

    #[test]
    fn missing_newline_markers_are_honoured() {
        let patch = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n";
        let files = parse(patch).unwrap();
        assert_eq!(apply(&files[0], "a").unwrap(), "b\n");
        let patch = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n";
        let files = parse(patch).unwrap();
        assert_eq!(apply(&files[0], "a\n").unwrap(), "b");
    }

    #[test]
    fn garbage_is_refused_with_a_hint() {
        assert!(parse("hello").unwrap_err().0.contains("unified diff"));
        let err = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n").unwrap_err();
        assert!(err.0.contains("ends early"), "{err}");
    }

    #[test]
    fn miscounted_hunks_are_refused_not_half_applied() {
        let err = parse("--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-a\n+A\n-b\n+B\n").unwrap_err();
        assert!(err.0.contains("more lines than its header counts"), "{err}");
    }

    #[test]
    fn pure_insertions_go_after_the_named_line() {
        let files = parse("--- a/x\n+++ b/x\n@@ -2,0 +3 @@\n+X\n").unwrap();
        assert_eq!(apply(&files[0], "a\nb\nc\n").unwrap(), "a\nb\nX\nc\n");
    }

    #[test]
    fn each_line_keeps_its_own_ending() {
        let files = parse("--- a/x\n+++ b/x\n@@ -2,2 +2,3 @@\n b\n-c\n+C\n+D\n").unwrap();
        assert_eq!(apply(&files[0], "a\nb\r\nc\n").unwrap(), "a\nb\r\nC\nD\n", "mostly LF: added lines LF");
        let files = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n+A\n b\n").unwrap();
        assert_eq!(apply(&files[0], "a\r\nb\r\nc\n").unwrap(), "a\r\nA\r\nb\r\nc\n", "mostly CRLF");
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let files = parse("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n").unwrap();
        assert_eq!(apply(&files[0], "a\r\nb\r\n").unwrap(), "a\r\nB\r\n");
    }

    #[test]
    fn git_headers_it_cannot_honour_are_refused() {
        let mode = "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n";
        assert!(parse(mode).unwrap_err().0.contains("mode changes"));
        let binary = "diff --git a/x b/x\nBinary files a/x and b/x differ\n";
        assert!(parse(binary).unwrap_err().0.contains("binary"));
        let bare_rename = "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n";
        assert!(parse(bare_rename).unwrap_err().0.contains("rename without content"));
        let rename =
            "diff --git a/x b/y\nrename from x\nrename to y\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(parse(rename).unwrap()[0].rename);
    }

    #[test]
    fn side_prefixes_are_stripped_per_side_only() {
        let files = parse("--- b/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
        assert_eq!(
            files[0].old_path.as_deref(),
            Some("b/x"),
            "a real directory named b survives on the old side"
        );
        assert_eq!(files[0].new_path.as_deref(), Some("x"));
    }
}
