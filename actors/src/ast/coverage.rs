//! What a scan looked at and what it left out, so an answer can say both.

use std::collections::BTreeMap;

use serde::Serialize;

/// How many example paths a count of skipped entries carries.
pub const MAX_EXAMPLES: usize = 5;

/// Counts of what a scan looked at, so results can say what they cover.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Files searched (or prefiltered, or skipped for what they hold): those
    /// of a searched language where the pattern compiled.
    pub files: usize,
    /// Files actually parsed (the rest were skipped or prefiltered).
    pub parsed: usize,
    /// Files the prefilter skipped because a required token was absent.
    pub prefiltered: usize,
    /// Files skipped as binary (a NUL byte near the start).
    pub skipped_binary: usize,
    /// Files skipped for being over [`super::scan::MAX_FILE_BYTES`].
    pub skipped_large: usize,
    /// Files skipped because they are not UTF-8.
    pub skipped_not_utf8: usize,
    /// Files or directories that could not be read.
    pub unreadable: usize,
    /// Symbolic links, not followed (a link can lead out of the working
    /// directory, or to a file already searched under its own name).
    pub skipped_symlinks: usize,
    /// Files and directories left out by `.gitignore`, `.ignore` or git's
    /// excludes (a directory counts once, whatever it holds).
    pub skipped_ignored: usize,
    /// The first ignored paths (relative, in path order, directories with
    /// a trailing `/`).
    pub ignored_examples: Vec<String>,
    /// [`Coverage::files`] per language.
    pub per_language: BTreeMap<String, usize>,
    /// Files not searched because the pattern does not parse in their
    /// language, per language (why: [`Coverage::pattern_unparseable_in`]).
    pub unparseable_files: BTreeMap<String, usize>,
    /// Regions of another language searched inside files (`<script>` in
    /// HTML is JavaScript), per language.
    pub embedded: BTreeMap<String, usize>,
    /// Files of a kindred language left out because `language` named
    /// another (`.h` files are C, so `language: cpp` leaves them out, as
    /// the ast-grep CLI does), per language.
    pub other_language: BTreeMap<String, usize>,
    /// Set when a named file was searched in the language asked for
    /// although its extension says another: that one.
    pub named_file_language: Option<String>,
    /// Languages present whose grammar could not parse the pattern, with why.
    pub pattern_unparseable_in: BTreeMap<String, String>,
    /// Languages whose files were searched with the pattern read loosely
    /// (it has syntax errors there; see [`super::scan::Reading::Loose`]), with why.
    pub pattern_loose_in: BTreeMap<String, String>,
}

impl Coverage {
    /// Adds another thread's counts.
    pub(crate) fn merge(&mut self, other: Coverage) {
        self.files += other.files;
        self.parsed += other.parsed;
        self.prefiltered += other.prefiltered;
        self.skipped_binary += other.skipped_binary;
        self.skipped_large += other.skipped_large;
        self.skipped_not_utf8 += other.skipped_not_utf8;
        self.unreadable += other.unreadable;
        self.skipped_symlinks += other.skipped_symlinks;
        self.skipped_ignored += other.skipped_ignored;
        for example in other.ignored_examples {
            self.note_ignored(example);
        }
        for (map, theirs) in [
            (&mut self.per_language, other.per_language),
            (&mut self.unparseable_files, other.unparseable_files),
            (&mut self.embedded, other.embedded),
            (&mut self.other_language, other.other_language),
        ] {
            for (k, v) in theirs {
                *map.entry(k).or_default() += v;
            }
        }
        if self.named_file_language.is_none() {
            self.named_file_language = other.named_file_language;
        }
        self.pattern_unparseable_in.extend(other.pattern_unparseable_in);
        self.pattern_loose_in.extend(other.pattern_loose_in);
    }

    /// Keeps `path` among the examples of what was ignored: the first
    /// [`MAX_EXAMPLES`] in path order, whichever thread met them.
    pub(crate) fn note_ignored(&mut self, path: String) {
        self.ignored_examples.push(path);
        self.ignored_examples.sort();
        self.ignored_examples.truncate(MAX_EXAMPLES);
    }

    /// Files of a searched language left unsearched for any reason other
    /// than the prefilter or an ignore file: what a search could not see.
    pub fn skipped(&self) -> usize {
        self.skipped_binary
            + self.skipped_large
            + self.skipped_not_utf8
            + self.unreadable
            + self.skipped_symlinks
    }
}
