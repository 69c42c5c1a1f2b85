//! Structural rewrite planning: the new content of every file a pattern
//! matches in, with the rewrite template's metavariables substituted.
//!
//! Nothing here writes a file; [`super::staging`] holds the plan until it is
//! accepted or discarded.

use std::collections::BTreeSet;
use std::path::PathBuf;

use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{Doc, NodeMatch};

use super::lang::Lang;
use super::scan::{Coverage, Reading, ScanError, Scope, scan};

/// One file's planned change.
#[derive(Debug, Clone)]
pub struct FileRewrite {
    /// Path relative to the working directory.
    pub rel: String,
    /// Absolute path.
    pub path: PathBuf,
    /// The content the plan was computed from.
    pub before: String,
    /// The content after the rewrite.
    pub after: String,
    /// How many matches were replaced.
    pub replacements: usize,
}

/// Every file's planned change.
#[derive(Debug, Clone)]
pub struct RewritePlan {
    /// Files that change, ordered by path.
    pub files: Vec<FileRewrite>,
    /// What the scan covered.
    pub coverage: Coverage,
}

impl RewritePlan {
    /// Replacements across all files.
    pub fn replacements(&self) -> usize {
        self.files.iter().map(|f| f.replacements).sum()
    }
}

/// Why a rewrite could not be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The scan failed (bad pattern, unknown language).
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The template names metavariables the pattern never binds; ast-grep
    /// would silently expand them to nothing.
    #[error(
        "the rewrite uses {} that the pattern does not bind; {}. Use only the pattern's metavariables, or add them to the pattern",
        list_vars(unbound),
        bound_phrase(bound)
    )]
    UnboundMetavariables {
        /// Metavariables used in the rewrite but not bound by the pattern.
        unbound: Vec<String>,
        /// Metavariables the pattern binds.
        bound: Vec<String>,
    },
    /// The rewritten text of a file that parsed cleanly no longer does.
    #[error(
        "the rewrite would leave {file} with a syntax error{} (an empty `$$$` list can leave `bar(, x)`, a template can drop a bracket); nothing was staged — change the rewrite, or narrow the pattern",
        line.map(|l| format!(" at line {l}")).unwrap_or_default()
    )]
    BreaksSyntax {
        /// The file, relative to the working directory.
        file: String,
        /// The first line with an error, when one is found.
        line: Option<usize>,
    },
}

fn list_vars(vars: &[String]) -> String {
    let names: Vec<String> = vars.iter().map(|v| format!("${v}")).collect();
    let noun = if vars.len() == 1 { "metavariable" } else { "metavariables" };
    format!("{noun} {}", names.join(", "))
}

fn bound_phrase(bound: &[String]) -> String {
    if bound.is_empty() {
        "the pattern binds none".to_string()
    } else {
        format!("it binds {}", list_vars(bound).split_once(' ').map_or("", |(_, v)| v))
    }
}

/// The metavariable names a text spells, by ast-grep's own rules; names
/// starting with `_` bind nothing and are left out.
fn spelled_vars(text: &str) -> BTreeSet<String> {
    TemplateFix::try_new(text, &Lang::Python)
        .map(|fix| {
            fix.used_vars().into_iter().filter(|name| !name.starts_with('_')).map(str::to_string).collect()
        })
        .unwrap_or_default()
}

