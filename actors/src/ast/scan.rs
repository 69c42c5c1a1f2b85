//! Running a compiled pattern over every file in a scope.
//!
//! The walk ([`super::walk`]) hands each file to a thread that reads,
//! prefilters, parses and matches it. A file is searched in its own
//! language, and in the languages embedded in it (`<script>` and `<style>`
//! in HTML, as the ast-grep CLI searches them): each is a [`Region`] of the
//! file, parsed on its own, with positions in the whole file. Files are
//! skipped — and counted, so a result can say so — when they are binary,
//! larger than [`MAX_FILE_BYTES`], not UTF-8, unreadable or symbolic
//! links. The prefilter skips parsing a file that lacks a literal token the
//! pattern requires; it never changes a result (a test compares results
//! with and without it).
//!
//! The per-file work is a closure, so search and rewrite share the walk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use ast_grep_core::AstGrep;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc};
use ast_grep_language::SupportLang;
use parking_lot::Mutex;

pub use super::coverage::Coverage;
use super::lang::Lang;
use super::pattern::{CompiledPattern, PatternCompileError, compile};
use super::walk::{Found, walk};

/// Files larger than this are skipped (and counted): one would dominate a
/// search's time and memory. Bundles such as TypeScript's 6 MB `_tsc.js`
/// are code the ast-grep CLI searches, so they stay under it.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// How many leading bytes are checked for a NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Languages whose files a search in the other leaves out, and says so:
/// the ast-grep CLI reads `.h` as C and `.tsx` as its own language.
const KINDRED: &[(Lang, Lang)] = &[
    (Lang::C, Lang::CPP),
    (Lang::CPP, Lang::C),
    (Lang::TYPESCRIPT, Lang::TSX),
    (Lang::TSX, Lang::TYPESCRIPT),
];

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
    /// Only files of this language (and regions of it inside others);
    /// `None` means every bundled language present.
    pub lang: Option<Lang>,
    /// Whether to skip parsing files that lack a required token.
    pub prefilter: bool,
}

/// One parsed region of a file: the whole file in its own language, or a
/// part of it in an embedded one.
pub struct Region<'a> {
    /// The compiled pattern for the region's language.
    pub pattern: &'a CompiledPattern,
    /// The parsed tree (owns the whole file's text; positions are the file's).
    pub root: &'a AstGrep<StrDoc<Lang>>,
}

/// One parsed file handed to the per-file closure.
pub struct ParsedFile<'a> {
    /// Absolute path.
    pub path: &'a Path,
    /// Path relative to the root, `/`-separated.
    pub rel: &'a str,
    /// The file's language, from its name (or the one asked for).
    pub lang: Lang,
    /// The file's text.
    pub source: &'a str,
    /// The regions searched, in file order; the file's own tree first.
    pub regions: &'a [Region<'a>],
}

/// Why a scan could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The pattern did not compile.
    #[error(transparent)]
    Pattern(#[from] PatternCompileError),
    /// A single file was named whose language is unknown and none was given.
    #[error(
        "cannot tell the language of `{0}` from its extension (the bundled grammars: {list})",
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
        self.slots[lang.index()].get_or_init(|| {
            let compiled = compile(&self.source, lang)?;
            match (&compiled.loose, self.reading) {
                (Some(why), Reading::Strict) => Err(why.clone()),
                _ => Ok(Arc::new(compiled)),
            }
        })
    }

    /// The pattern for `lang`, or `None` after noting (once per language)
    /// why it does not compile there.
    fn usable(&self, lang: Lang, cov: &mut Coverage) -> Option<Arc<CompiledPattern>> {
        match self.get(lang) {
            Ok(p) => {
                if let Some(why) = &p.loose {
                    cov.pattern_loose_in.entry(lang.id().to_string()).or_insert_with(|| why.to_string());
                }
                Some(p.clone())
            }
            Err(e) => {
                cov.pattern_unparseable_in.entry(lang.id().to_string()).or_insert_with(|| e.to_string());
                None
            }
        }
    }

    /// Whether some language met compiled the pattern, or none was met.
    fn compiled_somewhere(&self) -> bool {
        let met: Vec<_> = self.slots.iter().filter_map(OnceLock::get).collect();
        met.is_empty() || met.iter().any(|r| r.is_ok())
    }
}

