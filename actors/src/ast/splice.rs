//! Edits by symbol, as text: a declaration ([`super::declaration`])
//! replaced whole or in its body, a sibling inserted before or after it,
//! or the declaration deleted with its decorators and doc comment — each
//! written at the file's own indentation (tabs or spaces, the unit it
//! uses), line ending (CRLF stays CRLF) and final newline (a file without
//! one keeps none), whatever indentation the given text came with.
//!
//! The new text's own indentation is read relative to its least indented
//! line, in its own unit, and rewritten in the target's: a body given at
//! column 0, at 8, or with its first line stripped of its indentation (as
//! one copied out of a listing) lands the same way.

use super::declaration::{Declaration, line_start};

/// Where an inserted sibling goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// How a file writes its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `\r\n` or `\n`.
    pub eol: &'static str,
    /// One level of indentation: a tab, or spaces.
    pub unit: String,
}

/// The file's line ending (the first line's) and indentation unit (a tab
/// when tab-indented lines outnumber space-indented ones; else the
/// smallest step between the indentation of consecutive lines; four
/// spaces when nothing is indented).
pub fn layout(text: &str) -> Layout {
    let eol = match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    let (mut tabs, mut spaced) = (0, 0);
    // Each indentation step from the enclosing level (a stack of the
    // levels open), counted: a continuation line's odd step is outvoted.
    let mut steps: std::collections::BTreeMap<usize, usize> = Default::default();
    let mut open = vec![0usize];
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with('\t') {
            tabs += 1;
            continue;
        }
        let width = line.len() - line.trim_start_matches(' ').len();
        if width > 0 {
            spaced += 1;
        }
        while open.last().is_some_and(|top| *top > width) {
            open.pop();
        }
        let top = open.last().copied().unwrap_or(0);
        if width > top {
            *steps.entry(width - top).or_default() += 1;
            open.push(width);
        }
    }
    // The most frequent step, the smallest of equals; a one-space step
    // (a C++ access specifier, an aligned continuation) only when no
    // other is seen.
    let wide = steps.keys().any(|s| *s > 1);
    let step = steps
        .iter()
        .filter(|(s, _)| !wide || **s > 1)
        .max_by_key(|(step, count)| (**count, std::cmp::Reverse(**step)))
        .map(|(s, _)| *s);
    let unit = match step {
        _ if tabs > spaced => "\t".to_string(),
        Some(step) => " ".repeat(step),
        None => "    ".to_string(),
    };
    Layout { eol, unit }
}

