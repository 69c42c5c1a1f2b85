//! Rewrite templates: the text a match becomes.
//!
//! A template is text with metavariables spelled as in patterns (`$NAME`,
//! `$$$NAME`; `$1` and a lone `$` are literal), parsed by the ast-grep
//! rules. It is rendered here rather than by ast-grep's replacer for two
//! reasons:
//!
//! - **Indentation as written.** Lines after a template's first take the
//!   indentation of the line the match starts on, and a multi-line capture
//!   keeps its shape relative to where the template puts it. ast-grep counts
//!   indentation in spaces only, so in tab-indented code every line after
//!   the first came out at column 0; here indentation is the whitespace
//!   itself. In a file indented with tabs, a template indented with spaces
//!   is indented with tabs, one per step of its own indentation — Python
//!   refuses a block that mixes them.
//! - **Nested matches.** The text a capture carries is asked of the caller
//!   ([`Render::span`]), so matches nested inside a capture are rewritten
//!   too (`old(old(3))` becomes `new(new(3))`), not dropped.

use std::collections::BTreeSet;
use std::ops::Range;

use ast_grep_core::NodeMatch;
use ast_grep_core::tree_sitter::StrDoc;

use super::lang::Lang;

/// A metavariable standing in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Var {
    /// `$NAME`: one node's text.
    Single(String),
    /// `$$$NAME`: the text from the first node of the sequence to the last.
    Multi(String),
}

/// A parsed template: text fragments between metavariables, each
/// metavariable with the whitespace that starts its template line.
#[derive(Debug, Clone)]
pub struct Template {
    fragments: Vec<String>,
    vars: Vec<(Var, String)>,
}

/// What rendering asks of its caller.
pub trait Render {
    /// The text of `range` of the source as the rewrite leaves it: with
    /// the matches nested inside it rewritten.
    fn span(&self, range: Range<usize>) -> String;
}

impl Template {
    /// Parses `text` by ast-grep's rules for metavariables in templates.
    pub fn parse(text: &str) -> Template {
        let mut fragments = Vec::new();
        let mut vars = Vec::new();
        let mut literal_from = 0;
        let mut at = 0;
        while let Some(found) = text[at..].find('$') {
            let start = at + found;
            match split_var(&text[start..]) {
                Some((var, len)) => {
                    fragments.push(text[literal_from..start].to_string());
                    vars.push((var, line_indent(text, start).to_string()));
                    literal_from = start + len;
                    at = literal_from;
                }
                None => at = start + 1,
            }
        }
        fragments.push(text[literal_from..].to_string());
        Template { fragments, vars }
    }

    /// The metavariable names the template uses.
    pub fn used_vars(&self) -> BTreeSet<String> {
        self.vars
            .iter()
            .map(|(var, _)| match var {
                Var::Single(name) | Var::Multi(name) => name.clone(),
            })
            .collect()
    }

    /// The template with its lines' leading spaces turned into tabs, one
    /// per step of its own indentation (the smallest it uses), for a file
    /// indented with tabs.
    pub fn with_tabs(text: &str) -> Template {
        let step = text
            .lines()
            .skip(1)
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.len() - line.trim_start_matches(' ').len())
            .filter(|&n| n > 0)
            .min();
        let Some(step) = step else { return Template::parse(text) };
        let converted: Vec<String> = text
            .split('\n')
            .enumerate()
            .map(|(i, line)| {
                let spaces = line.len() - line.trim_start_matches(' ').len();
                if i == 0 || spaces == 0 {
                    return line.to_string();
                }
                let tabs = "\t".repeat(spaces / step);
                format!("{tabs}{}{}", " ".repeat(spaces % step), &line[spaces..])
            })
            .collect();
        Template::parse(&converted.join("\n"))
    }

    /// The replacement text for `m` in `source`.
    pub fn render(&self, m: &NodeMatch<'_, StrDoc<Lang>>, source: &str, caller: &dyn Render) -> String {
        let env = m.get_env();
        let mut out = String::new();
        let mut fragments = self.fragments.iter();
        if let Some(first) = fragments.next() {
            out.push_str(first);
        }
        for ((var, indent), fragment) in self.vars.iter().zip(fragments) {
            let range = match var {
                Var::Single(name) => env.get_match(name).map(|node| node.range()),
                Var::Multi(name) => {
                    let nodes = env.get_multiple_matches(name);
                    match (nodes.first(), nodes.last()) {
                        (Some(first), Some(last)) => Some(first.range().start..last.range().end),
                        _ => None,
                    }
                }
            };
            if let Some(range) = range {
                let own = line_indent(source, range.start);
                // Some grammars end a statement list with the newline after
                // it; carried into a template, it would leave a blank line.
                let text = caller.span(range);
                let text = text.trim_end_matches(['\n', '\r']);
                out.push_str(&reindent(text, own, indent));
            }
            out.push_str(fragment);
        }
        reindent(&out, "", line_indent(source, m.range().start))
    }
}

