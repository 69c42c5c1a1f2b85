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
    /// How many times it occurs on the line.
    pub occurrences: usize,
    /// Which of them this is, 1-based.
    pub occurrence: usize,
    /// Whether the caller picked it (`occurrence`), rather than the first.
    pub picked: bool,
    /// Its 1-based character column.
    pub column: usize,
    /// The line's text.
    pub line_text: String,
    /// The whole identifier the occurrence stands in: the symbol itself,
    /// or the longer name holding it when no whole identifier on the line
    /// equals it (`ObservableInput` for `Observable`).
    pub identifier: String,
    /// Whether `symbol` is only part of [`Self::identifier`].
    pub partial: bool,
}

impl SymbolAt {
    /// The name the answer is about: what was asked, or the longer
    /// identifier that holds it — never the text asked when the server was
    /// asked about something else.
    pub fn name<'a>(&'a self, symbol: &'a str) -> &'a str {
        if self.partial { &self.identifier } else { symbol }
    }

    /// When `symbol` is only part of a longer name on its line: a note
    /// saying which identifier the answer is about.
    pub fn held_note(&self, symbol: &str) -> Option<String> {
        self.partial.then(|| {
            format!(
                "note: line {} has no identifier `{symbol}`; the answer is about `{}` (the identifier on line {0} holding `{symbol}`)",
                self.position.line + 1,
                self.identifier
            )
        })
    }

    /// For writes: `symbol` must be a whole identifier on its line, so
    /// that what is changed is what was named. Otherwise the error names
    /// the identifiers that are there.
    pub fn require_whole(&self, symbol: &str, rel: &str) -> Result<(), String> {
        if !self.partial {
            return Ok(());
        }
        let line = self.position.line + 1;
        let names: Vec<String> = identifiers(&self.line_text).into_iter().map(|n| format!("`{n}`")).collect();
        Err(format!(
            "argument `symbol`: `{symbol}` is not a whole identifier on line {line} of `{rel}` (it is part of `{}`), and a write must name exactly what it changes; the identifiers on that line: {}",
            self.identifier,
            names.join(", ")
        ))
    }
    /// A note for the result when the symbol was ambiguous on its line:
    /// which occurrence the answer is about, and how to ask for another.
    pub fn note(&self, symbol: &str) -> Option<String> {
        let line = self.position.line + 1;
        let (n, column) = (self.occurrences, self.column);
        (n > 1).then(|| match self.picked {
            true => format!("note: the answer is about occurrence {} of {n} of `{symbol}` on line {line} (column {column})", self.occurrence),
            false => format!(
                "note: `{symbol}` occurs {n} times on line {line}; the answer is about the first (column {column}); pass `occurrence` (1 to {n}) for another"
            ),
        })
    }
}

fn quote(line: &str) -> String {
    tether_actors::text::cut(line.trim_end(), MAX_QUOTED_LINE).0
}