fn indent_width(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// `text` as lines at `indent`, one level being `layout.unit`, joined by
/// the file's line ending, without a final one. Leading and trailing
/// blank lines are dropped; blank lines inside stay, empty.
pub fn reindent(text: &str, indent: &str, layout: &Layout) -> String {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<&str> = normalized.lines().map(str::trim_end).collect();
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let uses_tabs = lines.iter().any(|l| l.starts_with('\t'));
    let widths: Vec<Option<usize>> = lines.iter().map(|l| (!l.is_empty()).then(|| indent_width(l))).collect();
    let rest_min = widths.iter().skip(1).flatten().min().copied();
    // The text's own unit: the smallest step between its levels.
    let mut levels: Vec<usize> = widths.iter().flatten().copied().collect();
    levels.sort_unstable();
    levels.dedup();
    let own_unit =
        if uses_tabs { 1 } else { levels.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(4).max(1) };
    // A first line stripped of its indentation while the rest kept
    // theirs: a block opener at the level just above its body.
    let first = widths.first().copied().flatten().unwrap_or(0);
    let opener = lines.first().is_some_and(|l| l.ends_with(':') || l.ends_with('{') || l.ends_with('('));
    let first_width = match rest_min {
        Some(rest) if first < rest && opener && rest - first > own_unit => rest - own_unit,
        _ => first,
    };
    let base = widths.iter().skip(1).flatten().copied().chain([first_width]).min().unwrap_or(0);
    let mut out = Vec::with_capacity(lines.len());
    for (k, line) in lines.iter().enumerate() {
        if line.is_empty() {
            out.push(String::new());
            continue;
        }
        let width = if k == 0 { first_width } else { indent_width(line) };
        let relative = width.saturating_sub(base);
        let (depth, rest) = (relative / own_unit, relative % own_unit);
        out.push(format!("{indent}{}{}{}", layout.unit.repeat(depth), " ".repeat(rest), line.trim_start()));
    }
    out.join(layout.eol)
}

/// Whether `text` starts with a comment (a doc comment given with a
/// replacement replaces the one above the declaration).
fn starts_with_comment(text: &str) -> bool {
    let t = text.trim_start();
    ["//", "/*", "#", "--", ";"].iter().any(|c| t.starts_with(c))
        && !t.starts_with("#[")
        && !t.starts_with("#!")
}

/// The text with `decl` replaced whole by `new` (its doc comment too when
/// `new` brings one).
pub fn replace(text: &str, decl: &Declaration, new: &str) -> String {
    let layout = layout(text);
    let start = match decl.doc {
        Some(doc) if starts_with_comment(new) => doc,
        _ => decl.start,
    };
    let body = reindent(new, &decl.indent, &layout);
    // The target's line keeps what precedes the declaration on it.
    let body = body.strip_prefix(decl.indent.as_str()).unwrap_or(&body);
    format!("{}{body}{}", &text[..start], &text[decl.end..])
}

/// What [`replace_body`] did beyond the replacement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyNotes {
    /// The docstring kept (Python: the new body brought none).
    pub kept_docstring: bool,
}

/// The text with `decl`'s body replaced by `new`. For a brace block,
/// `new` may be the statements (they go between the braces) or the whole
/// block with its braces.
pub fn replace_body(
    text: &str,
    decl: &Declaration,
    new: &str,
    python: bool,
) -> Result<(String, BodyNotes), String> {
    let (b0, b1) = decl.body.ok_or_else(|| format!("`{}` (a {}) has no body", decl.name, decl.kind))?;
    let layout = layout(text);
    let body = &text[b0..b1];
    let mut notes = BodyNotes::default();
    let decl_line_indent = {
        let ls = line_start(text, decl.start);
        let line = &text[ls..];
        line[..indent_width(line)].to_string()
    };
    let inner_indent = |at: usize| {
        let ls = line_start(text, at);
        if text[ls..at].trim().is_empty() && at > ls && ls > line_start(text, decl.start) {
            text[ls..at].to_string()
        } else {
            format!("{decl_line_indent}{}", layout.unit)
        }
    };
    let trimmed = new.trim();
    if python {
        let mut from = b0;
        if let Some(doc_end) = python_docstring_end(body) {
            let brings_own = ["\"\"\"", "'''", "\"", "'", "r\"", "r'"].iter().any(|q| trimmed.starts_with(q));
            if !brings_own {
                notes.kept_docstring = true;
                from = b0 + doc_end;
                let indent = inner_indent(b0);
                let lines = reindent(new, &indent, &layout);
                return Ok((format!("{}{}{lines}{}", &text[..from], layout.eol, &text[b1..]), notes));
            }
        }
        let indent = inner_indent(b0);
        let lines = reindent(new, &indent, &layout);
        let same_line = !text[line_start(text, b0)..b0].trim().is_empty();
        if same_line {
            // `def f(): return 1`: the body moves to lines of its own.
            let cut = text[..from].trim_end_matches([' ', '\t']).len();
            return Ok((format!("{}{}{lines}{}", &text[..cut], layout.eol, &text[b1..]), notes));
        }
        let ls = line_start(text, from);
        return Ok((format!("{}{lines}{}", &text[..ls], &text[b1..]), notes));
    }
    let braced = body.starts_with('{') && body.ends_with('}');
    if !braced || (trimmed.starts_with('{') && trimmed.ends_with('}')) {
        let lines = reindent(new, &decl_line_indent, &layout);
        let lines = lines.strip_prefix(decl_line_indent.as_str()).unwrap_or(&lines);
        return Ok((format!("{}{lines}{}", &text[..b0], &text[b1..]), notes));
    }
    let indent = format!("{decl_line_indent}{}", layout.unit);
    let lines = reindent(new, &indent, &layout);
    let eol = layout.eol;
    Ok((format!("{}{{{eol}{lines}{eol}{decl_line_indent}}}{}", &text[..b0], &text[b1..]), notes))
}