/// Whether `source` is indented with tabs: more of its indented lines
/// start with a tab than with a space.
pub fn indented_with_tabs(source: &str) -> bool {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for line in source.lines() {
        match line.as_bytes().first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => spaces += 1,
            _ => {}
        }
    }
    tabs > spaces
}

/// The metavariable `text` starts with, and its length: up to three `$`,
/// then a name of upper-case letters, digits and `_` not starting with a
/// digit (ast-grep's rule; `$$$` alone and `$5` are literal).
fn split_var(text: &str) -> Option<(Var, usize)> {
    let dollars = text.bytes().take(3).take_while(|&b| b == b'$').count();
    let name_len = text[dollars..]
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len() - dollars);
    let name = &text[dollars..dollars + name_len];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let var = if dollars == 3 { Var::Multi(name.to_string()) } else { Var::Single(name.to_string()) };
    Some((var, dollars + name_len))
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let ws = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..ws.min(at - start)]
}

/// `text` with each line after the first moved from indentation `from` to
/// indentation `to`: `from` stripped (or, from a line indented less, all
/// its indentation), `to` put in front. Empty lines stay empty; a single
/// line is returned as it is.
fn reindent(text: &str, from: &str, to: &str) -> String {
    if !text.contains('\n') || from == to {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i == 0 {
            out.push_str(line);
            continue;
        }
        out.push('\n');
        if !line.is_empty() {
            out.push_str(to);
            out.push_str(line.strip_prefix(from).unwrap_or_else(|| line.trim_start_matches([' ', '\t'])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metavariables_parse_by_the_ast_grep_rules() {
        let t = Template::parse("f($A, $$$REST) costs $5 and $x $$B");
        assert_eq!(t.used_vars().into_iter().collect::<Vec<_>>(), ["A", "B", "REST"]);
        assert_eq!(t.fragments, ["f(", ", ", ") costs $5 and $x ", ""]);
        assert_eq!(t.vars[1].0, Var::Multi("REST".into()));
        assert!(Template::parse("$$$").used_vars().is_empty());
    }

    #[test]
    fn indentation_is_whitespace_as_written() {
        assert_eq!(line_indent("a\n\t\tif x {", 5), "\t\t");
        assert_eq!(line_indent("    x = f(y)", 8), "    ");
        assert_eq!(reindent("a\n\t\t\tb\n\n\t\tc", "\t\t", "\t"), "a\n\t\tb\n\n\tc");
        assert_eq!(reindent("a\n\tb", "\t\t", "  "), "a\n  b", "less indented than the capture: clamped");
        let t = Template::with_tabs("if !($C) {\n    continue\n        deeper\n}\n$$$B");
        assert_eq!(t.fragments[1], ") {\n\tcontinue\n\t\tdeeper\n}\n");
        assert!(indented_with_tabs("func f() {\n\tx()\n\ty()\n}\n"));
        assert!(!indented_with_tabs("def f():\n    x()\n"));
    }
}
