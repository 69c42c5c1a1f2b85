//! Structural rewrite planning: the new content of every file a pattern
//! matches in, with the rewrite template's metavariables substituted.
//!
//! Nothing here writes a file; [`super::staging`] holds the plan until it is
//! accepted or discarded.

use std::collections::BTreeSet;
use std::path::PathBuf;

use std::ops::Range;

use ast_grep_core::NodeMatch;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc};

use super::lang::Lang;
use super::scan::{Coverage, ParsedFile, Reading, ScanError, Scope, scan};
use super::template::{Render, Template, indented_with_tabs};

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
    /// How many of those sat inside another match's capture (rewritten
    /// inside out).
    pub nested: usize,
    /// Matches nested inside a rewritten one whose text the rewrite did
    /// not carry over (the template leaves their capture out).
    pub nested_left: usize,
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
    /// The template uses a metavariable the pattern left unnamed (`$$$`,
    /// `$_`): it matched without keeping what it matched, so the rewrite
    /// has nothing to put there.
    #[error(
        "the rewrite uses {}, which {} nothing: an unnamed metavariable matches without keeping what it matched, so the rewrite has nothing to put there; name {} in both, e.g. pattern `{}` and rewrite `{}`",
        spelled.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", "),
        if spelled.len() == 1 { "binds" } else { "bind" },
        if spelled.len() == 1 { "it" } else { "them" },
        pattern,
        rewrite
    )]
    Unnamed {
        /// The unnamed metavariables, as spelled.
        spelled: Vec<String>,
        /// The pattern with each named.
        pattern: String,
        /// The rewrite with each named.
        rewrite: String,
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
    Template::parse(text).used_vars().into_iter().filter(|name| !name.starts_with('_')).collect()
}

/// The metavariables `text` spells that bind nothing — `$$$`, `$_` and
/// names starting with `_` — each once, in order of first use.
fn unnamed_vars(text: &str) -> Vec<String> {
    let is_name = |c: u8| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_';
    let bytes = text.as_bytes();
    let mut found: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let dollars = bytes[i..].iter().take_while(|&&b| b == b'$').count();
        let start = i;
        i += dollars;
        let name_len = bytes[i..].iter().take_while(|&&b| is_name(b)).count();
        let name = &text[i..i + name_len];
        i += name_len;
        let unnamed = match dollars {
            3 => name.is_empty() || name.starts_with('_'),
            1 => name.starts_with('_'),
            _ => false,
        };
        let spelled = &text[start..i];
        if unnamed && !found.iter().any(|f| f == spelled) {
            found.push(spelled.to_string());
        }
    }
    found
}

/// `pattern` and `rewrite` with each of `unnamed` spelled as a name of its
/// own that neither uses yet: `$$$` as `$$$ARGS`, `$_` as `$X`. One the
/// pattern spells twice stood for two nodes that need not be equal, so
/// each of its places gets a name (`f($X, $X2)`); the rewrite gets the
/// first.
fn named(pattern: &str, rewrite: &str, unnamed: &[String], taken: &BTreeSet<String>) -> (String, String) {
    let mut taken = taken.clone();
    let (mut pattern, mut rewrite) = (pattern.to_string(), rewrite.to_string());
    for spelled in unnamed {
        let (sigil, base) = if spelled.starts_with("$$$") { ("$$$", "ARGS") } else { ("$", "X") };
        let places = whole_places(&pattern, spelled).len().max(1);
        let names: Vec<String> = (0..places)
            .map(|_| {
                let name = (1..)
                    .map(|n| if n == 1 { base.to_string() } else { format!("{base}{n}") })
                    .find(|n| !taken.contains(n))
                    .unwrap_or_default();
                taken.insert(name.clone());
                format!("{sigil}{name}")
            })
            .collect();
        pattern = replace_whole(&pattern, spelled, &names);
        rewrite = replace_whole(&rewrite, spelled, &names[..1]);
    }
    (pattern, rewrite)
}

