//! The grammars: every language the `ast-grep-language` crate bundles, the
//! same set the ast-grep CLI knows.
//!
//! The crate holds the parsers, each language's metavariable handling (the
//! *expando* character that stands in for `$` where a grammar rejects it in
//! names: `µ` in Python, `𐀀` in C) and its file associations. [`Lang`] wraps
//! it only for what tether adds: lower-case ids in answers (`csharp`, not
//! `CSharp`), a few more spellings of them (`terraform`, `c#`, `sh`), an
//! order for maps.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::OnceLock;

use ast_grep_core::matcher::PatternBuilder;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage, TSRange};
use ast_grep_core::{Language, Node, Pattern, PatternError};
use ast_grep_language::SupportLang;

/// A bundled tree-sitter grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lang(SupportLang);

macro_rules! langs {
    ($($konst:ident = $variant:ident, $id:literal;)*) => {
        impl Lang {
            $(
                #[doc = concat!("The `", $id, "` grammar.")]
                pub const $konst: Lang = Lang(SupportLang::$variant);
            )*

            /// Every bundled grammar, in the order `status` lists them.
            pub const ALL: [Lang; [$($id),*].len()] = [$(Lang::$konst),*];

            /// The id used in tool arguments and answers (`language: "python"`).
            pub fn id(self) -> &'static str {
                match self.0 {
                    $(SupportLang::$variant => $id,)*
                }
            }
        }
    };
}

langs! {
    BASH = Bash, "bash";
    C = C, "c";
    CPP = Cpp, "cpp";
    CSHARP = CSharp, "csharp";
    CSS = Css, "css";
    DART = Dart, "dart";
    ELIXIR = Elixir, "elixir";
    GO = Go, "go";
    HASKELL = Haskell, "haskell";
    HCL = Hcl, "hcl";
    HTML = Html, "html";
    JAVA = Java, "java";
    JAVASCRIPT = JavaScript, "javascript";
    JSON = Json, "json";
    KOTLIN = Kotlin, "kotlin";
    LUA = Lua, "lua";
    MARKDOWN = Markdown, "markdown";
    NIX = Nix, "nix";
    PHP = Php, "php";
    PYTHON = Python, "python";
    RUBY = Ruby, "ruby";
    RUST = Rust, "rust";
    SCALA = Scala, "scala";
    SOLIDITY = Solidity, "solidity";
    SWIFT = Swift, "swift";
    TSX = Tsx, "tsx";
    TYPESCRIPT = TypeScript, "typescript";
    YAML = Yaml, "yaml";
    ZIG = Zig, "zig";
}

// A language the crate adds in a later release must be added above, or it
// would be silently missing from every walk.
const _: () = assert!(Lang::ALL.len() == SupportLang::all_langs().len());

/// Spellings beyond the ids and the crate's own aliases (`py`, `rs`, `cs`, `kt`…).
const MORE_SPELLINGS: &[(&str, Lang)] = &[
    ("terraform", Lang::HCL),
    ("tf", Lang::HCL),
    ("c#", Lang::CSHARP),
    ("sh", Lang::BASH),
    ("shell", Lang::BASH),
    ("zsh", Lang::BASH),
    ("objc++", Lang::CPP),
    ("mjs", Lang::JAVASCRIPT),
    ("cjs", Lang::JAVASCRIPT),
];

impl Lang {
    /// The position in [`Lang::ALL`], for tables indexed by language.
    pub fn index(self) -> usize {
        Lang::ALL.iter().position(|l| *l == self).expect("every language is in ALL")
    }

    /// The crate's language.
    pub fn support(self) -> SupportLang {
        self.0
    }