/// The languages a file of `lang` can hold regions of (HTML: JavaScript,
/// TypeScript, TSX, CSS).
fn embeddable(lang: Lang) -> Vec<Lang> {
    lang.injectable_languages()
        .unwrap_or(&[])
        .iter()
        .filter_map(|name| SupportLang::from_str(name).ok())
        .filter_map(|support| Lang::ALL.into_iter().find(|l| l.support() == support))
        .collect()
}

/// What of a file a scan searches.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    /// The file in its own language.
    whole: bool,
    /// Regions of these languages inside it.
    embedded: Vec<Lang>,
}

impl Plan {
    fn for_file(wanted: Option<Lang>, lang: Lang) -> Option<Plan> {
        let embedded = embeddable(lang);
        match wanted {
            None => Some(Plan { whole: true, embedded }),
            Some(w) if w == lang => Some(Plan { whole: true, embedded: Vec::new() }),
            Some(w) if embedded.contains(&w) => Some(Plan { whole: false, embedded: vec![w] }),
            Some(_) => None,
        }
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
        return scan_named_file(scope, &table, &each);
    }

    // Each walker thread keeps its findings to itself and hands them over
    // once, when the walk drops it: no lock on the per-file path.
    let (results, findings) = crossbeam_channel::unbounded::<PerFile<T>>();
    let coverage: Mutex<Coverage> = Mutex::new(Coverage::default());
    let tally = walk(&scope.path, scan_threads(), || {
        let mut worker = Worker {
            scope,
            table: &table,
            each: &each,
            found: Vec::new(),
            cov: Coverage::default(),
            results: &results,
            coverage: &coverage,
        };
        move |found: Found<'_>| worker.visit(found)
    });
    drop(results);
    let mut out: PerFile<T> = findings.into_iter().flatten().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    let mut cov = coverage.into_inner();
    cov.unreadable += tally.errors;
    for path in tally.ignored {
        let is_dir = path.is_dir();
        if is_dir || Lang::for_path(&path).is_some_and(|l| Plan::for_file(scope.lang, l).is_some()) {
            cov.skipped_ignored += 1;
            let rel = crate::fs::relative(&scope.root, &path);
            cov.note_ignored(if is_dir { format!("{rel}/") } else { rel });
        }
    }
    if !table.compiled_somewhere() {
        let why: Vec<String> = cov.pattern_unparseable_in.values().cloned().collect();
        return Err(ScanError::UnparseableEverywhere(why.join("; ")));
    }
    Ok((out, cov))
}