/// Every metavariable `rewrite` uses must be bound by `pattern`.
pub fn check_template(pattern: &str, rewrite: &str) -> Result<(), RewriteError> {
    let bound = spelled_vars(pattern);
    let used: BTreeSet<String> = TemplateFix::try_new(rewrite, &Lang::Python)
        .map(|fix| fix.used_vars().into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    let unbound: Vec<String> = used.difference(&bound).cloned().collect();
    if unbound.is_empty() {
        Ok(())
    } else {
        Err(RewriteError::UnboundMetavariables { unbound, bound: bound.into_iter().collect() })
    }
}

/// Plans replacing every match of `pattern` in `scope` with `rewrite`.
/// Where matches nest, the outermost one is rewritten.
pub fn plan(scope: &Scope, pattern: &str, rewrite: &str) -> Result<RewritePlan, RewriteError> {
    check_template(pattern, rewrite)?;
    // The spelled check above is fast but cannot see that `"$A"` inside a
    // string literal binds nothing; the compiled pattern can.
    let unbound: parking_lot::Mutex<Option<RewriteError>> = parking_lot::Mutex::new(None);
    // A file that parsed cleanly must still parse after the rewrite.
    let broken: parking_lot::Mutex<Option<RewriteError>> = parking_lot::Mutex::new(None);
    // A pattern written without its statement's `;` still matches the whole
    // statement (the ladder, or JavaScript's automatic semicolons), and
    // replacing the node would drop the `;` the pattern never showed.
    let keeps_semicolon = !pattern.trim_end().ends_with(';');
    let (per_file, coverage) = scan(scope, pattern, Reading::Strict, |file| {
        let fix = TemplateFix::try_new(rewrite, &file.pattern.lang).ok()?;
        let missing: Vec<String> = fix
            .used_vars()
            .into_iter()
            .filter(|v| !file.pattern.bound_vars.contains(*v))
            .map(str::to_string)
            .collect();
        if !missing.is_empty() {
            let bound = file.pattern.bound_vars.iter().cloned().collect();
            *unbound.lock() = Some(RewriteError::UnboundMetavariables { unbound: missing, bound });
            return None;
        }
        let root = file.root.root();
        let matches: Vec<NodeMatch<'_, StrDoc<Lang>>> = root.find_all(&file.pattern.pattern).collect();
        let source = root.get_doc().get_source().as_str();
        let (after, replacements) = apply(source, &matches, &fix, keeps_semicolon);
        if replacements > 0 && after != source && !root.get_inner_node().has_error() {
            let reparsed = file.pattern.lang.ast_grep(&after);
            if reparsed.root().get_inner_node().has_error() {
                let line = reparsed.root().dfs().find(|n| n.is_error()).map(|n| n.start_pos().line() + 1);
                broken.lock().get_or_insert(RewriteError::BreaksSyntax { file: file.rel.to_string(), line });
                return None;
            }
        }
        (replacements > 0 && after != source).then(|| FileRewrite {
            rel: file.rel.to_string(),
            path: file.path.to_path_buf(),
            before: source.to_string(),
            after,
            replacements,
        })
    })?;
    if let Some(e) = unbound.into_inner().or(broken.into_inner()) {
        return Err(e);
    }
    Ok(RewritePlan { files: per_file.into_iter().map(|(_, f)| f).collect(), coverage })
}

/// Replaces each non-overlapping match (outermost first) in `source`;
/// with `keeps_semicolon`, a match that ends in `;` keeps it when the
/// rewrite does not write one.
fn apply(
    source: &str,
    matches: &[NodeMatch<'_, StrDoc<Lang>>],
    fix: &TemplateFix,
    keeps_semicolon: bool,
) -> (String, usize) {
    let mut out = String::with_capacity(source.len());
    let mut cursor = 0;
    let mut count = 0;
    // find_all yields matches in document (pre-)order, so an outer match
    // comes before the matches nested inside it.
    for m in matches {
        let edit = m.replace_by(fix);
        if edit.position < cursor {
            continue;
        }
        let inserted = String::from_utf8_lossy(&edit.inserted_text);
        let matched = &source[edit.position..edit.position + edit.deleted_length];
        out.push_str(&source[cursor..edit.position]);
        out.push_str(&inserted);
        if keeps_semicolon && matched.trim_end().ends_with(';') && !inserted.trim_end().ends_with(';') {
            out.push(';');
        }
        cursor = edit.position + edit.deleted_length;
        count += 1;
    }
    out.push_str(&source[cursor..]);
    (out, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbound_metavariables_are_named() {
        let err = check_template("foo($A)", "bar($A, $B)").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("metavariable $B"), "{text}");
        assert!(text.contains("it binds $A"), "{text}");
        assert!(check_template("foo($A, $$$REST)", "bar($$$REST, $A)").is_ok());
        // `$_` binds nothing, so a rewrite cannot use it.
        assert!(check_template("foo($_)", "bar($_)").is_err());
    }
}
