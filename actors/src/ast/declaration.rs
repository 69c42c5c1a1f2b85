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
//! a plain name at module or class level (`TIMEOUT = 5`) declares it too;
//! C and C++ name a function through its declarator (`int *Foo::bar()`:
//! `bar`, in `Foo`); a `struct`/`class`/`enum` specifier declares only with
//! a body. A method's container is its class, or the type of a Rust `impl`
//! or of a Go method's receiver.

use tree_sitter::Node;

use super::lang::Lang;
use super::syntax::parse;

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
    "template_declaration",
    "field_declaration",
];
/// Where C and C++ declarators end in a name.
const DECLARATOR_NAMES: &[&str] =
    &["identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name"];
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
    /// The parts it is written in, when it is a property or an overload
    /// group ([`super::parts`]); `None` for a declaration of one part.
    pub group: Option<Group>,
}

impl Declaration {
    /// Where each of its parts' names starts (its own name alone, for a
    /// declaration of one part).
    pub fn names_at(&self) -> Vec<usize> {
        match &self.group {
            Some(g) => g.parts.iter().map(|p| p.name_at).collect(),
            None => vec![self.name_at],
        }
    }
}

/// A declaration written in several parts ([`super::parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub kind: GroupKind,
    /// In the file's order.
    pub parts: Vec<Part>,
}

/// Which kind of group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// A getter with its setter or deleter: its body is the getter's.
    Property,
    /// Overload signatures, with the implementation if there is one: its
    /// body is the implementation's.
    Overloads,
}

/// One part of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub role: Role,
    /// Where its name starts.
    pub name_at: usize,
    /// Its own body.
    pub body: Option<(usize, usize)>,
}

/// What a part is in its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A property's getter.
    Getter,
    /// A property's setter.
    Setter,
    /// A property's deleter.
    Deleter,
    /// An overload signature.
    Signature,
    /// An overload group's implementation (or any plain definition that
    /// may end one).
    Implementation,
}

/// What names a declaration: the name node, where the name as written
/// starts (a C++ qualified name's first qualifier), and that qualifier.
struct Naming<'t> {
    name: Node<'t>,
    from: usize,
    qualifier: Option<Node<'t>>,
}

/// How `node` names what it declares, if it declares anything.
fn naming<'t>(node: &Node<'t>) -> Option<Naming<'t>> {
    let plain = |name: Node<'t>| Naming { from: name.start_byte(), name, qualifier: None };
    let kind = node.kind();
    if DECLARING.iter().any(|s| kind.ends_with(s))
        && let Some(name) = node.child_by_field_name("name")
    {
        return Some(plain(name));
    }
    // C and C++: `int *f(void)`, `void Foo::bar() {}`, a prototype.
    if matches!(kind, "function_definition" | "declaration" | "field_declaration") {
        let mut d = node.child_by_field_name("declarator")?;
        while let Some(inner) = d.child_by_field_name("declarator") {
            d = inner;
        }
        if d.kind() == "qualified_identifier" {
            let mut name = d.child_by_field_name("name")?;
            while let Some(inner) =
                name.child_by_field_name("name").filter(|_| name.kind() == "qualified_identifier")
            {
                name = inner;
            }
            return Some(Naming { name, from: d.start_byte(), qualifier: d.child_by_field_name("scope") });
        }
        // A function is declared through a function declarator; a
        // prototype-less `int x;` declares a variable.
        return DECLARATOR_NAMES.contains(&d.kind()).then(|| plain(d));
    }
    if kind.ends_with("_specifier") && node.child_by_field_name("body").is_some() {
        return node.child_by_field_name("name").map(plain);
    }
    // JSON: a key declares its member (`"include": [...]`), named by the
    // key's text inside its quotes — as a JSON server's document symbols
    // list it.
    if kind == "pair" && node.parent().is_some_and(|p| p.kind() == "object") {
        let key = node.child_by_field_name("key")?;
        let mut cursor = key.walk();
        let content = key.named_children(&mut cursor).find(|c| c.kind() == "string_content");
        // A server's position may be the opening quote: the name as written starts there.
        return content.map(|name| Naming { name, from: key.start_byte(), qualifier: None });
    }
    // Python: `NAME = value` at module or class level.
    if kind == "assignment" {
        let left = node.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
        let statement = node.parent().filter(|p| p.kind() == "expression_statement")?;
        let scope = statement.parent()?;
        let at_top = scope.kind() == "module"
            || (scope.kind() == "block" && scope.parent().is_some_and(|c| c.kind() == "class_definition"));
        return at_top.then(|| plain(left));
    }
    None
}

