//! Walking a scope and running a compiled pattern over every file in it.
//!
//! The walk respects `.gitignore` (and `.ignore`, hidden files skipped), in
//! parallel on [`scan_threads`] threads, each of which reads, prefilters,
//! parses and matches the files it visits. Files are skipped — and counted,
//! so a result can say so — when they are binary, larger than
//! [`MAX_FILE_BYTES`], or not UTF-8. The prefilter skips parsing a file that
//! lacks a literal token the pattern requires; it never changes a result
//! (a test compares results with and without it).
//!
//! The per-file work is a closure, so search and rewrite share the walk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use ast_grep_core::AstGrep;
use ast_grep_core::tree_sitter::StrDoc;
use parking_lot::Mutex;

use super::lang::Lang;
use super::pattern::{CompiledPattern, PatternCompileError, compile};

/// Files larger than this are skipped: they are generated or data, and one
/// of them would dominate a search's time and memory.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// How many leading bytes are checked for a NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Threads one scan walks and parses with: one per core.
pub fn scan_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// What to scan.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The working directory (canonical); results are relative to it.
    pub root: PathBuf,
    /// A file or directory inside the root.
    pub path: PathBuf,
    /// Only files of this language; `None` means every bundled language present.
    pub lang: Option<Lang>,
    /// Whether to skip parsing files that lack a required token.
    pub prefilter: bool,
}

/// Counts of what a scan looked at, so results can say what they cover.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Coverage {
    /// Files of a searched language that were considered.
    pub files: usize,
    /// Files actually parsed (the rest were skipped or prefiltered).
    pub parsed: usize,
    /// Files the prefilter skipped because a required token was absent.
    pub prefiltered: usize,
    /// Files skipped as binary.
    pub skipped_binary: usize,
    /// Files skipped for being over [`MAX_FILE_BYTES`].
    pub skipped_large: usize,
    /// Files skipped because they are not UTF-8.
    pub skipped_not_utf8: usize,
    /// Files that could not be read.
    pub unreadable: usize,
    /// Files per language considered.
    pub per_language: BTreeMap<String, usize>,
    /// Languages present whose grammar could not parse the pattern, with why.
    pub pattern_unparseable_in: BTreeMap<String, String>,
    /// Languages whose files were searched with the pattern read loosely
    /// (it has syntax errors there; see [`Reading::Loose`]), with why.
    pub pattern_loose_in: BTreeMap<String, String>,
}

impl Coverage {
    fn merge(&mut self, other: Coverage) {
        self.files += other.files;
        self.parsed += other.parsed;
        self.prefiltered += other.prefiltered;
        self.skipped_binary += other.skipped_binary;
        self.skipped_large += other.skipped_large;
        self.skipped_not_utf8 += other.skipped_not_utf8;
        self.unreadable += other.unreadable;
        for (k, v) in other.per_language {
            *self.per_language.entry(k).or_default() += v;
        }
        self.pattern_unparseable_in.extend(other.pattern_unparseable_in);
        self.pattern_loose_in.extend(other.pattern_loose_in);
    }

    /// Total files skipped for any reason other than the prefilter.
    pub fn skipped(&self) -> usize {
        self.skipped_binary + self.skipped_large + self.skipped_not_utf8 + self.unreadable
    }
}

/// One parsed file handed to the per-file closure.
pub struct ParsedFile<'a> {
    /// Absolute path.
    pub path: &'a Path,
    /// Path relative to the root, `/`-separated.
    pub rel: &'a str,
    /// The compiled pattern for this file's language.
    pub pattern: &'a CompiledPattern,
    /// The parsed tree (owns the source text).
    pub root: &'a AstGrep<StrDoc<Lang>>,
}