/// Where `spelled` stands whole in `text`: not inside a longer
/// metavariable (`$_` in `$$$_`, `$$$` in `$$$REST`).
fn whole_places(text: &str, spelled: &str) -> Vec<usize> {
    let is_name = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'$';
    text.match_indices(spelled)
        .map(|(at, _)| at)
        .filter(|&at| {
            let before = at.checked_sub(1).map(|k| text.as_bytes()[k]);
            let after = text.as_bytes().get(at + spelled.len()).copied();
            before != Some(b'$') && !after.is_some_and(is_name)
        })
        .collect()
}

/// `text` with the k-th whole `spelled` replaced by `names[k]` (the last
/// name for any past them).
fn replace_whole(text: &str, spelled: &str, names: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (k, at) in whole_places(text, spelled).into_iter().enumerate() {
        out.push_str(&text[from..at]);
        out.push_str(names.get(k).or(names.last()).map_or(spelled, String::as_str));
        from = at + spelled.len();
    }
    out.push_str(&text[from..]);
    out
}

/// Every metavariable `rewrite` uses must be bound by `pattern`.
pub fn check_template(pattern: &str, rewrite: &str) -> Result<(), RewriteError> {
    // An unnamed one the pattern uses too is surely meant as a capture (a
    // `$$$` in the rewrite alone may be code: JavaScript allows it).
    let in_pattern = unnamed_vars(pattern);
    let in_rewrite = unnamed_vars(rewrite);
    let spelled: Vec<String> = in_pattern.into_iter().filter(|v| in_rewrite.contains(v)).collect();
    if !spelled.is_empty() {
        let taken: BTreeSet<String> = Template::parse(pattern)
            .used_vars()
            .into_iter()
            .chain(Template::parse(rewrite).used_vars())
            .collect();
        let (pattern, rewrite) = named(pattern, rewrite, &spelled, &taken);
        return Err(RewriteError::Unnamed { pattern, rewrite, spelled });
    }
    let bound = spelled_vars(pattern);
    let used = Template::parse(rewrite).used_vars();
    let unbound: Vec<String> = used.difference(&bound).cloned().collect();
    if unbound.is_empty() {
        Ok(())
    } else {
        Err(RewriteError::UnboundMetavariables { unbound, bound: bound.into_iter().collect() })
    }
}

/// Plans replacing every match of `pattern` in `scope` with `rewrite`.
/// Matches nested inside another's captures are rewritten too, inside out.
pub fn plan(scope: &Scope, pattern: &str, rewrite: &str) -> Result<RewritePlan, RewriteError> {
    check_template(pattern, rewrite)?;
    let spaced = Template::parse(rewrite);
    let tabbed = Template::with_tabs(rewrite);
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
        let template = if indented_with_tabs(file.source) { &tabbed } else { &spaced };
        let mut matches: Vec<NodeMatch<'_, StrDoc<Lang>>> = Vec::new();
        for region in file.regions {
            let found = region.pattern.find_all(&region.root.root());
            // A region where the pattern reads as text binding nothing (a
            // Markdown file, for a search in every language) matters only
            // where it matches.
            let missing: Vec<String> =
                spaced.used_vars().into_iter().filter(|v| !region.pattern.bound_vars.contains(v)).collect();
            if !missing.is_empty() && !found.is_empty() {
                let bound = region.pattern.bound_vars.iter().cloned().collect();
                *unbound.lock() = Some(RewriteError::UnboundMetavariables { unbound: missing, bound });
                return None;
            }
            matches.extend(found);
        }
        let nest = Nest::new(matches, file.source, template, keeps_semicolon);
        let after = nest.apply();
        let (replacements, nested, nested_left) = nest.counts();
        if replacements > 0
            && after != file.source
            && let Some(line) = newly_broken(file, &after)
        {
            broken.lock().get_or_insert(RewriteError::BreaksSyntax { file: file.rel.to_string(), line });
            return None;
        }
        (replacements > 0 && after != file.source).then(|| FileRewrite {
            rel: file.rel.to_string(),
            path: file.path.to_path_buf(),
            before: file.source.to_string(),
            after,
            replacements,
            nested,
            nested_left,
        })
    })?;
    if let Some(e) = unbound.into_inner().or(broken.into_inner()) {
        return Err(e);
    }
    Ok(RewritePlan { files: per_file.into_iter().map(|(_, f)| f).collect(), coverage })
}

