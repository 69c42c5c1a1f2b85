//! Patterns people write where the grammar rejects a metavariable as
//! written — a quoted JSON key beside `$V`, PHP's `$A = $B;`, an HCL block
//! body `{ $$$B }` — on packages nobody here wrote (`scripts/corpora.sh`
//! fetches them), each held to a count taken from the syntax tree itself
//! and, where the package is pinned, counted by hand.

use std::path::Path;

use ast_grep_core::tree_sitter::LanguageExt;
use tether_actors::ast::lang::Lang;
use tether_actors::ast::pattern::compile;
use tether_actors::ast::scan::Scope;
use tether_actors::ast::search::search;

use crate::prefilter::corpus;

/// Every match of `pattern` under `root` in `lang`, after checking it
/// compiles cleanly (not read loosely, as the ast-grep CLI reads it).
fn matches(root: &Path, lang: Lang, pattern: &str) -> Vec<String> {
    let compiled = compile(pattern, lang).unwrap_or_else(|e| panic!("`{pattern}` ({lang}): {e}"));
    assert!(compiled.loose.is_none(), "`{pattern}` ({lang}) read loosely: {:?}", compiled.loose);
    let root = root.canonicalize().unwrap();
    let scope = Scope { root: root.clone(), path: root, lang: Some(lang), prefilter: true };
    let found = search(&scope, pattern, 1_000_000).unwrap();
    assert_eq!(found.total, found.matches.len());
    found.matches.into_iter().map(|m| m.text).collect()
}

/// The nodes, in every `lang` file under `dir`, for which `pick` holds
/// (given the node and its file's text).
fn nodes_where(dir: &Path, lang: Lang, pick: &dyn Fn(tree_sitter::Node<'_>, &str) -> bool) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            n += nodes_where(&path, lang, pick);
            continue;
        }
        if Lang::for_path(&path) != Some(lang) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let root = lang.ast_grep(&text);
        let mut stack = vec![root.root().get_inner_node()];
        while let Some(node) = stack.pop() {
            n += usize::from(pick(node, &text));
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    n
}

fn text<'a>(node: tree_sitter::Node<'_>, source: &'a str) -> &'a str {
    &source[node.byte_range()]
}

#[test]
fn a_quoted_json_key_beside_a_metavariable_finds_every_such_pair_in_cldr_core() {
    let dir = corpus("json", "out/package");
    let found = matches(&dir, Lang::JSON, "\"version\": $V");
    let pairs = nodes_where(&dir, Lang::JSON, &|node, source| {
        node.kind() == "pair"
            && node.child_by_field_name("key").is_some_and(|k| text(k, source) == "\"version\"")
    });
    // cldr-core 44.1.0: 35 `"version":` keys in its 39 files (grep -c).
    assert_eq!(pairs, 35);
    assert_eq!(found.len(), pairs);
    assert!(found.iter().all(|m| m.starts_with("\"version\"")), "{found:?}");
    // Any key, written as a metavariable: every pair.
    let all = nodes_where(&dir, Lang::JSON, &|node, _| node.kind() == "pair");
    assert_eq!(matches(&dir, Lang::JSON, "$K: $V").len(), all);
}

#[test]
fn a_php_assignment_statement_finds_every_one_in_pear() {
    let dir = corpus("php", "out/usr/share/php");
    let found = matches(&dir, Lang::PHP, "$A = $B;");
    let statements = nodes_where(&dir, Lang::PHP, &|node, _| {
        node.kind() == "expression_statement"
            && node.named_child(0).is_some_and(|e| e.kind() == "assignment_expression")
    });
    assert!(statements > 4000, "{statements}");
    assert_eq!(found.len(), statements);
    assert!(found.iter().all(|m| m.contains('=') && m.ends_with(';')));
    // A variable written as PHP writes it is that variable.
    let this = matches(&dir, Lang::PHP, "$this->$P = $B;");
    let on_this = nodes_where(&dir, Lang::PHP, &|node, source| {
        node.kind() == "expression_statement"
            && node.named_child(0).is_some_and(|e| {
                e.kind() == "assignment_expression"
                    && e.child_by_field_name("left").is_some_and(|l| {
                        l.kind() == "member_access_expression"
                            && l.child_by_field_name("object").is_some_and(|o| text(o, source) == "$this")
                    })
            })
    });
    assert!(on_this > 400, "{on_this}");
    assert_eq!(this.len(), on_this);
}

#[test]
fn an_hcl_block_body_as_a_multi_metavariable_finds_every_block_in_terraform_json() {
    let dir = corpus("hcl", "out/usr/share/gocode/src/github.com/hashicorp/terraform-json/testdata");
    for (kind, pattern, by_hand) in [
        // terraform-json 0.5.0's testdata: `grep -c '^\s*resource '` (and
        // `variable`) over its .tf files.
        ("resource", "resource $T $N { $$$B }", 23),
        ("variable", "variable $N {\n  $$$B\n}", 17),
    ] {
        let found = matches(&dir, Lang::HCL, pattern);
        let blocks = nodes_where(&dir, Lang::HCL, &|node, source| {
            node.kind() == "block" && node.named_child(0).is_some_and(|id| text(id, source) == kind)
        });
        assert_eq!(blocks, by_hand, "{kind}");
        assert_eq!(found.len(), blocks, "`{pattern}`");
        assert!(found.iter().all(|m| m.starts_with(kind)), "{found:?}");
    }
}