/// Where a Python block's leading docstring statement ends, relative to
/// the block.
fn python_docstring_end(block: &str) -> Option<usize> {
    let t = block.trim_start();
    let lead = block.len() - t.len();
    for quote in ["\"\"\"", "'''"] {
        if let Some(rest) = t.strip_prefix(quote) {
            return rest.find(quote).map(|i| lead + quote.len() + i + quote.len());
        }
    }
    for quote in ["\"", "'"] {
        if let Some(rest) = t.strip_prefix(quote) {
            let end = rest.find(quote)?;
            if rest[..end].contains('\n') {
                return None;
            }
            return Some(lead + quote.len() + end + quote.len());
        }
    }
    None
}

/// Blank lines to put between `decl` and a sibling inserted on `side`: as
/// its neighbours are separated (that side's first, then the other's);
/// with no neighbour, two at a Python module's top level, else one.
fn separation(decl: &Declaration, side: Side, python: bool) -> usize {
    let (near, far) = match side {
        Side::Before => (decl.gap_before, decl.gap_after),
        Side::After => (decl.gap_after, decl.gap_before),
    };
    near.or(far).unwrap_or(if python && decl.containers.is_empty() { 2 } else { 1 })
}

/// The text with `new` inserted as a sibling of `decl` on `side`.
pub fn insert(text: &str, decl: &Declaration, new: &str, side: Side, python: bool) -> String {
    let layout = layout(text);
    let eol = layout.eol;
    let blank = eol.repeat(separation(decl, side, python));
    let lines = reindent(new, &decl.indent, &layout);
    match side {
        Side::Before => {
            let at = line_start(text, decl.doc.unwrap_or(decl.start));
            format!("{}{lines}{eol}{blank}{}", &text[..at], &text[at..])
        }
        Side::After => {
            // After the end of the declaration's last line, so a file
            // without a final newline still has none.
            let at = text[decl.end..].find('\n').map_or(text.len(), |i| decl.end + i);
            let at = if text[..at].ends_with('\r') { at - 1 } else { at };
            format!("{}{eol}{blank}{lines}{}", &text[..at], &text[at..])
        }
    }
}

/// The text without `decl`, its decorators and its doc comment, and
/// without the blank lines that separated it (one side's, so that its
/// neighbours stay separated as before).
pub fn delete(text: &str, decl: &Declaration) -> String {
    let first = decl.doc.unwrap_or(decl.start);
    let from = line_start(text, first);
    let whole_lines = text[from..first].trim().is_empty();
    let line_end = text[decl.end..].find('\n').map(|i| decl.end + i + 1);
    let to = match line_end {
        Some(e) if whole_lines && text[decl.end..e].trim().is_empty() => e,
        None if whole_lines && text[decl.end..].trim().is_empty() => text.len(),
        // It shares a line with other code: only its own bytes go.
        _ => return format!("{}{}", &text[..first], &text[decl.end..]),
    };
    let (mut from, mut to) = (from, to);
    let blank = ['\n', '\r', ' ', '\t'];
    let rest = &text[to..];
    let trailing = rest.len() - rest.trim_start_matches(blank).len();
    let head = text[..from].trim_end_matches(blank);
    // Where the blank lines before it begin: after the line ending that
    // closes the code above.
    let blank_from = if head.is_empty() { 0 } else { head.len() + line_end_len(text, head.len()) };
    if to + trailing == text.len() {
        // The last thing in the file: the blank lines before it go, and
        // the final newline stays as it was.
        from = if text.ends_with('\n') { blank_from } else { head.len() };
        to = text.len();
    } else {
        // One side's blank lines go with it: those after it, or, where
        // none follow (the last member before a closing brace), those
        // before it.
        let blank_after = line_start(rest, trailing);
        if blank_after > 0 {
            to += blank_after;
        } else {
            from = blank_from.min(from);
        }
    }
    format!("{}{}", &text[..from], &text[to..])
}