/// Where the rewrite broke a tree that parsed: `Some(line)` (1-based,
/// when found) if a tree of `after` — the file in its language, or a region
/// of an embedded language searched in it — has a syntax error its
/// counterpart in the file as it is did not have. A tree that was broken
/// before does not turn the check off for the others.
fn newly_broken(file: &ParsedFile<'_>, after: &str) -> Option<Option<usize>> {
    let before = tree_errors(file, file.source);
    let now = tree_errors(file, after);
    let broken_before = before.iter().filter(|e| e.is_some()).count();
    let broken_now = now.iter().filter(|e| e.is_some()).count();
    let newly = now.iter().zip(&before).find(|(n, b)| n.is_some() && b.is_none()).map(|(n, _)| *n);
    match newly {
        Some(line) => line,
        None if broken_now > broken_before || now.len() != before.len() => {
            Some(now.iter().flatten().next().copied().flatten())
        }
        None => None,
    }
}

/// Per tree of `text` read as `file` was read (its own language first,
/// then each embedded region searched in it): `None` when it parses, or
/// the first line (1-based) of an error in it when one is found.
fn tree_errors(file: &ParsedFile<'_>, text: &str) -> Vec<Option<Option<usize>>> {
    let root = file.lang.ast_grep(text);
    let mut trees = vec![root.clone()];
    let embedded: Vec<Lang> =
        file.regions.iter().map(|r| *r.root.lang()).filter(|l| *l != file.lang).collect();
    if !embedded.is_empty() {
        let wanted = |name: &str| embedded.iter().copied().find(|l| name.parse::<Lang>().ok() == Some(*l));
        trees.extend(root.get_injections(wanted));
    }
    trees
        .iter()
        .map(|t| {
            let node = t.root();
            node.get_inner_node().has_error().then(|| {
                node.dfs().find(|n| n.is_error() || n.is_missing()).map(|n| n.start_pos().line() + 1)
            })
        })
        .collect()
}

/// A file's matches, nested by containment, rewritten inside out.
struct Nest<'t, 's> {
    matches: Vec<NodeMatch<'t, StrDoc<Lang>>>,
    /// Indices of the matches inside each match (its nearest), in order.
    children: Vec<Vec<usize>>,
    /// Indices of the outermost matches, in order.
    top: Vec<usize>,
    source: &'s str,
    template: &'s Template,
    keeps_semicolon: bool,
    /// Which matches a rendering used.
    applied: std::cell::RefCell<BTreeSet<usize>>,
}

impl<'t, 's> Nest<'t, 's> {
    fn new(
        mut matches: Vec<NodeMatch<'t, StrDoc<Lang>>>,
        source: &'s str,
        template: &'s Template,
        keeps_semicolon: bool,
    ) -> Self {
        // Outer before inner: by start, then the longer first; a node and
        // its only child can span the same text, and match once.
        matches.sort_by_key(|m| (m.range().start, std::cmp::Reverse(m.range().end)));
        matches.dedup_by_key(|m| m.range());
        let mut children = vec![Vec::new(); matches.len()];
        let mut top = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for (i, m) in matches.iter().enumerate() {
            let range = m.range();
            while open.last().is_some_and(|&o| matches[o].range().end <= range.start) {
                open.pop();
            }
            match open.last() {
                Some(&parent) if matches[parent].range().end >= range.end => children[parent].push(i),
                _ => top.push(i),
            }
            open.push(i);
        }
        Nest { matches, children, top, source, template, keeps_semicolon, applied: Default::default() }
    }

    /// The whole source with every outermost match rewritten.
    fn apply(&self) -> String {
        self.splice(0..self.source.len(), &self.top)
    }

    /// `range` of the source with those of `inside` that lie within it rewritten.
    fn splice(&self, range: Range<usize>, inside: &[usize]) -> String {
        let mut out = String::with_capacity(range.len());
        let mut cursor = range.start;
        for &i in inside {
            let at = self.matches[i].range();
            if at.start < cursor || at.end > range.end || at.start < range.start {
                continue;
            }
            out.push_str(&self.source[cursor..at.start]);
            out.push_str(&self.rewrite(i));
            cursor = at.end;
        }
        out.push_str(&self.source[cursor..range.end]);
        out
    }

