//! Reading a fragment on one rung of the ladder: the variants it is tried
//! in (with the `;` the ladder may add), whether a parse counts as clean or
//! tolerable, the node that spans the fragment, and the corrections that
//! make the pattern mean what the fragment wrote (a metavariable standing
//! for a statement, a multi-line string as written, the same construct in
//! another place).

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::{Language, Pattern};

use super::ladder::{Scaffold, StandIn, stand_ins, uses_semicolons};
use super::lang::Lang;

/// Whether a node kind names a declaration, by the grammars' own naming
/// (`local_variable_declaration`, `function_definition`, `method_signature`).
pub(super) fn is_declaration(kind: &str) -> bool {
    ["declaration", "definition", "signature"].iter().any(|word| kind.contains(word))
}

/// What a kind names apart from being a statement or an expression:
/// Zig's `IfStatement` and `IfExpression` are both an `if`.
pub(super) fn construct(kind: &str) -> String {
    let flat: String = kind.chars().filter(|c| *c != '_').collect::<String>().to_ascii_lowercase();
    for suffix in ["statement", "expression", "stmt", "expr"] {
        if let Some(stem) = flat.strip_suffix(suffix)
            && !stem.is_empty()
        {
            return stem.to_string();
        }
    }
    flat
}

/// Whether a later rung's reading of kind `other` is the same thing as the
/// first reading's `first` standing elsewhere: another kind of declaration,
/// or the same construct as a statement and as an expression.
pub(super) fn same_thing_elsewhere(first: &str, other: &str) -> bool {
    first != other
        && ((is_declaration(first) && is_declaration(other)) || construct(first) == construct(other))
}

/// The fragment as the ladder tries it, with the `;` it may add.
pub(super) struct Variant {
    text: String,
    /// A `;` was added at the end (`foo($A)` as the statement `foo($A);`).
    tail: bool,
    /// A `;` was added after each metavariable that ends a block
    /// (`if ($C) { $$$B }` as `if ($C) { $$$B; }`): where a bare name is
    /// no statement (C#, Dart), the metavariable could not stand for the
    /// block's statements otherwise.
    blocks: bool,
    /// The stand-ins written for metavariables ([`stand_in_variants`]):
    /// each one's text and the metavariable it is.
    stand_ins: Vec<(String, MetaVariable)>,
}

/// The variants of an expanded fragment, in the order they are tried.
pub(super) fn variants(expanded: &str, lang: Lang) -> Vec<Variant> {
    let plain =
        |text: String, tail: bool, blocks: bool| Variant { text, tail, blocks, stand_ins: Vec::new() };
    let mut out = vec![plain(expanded.to_string(), false, false)];
    if !uses_semicolons(lang) {
        return out;
    }
    let needs_tail = !expanded.ends_with(';') && !expanded.ends_with('}');
    if needs_tail {
        out.push(plain(format!("{expanded};"), true, false));
    }
    let blocked = terminate_block_metavars(expanded, lang);
    if blocked != expanded {
        if needs_tail {
            out.push(plain(format!("{blocked};"), true, true));
        }
        out.push(plain(blocked, false, true));
    }
    out
}

/// The variants of the fragment with its metavariables written as each of
/// the language's stand-ins ([`stand_ins`]), one list per stand-in; none
/// where the language has no stand-ins or the fragment no metavariables.
pub(super) fn stand_in_variants(fragment: &str, lang: Lang) -> Vec<Vec<Variant>> {
    stand_ins(lang)
        .iter()
        .filter_map(|stand_in| {
            let (text, written) = write_stand_ins(fragment, lang, stand_in);
            if written.is_empty() {
                return None;
            }
            let mut list = variants(&text, lang);
            for variant in &mut list {
                variant.stand_ins = written.clone();
            }
            Some(list)
        })
        .collect()
}