/// Finds `symbol` on 1-based `line` of `text` (the file `rel`): its
/// `occurrence` (1-based) on the line, or the first.
pub fn locate(
    text: &str,
    rel: &str,
    line: u32,
    symbol: &str,
    occurrence: Option<usize>,
) -> Result<SymbolAt, ToolError> {
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
    let whole: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| {
            let before = line_text[..i].chars().next_back();
            let after = line_text[i + symbol.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
        .collect();
    let candidates = if whole.is_empty() { &all } else { &whole };
    let index = match occurrence {
        None => 0,
        Some(n) if (1..=candidates.len()).contains(&n) => n - 1,
        Some(n) => {
            return Err(ToolError::new(format!(
                "argument `occurrence`: {n}, but `{symbol}` occurs {} time{} on line {line} of `{rel}`; give 1 to {0}",
                candidates.len(),
                if candidates.len() == 1 { "" } else { "s" }
            )));
        }
    };
    let byte = candidates[index];
    let from = line_text[..byte]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_word(c))
        .last()
        .map_or(byte, |(i, _)| i);
    let to = byte
        + symbol.len()
        + line_text[byte + symbol.len()..]
            .chars()
            .take_while(|&c| is_word(c))
            .map(char::len_utf8)
            .sum::<usize>();
    let start = utf16_column(line_text, byte);
    let end = utf16_column(line_text, byte + symbol.len());
    Ok(SymbolAt {
        position: Position::new(line - 1, start),
        end: Position::new(line - 1, end),
        occurrences: candidates.len(),
        occurrence: index + 1,
        picked: occurrence.is_some(),
        column: line_text[..byte].chars().count() + 1,
        line_text: line_text.to_string(),
        identifier: line_text[from..to].to_string(),
        partial: whole.is_empty(),
    })
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifiers on a line, in order, each once (runs of letters,
/// digits, `_` and `$` not starting with a digit).
pub fn identifiers(line: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for name in line.split(|c: char| !is_word(c)) {
        if name.chars().next().is_some_and(|c| !c.is_ascii_digit()) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
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
    let picked = at.picked.then_some(at.occurrence);
    let moved = locate(now, rel, found as u32 + 1, symbol, picked).map_err(|e| e.0)?;
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
    fn a_whole_identifier_is_preferred_and_a_part_names_the_identifier_holding_it() {
        let text = "import { ObservableInput, Observable } from '../types';\nimport { ObservableInput } from '../types';\n";
        let whole = locate(text, "a.ts", 1, "Observable", None).unwrap();
        assert_eq!((whole.column, whole.partial, whole.name("Observable")), (27, false, "Observable"));
        assert_eq!(whole.held_note("Observable"), None);
        assert!(whole.require_whole("Observable", "a.ts").is_ok());
        let part = locate(text, "a.ts", 2, "Observable", None).unwrap();
        assert_eq!((part.partial, part.name("Observable")), (true, "ObservableInput"));
        let note = part.held_note("Observable").unwrap();
        assert!(note.contains("`ObservableInput` (the identifier on line 2 holding `Observable`)"), "{note}");
        let refused = part.require_whole("Observable", "a.ts").unwrap_err();
        assert!(refused.contains("part of `ObservableInput`"), "{refused}");
        assert!(refused.contains("`import`, `ObservableInput`, `from`, `types`"), "{refused}");
        let tabl = locate("t = Table(x)\n", "a.py", 1, "Tabl", None).unwrap();
        assert_eq!(tabl.name("Tabl"), "Table", "a prefix answers about the identifier it begins");
        let mid = locate("größe_total = 1\n", "a.py", 1, "e_to", None).unwrap();
        assert_eq!(mid.identifier, "größe_total");
    }

    #[test]
    fn a_symbol_is_found_again_where_its_line_moved() {
        let before = "a = 1\ndef f(): pass\n";
        let at = locate(before, "a.py", 2, "f", None).unwrap();
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
        let at = locate(text, "a.py", 1, "total", None).unwrap();
        assert_eq!(at.position, Position::new(0, 10));
        assert_eq!(at.occurrences, 2);
        assert!(at.note("total").unwrap().contains("2 times"));
        assert_eq!(at.column, 10, "a character column: the emoji is one, not two UTF-16 units");
    }

    #[test]
    fn occurrence_picks_another_and_is_kept_where_the_line_moved() {
        let text = "x = f(x) + x\n";
        let at = locate(text, "a.py", 1, "x", Some(3)).unwrap();
        assert_eq!((at.position, at.occurrence, at.occurrences), (Position::new(0, 11), 3, 3));
        assert!(at.note("x").unwrap().contains("occurrence 3 of 3"), "{:?}", at.note("x"));
        let first = locate(text, "a.py", 1, "x", None).unwrap();
        assert!(first.note("x").unwrap().contains("pass `occurrence` (1 to 3)"));
        let (moved, _) = relocate(&at, "# new\nx = f(x) + x\n", "a.py", 1, "x").unwrap();
        assert_eq!(moved.position, Position::new(1, 11), "still the third");
        let err = locate(text, "a.py", 1, "x", Some(4)).unwrap_err().0;
        assert!(err.contains("argument `occurrence`: 4") && err.contains("give 1 to 3"), "{err}");
    }

    #[test]
    fn whole_identifiers_win_over_substrings() {
        let at = locate("x = total_area(s.area())\n", "a.py", 1, "area", None).unwrap();
        assert_eq!(at.position, Position::new(0, 17));
        assert_eq!(at.occurrences, 1);
    }

    #[test]
    fn word_boundaries_are_characters_not_bytes() {
        let at = locate("größe = e + 1\n", "a.py", 1, "e", None).unwrap();
        assert_eq!(at.position, Position::new(0, 8), "the `e`, not the end of `größe`");
        assert_eq!(at.occurrences, 1);
    }

    #[test]
    fn bad_lines_and_missing_symbols_are_clear_errors() {
        let text = "a = 1\nb = 2\n";
        assert!(locate(text, "a.py", 0, "a", None).unwrap_err().0.contains("1-based"));
        assert!(locate(text, "a.py", 3, "a", None).unwrap_err().0.contains("has 2 lines"));
        let err = locate(text, "a.py", 2, "zzz", None).unwrap_err().0;
        assert!(err.contains("that line is: b = 2"), "{err}");
    }
}
