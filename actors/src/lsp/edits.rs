//! Text positions and edits in LSP's terms: lines and UTF-16 columns.
//!
//! Servers count columns in UTF-16 code units (the default position
//! encoding); Rust strings are UTF-8. Every conversion goes through here.

use std::collections::BTreeMap;

use lsp_types::{Position, TextEdit, Url, WorkspaceEdit};

use crate::ast::renamed::RenamedAt;

/// The byte offset of an LSP position in `text`, or `None` if it is past
/// the end of its line or of the text.
pub fn offset_of(text: &str, pos: Position) -> Option<usize> {
    let mut line_start = 0;
    for _ in 0..pos.line {
        line_start += text[line_start..].find('\n')? + 1;
    }
    let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= pos.character {
            return (units == pos.character).then_some(line_start + i);
        }
        units += c.len_utf16() as u32;
    }
    // Past the line's end: "defaults back to the line length" (LSP 3.17,
    // `Position`) — typescript-language-server appends an extracted
    // function there. The length leaves out a CRLF line's `\r`.
    if pos.character > units {
        return Some(line_end - usize::from(line.ends_with('\r')));
    }
    (units == pos.character).then_some(line_end)
}

/// The UTF-16 column of byte offset `byte` within `line`.
pub fn utf16_column(line: &str, byte: usize) -> u32 {
    line[..byte.min(line.len())].encode_utf16().count() as u32
}

/// The 1-based character column of a UTF-16 column within `line`.
pub fn char_column(line: &str, utf16: u32) -> usize {
    let mut units = 0u32;
    for (n, c) in line.chars().enumerate() {
        if units >= utf16 {
            return n + 1;
        }
        units += c.len_utf16() as u32;
    }
    line.chars().count() + 1
}

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// A range does not exist in the file.
    #[error("an edit's range {0} is outside the file")]
    OutOfRange(String),
    /// Two edits overlap.
    #[error("two edits overlap at {0}")]
    Overlap(String),
    /// An edit replaces far more than a rename should.
    #[error("{0}")]
    Suspicious(String),
    /// The edit creates, renames or deletes files, which is not applied.
    #[error("the edit creates, renames or deletes files, which tether does not apply")]
    ResourceOperation,
}

fn range_text(r: &lsp_types::Range) -> String {
    format!("{}:{}-{}:{}", r.start.line + 1, r.start.character + 1, r.end.line + 1, r.end.character + 1)
}