/// A file named as the scope: searched in the language asked for, whatever
/// its extension says (and the answer says so when they disagree).
fn scan_named_file<T, F>(
    scope: &Scope,
    table: &PatternTable,
    each: &F,
) -> Result<(PerFile<T>, Coverage), ScanError>
where
    F: Fn(&ParsedFile<'_>) -> Option<T>,
{
    let by_name = Lang::for_path(&scope.path);
    let mut cov = Coverage::default();
    let plan = match (scope.lang, by_name) {
        (None, None) => {
            return Err(ScanError::UnknownFileLanguage(crate::fs::relative(&scope.root, &scope.path)));
        }
        (Some(wanted), Some(own)) => {
            Plan::for_file(Some(wanted), own).map(|plan| (own, plan)).unwrap_or_else(|| {
                cov.named_file_language = Some(own.id().to_string());
                (wanted, Plan { whole: true, embedded: Vec::new() })
            })
        }
        (Some(wanted), None) => (wanted, Plan { whole: true, embedded: Vec::new() }),
        (None, Some(own)) => (own, Plan::for_file(None, own).expect("a file's own language is searched")),
    };
    let (lang, plan) = plan;
    if plan.whole {
        table.get(lang).clone()?;
    }
    let found = visit_file(scope, table, &scope.path, lang, &plan, &mut cov, each);
    Ok((found.into_iter().collect(), cov))
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
    fn visit(&mut self, found: Found<'_>) {
        let path = match found {
            Found::File(path) => path,
            Found::Symlink(path) => {
                // A link to a directory may hold anything; a link to a file
                // matters when the file is of a searched language.
                let searched =
                    Lang::for_path(path).is_some_and(|l| Plan::for_file(self.scope.lang, l).is_some());
                if searched || path.is_dir() {
                    self.cov.skipped_symlinks += 1;
                }
                return;
            }
        };
        let Some(lang) = Lang::for_path(path) else {
            return;
        };
        let Some(plan) = Plan::for_file(self.scope.lang, lang) else {
            if let Some(wanted) = self.scope.lang
                && KINDRED.contains(&(wanted, lang))
            {
                *self.cov.other_language.entry(lang.id().to_string()).or_default() += 1;
            }
            return;
        };
        if let Some(hit) = visit_file(self.scope, self.table, path, lang, &plan, &mut self.cov, self.each) {
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
    plan: &Plan,
    cov: &mut Coverage,
    each: &F,
) -> Option<(String, T)>
where
    F: Fn(&ParsedFile<'_>) -> Option<T>,
{
    let whole = if plan.whole { table.usable(lang, cov) } else { None };
    let embedded: Vec<(Lang, Arc<CompiledPattern>)> =
        plan.embedded.iter().filter_map(|&l| Some((l, table.usable(l, cov)?))).collect();
    if whole.is_none() && embedded.is_empty() {
        *cov.unparseable_files.entry(lang.id().to_string()).or_default() += 1;
        return None;
    }
    cov.files += 1;
    *cov.per_language.entry(lang.id().to_string()).or_default() += 1;
    let bytes = read_source(path, cov)?;
    if scope.prefilter && !whole.iter().chain(embedded.iter().map(|(_, p)| p)).any(|p| p.may_match(&bytes)) {
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
    let mut trees: Vec<(Arc<CompiledPattern>, AstGrep<StrDoc<Lang>>)> = Vec::new();
    if !embedded.is_empty() {
        let wanted = |name: &str| {
            let support = SupportLang::from_str(name).ok()?;
            embedded.iter().find(|(l, _)| l.support() == support).map(|(l, _)| *l)
        };
        for region in root.get_injections(wanted) {
            let region_lang = *region.lang();
            if let Some((_, pattern)) = embedded.iter().find(|(l, _)| *l == region_lang) {
                *cov.embedded.entry(region_lang.id().to_string()).or_default() += 1;
                trees.push((pattern.clone(), region));
            }
        }
    }
    if let Some(pattern) = whole {
        trees.insert(0, (pattern, root));
    }
    let regions: Vec<Region<'_>> = trees.iter().map(|(pattern, root)| Region { pattern, root }).collect();
    let rel = crate::fs::relative(&scope.root, path);
    let file = ParsedFile { path, rel: &rel, lang, source: &source, regions: &regions };
    let out = each(&file)?;
    Some((rel, out))
}

/// The file's bytes, or `None` after counting why it is not searched.
fn read_source(path: &Path, cov: &mut Coverage) -> Option<Vec<u8>> {
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
    Some(bytes)
}

/// Files per bundled language under `dir`, counting at most `cap` files;
/// the flag says whether the cap was hit. What languages a project holds:
/// ignore files honoured, dotfiles counted, but not what hidden
/// directories hold (`.venv`, `.tox`, `.git`: tools' files, which would
/// use up the cap before the project's own).
pub fn count_files_by_language(dir: &Path, cap: usize) -> (BTreeMap<Lang, usize>, bool) {
    let mut counts = BTreeMap::new();
    let mut seen = 0;
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .filter_entry(|e| {
            let hidden = e.file_name().to_str().is_some_and(|n| n.starts_with('.'));
            !(hidden && e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir()))
        })
        .build();
    for entry in walker.flatten() {
        if seen >= cap {
            return (counts, true);
        }
        if entry.file_type().is_some_and(|t| t.is_file()) {
            seen += 1;
            if let Some(lang) = Lang::for_path(entry.path()) {
                *counts.entry(lang).or_default() += 1;
            }
        }
    }
    (counts, false)
}
