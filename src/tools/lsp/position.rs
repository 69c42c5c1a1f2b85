//! `line` + `symbol` → an LSP position. Never a column: a model asked for a
//! column guesses, and a wrong guess lands on another symbol of the same
//! line — an answer that looks right and is about something else.

use lsp_types::Position;
use tether_actors::lsp::edits::utf16_column;

use crate::handler::ToolError;

/// Longest line quoted back in an error.
const MAX_QUOTED_LINE: usize = 200;

/// Where the symbol is.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolAt {
    /// The LSP position of its first character.
    pub position: Position,
    /// The LSP position just past it.
    pub end: Position,
    /// How many times it occurs on the line (the first is used).
    pub occurrences: usize,
    /// The line's text.
    pub line_text: String,
}

impl SymbolAt {
    /// A note for the result when the symbol was ambiguous on its line.
    pub fn note(&self, symbol: &str) -> Option<String> {
        (self.occurrences > 1).then(|| {
            format!(
                "note: `{symbol}` occurs {} times on line {}; the first occurrence was used",
                self.occurrences,
                self.position.line + 1
            )
        })
    }
}

fn quote(line: &str) -> String {
    let trimmed = line.trim_end();
    if trimmed.len() <= MAX_QUOTED_LINE {
        return trimmed.to_string();
    }
    let mut end = MAX_QUOTED_LINE;
    while !trimmed.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &trimmed[..end])
}

/// Finds `symbol` on 1-based `line` of `text` (the file `rel`).
pub fn locate(text: &str, rel: &str, line: u32, symbol: &str) -> Result<SymbolAt, ToolError> {
    if line == 0 {
        return Err(ToolError::new("argument `line`: lines are 1-based; the first line is 1"));
    }
    if symbol.is_empty() {
        return Err(ToolError::new(
            "argument `symbol`: empty; give the identifier as it appears on the line",
        ));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let count = if text.ends_with('\n') { lines.len() - 1 } else { lines.len() };
    let Some(line_text) = lines.get(line as usize - 1).filter(|_| line as usize <= count) else {
        return Err(ToolError::new(format!(
            "argument `line`: {line} is past the end of `{rel}`, which has {count} line{}",
            if count == 1 { "" } else { "s" }
        )));
    };
    let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
    let all: Vec<usize> = line_text.match_indices(symbol).map(|(i, _)| i).collect();
    if all.is_empty() {
        return Err(ToolError::new(format!(
            "`{symbol}` is not on line {line} of `{rel}`; that line is: {}. Check the line number, or read the file",
            quote(line_text)
        )));
    }
    // `area` on `total_area(s.area())` means the method, not the middle of
    // another name: whole-identifier occurrences come first.
    // By characters, not bytes: `e` in `größe = e + 1` is the second one.
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let whole: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| {
            let before = line_text[..i].chars().next_back();
            let after = line_text[i + symbol.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        })
        .collect();
    let (byte, occurrences) = match whole.first() {
        Some(&first) => (first, whole.len()),
        None => (all[0], all.len()),
    };
    let start = utf16_column(line_text, byte);
    let end = utf16_column(line_text, byte + symbol.len());
    Ok(SymbolAt {
        position: Position::new(line - 1, start),
        end: Position::new(line - 1, end),
        occurrences,
        line_text: line_text.to_string(),
    })
}

/// Finds again, in `now` (the text the server holds when the request
/// goes out), the symbol located at `at` in the text the call was
/// synced with: on the same line's text, the occurrence nearest the
/// line asked for. Returns the new place and a note saying where it
/// moved, or an error when that line is gone.
pub fn relocate(
    at: &SymbolAt,
    now: &str,
    rel: &str,
    line: u32,
    symbol: &str,
) -> Result<(SymbolAt, Option<String>), String> {
    let asked = line as usize - 1;
    let nearest = now
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .filter(|(_, l)| *l == at.line_text)
        .map(|(i, _)| i)
        .min_by_key(|i| i.abs_diff(asked));
    let Some(found) = nearest else {
        return Err(format!(
            "`{rel}` changed on disk while the call waited for the server, and line {line} (`{}`) is no longer in it; read the file and ask again with the line as it is now",
            quote(&at.line_text)
        ));
    };
    let moved = locate(now, rel, found as u32 + 1, symbol).map_err(|e| e.0)?;
    let note = (found != asked).then(|| {
        format!(
            "note: `{rel}` changed on disk while the call waited for the server; line {line} is now line {}, and the answer is about `{symbol}` there",
            found + 1
        )
    });
    Ok((moved, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_is_found_again_where_its_line_moved() {
        let before = "a = 1\ndef f(): pass\n";
        let at = locate(before, "a.py", 2, "f").unwrap();
        let (moved, note) = relocate(&at, "# new\n# lines\na = 1\ndef f(): pass\n", "a.py", 2, "f").unwrap();
        assert_eq!(moved.position, Position::new(3, 4));
        assert!(note.unwrap().contains("line 2 is now line 4"));
        let (same, note) = relocate(&at, before, "a.py", 2, "f").unwrap();
        assert_eq!((same.position, note), (at.position, None));
        let gone = relocate(&at, "a = 1\n", "a.py", 2, "f").unwrap_err();
        assert!(gone.contains("no longer in it"), "{gone}");
    }

    #[test]
    fn finds_the_first_occurrence_in_utf16_units() {
        let text = "s = '😀'; total = total + 1\n";
        let at = locate(text, "a.py", 1, "total").unwrap();
        assert_eq!(at.position, Position::new(0, 10));
        assert_eq!(at.occurrences, 2);
        assert!(at.note("total").unwrap().contains("2 times"));
    }

    #[test]
    fn whole_identifiers_win_over_substrings() {
        let at = locate("x = total_area(s.area())\n", "a.py", 1, "area").unwrap();
        assert_eq!(at.position, Position::new(0, 17));
        assert_eq!(at.occurrences, 1);
    }

    #[test]
    fn word_boundaries_are_characters_not_bytes() {
        let at = locate("größe = e + 1\n", "a.py", 1, "e").unwrap();
        assert_eq!(at.position, Position::new(0, 8), "the `e`, not the end of `größe`");
        assert_eq!(at.occurrences, 1);
    }

    #[test]
    fn bad_lines_and_missing_symbols_are_clear_errors() {
        let text = "a = 1\nb = 2\n";
        assert!(locate(text, "a.py", 0, "a").unwrap_err().0.contains("1-based"));
        assert!(locate(text, "a.py", 3, "a").unwrap_err().0.contains("has 2 lines"));
        let err = locate(text, "a.py", 2, "zzz").unwrap_err().0;
        assert!(err.contains("that line is: b = 2"), "{err}");
    }
}
