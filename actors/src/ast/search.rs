//! Structural search: every match of a pattern in a scope, with positions
//! and captured metavariables.

use std::collections::BTreeMap;

use ast_grep_core::NodeMatch;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use serde::Serialize;

use super::lang::Lang;
use super::scan::{Coverage, ParsedFile, Reading, Region, ScanError, Scope, scan};

/// Longest match text carried in a result, in characters; longer ones are
/// cut and flagged.
pub const MAX_MATCH_TEXT: usize = 4 * 1024;
/// Longest line (in characters) carried as a match's context line.
pub const MAX_LINE_TEXT: usize = 240;
/// Highest `max_results` a caller may ask for.
pub const MAX_RESULTS_LIMIT: usize = 100_000;

/// One match, with 1-based lines and columns (columns count characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Match {
    /// Path relative to the working directory.
    pub path: String,
    /// The file's language.
    pub language: String,
    /// First line of the match, 1-based.
    pub line: usize,
    /// First column, 1-based, in characters.
    pub column: usize,
    /// Last line, 1-based.
    pub end_line: usize,
    /// Column just past the match, 1-based, in characters.
    pub end_column: usize,
    /// Byte offset of the start.
    pub start_byte: usize,
    /// Byte offset just past the end.
    pub end_byte: usize,
    /// The matched text (cut at [`MAX_MATCH_TEXT`]).
    pub text: String,
    /// Whether `text` was cut.
    pub text_truncated: bool,
    /// The source line the match starts on (cut at [`MAX_LINE_TEXT`]).
    pub line_text: String,
    /// Captured metavariables by name: the source text each one bound
    /// (for `$$$NAME`, the span from its first to its last node).
    pub captures: BTreeMap<String, String>,
}

/// The outcome of a search.
#[derive(Debug, Clone, Serialize)]
pub struct SearchOutcome {
    /// The first `max_results` matches, ordered by path then position.
    pub matches: Vec<Match>,
    /// How many matches there are in all.
    pub total: usize,
    /// The cap that was applied.
    pub max_results: usize,
    /// What the search covered.
    pub coverage: Coverage,
}

/// Searches `scope` for `pattern`, keeping the first `max_results` matches.
pub fn search(scope: &Scope, pattern: &str, max_results: usize) -> Result<SearchOutcome, ScanError> {
    // Every match is counted, but only the first `max_results` of a file are
    // described: no file can contribute more than that to the answer, and a
    // minified file can hold millions of matches.
    let (per_file, coverage) = scan(scope, pattern, Reading::Loose, |file| {
        let mut count = 0usize;
        let mut described = Vec::new();
        for region in file.regions {
            for (n, m) in region.pattern.find_all(&region.root.root()).iter().enumerate() {
                count += 1;
                if n < max_results {
                    described.push(describe_match(file, region, m));
                }
            }
        }
        // Regions are searched one after another; the answer is in file
        // order, and a file gives at most `max_results` of it.
        described.sort_by_key(|m| (m.start_byte, std::cmp::Reverse(m.end_byte)));
        described.truncate(max_results);
        (count > 0).then_some((count, described))
    })?;
    let total = per_file.iter().map(|(_, (count, _))| count).sum();
    let matches = per_file.into_iter().flat_map(|(_, (_, m))| m).take(max_results).collect();
    Ok(SearchOutcome { matches, total, max_results, coverage })
}

fn describe_match(file: &ParsedFile<'_>, region: &Region<'_>, m: &NodeMatch<'_, StrDoc<Lang>>) -> Match {
    let source = file.source;
    let range = m.range();
    let (start, end) = (m.start_pos(), m.end_pos());
    let line = start.line() + 1;
    let column = start.column(m) + 1;
    let end_line = end.line() + 1;
    let end_column = end.column(m) + 1;
    let text = &source[range.clone()];
    let (text, text_truncated) = cut(text, MAX_MATCH_TEXT);
    let line_start = memchr::memrchr(b'\n', &source.as_bytes()[..range.start]).map_or(0, |i| i + 1);
    let line_end = source[range.start..].find('\n').map_or(source.len(), |i| range.start + i);
    let (line_text, _) = cut(source[line_start..line_end].trim_end(), MAX_LINE_TEXT);
    Match {
        path: file.rel.to_string(),
        language: region.pattern.lang.id().to_string(),
        line,
        column,
        end_line,
        end_column,
        start_byte: range.start,
        end_byte: range.end,
        text,
        text_truncated,
        line_text,
        captures: captures(source, m),
    }
}

/// The captured metavariables of a match, by name.
pub(crate) fn captures(source: &str, m: &NodeMatch<'_, StrDoc<Lang>>) -> BTreeMap<String, String> {
    let env = m.get_env();
    let mut out = BTreeMap::new();
    for var in env.get_matched_variables() {
        match var {
            MetaVariable::Capture(name, _) => {
                if let Some(node) = env.get_match(&name) {
                    out.insert(name, cut(&node.text(), MAX_MATCH_TEXT).0);
                }
            }
            MetaVariable::MultiCapture(name) => {
                let nodes = env.get_multiple_matches(&name);
                let text = match (nodes.first(), nodes.last()) {
                    (Some(first), Some(last)) => {
                        cut(&source[first.range().start..last.range().end], MAX_MATCH_TEXT).0
                    }
                    _ => String::new(),
                };
                out.insert(name, text);
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
        }
    }
    out
}

use crate::text::cut;
