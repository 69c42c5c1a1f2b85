//! A file's syntax tree, and where its syntax errors are: what the edits
//! that must not leave a syntax error (`renamed`, `declaration`'s edits by
//! symbol) read before and after.

use tree_sitter::{Parser, Tree};

use super::lang::Lang;

/// `text` parsed as `lang` (`None` when the grammar does not load).
pub fn parse(lang: Lang, text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    parser.parse(text, None)
}

/// The 1-based lines of the syntax errors in `text` (empty when it
/// parses): the grammar's, and for Python its indentation's, which the
/// grammar does not check ([`super::indentation`]).
pub fn error_lines(lang: Lang, text: &str) -> Vec<usize> {
    let mut lines = parse(lang, text).map(|tree| errors_in(&tree)).unwrap_or_default();
    if lang == Lang::PYTHON {
        lines.extend(super::indentation::errors(text));
        lines.sort_unstable();
        lines.dedup();
    }
    lines
}

/// The lines (1-based) of the syntax errors of a tree, in order.
pub fn errors_in(tree: &Tree) -> Vec<usize> {
    let mut lines = Vec::new();
    if !tree.root_node().has_error() {
        return lines;
    }
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            lines.push(node.start_position().row + 1);
        } else if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    lines
}