    /// The text match `i` becomes; a match that ends in `;` keeps it when
    /// the rewrite does not write one.
    fn rewrite(&self, i: usize) -> String {
        self.applied.borrow_mut().insert(i);
        let m = &self.matches[i];
        let mut text = self.template.render(m, self.source, &Within { nest: self, of: i });
        // The node's own `;` (not one of a statement it holds: C#
        // `if (v) return;` keeps its `return;` inside the rewrite).
        let owns_semicolon = m.get_node().children().last().is_some_and(|last| last.kind() == ";");
        if self.keeps_semicolon && owns_semicolon && !text.trim_end().ends_with(';') {
            text.push(';');
        }
        text
    }

    /// Matches rewritten, how many of them were nested in another, and
    /// nested matches whose text the rewrite did not carry.
    fn counts(&self) -> (usize, usize, usize) {
        let applied = self.applied.borrow();
        let top = self.top.iter().filter(|i| applied.contains(i)).count();
        (applied.len(), applied.len() - top, self.matches.len() - applied.len())
    }

    /// Every match inside match `i`, at any depth, in document order.
    fn descendants(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = self.children[i].clone();
        while let Some(j) = stack.pop() {
            out.push(j);
            stack.extend(self.children[j].iter().copied());
        }
        out.sort_unstable();
        out
    }
}

/// A capture's text within one match: its nested matches rewritten.
struct Within<'n, 't, 's> {
    nest: &'n Nest<'t, 's>,
    of: usize,
}

impl Render for Within<'_, '_, '_> {
    fn span(&self, range: Range<usize>) -> String {
        // Not only the nearest matches: one nested in a match the capture
        // leaves out (`f(f($X))` over `f(f(f(f(1))))`) stands in it too.
        // Sorted by position, outer first, `splice` takes the outermost.
        self.nest.splice(range, &self.nest.descendants(self.of))
    }
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

    #[test]
    fn an_unnamed_metavariable_in_the_rewrite_is_named_as_the_cause() {
        let text = check_template("foo($$$)", "bar($$$, 0)").unwrap_err().to_string();
        assert_eq!(
            text,
            "the rewrite uses `$$$`, which binds nothing: an unnamed metavariable matches without keeping what it matched, so the rewrite has nothing to put there; name it in both, e.g. pattern `foo($$$ARGS)` and rewrite `bar($$$ARGS, 0)`"
        );
        let text = check_template("f($_, $$$REST)", "g($_, $$$REST)").unwrap_err().to_string();
        assert!(
            text.contains("uses `$_`")
                && text.contains("pattern `f($X, $$$REST)` and rewrite `g($X, $$$REST)`"),
            "{text}"
        );
        // A name already taken is not suggested, and no two get one name.
        let text = check_template("f($$$, $$$ARGS)", "g($$$, $$$ARGS)").unwrap_err().to_string();
        assert!(text.contains("pattern `f($$$ARGS2, $$$ARGS)` and rewrite `g($$$ARGS2, $$$ARGS)`"), "{text}");
        let text = check_template("f($_, $_B)", "g($_B, $_)").unwrap_err().to_string();
        assert!(text.contains("pattern `f($X, $X2)` and rewrite `g($X2, $X)`"), "{text}");
        // Two places of one `$_` are two nodes: two names, not one that
        // would make them equal.
        let text = check_template("f($_, $_)", "g($_)").unwrap_err().to_string();
        assert!(text.contains("pattern `f($X, $X2)` and rewrite `g($X)`"), "{text}");
        // `$_` inside `$$$_` is not a place of its own.
        let text = check_template("f($$$_, $_)", "g($_)").unwrap_err().to_string();
        assert!(text.contains("pattern `f($$$_, $X)`"), "{text}");
        // `$$$` only in the rewrite may be code (a JavaScript identifier).
        assert!(check_template("foo($A)", "$$$.bar($A)").is_ok());
        assert_eq!(unnamed_vars("a($$$, $_, $$$_REST, $$$REST, $A, $_B)"), ["$$$", "$_", "$$$_REST", "$_B"]);
    }
}