/// The fragment (as written, `$` and all) with each metavariable replaced
/// by its stand-in, numbered in order; and each stand-in's text with the
/// metavariable it is. `$x` (lower case) is no metavariable and stays.
fn write_stand_ins(fragment: &str, lang: Lang, stand_in: &StandIn) -> (String, Vec<(String, MetaVariable)>) {
    let expando = lang.expando_char();
    let mut out = String::with_capacity(fragment.len() + 16);
    let mut written = Vec::new();
    let mut rest = fragment;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let from = &rest[at..];
        let dollars = from.bytes().take(3).take_while(|b| *b == b'$').count();
        let name_len = from[dollars..]
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
            .count();
        let spelled: String =
            std::iter::repeat_n(expando, dollars).chain(from[dollars..dollars + name_len].chars()).collect();
        match lang.extract_meta_var(&spelled) {
            Some(meta_var) => {
                let multi = matches!(meta_var, MetaVariable::MultiCapture(_) | MetaVariable::Multiple);
                let (prefix, suffix) = if multi { stand_in.multi } else { stand_in.single };
                let text = format!("{prefix}{}{suffix}", written.len());
                out.push_str(&text);
                written.push((text, meta_var));
                rest = &from[dollars + name_len..];
            }
            None => {
                out.push('$');
                rest = &from[1..];
            }
        }
    }
    out.push_str(rest);
    (out, written)
}

/// The pattern node for `node` where stand-ins were written: as ast-grep
/// builds it (the outermost node whose text is a metavariable is that
/// metavariable; a leaf is matched by its text; MISSING tokens are left
/// out), with the outermost node whose text is a stand-in read as its
/// metavariable.
fn with_stand_ins(
    node: tree_sitter::Node<'_>,
    source: &str,
    lang: Lang,
    stand_ins: &[(String, MetaVariable)],
) -> PatternNode {
    let text = &source[node.byte_range()];
    let stood = stand_ins.iter().find(|(stand_in, _)| stand_in == text).map(|(_, meta_var)| meta_var.clone());
    if let Some(meta_var) = stood.or_else(|| lang.extract_meta_var(text)) {
        return PatternNode::MetaVar { meta_var };
    }
    if node.child_count() == 0 {
        return PatternNode::Terminal {
            text: text.to_string(),
            is_named: node.is_named(),
            kind_id: node.kind_id(),
        };
    }
    let mut cursor = node.walk();
    let children = node
        .children(&mut cursor)
        .filter(|child| !child.is_missing())
        .map(|child| with_stand_ins(child, source, lang, stand_ins))
        .collect();
    PatternNode::Internal { kind_id: node.kind_id(), children }
}

