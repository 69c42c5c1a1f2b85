//! A symbol's declaration as the file's grammar reads it: where it begins
//! (its decorators or attributes, an `export`), where it ends, its body,
//! the doc comment attached above it, its indentation, and the blank
//! lines that separate it from its neighbours. Edits by symbol
//! ([`super::splice`]) take their extents from here, never from a
//! language server's range: a server's range may leave out a decorator,
//! an attribute or a doc comment (or, for pyright's hierarchy items, be
//! the name alone).
//!
//! A declaration is the nearest node above a name that holds it as its
//! `name` field and whose kind reads as one (`*_definition`,
//! `*_declaration`, `*_declarator`, `*_item`, `*_signature`, `*_spec`):
//! a keyword argument's `name` is no declaration. A Python assignment to
//! a plain name at module or class level (`TIMEOUT = 5`) declares it too.

use tree_sitter::{Node, Parser, Tree};

use super::lang::Lang;

/// Node kinds (suffixes) that declare what their `name` field names.
const DECLARING: &[&str] = &["definition", "declaration", "declarator", "item", "signature", "spec"];
/// Nodes that wrap a declaration whole, and are part of it: Python's
/// decorators, an `export`, a `const` holding one declarator.
const WRAPPERS: &[&str] = &[
    "decorated_definition",
    "export_statement",
    "lexical_declaration",
    "variable_declaration",
    "ambient_declaration",
    "expression_statement",
];
/// Siblings just above a declaration that belong to it.
const ATTACHED: &[&str] = &["decorator", "attribute_item", "attribute", "annotation"];

/// One declaration, in byte offsets of the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// Its name.
    pub name: String,
    /// The grammar's kind of the declaring node (`function_definition`).
    pub kind: String,
    /// Where its name starts.
    pub name_at: usize,
    /// Where it starts: its first decorator, attribute or `export`.
    pub start: usize,
    /// Where it ends.
    pub end: usize,
    /// Where the comment attached just above it starts (no blank line
    /// between), if there is one.
    pub doc: Option<usize>,
    /// Its body (a block, a class body, an arrow function's expression).
    pub body: Option<(usize, usize)>,
    /// The names of the declarations it sits in, outermost first.
    pub containers: Vec<String>,
    /// The whitespace before `start` on its line (empty when code
    /// precedes it there).
    pub indent: String,
    /// Blank lines between it and the declaration before it in the same
    /// container, and the one after (`None` where there is none).
    pub gap_before: Option<usize>,
    /// See `gap_before`.
    pub gap_after: Option<usize>,
}

/// Parses `text` with `lang`'s grammar.
pub fn parse(lang: Lang, text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&lang.grammar()).ok()?;
    parser.parse(text, None)
}

/// The 1-based lines of the syntax errors in `text` (empty when it parses).
pub fn error_lines(lang: Lang, text: &str) -> Vec<usize> {
    let Some(tree) = parse(lang, text) else { return Vec::new() };
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

/// The node naming what `node` declares, if it declares anything.
fn name_node<'t>(node: &Node<'t>) -> Option<Node<'t>> {
    let kind = node.kind();
    if DECLARING.iter().any(|s| kind.ends_with(s)) {
        return node.child_by_field_name("name");
    }
    // Python: `NAME = value` at module or class level.
    if kind == "assignment" {
        let left = node.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
        let statement = node.parent().filter(|p| p.kind() == "expression_statement")?;
        let scope = statement.parent()?;
        let at_top = scope.kind() == "module"
            || (scope.kind() == "block" && scope.parent().is_some_and(|c| c.kind() == "class_definition"));
        return at_top.then_some(left);
    }
    None
}

fn declares(node: &Node<'_>) -> bool {
    name_node(node).is_some()
}

/// Whether `node` declares the name node `name`.
fn declares_name(node: &Node<'_>, name: &Node<'_>) -> bool {
    name_node(node).is_some_and(|n| n.byte_range() == name.byte_range())
}

fn name_of<'t>(node: &Node<'t>, text: &'t str) -> &'t str {
    name_node(node).map(|n| &text[n.byte_range()]).unwrap_or("")
}