fn name_node<'t>(node: &Node<'t>) -> Option<Node<'t>> {
    naming(node).map(|n| n.name)
}

fn declares(node: &Node<'_>) -> bool {
    naming(node).is_some()
}

/// The name a container goes by: a declaration's, a Rust `impl`'s type
/// (`impl<T> Display for Stack<T>`: `Stack`).
fn container_name(node: &Node<'_>, text: &str) -> Option<String> {
    if node.kind() == "impl_item" {
        let ty = node.child_by_field_name("type")?;
        let base = ty.child_by_field_name("type").unwrap_or(ty);
        return Some(text[base.byte_range()].to_string());
    }
    name_node(node).map(|n| text[n.byte_range()].to_string())
}

/// A Go method's receiver type (`func (s *Stack) Push()`: `Stack`).
fn receiver_type(node: &Node<'_>, text: &str) -> Option<String> {
    let receiver = node.child_by_field_name("receiver")?;
    let mut stack = vec![receiver];
    while let Some(n) = stack.pop() {
        if n.kind() == "type_identifier" {
            return Some(text[n.byte_range()].to_string());
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    None
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

/// Every declaration of `text`, in order, a property or an overload
/// group as one ([`super::parts`]): what an edit by name may take.
pub fn whole(lang: Lang, text: &str) -> Vec<Declaration> {
    super::parts::grouped(lang, text, all(lang, text))
}

/// The declaration whose name is at byte `at`, or what stands there.
pub fn named_at(lang: Lang, text: &str, at: usize) -> Result<Declaration, String> {
    let tree = parse(lang, text).ok_or_else(|| format!("the {} grammar did not load", lang.id()))?;
    let leaf = tree
        .root_node()
        .descendant_for_byte_range(at, at)
        .ok_or_else(|| format!("nothing is at byte {at}"))?;
    // The first declaration above whose name, as written, holds `at`; an
    // outer one's name never does.
    let mut node = leaf.parent();
    while let Some(n) = node {
        if let Some(naming) = naming(&n)
            && (naming.from..=naming.name.end_byte()).contains(&at)
        {
            return read(&n, text).ok_or_else(|| "its declaration could not be read".to_string());
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
    let naming = naming(node)?;
    let name = naming.name;
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
    // A line comment may hold its line's end (Rust's does): it ends on
    // the row before.
    let last_row = |n: &Node<'_>| {
        let end = n.end_position();
        if end.column == 0 && end.row > n.start_position().row { end.row - 1 } else { end.row }
    };
    while let Some(prev) = above.filter(|p| p.kind().contains("comment") && last_row(p) + 1 == top_row) {
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
    let gap_before = above.map(|p| first_row.saturating_sub(last_row(&p) + 1));
    // The next declaration starts at its own doc comment or decorator.
    let gap_after = whole
        .next_named_sibling()
        .map(|next| next.start_position().row.saturating_sub(whole.end_position().row + 1));
    let mut containers = Vec::new();
    if let Some(scope) = naming.qualifier {
        let scopes: Vec<&str> = text[scope.byte_range()].split("::").collect();
        containers.extend(scopes.into_iter().rev().map(str::to_string));
    }
    if let Some(receiver) = receiver_type(node, text) {
        containers.push(receiver);
    }
    let mut up = whole.parent();
    while let Some(p) = up {
        if let Some(name) = container_name(&p, text).filter(|_| p.id() != node.id()) {
            containers.push(name);
        }
        up = p.parent();
    }
    containers.reverse();
    // A `;` closing it on its line is its own (`struct S { … };`).
    let mut end = whole.end_byte();
    if let Some(semi) =
        whole.next_sibling().filter(|n| n.kind() == ";" && !text[end..n.start_byte()].contains('\n'))
    {
        end = semi.end_byte();
    }
    Some(Declaration {
        name: text[name.byte_range()].to_string(),
        kind: node.kind().to_string(),
        name_at: name.start_byte(),
        start,
        end,
        doc,
        body: body.map(|b| (b.start_byte(), b.end_byte())),
        containers,
        indent,
        gap_before,
        gap_after,
        group: None,
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

    #[test]
    fn rust_methods_sit_in_their_impls_type_with_their_attributes_and_docs() {
        let text = "struct Stack<T> {\n    items: Vec<T>,\n}\n\nimpl<T> Stack<T> {\n    /// Pushes.\n    #[inline]\n    pub fn push(&mut self, t: T) {\n        self.items.push(t);\n    }\n}\n";
        let all = all(Lang::RUST, text);
        let push = find(&all, "push");
        assert_eq!(push.containers, vec!["Stack".to_string()]);
        assert!(
            text[push.start..push.end].starts_with("#[inline]\n    pub fn push"),
            "{:?}",
            &text[push.start..push.end]
        );
        assert_eq!(&text[push.doc.unwrap()..push.start], "/// Pushes.\n    ");
    }

    #[test]
    fn go_methods_sit_in_their_receivers_type() {
        let text = "package p\n\ntype Stack struct {\n\titems []int\n}\n\n// Push pushes.\nfunc (s *Stack) Push(v int) {\n\ts.items = append(s.items, v)\n}\n";
        let all = all(Lang::GO, text);
        let push = find(&all, "Push");
        assert_eq!(push.containers, vec!["Stack".to_string()]);
        assert_eq!(&text[push.doc.unwrap()..push.start], "// Push pushes.\n");
        assert!(find(&all, "Stack").body.is_none());
    }

    #[test]
    fn c_and_cpp_functions_are_named_through_their_declarators() {
        let text =
            "struct point {\n  int x;\n};\n\nstatic int *make(int n) {\n  return 0;\n}\n\nint proto(void);\n";
        let all = all(Lang::C, text);
        let make = find(&all, "make");
        assert!(text[make.start..make.end].starts_with("static int *make(int n) {"));
        assert_eq!(&text[make.body.unwrap().0..make.body.unwrap().1], "{\n  return 0;\n}");
        let point = find(&all, "point");
        assert_eq!(&text[point.start..point.end], "struct point {\n  int x;\n};", "its `;` is its own");
        assert!(find(&all, "proto").body.is_none());
        let cpp = "namespace shop {\nclass Cart {\n public:\n  int total() const;\n};\n\nint Cart::total() const {\n  return 1;\n}\n}\n";
        let decls = super::all(Lang::CPP, cpp);
        let defs: Vec<&Declaration> = decls.iter().filter(|d| d.name == "total").collect();
        assert_eq!(defs.len(), 2, "{decls:?}");
        let out_of_line = defs.iter().find(|d| d.body.is_some()).unwrap();
        assert_eq!(out_of_line.containers, vec!["shop".to_string(), "Cart".to_string()]);
        let at = cpp.find("Cart::total").unwrap();
        assert_eq!(
            named_at(Lang::CPP, cpp, at).unwrap().name,
            "total",
            "the qualifier is part of the name as written"
        );
    }

    #[test]
    fn a_json_key_declares_its_member_within_its_parents_keys() {
        let text = "{\n  \"compilerOptions\": {\n    \"strict\": true\n  },\n  \"include\": [\"src\"]\n}\n";
        let all = all(Lang::JSON, text);
        let include = find(&all, "include");
        assert_eq!(&text[include.start..include.end], "\"include\": [\"src\"]");
        assert!(include.containers.is_empty());
        assert_eq!(find(&all, "strict").containers, vec!["compilerOptions".to_string()]);
        let quote = text.find("\"include").unwrap();
        assert_eq!(named_at(Lang::JSON, text, quote).unwrap().name, "include", "from its opening quote");
    }

    #[test]
    fn a_java_method_holds_its_annotations_and_javadoc() {
        let text = "class Ledger {\n    /** Depends. */\n    @Override\n    public String toString() {\n        return \"l\";\n    }\n\n    private int count = 0;\n}\n";
        let all = all(Lang::JAVA, text);
        let m = find(&all, "toString");
        assert!(text[m.start..m.end].starts_with("@Override\n    public String toString()"));
        assert_eq!(&text[m.doc.unwrap()..m.start], "/** Depends. */\n    ");
        assert_eq!(m.containers, vec!["Ledger".to_string()]);
        let count = find(&all, "count");
        assert_eq!(&text[count.start..count.end], "private int count = 0;");
    }
}