/// Applies `edits` (all against the original `text`) and returns the new text.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> Result<String, EditError> {
    let mut spans = Vec::with_capacity(edits.len());
    for e in edits {
        let start =
            offset_of(text, e.range.start).ok_or_else(|| EditError::OutOfRange(range_text(&e.range)))?;
        let end = offset_of(text, e.range.end).ok_or_else(|| EditError::OutOfRange(range_text(&e.range)))?;
        if end < start {
            return Err(EditError::OutOfRange(range_text(&e.range)));
        }
        spans.push((start, end, e.new_text.as_str(), &e.range));
    }
    spans.sort_by_key(|s| (s.0, s.1));
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for (start, end, new_text, range) in spans {
        if start < cursor {
            return Err(EditError::Overlap(range_text(range)));
        }
        out.push_str(&text[cursor..start]);
        out.push_str(new_text);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// The text edits of a workspace edit, per file URI. Resource operations
/// (create, rename, delete) are refused.
pub fn edits_by_file(edit: &WorkspaceEdit) -> Result<BTreeMap<Url, Vec<TextEdit>>, EditError> {
    use lsp_types::{DocumentChangeOperation, DocumentChanges, OneOf};
    let mut out: BTreeMap<Url, Vec<TextEdit>> = BTreeMap::new();
    // A server may send both forms of the same edit; `documentChanges` wins.
    if let (Some(changes), None) = (&edit.changes, &edit.document_changes) {
        for (uri, edits) in changes {
            out.entry(uri.clone()).or_default().extend(edits.iter().cloned());
        }
    }
    if let Some(doc_changes) = &edit.document_changes {
        let ops: Vec<&lsp_types::TextDocumentEdit> = match doc_changes {
            DocumentChanges::Edits(edits) => edits.iter().collect(),
            DocumentChanges::Operations(ops) => {
                let mut v = Vec::new();
                for op in ops {
                    match op {
                        DocumentChangeOperation::Edit(e) => v.push(e),
                        DocumentChangeOperation::Op(_) => return Err(EditError::ResourceOperation),
                    }
                }
                v
            }
        };
        for doc in ops {
            let edits = doc.edits.iter().map(|e| match e {
                OneOf::Left(t) => t.clone(),
                OneOf::Right(annotated) => annotated.text_edit.clone(),
            });
            out.entry(doc.text_document.uri.clone()).or_default().extend(edits);
        }
    }
    Ok(out)
}

/// Refuses every edit that is not a rename of `old` to `new`. The replaced
/// text and the new text are compared after stripping what they share at
/// both ends (servers such as pylsp-rope replace whole lines), and what
/// differs must be exactly `old` → `new`, or one of the forms servers
/// document for a rename that keeps a binding's other name: a shorthand
/// property or import specifier written out (`old` → `old: new`,
/// `new: old`, `old as new`, `new as old`), or that written-out part
/// inserted after it (`: new`, ` as new`).
pub fn check_rename_edit(text: &str, edit: &TextEdit, old: &str, new: &str) -> Result<(), EditError> {
    let (Some(start), Some(end)) = (offset_of(text, edit.range.start), offset_of(text, edit.range.end))
    else {
        return Err(EditError::OutOfRange(range_text(&edit.range)));
    };
    let replaced = &text[start..end.max(start)];
    let (core_old, core_new) = strip_common(replaced, &edit.new_text);
    let written_out = [
        format!("{old}: {new}"),
        format!("{new}: {old}"),
        format!("{old} as {new}"),
        format!("{new} as {old}"),
    ];
    let inserted = [format!(": {new}"), format!(" as {new}"), format!("{new}: "), format!("{new} as ")];
    let ok = (core_old == old && (core_new == new || written_out.iter().any(|w| w == core_new)))
        || (core_old.is_empty() && inserted.iter().any(|w| w == core_new));
    if !ok {
        return Err(EditError::Suspicious(format!(
            "the server's edit at line {} replaces `{}` with `{}` — renaming `{old}` to `{new}` replaces `{old}` with `{new}` and nothing else, so nothing was written",
            edit.range.start.line + 1,
            shorten(core_old),
            shorten(core_new),
        )));
    }
    Ok(())
}

/// The differing middles of `a` and `b`, after their common prefix and
/// suffix — widened to whole identifiers, so `Square` → `Tile` stays that
/// and does not shrink to `Squar` → `Til` around the shared `e`.
fn strip_common<'a, 'b>(a: &'a str, b: &'b str) -> (&'a str, &'b str) {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut prefix = a
        .char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .last()
        .map_or(0, |((i, c), _)| i + c.len_utf8());
    while let Some(c) = a[..prefix].chars().next_back().filter(|c| word(*c)) {
        prefix -= c.len_utf8();
    }
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let mut suffix = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .map(|(c, _)| c.len_utf8())
        .sum::<usize>();
    suffix = suffix.min(a.len()).min(b.len());
    while let Some(c) = a[a.len() - suffix..].chars().next().filter(|c| word(*c)) {
        suffix -= c.len_utf8();
    }
    (&a[..a.len() - suffix], &b[..b.len() - suffix])
}

fn shorten(s: &str) -> String {
    crate::text::cut(&s.replace('\n', "⏎"), 60).0
}

/// Where each edit of a rename from `old` to `new` (all against `text`)
/// put the new name in the text after, and where the old name stood
/// before — for reading both with the file's grammar. Edits out of range
/// are left out (`apply_edits` refuses them).
pub fn renamed_places(text: &str, edits: &[TextEdit], old: &str, new: &str) -> Vec<RenamedAt> {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .filter_map(|e| {
            Some((offset_of(text, e.range.start)?, offset_of(text, e.range.end)?, e.new_text.as_str()))
        })
        .filter(|(start, end, _)| start <= end)
        .collect();
    spans.sort_by_key(|s| (s.0, s.1));
    let mut grown: isize = 0;
    let mut places = Vec::new();
    for (start, end, new_text) in spans {
        let before = whole_word(&text[start..end], old).map(|i| start + i);
        if let Some(i) = whole_word(new_text, new) {
            let after = (start as isize + grown) as usize + i;
            places.push(RenamedAt { before, after });
        }
        grown += new_text.len() as isize - (end - start) as isize;
    }
    places
}

/// The first place `word` stands in `text` as a whole identifier (not a
/// part of a longer one), by byte offset.
pub fn whole_word(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        !text[..i].chars().next_back().is_some_and(is_word)
            && !text[i + word.len()..].chars().next().is_some_and(is_word)
    })
}

