//! Unified diffs of a change, as previews and answers show it: two lines
//! of context, `a/` and `b/` headers relative to the root, cut at a number
//! of lines with the rest counted. A created file diffs from nothing, a
//! deleted one to nothing.

use similar::TextDiff;

/// One file's part in a diff: its path as shown, before and after
/// (`None`: it does not exist on that side).
pub struct DiffFile<'a> {
    pub rel: &'a str,
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

/// A diff cut at some number of lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// The unified diff, each line ending in a newline.
    pub text: String,
    /// Lines of the diff left out by the cut.
    pub omitted: usize,
}

/// The unified diff of `files`, at most `max_lines` lines.
pub fn unified(files: &[DiffFile<'_>], max_lines: usize) -> Diff {
    let mut diff = Diff::default();
    let mut lines = 0usize;
    for file in files {
        let a = if file.before.is_some() { format!("a/{}", file.rel) } else { "/dev/null".into() };
        let b = if file.after.is_some() { format!("b/{}", file.rel) } else { "/dev/null".into() };
        let (before, after) = (file.before.unwrap_or(""), file.after.unwrap_or(""));
        let text =
            TextDiff::from_lines(before, after).unified_diff().context_radius(2).header(&a, &b).to_string();
        for line in text.lines() {
            if lines < max_lines {
                diff.text.push_str(line);
                diff.text.push('\n');
                lines += 1;
            } else {
                diff.omitted += 1;
            }
        }
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_file_diffs_from_nothing_and_the_cut_is_counted() {
        let files = [
            DiffFile { rel: "a.py", before: Some("x = 1\n"), after: Some("x = 2\n") },
            DiffFile { rel: "new.py", before: None, after: Some("a\nb\nc\n") },
        ];
        let whole = unified(&files, 100);
        assert!(whole.text.contains("--- a/a.py\n+++ b/a.py\n"));
        assert!(whole.text.contains("--- /dev/null\n+++ b/new.py\n"));
        assert!(whole.text.contains("-x = 1\n+x = 2\n"));
        assert_eq!(whole.omitted, 0);
        let cut = unified(&files, 3);
        assert_eq!(cut.text.lines().count(), 3);
        assert_eq!(cut.omitted, whole.text.lines().count() - 3);
    }
}