/// Every declaration of `text`, in order.
pub fn all(lang: Lang, text: &str) -> Vec<Declaration> {
    let Some(tree) = parse(lang, text) else { return Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if declares(&node)
            && let Some(d) = read(&node, text)
        {
            out.push(d);
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The declaration whose name starts at byte `at`, or what stands there.
pub fn named_at(lang: Lang, text: &str, at: usize) -> Result<Declaration, String> {
    let tree = parse(lang, text).ok_or_else(|| format!("the {} grammar did not load", lang.id()))?;
    let leaf = tree
        .root_node()
        .descendant_for_byte_range(at, at)
        .ok_or_else(|| format!("nothing is at byte {at}"))?;
    let mut node = Some(leaf);
    while let Some(n) = node {
        if let Some(decl) = n.parent().filter(|p| declares_name(p, &n)) {
            return read(&decl, text).ok_or_else(|| "its declaration could not be read".to_string());
        }
        // The name may be a node below the `name` field (a qualified name).
        if n.start_byte() != leaf.start_byte() {
            break;
        }
        node = n.parent();
    }
    let what = leaf.parent().map(|p| p.kind()).unwrap_or(leaf.kind());
    Err(format!(
        "`{}` there is not a declaration's name (the grammar reads it as part of a `{what}`)",
        &text[leaf.byte_range()]
    ))
}

/// The declaration `node` as a whole: wrappers, attached siblings, doc
/// comment, body, neighbours.
fn read(node: &Node<'_>, text: &str) -> Option<Declaration> {
    let name = name_node(node)?;
    let mut whole = *node;
    while let Some(parent) = whole.parent().filter(|p| WRAPPERS.contains(&p.kind())) {
        // A `const` of several declarators is not one declaration.
        let mut cursor = parent.walk();
        let others = parent
            .named_children(&mut cursor)
            .filter(|c| c.id() != whole.id() && c.kind().ends_with("declarator"))
            .count();
        if others > 0 {
            break;
        }
        whole = parent;
    }
    let mut start = whole.start_byte();
    let mut above = whole.prev_named_sibling();
    while let Some(prev) = above.filter(|p| ATTACHED.contains(&p.kind())) {
        start = prev.start_byte();
        above = prev.prev_named_sibling();
    }
    let mut doc = None;
    let mut top_row = row_of(text, start);
    while let Some(prev) =
        above.filter(|p| p.kind().contains("comment") && p.end_position().row + 1 == top_row)
    {
        // A comment ending a line of code belongs to that code.
        if !text[line_start(text, prev.start_byte())..prev.start_byte()].trim().is_empty() {
            break;
        }
        doc = Some(prev.start_byte());
        top_row = prev.start_position().row;
        above = prev.prev_named_sibling();
    }
    let body = node
        .child_by_field_name("body")
        .or_else(|| node.child_by_field_name("value").and_then(|v| v.child_by_field_name("body")));
    let before_start = &text[line_start(text, start)..start];
    let indent = if before_start.trim().is_empty() { before_start.to_string() } else { String::new() };
    let first_row = row_of(text, doc.unwrap_or(start));
    let gap_before = above.map(|p| first_row.saturating_sub(p.end_position().row + 1));
    // The next declaration starts at its own doc comment or decorator.
    let gap_after = whole
        .next_named_sibling()
        .map(|next| next.start_position().row.saturating_sub(whole.end_position().row + 1));
    let mut containers = Vec::new();
    let mut up = whole.parent();
    while let Some(p) = up {
        if declares(&p) {
            containers.push(name_of(&p, text).to_string());
        }
        up = p.parent();
    }
    containers.reverse();
    Some(Declaration {
        name: text[name.byte_range()].to_string(),
        kind: node.kind().to_string(),
        name_at: name.start_byte(),
        start,
        end: whole.end_byte(),
        doc,
        body: body.map(|b| (b.start_byte(), b.end_byte())),
        containers,
        indent,
        gap_before,
        gap_after,
    })
}

/// The byte where the line holding `at` starts.
pub fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The 0-based row of byte `at`.
pub fn row_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at].iter().filter(|b| **b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(all: &'a [Declaration], name: &str) -> &'a Declaration {
        all.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("{name} in {all:?}"))
    }

    #[test]
    fn a_decorated_python_method_starts_at_its_decorator_and_knows_its_class() {
        let text = "class A:\n    x = 1\n\n    # Says hi.\n    @staticmethod\n    def hi():\n        return 1\n\n    def bye(self):\n        pass\n";
        let all = all(Lang::PYTHON, text);
        let hi = find(&all, "hi");
        assert_eq!(&text[hi.start..hi.end], "@staticmethod\n    def hi():\n        return 1");
        assert_eq!(&text[hi.doc.unwrap()..hi.start], "# Says hi.\n    ");
        assert_eq!(hi.containers, vec!["A".to_string()]);
        assert_eq!(hi.indent, "    ");
        assert_eq!((hi.gap_before, hi.gap_after), (Some(1), Some(1)));
        let (b0, b1) = hi.body.unwrap();
        assert_eq!(&text[b0..b1], "return 1");
        let x = find(&all, "x");
        assert_eq!(&text[x.start..x.end], "x = 1");
        assert_eq!(x.body, None);
    }

    #[test]
    fn an_exported_typescript_function_and_a_const_arrow_include_their_export() {
        let text = "/** Doc. */\nexport function f(a: number): number {\n  return a;\n}\nexport const g = (x: number) => x + 1;\nf(g(1));\n";
        let all = all(Lang::TYPESCRIPT, text);
        let f = find(&all, "f");
        assert!(text[f.start..f.end].starts_with("export function f"));
        assert_eq!(&text[f.doc.unwrap()..f.start], "/** Doc. */\n");
        let g = find(&all, "g");
        assert_eq!(&text[g.start..g.end], "export const g = (x: number) => x + 1;");
        let (b0, b1) = g.body.unwrap();
        assert_eq!(&text[b0..b1], "x + 1");
        let call = text.rfind("f(g").unwrap();
        let err = named_at(Lang::TYPESCRIPT, text, call).unwrap_err();
        assert!(err.contains("not a declaration's name"), "{err}");
        assert_eq!(named_at(Lang::TYPESCRIPT, text, f.name_at).unwrap().name, "f");
    }
}