    /// File extensions associated with the language, as the CLI maps them.
    pub fn extensions(self) -> &'static [String] {
        &associations().by_lang[self.index()]
    }

    /// The language a file belongs to, from its extension, case as
    /// written, as the CLI reads it: `.eslintrc.js` is JavaScript, while
    /// `.env`, `.bashrc` and `Makefile` have none.
    pub fn for_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        associations().by_ext.get(ext).copied()
    }

    /// The compiled tree-sitter grammar.
    pub fn grammar(self) -> TSLanguage {
        self.0.get_ts_language()
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

/// Extensions to languages and back, read once from the crate's file types.
struct Associations {
    by_ext: HashMap<String, Lang>,
    by_lang: Vec<Vec<String>>,
}

fn associations() -> &'static Associations {
    static TABLE: OnceLock<Associations> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_ext = HashMap::new();
        let mut by_lang = Vec::with_capacity(Lang::ALL.len());
        for lang in Lang::ALL {
            let types = lang.0.file_types();
            let exts: Vec<String> = types
                .definitions()
                .iter()
                .flat_map(|def| def.globs())
                .filter_map(|glob| glob.strip_prefix("*.").map(str::to_string))
                .collect();
            for ext in &exts {
                // The first language to claim an extension keeps it, as
                // the CLI's lookup does (`.h` is C).
                by_ext.entry(ext.clone()).or_insert(lang);
            }
            by_lang.push(exts);
        }
        Associations { by_ext, by_lang }
    })
}

impl PartialOrd for Lang {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Lang {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index().cmp(&other.index())
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
        let wanted = s.trim();
        if let Some(lang) = Lang::ALL.into_iter().find(|l| l.id().eq_ignore_ascii_case(wanted)) {
            return Ok(lang);
        }
        if let Some((_, lang)) = MORE_SPELLINGS.iter().find(|(name, _)| name.eq_ignore_ascii_case(wanted)) {
            return Ok(*lang);
        }
        wanted.parse::<SupportLang>().map(Lang).map_err(|_| UnknownLang(s.to_string()))
    }
}

impl Language for Lang {
    fn kind_to_id(&self, kind: &str) -> u16 {
        self.0.kind_to_id(kind)
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        self.0.field_to_id(field)
    }

    fn meta_var_char(&self) -> char {
        self.0.meta_var_char()
    }

    fn expando_char(&self) -> char {
        self.0.expando_char()
    }

    fn extract_meta_var(&self, source: &str) -> Option<MetaVariable> {
        self.0.extract_meta_var(source)
    }

    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        self.0.pre_process_pattern(query)
    }

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Lang::for_path(path.as_ref())
    }

    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        self.0.get_ts_language()
    }

    fn injectable_languages(&self) -> Option<&'static [&'static str]> {
        self.0.injectable_languages()
    }

    fn extract_injections<L: LanguageExt>(&self, root: Node<StrDoc<L>>) -> Vec<(String, Vec<TSRange>)> {
        self.0.extract_injections(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_map_to_languages_as_the_cli_maps_them() {
        assert_eq!(Lang::for_path(Path::new("a/b.py")), Some(Lang::PYTHON));
        assert_eq!(Lang::for_path(Path::new("x.tsx")), Some(Lang::TSX));
        assert_eq!(Lang::for_path(Path::new("x.h")), Some(Lang::C));
        assert_eq!(Lang::for_path(Path::new("Foo.java")), Some(Lang::JAVA));
        assert_eq!(Lang::for_path(Path::new("x.gemspec")), Some(Lang::RUBY));
        assert_eq!(Lang::for_path(Path::new("main.tf")), Some(Lang::HCL));
        assert_eq!(Lang::for_path(Path::new(".eslintrc.js")), Some(Lang::JAVASCRIPT));
        assert_eq!(Lang::for_path(Path::new(".env")), None);
        assert_eq!(Lang::for_path(Path::new("Makefile")), None);
        assert_eq!(Lang::for_path(Path::new("x.TSX")), None, "the CLI compares extensions case-sensitively");
    }

    #[test]
    fn ids_round_trip_aliases_parse_and_unknown_ids_list_the_choices() {
        for lang in Lang::ALL {
            assert_eq!(lang.id().parse::<Lang>(), Ok(lang));
            assert!(!lang.extensions().is_empty(), "{lang}");
        }
        for (alias, lang) in
            [("rb", Lang::RUBY), ("cs", Lang::CSHARP), ("Terraform", Lang::HCL), ("yml", Lang::YAML)]
        {
            assert_eq!(alias.parse::<Lang>(), Ok(lang), "{alias}");
        }
        let err = "cobol".parse::<Lang>().unwrap_err().to_string();
        assert!(err.contains("cobol") && err.contains("kotlin"), "{err}");
    }

    #[test]
    fn every_grammar_loads() {
        for lang in Lang::ALL {
            lang.check().unwrap_or_else(|e| panic!("{lang}: {e}"));
        }
    }
}