/// Why a scan could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The pattern did not compile.
    #[error(transparent)]
    Pattern(#[from] PatternCompileError),
    /// A single file was named whose language is unknown and none was given.
    #[error(
        "cannot tell the language of `{0}` from its extension; pass `language` (one of: {list})",
        list = Lang::id_list()
    )]
    UnknownFileLanguage(String),
    /// The pattern parses in none of the languages present in the scope.
    #[error("{0}")]
    UnparseableEverywhere(String),
}

/// Whether a pattern with syntax errors may be used, read the way the
/// ast-grep CLI reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Only a clean reading: what a rewrite needs, since it writes in the
    /// shape the pattern spells.
    Strict,
    /// A loose reading is allowed, and reported in the coverage: a search
    /// finds what the CLI would, and says the pattern did not parse.
    Loose,
}

/// Patterns compiled lazily, once per language met during a walk.
struct PatternTable {
    source: String,
    reading: Reading,
    slots: [OnceLock<Result<Arc<CompiledPattern>, PatternCompileError>>; Lang::ALL.len()],
}

impl PatternTable {
    fn new(source: &str, reading: Reading) -> Self {
        Self { source: source.to_string(), reading, slots: Default::default() }
    }

    fn get(&self, lang: Lang) -> &Result<Arc<CompiledPattern>, PatternCompileError> {
        let slot = &self.slots[Lang::ALL.iter().position(|l| *l == lang).unwrap_or(0)];
        slot.get_or_init(|| {
            let compiled = compile(&self.source, lang)?;
            match (&compiled.loose, self.reading) {
                (Some(why), Reading::Strict) => Err(why.clone()),
                _ => Ok(Arc::new(compiled)),
            }
        })
    }
}

/// What one file yielded, keyed by relative path for a stable order.
pub type PerFile<T> = Vec<(String, T)>;

/// Scans `scope` for `pattern`, calling `each` on every parsed file that the
/// prefilter lets through. Returns the closure's results sorted by path,
/// and what the scan covered.
pub fn scan<T, F>(
    scope: &Scope,
    pattern: &str,
    reading: Reading,
    each: F,
) -> Result<(PerFile<T>, Coverage), ScanError>
where
    T: Send,
    F: Fn(&ParsedFile<'_>) -> Option<T> + Sync,
{
    let table = PatternTable::new(pattern, reading);
    if let Some(lang) = scope.lang {
        // Asked for one language: an unparseable pattern is an error even
        // when no file of that language is present.
        table.get(lang).clone()?;
    }
    if scope.path.is_file() {
        let lang = match scope.lang.or_else(|| Lang::from_extension(&scope.path)) {
            Some(lang) => lang,
            None => {
                let rel = crate::fs::relative(&scope.root, &scope.path);
                return Err(ScanError::UnknownFileLanguage(rel));
            }
        };
        // A named file is searched in the language asked for, whatever its extension.
        table.get(lang).clone()?;
        let mut cov = Coverage::default();
        let found = visit_file(scope, &table, &scope.path, lang, &mut cov, &each);
        let out = found.into_iter().collect();
        return Ok((out, cov));
    }

    // Each walker thread keeps its findings to itself and hands them over
    // once, when the walk drops it: no lock on the per-file path.
    let (results, findings) = crossbeam_channel::unbounded::<PerFile<T>>();
    let coverage: Mutex<Coverage> = Mutex::new(Coverage::default());
    let walker = ignore::WalkBuilder::new(&scope.path).threads(scan_threads()).build_parallel();
    walker.run(|| {
        let mut worker = Worker {
            scope,
            table: &table,
            each: &each,
            found: Vec::new(),
            cov: Coverage::default(),
            results: &results,
            coverage: &coverage,
        };
        Box::new(move |entry| {
            if let Ok(entry) = entry
                && entry.file_type().is_some_and(|t| t.is_file())
            {
                worker.visit(entry.path());
            }
            ignore::WalkState::Continue
        })
    });
    drop(results);
    let mut out: PerFile<T> = findings.into_iter().flatten().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    let cov = coverage.into_inner();
    if cov.per_language.is_empty() {
        return Ok((out, cov));
    }
    if cov.per_language.len() == cov.pattern_unparseable_in.len() {
        let why: Vec<String> = cov.pattern_unparseable_in.values().cloned().collect();
        return Err(ScanError::UnparseableEverywhere(why.join("; ")));
    }
    Ok((out, cov))
}

/// Per-thread state of a parallel walk; hands its findings over when the
/// walk drops it.
struct Worker<'s, T, F> {
    scope: &'s Scope,
    table: &'s PatternTable,
    each: &'s F,
    found: PerFile<T>,
    cov: Coverage,
    results: &'s crossbeam_channel::Sender<PerFile<T>>,
    coverage: &'s Mutex<Coverage>,
}