/// The length of the line ending at byte `at` (2 for CRLF, else 1).
fn line_end_len(text: &str, at: usize) -> usize {
    if text[at..].starts_with("\r\n") { 2 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::declaration::all;
    use crate::ast::lang::Lang;

    fn decl(lang: Lang, text: &str, name: &str) -> Declaration {
        all(lang, text).into_iter().find(|d| d.name == name).unwrap()
    }

    #[test]
    fn a_body_given_at_any_indentation_lands_at_the_targets() {
        let layout = Layout { eol: "\n", unit: "\t".into() };
        let given = "if x:\n        return 1\nreturn 2\n";
        assert_eq!(reindent(given, "\t", &layout), "\tif x:\n\t\treturn 1\n\treturn 2");
        // The first line stripped of its indentation, the rest kept.
        let copied = "def f(self):\n        return 1";
        let spaces = Layout { eol: "\r\n", unit: "  ".into() };
        assert_eq!(reindent(copied, "  ", &spaces), "  def f(self):\r\n    return 1");
    }

    #[test]
    fn a_python_body_is_replaced_not_prepended_and_its_docstring_kept() {
        let text = "def f(a,\n      b):\n    \"\"\"Adds.\"\"\"\n    return a + b\n\n\ndef g(): return 1\n";
        let f = decl(Lang::PYTHON, text, "f");
        let (out, notes) = replace_body(text, &f, "return a - b", true).unwrap();
        assert_eq!(
            out,
            "def f(a,\n      b):\n    \"\"\"Adds.\"\"\"\n    return a - b\n\n\ndef g(): return 1\n"
        );
        assert!(notes.kept_docstring);
        let g = decl(Lang::PYTHON, &out, "g");
        let (out, _) = replace_body(&out, &g, "x = 2\nreturn x", true).unwrap();
        assert!(out.ends_with("def g():\n    x = 2\n    return x\n"), "{out}");
    }

    #[test]
    fn a_typescript_body_goes_between_the_braces_in_a_crlf_file() {
        let text = "class A {\r\n  m(): number {\r\n    return 1;\r\n  }\r\n}\r\n";
        let m = decl(Lang::TYPESCRIPT, text, "m");
        let (out, _) = replace_body(text, &m, "const x = 2;\nreturn x;", false).unwrap();
        assert_eq!(out, "class A {\r\n  m(): number {\r\n    const x = 2;\r\n    return x;\r\n  }\r\n}\r\n");
    }

    #[test]
    fn inserts_follow_the_neighbours_spacing_and_deletes_take_their_gap() {
        let text = "class A:\n    def a(self):\n        pass\n\n    def b(self):\n        pass";
        let b = decl(Lang::PYTHON, text, "b");
        let out = insert(text, &b, "def c(self):\n    pass", Side::After, true);
        assert_eq!(out, format!("{text}\n\n    def c(self):\n        pass"));
        let a = decl(Lang::PYTHON, text, "a");
        let out = insert(text, &a, "def z(self): pass", Side::Before, true);
        assert!(out.starts_with("class A:\n    def z(self): pass\n\n    def a(self):"), "{out}");
        assert_eq!(delete(text, &a), "class A:\n    def b(self):\n        pass");
        // The last one, in a file without a final newline: none after.
        assert_eq!(delete(text, &b), "class A:\n    def a(self):\n        pass");
        // The last member before a closing brace takes the blank line above it.
        let ts = "class A {\n  a() {}\n\n  b() {}\n}\n";
        let b = decl(Lang::TYPESCRIPT, ts, "b");
        assert_eq!(delete(ts, &b), "class A {\n  a() {}\n}\n");
    }
}
