//! Unified diffs: parsing (`diff -u`, `git diff`) and applying to text.
//!
//! Hunks must match the file exactly (context and removed lines); a hunk
//! may sit at a different line than its header says — the nearest exact
//! match wins — but a hunk that matches nowhere fails the whole patch.

use std::fmt;

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before (`None` for `/dev/null`: the file is created).
    pub old_path: Option<String>,
    /// The path after (`None` for `/dev/null`: the file is deleted).
    pub new_path: Option<String>,
    /// The hunks, in order.
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// The path the patch is about, for messages.
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("?")
    }
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based start line in the old file, from the header.
    pub old_start: usize,
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

fn strip_prefix(path: &str) -> Option<String> {
    let path = path.split('\t').next().unwrap_or(path).trim();
    if path == "/dev/null" {
        return None;
    }
    let stripped = path
        .strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path);
    Some(stripped.to_string())
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

/// Parses a unified diff of one or more files.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, PatchError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(old) = lines[i].strip_prefix("--- ") else {
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
            old_path: strip_prefix(old),
            new_path: strip_prefix(new),
            hunks: Vec::new(),
        };
        i += 2;
        while i < lines.len() && lines[i].starts_with("@@") {
            let header = lines[i];
            let Some((old_start, mut old_left, mut new_left)) = parse_header(header) else {
                return Err(PatchError(format!(
                    "line {}: malformed hunk header `{header}`",
                    i + 1
                )));
            };
            let mut hunk = Hunk {
                old_start,
                header: header.to_string(),
                old_lines: Vec::new(),
                new_lines: Vec::new(),
                old_no_newline: false,
                new_no_newline: false,
            };
            i += 1;
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
                    ' ' => {
                        hunk.old_lines.push(body.to_string());
                        hunk.new_lines.push(body.to_string());
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                    '-' => {
                        hunk.old_lines.push(body.to_string());
                        old_left = old_left.saturating_sub(1);
                    }
                    '+' => {
                        hunk.new_lines.push(body.to_string());
                        new_left = new_left.saturating_sub(1);
                    }
                    _ => match last {
                        '-' => hunk.old_no_newline = true,
                        '+' => hunk.new_no_newline = true,
                        _ => {
                            hunk.old_no_newline = true;
                            hunk.new_no_newline = true;
                        }
                    },
                }
                last = tag;
                i += 1;
            }
            if old_left > 0 || new_left > 0 {
                return Err(PatchError(format!(
                    "hunk `{header}` of {} ends early: {old_left} old and {new_left} new line(s) missing; check its line counts",
                    patch.path()
                )));
            }
            patch.hunks.push(hunk);
        }
        if patch.hunks.is_empty() && patch.old_path.is_some() && patch.new_path.is_some() {
            return Err(PatchError(format!(
                "the patch for {} has no hunks",
                patch.path()
            )));
        }
        files.push(patch);
    }
    if files.is_empty() {
        return Err(PatchError(
            "no file headers (`--- a/path` / `+++ b/path`) found; give a unified diff".to_string(),
        ));
    }
    Ok(files)
}

/// Applies `patch` to `text` (the old content; empty for a new file).
pub fn apply(patch: &FilePatch, text: &str) -> Result<String, PatchError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut ends_with_newline = text.is_empty() || text.ends_with('\n');
    let mut offset: isize = 0;
    let mut floor = 0usize;
    for hunk in &patch.hunks {
        let expected = (hunk.old_start.max(1) as isize - 1 + offset).max(0) as usize;
        let at = find_block(&lines, &hunk.old_lines, expected, floor).ok_or_else(|| {
            let first = hunk.old_lines.first().map(String::as_str).unwrap_or("");
            PatchError(format!(
                "hunk `{}` does not apply to {}: its {} context/removed line(s) (starting `{first}`) are not in the file; read the file again and regenerate the patch",
                hunk.header,
                patch.path(),
                hunk.old_lines.len()
            ))
        })?;
        let is_tail = at + hunk.old_lines.len() == lines.len();
        lines.splice(
            at..at + hunk.old_lines.len(),
            hunk.new_lines.iter().cloned(),
        );
        if is_tail {
            if hunk.new_no_newline {
                ends_with_newline = false;
            } else if hunk.old_no_newline || !hunk.new_lines.is_empty() {
                ends_with_newline = true;
            }
        }
        offset += hunk.new_lines.len() as isize - hunk.old_lines.len() as isize;
        floor = at + hunk.new_lines.len();
    }
    let mut out = lines.join("\n");
    if ends_with_newline && !lines.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// Where `block` occurs in `lines`, at or after `floor`, nearest to `expected`.
fn find_block(lines: &[String], block: &[String], expected: usize, floor: usize) -> Option<usize> {
    if block.is_empty() {
        return Some(expected.clamp(floor, lines.len()));
    }
    let fits = |at: usize| at + block.len() <= lines.len() && lines[at..at + block.len()] == *block;
    let last = lines.len().checked_sub(block.len())?;
    (0..=last.max(expected))
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
        assert_eq!(
            out,
            "# header\n# more\ndef f():\n    return 2\n\nprint(f())\n"
        );
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
}