/// `text` with a `;` after every metavariable directly followed (past
/// blanks) by a `}`.
fn terminate_block_metavars(text: &str, lang: Lang) -> String {
    let expando = lang.expando_char();
    let mut out = String::with_capacity(text.len() + 4);
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        if c != expando {
            continue;
        }
        // The metavariable's name runs to the first character that cannot be in it.
        let mut end = i + c.len_utf8();
        while let Some(&(j, n)) = chars.peek() {
            if n == expando || n.is_ascii_uppercase() || n.is_ascii_digit() || n == '_' {
                out.push(n);
                end = j + n.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        if text[end..].trim_start().starts_with('}') && lang.extract_meta_var(&text[i..end]).is_some() {
            out.push(';');
        }
    }
    out
}

/// One rung's reading of a fragment: the pattern and its node's kind.
pub(super) struct Reading {
    pub(super) pattern: Pattern,
    pub(super) kind: String,
}

/// Parses the fragment inside one scaffold; returns the reading when the
/// whole text parses cleanly and a node spans exactly the fragment. A `;`
/// the fragment was written with belongs to the node when one spans it
/// (`$A = $B;` is the statement, not the assignment inside it); one the
/// ladder `appended` does not, so the node the fragment spells is taken
/// (`foo($A)` is the call, found in any expression). Either way, a node
/// that ends just before or just after the `;` is accepted (statements own
/// theirs, TypeScript fields do not).
pub(super) fn try_rung(
    scaffold: &Scaffold,
    variant: &Variant,
    lang: Lang,
    tolerant: bool,
) -> Option<Reading> {
    let appended = variant.tail;
    let body = indent_lines(&variant.text, scaffold.indent);
    let start = scaffold.prefix.len();
    let end_with_terminator = start + body.len();
    let end = end_with_terminator - usize::from(body.ends_with(';'));
    let wrapped = format!("{}{}{}", scaffold.prefix, body, scaffold.suffix);
    let root = lang.ast_grep(&wrapped);
    let tree_root = root.root().get_inner_node();
    let accepted =
        reads_cleanly(tree_root, &wrapped, lang) || (tolerant && tolerable(tree_root, &wrapped, lang));
    if !accepted {
        return None;
    }
    let spans = |from: usize, to: usize| {
        tree_root.descendant_for_byte_range(from, to).filter(|n| n.start_byte() == from && n.end_byte() == to)
    };
    let own_terminator =
        if appended || end == end_with_terminator { None } else { spans(start, end_with_terminator) };
    let node = match own_terminator {
        Some(node) => node,
        None => {
            let node = tree_root.descendant_for_byte_range(start, end)?;
            if node.start_byte() != start || !(end..=end_with_terminator).contains(&node.end_byte()) {
                return None;
            }
            node
        }
    };
    let kind = node.kind().to_string();
    let mut pattern = Pattern::from(root.adopt(node));
    if !variant.stand_ins.is_empty() {
        pattern.node = with_stand_ins(node, &wrapped, lang, &variant.stand_ins);
    }
    if !scaffold.indent.is_empty() {
        // Lines inside a multi-line token (a string, a comment) got the
        // rung's indent too; the token is as the fragment wrote it.
        unindent_terminals(&mut pattern.node, scaffold.indent);
    }
    if let PatternNode::Internal { children, .. } = &mut pattern.node {
        if variant.blocks {
            unwrap_block_metavars(children);
        }
        if appended {
            unwrap_statement_metavar(children);
        }
    }
    Some(Reading { pattern, kind })
}

/// Where the ladder appended the `;` and it completed a statement that is
/// only the fragment's last metavariable (C# `if ($C) $S` read as
/// `if ($C) $S;`), that statement is the metavariable, standing for any
/// statement, as it is when the parser supplies the `;` itself. Where the
/// grammar read the `;` as a statement of its own after the metavariable
/// (an empty statement), it is dropped.
fn unwrap_statement_metavar(children: &mut Vec<PatternNode>) {
    let is_semicolon = |node: &PatternNode| matches!(node, PatternNode::Terminal { text, .. } if text == ";");
    let n = children.len();
    if n >= 2
        && matches!(children[n - 2], PatternNode::MetaVar { .. })
        && matches!(&children[n - 1], PatternNode::Internal { children: only, .. } if only.len() == 1 && is_semicolon(&only[0]))
    {
        children.pop();
        return;
    }
    let Some(last) = children.last_mut() else { return };
    let PatternNode::Internal { children: inner, .. } = last else { return };
    match inner.as_slice() {
        [PatternNode::MetaVar { meta_var }, semicolon] if is_semicolon(semicolon) => {
            *last = PatternNode::MetaVar { meta_var: meta_var.clone() };
        }
        _ => unwrap_statement_metavar(inner),
    }
}

/// Takes `indent` back out after every newline inside a terminal's text.
fn unindent_terminals(node: &mut PatternNode, indent: &str) {
    match node {
        PatternNode::Terminal { text, .. } if text.contains('\n') => {
            *text = text.replace(&format!("\n{indent}"), "\n");
        }
        PatternNode::Internal { children, .. } => {
            for child in children {
                unindent_terminals(child, indent);
            }
        }
        _ => {}
    }
}

/// Undoes [`terminate_block_metavars`] throughout the pattern, bottom up:
/// a statement that is a metavariable and the `;` added after it is the
/// metavariable (and so is a node left holding only it), and a `;` the
/// grammar read as a statement of its own after one is dropped.
fn unwrap_block_metavars(children: &mut Vec<PatternNode>) {
    let is_semicolon = |node: &PatternNode| matches!(node, PatternNode::Terminal { text, .. } if text == ";");
    for child in children.iter_mut() {
        let PatternNode::Internal { children: inner, .. } = child else { continue };
        unwrap_block_metavars(inner);
        let lone = match inner.as_slice() {
            [PatternNode::MetaVar { meta_var }] => Some(meta_var.clone()),
            [PatternNode::MetaVar { meta_var }, semicolon] if is_semicolon(semicolon) => {
                Some(meta_var.clone())
            }
            _ => None,
        };
        if let Some(meta_var) = lone {
            *child = PatternNode::MetaVar { meta_var };
        }
    }
    let mut i = 1;
    while i < children.len() {
        let lone_semicolon = matches!(&children[i], PatternNode::Internal { children: only, .. } if only.len() == 1 && is_semicolon(&only[0]));
        if lone_semicolon && matches!(children[i - 1], PatternNode::MetaVar { .. }) {
            children.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Whether a tree parses without error, but for tokens the parser supplied
/// (MISSING) to complete a node that is one metavariable: in C#
/// `if ($C) $S` the statement `$S` lacks its `;`, and the node whose text
/// is `$S` is read as the metavariable, standing for any statement.
fn reads_cleanly(node: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    if !node.has_error() {
        return true;
    }
    if node.is_error() {
        return false;
    }
    if node.is_missing() {
        return node.parent().is_some_and(|parent| {
            let text = source[parent.byte_range()].trim();
            lang.extract_meta_var(text).is_some()
        });
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).all(|child| reads_cleanly(child, source, lang))
}

/// The fragment as a whole file, the way the ast-grep CLI reads every
/// pattern: `Pattern::try_new` builds the node (descending through single
/// children from the file's root), once the file is known to parse cleanly
/// (`try_new` itself accepts a tree with syntax errors).
pub(super) fn try_whole_file(fragment: &str, expanded: &str, lang: Lang, tolerant: bool) -> Option<Pattern> {
    let root = lang.ast_grep(expanded);
    let tree_root = root.root().get_inner_node();
    if tree_root.has_error() && !(tolerant && tolerable(tree_root, expanded, lang)) {
        return None;
    }
    Pattern::try_new(fragment, lang).ok()
}

/// Whether a tree with syntax errors still reads the fragment as written:
/// its only errors are metavariables standing where the grammar wants
/// something else, and error recovery turned no keyword into a name (in a
/// C++ class body `for ($$$I) $S;` "parses" as a field whose type is named
/// `for`, which matches no loop at all).
fn tolerable(tree: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    only_metavariable_errors(tree, source, lang) && !keyword_as_name(tree, source, lang)
}

/// Whether a named leaf's text is one of the grammar's keywords.
fn keyword_as_name(node: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    if node.child_count() == 0 {
        let text = &source[node.byte_range()];
        return node.is_named()
            && text.bytes().all(|b| b.is_ascii_alphabetic())
            && lang.grammar().id_for_node_kind(text, false) != 0;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|child| keyword_as_name(child, source, lang))
}

/// Whether every syntax error in the tree is an ERROR node whose whole
/// text is one metavariable (no MISSING nodes, no other ERROR nodes).
fn only_metavariable_errors(node: tree_sitter::Node<'_>, source: &str, lang: Lang) -> bool {
    if node.is_missing() {
        return false;
    }
    if node.is_error() {
        let text = source[node.byte_range()].trim();
        return lang.extract_meta_var(text).is_some();
    }
    if !node.has_error() {
        return true;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).all(|child| only_metavariable_errors(child, source, lang))
}

fn indent_lines(fragment: &str, indent: &str) -> String {
    if indent.is_empty() {
        return fragment.to_string();
    }
    let mut out = String::with_capacity(fragment.len() + 16);
    for (i, line) in fragment.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line);
    }
    out
}
