//! The bundled grammars and their glue to ast-grep-core.
//!
//! Each [`Lang`] is a tree-sitter grammar compiled into the binary. The glue
//! does two things ast-grep-core cannot know on its own:
//!
//! - **Metavariable spelling.** Patterns spell metavariables with `$`. In
//!   grammars where `$` cannot start an identifier (python, rust, c, c++, go)
//!   the pattern is rewritten to use an *expando* character (`µ`) that the
//!   grammar accepts inside identifiers, so `$X` parses as a name and is then
//!   recognised as a metavariable. Dart, JavaScript and TypeScript accept `$`
//!   in identifiers and keep it.
//! - **File association.** Extensions map to a language, so a search over a
//!   file needs no `language` argument.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use ast_grep_core::matcher::PatternBuilder;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage};
use ast_grep_core::{Language, Pattern, PatternError};

/// The character that stands in for `$` where a grammar rejects `$` in names.
const EXPANDO: char = 'µ';

/// A bundled tree-sitter grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    /// Dart (`.dart`).
    Dart,
    /// Python (`.py`, `.pyi`).
    Python,
    /// Rust (`.rs`).
    Rust,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`).
    Cpp,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// Go (`.go`).
    Go,
}

impl Lang {
    /// Every bundled grammar, in the order `status` lists them.
    pub const ALL: [Lang; 9] = [
        Lang::Dart,
        Lang::Python,
        Lang::Rust,
        Lang::C,
        Lang::Cpp,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
    ];

    /// The id used in tool arguments (`language: "python"`).
    pub fn id(self) -> &'static str {
        match self {
            Lang::Dart => "dart",
            Lang::Python => "python",
            Lang::Rust => "rust",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
        }
    }

    /// File extensions associated with the language.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Dart => &["dart"],
            Lang::Python => &["py", "pyi"],
            Lang::Rust => &["rs"],
            Lang::C => &["c", "h"],
            Lang::Cpp => &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++"],
            Lang::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Lang::TypeScript => &["ts", "mts", "cts"],
            Lang::Tsx => &["tsx"],
            Lang::Go => &["go"],
        }
    }

    /// The language a file belongs to, from its extension.
    pub fn from_extension(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        Lang::ALL.into_iter().find(|lang| lang.extensions().iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }

    /// The compiled tree-sitter grammar.
    pub fn grammar(self) -> TSLanguage {
        match self {
            Lang::Dart => tree_sitter_dart::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
        }
    }

    /// Whether the grammar rejects `$` in identifiers, so patterns need the
    /// expando rewrite.
    fn needs_expando(self) -> bool {
        matches!(self, Lang::Python | Lang::Rust | Lang::C | Lang::Cpp | Lang::Go)
    }

    /// Loads the grammar into a parser; returns its ABI version, or why it
    /// does not load.
    pub fn check(self) -> Result<usize, String> {
        let grammar = self.grammar();
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&grammar).map_err(|e| e.to_string())?;
        Ok(grammar.abi_version())
    }

    /// The comma-separated list of ids, for error messages.
    pub fn id_list() -> String {
        Lang::ALL.map(Lang::id).join(", ")
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A language id that names no bundled grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a bundled grammar; use one of: {list}", list = Lang::id_list())]
pub struct UnknownLang(pub String);

impl FromStr for Lang {
    type Err = UnknownLang;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let found = match lower.as_str() {
            "js" | "jsx" => Some(Lang::JavaScript),
            "ts" => Some(Lang::TypeScript),
            "py" => Some(Lang::Python),
            "rs" => Some(Lang::Rust),
            "c++" | "cxx" => Some(Lang::Cpp),
            "golang" => Some(Lang::Go),
            other => Lang::ALL.into_iter().find(|l| l.id() == other),
        };
        found.ok_or_else(|| UnknownLang(s.to_string()))
    }
}

impl Language for Lang {
    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        if self.needs_expando() { Cow::Owned(expand_metavars(query)) } else { Cow::Borrowed(query) }
    }

    fn expando_char(&self) -> char {
        if self.needs_expando() { EXPANDO } else { '$' }
    }

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Lang::from_extension(path.as_ref())
    }

    fn kind_to_id(&self, kind: &str) -> u16 {
        self.grammar().id_for_node_kind(kind, true)
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.grammar().field_id_for_name(field).map(|f| f.get())
    }

    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        self.grammar()
    }
}

/// Rewrites the `$` of every metavariable (`$A`, `$$$ARGS`, `$_`, bare `$$$`)
/// to the expando character; any other `$` is left alone.
pub(crate) fn expand_metavars(query: &str) -> String {
    let mut out = String::with_capacity(query.len() + 8);
    let mut dollars = 0usize;
    let flush = |out: &mut String, dollars: usize, is_metavar: bool| {
        let sigil = if is_metavar { EXPANDO } else { '$' };
        out.extend(std::iter::repeat_n(sigil, dollars));
    };
    for c in query.chars() {
        if c == '$' {
            dollars += 1;
            continue;
        }
        if dollars > 0 {
            let is_metavar = c.is_ascii_uppercase() || c == '_' || dollars == 3;
            flush(&mut out, dollars, is_metavar);
            dollars = 0;
        }
        out.push(c);
    }
    if dollars > 0 {
        flush(&mut out, dollars, dollars == 3);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_map_to_languages() {
        assert_eq!(Lang::from_extension(Path::new("a/b.py")), Some(Lang::Python));
        assert_eq!(Lang::from_extension(Path::new("x.TSX")), Some(Lang::Tsx));
        assert_eq!(Lang::from_extension(Path::new("x.h")), Some(Lang::C));
        assert_eq!(Lang::from_extension(Path::new("Makefile")), None);
    }

    #[test]
    fn ids_round_trip_and_unknown_ids_list_the_choices() {
        for lang in Lang::ALL {
            assert_eq!(lang.id().parse::<Lang>(), Ok(lang));
        }
        let err = "cobol".parse::<Lang>().unwrap_err().to_string();
        assert!(err.contains("cobol") && err.contains("python"), "{err}");
    }

    #[test]
    fn expando_rewrites_only_metavariables() {
        assert_eq!(expand_metavars("print($A)"), "print(µA)");
        assert_eq!(expand_metavars("f($$$ARGS, $_)"), "f(µµµARGS, µ_)");
        assert_eq!(expand_metavars("g($$$)"), "g(µµµ)");
        assert_eq!(expand_metavars("'$x' + $1"), "'$x' + $1");
    }

    #[test]
    fn every_grammar_loads() {
        for lang in Lang::ALL {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&lang.grammar()).expect("grammar ABI matches");
        }
    }
}