impl<T, F> Worker<'_, T, F>
where
    F: Fn(&ParsedFile<'_>) -> Option<T>,
{
    fn visit(&mut self, path: &Path) {
        let Some(lang) = Lang::from_extension(path) else {
            return;
        };
        if self.scope.lang.is_some_and(|wanted| wanted != lang) {
            return;
        }
        if let Some(hit) = visit_file(self.scope, self.table, path, lang, &mut self.cov, self.each) {
            self.found.push(hit);
        }
    }
}

impl<T, F> Drop for Worker<'_, T, F> {
    fn drop(&mut self) {
        let _ = self.results.send(std::mem::take(&mut self.found));
        self.coverage.lock().merge(std::mem::take(&mut self.cov));
    }
}

fn visit_file<T, F>(
    scope: &Scope,
    table: &PatternTable,
    path: &Path,
    lang: Lang,
    cov: &mut Coverage,
    each: &F,
) -> Option<(String, T)>
where
    F: Fn(&ParsedFile<'_>) -> Option<T>,
{
    cov.files += 1;
    *cov.per_language.entry(lang.id().to_string()).or_default() += 1;
    let pattern = match table.get(lang) {
        Ok(p) => p,
        Err(e) => {
            // Once per language, not per file: the message is the same.
            cov.pattern_unparseable_in.entry(lang.id().to_string()).or_insert_with(|| e.to_string());
            return None;
        }
    };
    if let Some(why) = &pattern.loose {
        cov.pattern_loose_in.entry(lang.id().to_string()).or_insert_with(|| why.to_string());
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_FILE_BYTES => {
            cov.skipped_large += 1;
            return None;
        }
        Ok(_) => {}
        Err(_) => {
            cov.unreadable += 1;
            return None;
        }
    }
    let Ok(bytes) = std::fs::read(path) else {
        cov.unreadable += 1;
        return None;
    };
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some() {
        cov.skipped_binary += 1;
        return None;
    }
    if scope.prefilter && !pattern.may_match(&bytes) {
        cov.prefiltered += 1;
        return None;
    }
    let Ok(source) = String::from_utf8(bytes) else {
        cov.skipped_not_utf8 += 1;
        return None;
    };
    let Ok(root) = AstGrep::try_new(&source, lang) else {
        cov.unreadable += 1;
        return None;
    };
    cov.parsed += 1;
    let rel = crate::fs::relative(&scope.root, path);
    let file = ParsedFile { path, rel: &rel, pattern, root: &root };
    let out = each(&file)?;
    Some((rel, out))
}

/// Files per bundled language under `dir` (respecting `.gitignore`),
/// counting at most `cap` files; the flag says whether the cap was hit.
pub fn count_files_by_language(dir: &Path, cap: usize) -> (BTreeMap<Lang, usize>, bool) {
    let mut counts = BTreeMap::new();
    let mut seen = 0;
    for entry in ignore::WalkBuilder::new(dir).build().flatten() {
        if seen >= cap {
            return (counts, true);
        }
        if entry.file_type().is_some_and(|t| t.is_file()) {
            seen += 1;
            if let Some(lang) = Lang::from_extension(entry.path()) {
                *counts.entry(lang).or_default() += 1;
            }
        }
    }
    (counts, false)
}
