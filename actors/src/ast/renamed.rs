//! What a rename would do to a file, read with the file's grammar: a new
//! name the grammar does not read as a name where the old one stood (a
//! keyword such as `class`, a literal such as Python's `None`), and
//! syntax errors the renamed text has that the file did not.
//!
//! The grammar decides, not a keyword list: a contextual keyword that is
//! also a name (`type` in TypeScript, `match` in Python) reads as the same
//! kind of node as the old name and passes.

use tree_sitter::{Node, Tree};

use super::syntax::{errors_in, parse};

use super::lang::Lang;

/// One renamed place: the old name's byte offset in the text before (none
/// where the edit only inserts the new name beside it, as a shorthand
/// property `{ a }` → `{ a: b }`), and the new name's in the text after.
#[derive(Debug, Clone, Copy)]
pub struct RenamedAt {
    /// Where the old name started, before.
    pub before: Option<usize>,
    /// Where the new name starts, after.
    pub after: usize,
}

/// Why the renamed text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Breaks {
    /// The grammar reads the new name as something other than a name
    /// where the old one stood.
    #[error(
        "`{new}` is not a name in {lang} where `{old}` stood: at line {line} its grammar reads `{new}` as {read_as}, where it read `{old}` as `{was}`"
    )]
    NotAName {
        /// The language's id.
        lang: String,
        /// The old name.
        old: String,
        /// The new name.
        new: String,
        /// The 1-based line, after.
        line: usize,
        /// What the old name was read as.
        was: String,
        /// What the new name is read as (a keyword, or a node kind).
        read_as: String,
    },
    /// The text after has a syntax error the text before did not.
    #[error("the renamed text would have a syntax error at line {line}, which the file does not have now")]
    Syntax {
        /// The 1-based line of the first new error.
        line: usize,
    },
}

/// The smallest node spanning `len` bytes from `at`.
fn node_at(tree: &Tree, at: usize, len: usize) -> Option<Node<'_>> {
    tree.root_node().descendant_for_byte_range(at, at + len)
}

/// Checks a file's text renamed from `old` to `new` at `places`: every
/// new name is read as the same kind of node as the old one was, and no
/// syntax error is there that the text before did not have. A language
/// whose grammar does not load passes (nothing can be told).
pub fn check(
    lang: Lang,
    before: &str,
    after: &str,
    old: &str,
    new: &str,
    places: &[RenamedAt],
) -> Result<(), Box<Breaks>> {
    let (Some(tree_before), Some(tree_after)) = (parse(lang, before), parse(lang, after)) else {
        return Ok(());
    };
    for place in places {
        let Some(at_before) = place.before else { continue };
        let (Some(was), Some(now)) =
            (node_at(&tree_before, at_before, old.len()), node_at(&tree_after, place.after, new.len()))
        else {
            continue;
        };
        // Only where the old name was one token of its own; the new one
        // must be that too, and of the same kind.
        if was.byte_range() != (at_before..at_before + old.len()) {
            continue;
        }
        let same = now.byte_range() == (place.after..place.after + new.len()) && now.kind() == was.kind();
        if !same {
            let read_as = if now.byte_range() != (place.after..place.after + new.len()) {
                format!("part of `{}`", now.kind())
            } else if now.is_named() {
                format!("`{}`", now.kind())
            } else {
                "a keyword".to_string()
            };
            return Err(Box::new(Breaks::NotAName {
                lang: lang.id().to_string(),
                old: old.to_string(),
                new: new.to_string(),
                line: now.start_position().row + 1,
                was: was.kind().to_string(),
                read_as,
            }));
        }
    }
    let (errors_before, errors_after) = (errors_in(&tree_before), errors_in(&tree_after));
    if errors_after.len() > errors_before.len() {
        // The first error line the text before had no counterpart for.
        let line = errors_after
            .iter()
            .enumerate()
            .find(|(i, l)| errors_before.get(*i) != Some(l))
            .map_or(errors_after[0], |(_, l)| *l);
        return Err(Box::new(Breaks::Syntax { line }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamed(lang: Lang, before: &str, old: &str, new: &str) -> Result<(), Box<Breaks>> {
        let mut places = Vec::new();
        let mut after = String::new();
        let mut cursor = 0;
        for (i, _) in before.match_indices(old) {
            after.push_str(&before[cursor..i]);
            places.push(RenamedAt { before: Some(i), after: after.len() });
            after.push_str(new);
            cursor = i + old.len();
        }
        after.push_str(&before[cursor..]);
        check(lang, before, &after, old, new, &places)
    }

    #[test]
    fn a_keyword_or_a_literal_is_not_a_name() {
        let py = "class Table:\n    def split(self, x):\n        return x\n\nTable().split(1)\n";
        let class = renamed(Lang::PYTHON, py, "split", "class").unwrap_err();
        assert!(matches!(*class, Breaks::NotAName { ref read_as, .. } if read_as == "a keyword"), "{class}");
        let none = renamed(Lang::PYTHON, py, "split", "None").unwrap_err();
        assert!(none.to_string().contains("`None` is not a name in python"), "{none}");
        assert_eq!(renamed(Lang::PYTHON, py, "split", "divide"), Ok(()));
        assert_eq!(renamed(Lang::PYTHON, py, "split", "match"), Ok(()), "a soft keyword is a name");
        let ts = "function mergeMap(a: number) { return a; }\nmergeMap(1);\n";
        assert_eq!(renamed(Lang::TYPESCRIPT, ts, "mergeMap", "type"), Ok(()));
        assert!(renamed(Lang::TYPESCRIPT, ts, "mergeMap", "function").is_err());
    }

    #[test]
    fn only_errors_the_file_did_not_have_are_refused() {
        let broken = "def f(:\n    pass\nx = 1\n";
        assert_eq!(renamed(Lang::PYTHON, broken, "x", "y"), Ok(()), "the error was there before");
        let after = "def f():\n    return (\n";
        let before = "def f():\n    return 1\n";
        let places = [RenamedAt { before: None, after: 0 }];
        let broken = check(Lang::PYTHON, before, after, "1", "(", &places).unwrap_err();
        assert!(matches!(*broken, Breaks::Syntax { .. }), "{broken}");
    }
}