/// The identifier covering `pos` in `text` (letters, digits, `_`, `$`).
pub fn identifier_at(text: &str, pos: Position) -> Option<&str> {
    let at = offset_of(text, pos)?;
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let start = text[..at].char_indices().rev().take_while(|(_, c)| word(*c)).last().map_or(at, |(i, _)| i);
    let end = text[at..].char_indices().find(|(_, c)| !word(*c)).map_or(text.len(), |(i, _)| at + i);
    (end > start).then(|| &text[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Range;

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, text: &str) -> TextEdit {
        TextEdit { range: Range::new(Position::new(l1, c1), Position::new(l2, c2)), new_text: text.into() }
    }

    #[test]
    fn utf16_columns_map_to_bytes() {
        let text = "a = '😀'; b\nx";
        // 😀 is two UTF-16 units and four bytes.
        assert_eq!(offset_of(text, Position::new(0, 10)), Some(12));
        assert_eq!(offset_of(text, Position::new(1, 1)), Some(text.len()));
        assert_eq!(offset_of(text, Position::new(1, 2)), Some(text.len()), "past a line's end: its end");
        assert_eq!(offset_of("ab\r\ncd", Position::new(0, 7)), Some(2), "before a CRLF line's `\\r`");
        assert_eq!(offset_of(text, Position::new(0, 6)), None, "inside a surrogate pair");
        assert_eq!(offset_of(text, Position::new(5, 0)), None);
        assert_eq!(utf16_column("a = '😀'; b", 12), 10);
        assert_eq!(char_column("a = '😀'; b", 10), 10);
    }

    #[test]
    fn edits_apply_against_the_original_text() {
        let text = "foo(foo)\nfoo\n";
        let out = apply_edits(
            text,
            &[edit(2 - 1, 0, 1, 3, "bar"), edit(0, 4, 0, 7, "bar"), edit(0, 0, 0, 3, "bar")],
        )
        .unwrap();
        assert_eq!(out, "bar(bar)\nbar\n");
        assert!(matches!(
            apply_edits(text, &[edit(0, 0, 0, 5, "x"), edit(0, 4, 0, 6, "y")]),
            Err(EditError::Overlap(_))
        ));
        assert!(matches!(apply_edits(text, &[edit(9, 0, 9, 1, "x")]), Err(EditError::OutOfRange(_))));
    }

    #[test]
    fn edits_that_do_not_look_like_a_rename_are_refused() {
        let text = "def foo():\n    return 1\n\nfoo()\n";
        assert!(check_rename_edit(text, &edit(0, 4, 0, 7, "bar"), "foo", "bar").is_ok());
        let err = check_rename_edit(text, &edit(0, 0, 3, 5, "bar"), "foo", "bar").unwrap_err();
        assert!(
            err.to_string().contains("renaming `foo` to `bar` replaces `foo` with `bar` and nothing else"),
            "{err}"
        );
        // A whole-line edit (pylsp-rope) that only renames is fine.
        assert!(check_rename_edit(text, &edit(3, 0, 4, 0, "bar()\n"), "foo", "bar").is_ok());
        // Renaming the wrong name is not.
        assert!(check_rename_edit("total_area()\n", &edit(0, 0, 0, 10, "bar"), "area", "bar").is_err());
        // Nor writing anything but the new name.
        let err = check_rename_edit(text, &edit(0, 4, 0, 7, "qux_zz"), "foo", "bar").unwrap_err();
        assert!(err.to_string().contains("replaces `foo` with `qux_zz`"), "{err}");
        assert!(check_rename_edit(text, &edit(0, 4, 0, 7, "bar2"), "foo", "bar").is_err());
        assert!(check_rename_edit(text, &edit(0, 4, 0, 7, "bar; rm"), "foo", "bar").is_err());
        // The written-out forms of a shorthand property or an import specifier.
        let ts = "const o = { foo };\n";
        assert!(check_rename_edit(ts, &edit(0, 12, 0, 15, "foo: bar"), "foo", "bar").is_ok());
        assert!(check_rename_edit(ts, &edit(0, 15, 0, 15, ": bar"), "foo", "bar").is_ok());
        assert!(
            check_rename_edit("import { foo } from 'x';\n", &edit(0, 9, 0, 12, "foo as bar"), "foo", "bar")
                .is_ok()
        );
        assert_eq!(identifier_at("x = total_area(1)", Position::new(0, 8)), Some("total_area"));
    }
}
