//! A file's document symbols (`textDocument/documentSymbol`), flattened:
//! each with the names of the symbols it sits in, its name read as the
//! syntax tree names it, its kind and where its name is. Hierarchical
//! (`DocumentSymbol`) and flat (`SymbolInformation`, with its
//! `containerName`) answers alike.

use lsp_types::{Range, SymbolKind};
use serde_json::Value;

/// One symbol of a file's outline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    /// The symbols it sits in, outermost first.
    pub containers: Vec<String>,
    pub name: String,
    pub kind: Option<SymbolKind>,
    /// Where its name is (a flat answer's whole range, which starts its line).
    pub at: Range,
}

/// Every symbol of a `documentSymbol` answer, in order, children after
/// their parent.
pub(crate) fn flatten(answer: &Value) -> Vec<Listed> {
    fn walk(items: &[Value], within: &[String], out: &mut Vec<Listed>) {
        for item in items {
            let Some(name) = item["name"].as_str() else { continue };
            let at: Option<Range> = serde_json::from_value(item["selectionRange"].clone())
                .or_else(|_| serde_json::from_value(item["location"]["range"].clone()))
                .ok();
            let Some(at) = at else { continue };
            let mut within = within.to_vec();
            if let Some(c) = item["containerName"].as_str().filter(|c| !c.is_empty() && within.is_empty()) {
                within.push(c.to_string());
            }
            let (qualifiers, name) = plain_name(name);
            within.extend(qualifiers);
            let kind = serde_json::from_value(item["kind"].clone()).ok();
            out.push(Listed { containers: within.clone(), name: name.clone(), kind, at });
            if let Some(children) = item["children"].as_array() {
                within.push(name);
                walk(children, &within, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(answer.as_array().map(Vec::as_slice).unwrap_or(&[]), &[], &mut out);
    out
}

/// A server's symbol name as the syntax tree names it, with the
/// containers it spells: jdtls's `add(int, int)` is `add`; gopls's
/// `(*Stack).Push` is `Push` in `Stack`; clangd's out-of-line
/// `Foo::bar` is `bar` in `Foo`; rust-analyzer's `impl<T> Display for
/// Stack<T>` is the container `Stack`.
pub(crate) fn plain_name(name: &str) -> (Vec<String>, String) {
    let mut name = name.trim();
    if let Some(rest) = name.strip_prefix("impl") {
        let ty = rest.rsplit(" for ").next().unwrap_or(rest).trim();
        let ty = if rest.starts_with('<') && !rest.contains(" for ") {
            ty.split_once('>').map_or(ty, |(_, t)| t.trim())
        } else {
            ty
        };
        return (Vec::new(), ty.split('<').next().unwrap_or(ty).trim().to_string());
    }
    if name.ends_with(')')
        && let Some(open) = name.find('(').filter(|&i| i > 0)
    {
        name = &name[..open];
    }
    if let Some(rest) = name.strip_prefix('(')
        && let Some((receiver, method)) = rest.split_once(").")
    {
        return (vec![receiver.trim_start_matches('*').to_string()], method.to_string());
    }
    let mut parts: Vec<String> = name.split("::").map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    (parts, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_symbol_names_read_as_the_syntax_tree_names_them() {
        let plain = |n: &str| plain_name(n);
        assert_eq!(plain("add(int, int)"), (vec![], "add".to_string()));
        assert_eq!(plain("(*Stack).Push"), (vec!["Stack".to_string()], "Push".to_string()));
        assert_eq!(plain("Foo::bar"), (vec!["Foo".to_string()], "bar".to_string()));
        assert_eq!(plain("impl<T> Display for Stack<T>"), (vec![], "Stack".to_string()));
        assert_eq!(plain("impl Stack"), (vec![], "Stack".to_string()));
        assert_eq!(plain("impl<T> Stack<T>"), (vec![], "Stack".to_string()));
        assert_eq!(plain("__init__"), (vec![], "__init__".to_string()));
    }

    #[test]
    fn a_hierarchy_is_flattened_with_its_containers() {
        let range = json!({"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}});
        let answer = json!([{"name": "Ledger", "kind": 5, "range": range, "selectionRange": range,
            "children": [{"name": "depends(int)", "kind": 6, "range": range, "selectionRange": range}]}]);
        let listed = flatten(&answer);
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].containers, vec!["Ledger".to_string()]);
        assert_eq!(listed[1].name, "depends");
        assert_eq!(listed[1].kind, Some(SymbolKind::METHOD));
    }
}
