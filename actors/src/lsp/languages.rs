//! The language table: which files are of which language, the id a
//! server is told (`didOpen`'s `languageId`), and which servers serve it
//! in what order. Built in, and extended per working directory from
//! `tether.toml` — a language tether has never heard of is one entry:
//!
//! ```toml
//! [[language]]
//! id = "fortran"
//! extensions = ["f90", "f"]
//! file_names = []                # whole names: "Dockerfile", "Gemfile"
//! language_id = "fortran"        # what didOpen says; the id when left out
//! servers = ["fortls"]           # preference order; else table order
//! ```
//!
//! An entry with a built-in id changes that entry: what it gives replaces
//! the built-in value, what it leaves out is kept (`servers` alone
//! reorders a language's servers). `tether.toml`'s entries are looked at
//! first, so a project's reading of an extension wins (`h` as `cpp`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguageConfig {
    /// The id servers and tools name it by (`python`, `java`).
    pub id: String,
    /// File extensions without the dot, compared ignoring case.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Whole file names (`Gemfile`, `.bashrc`), compared exactly.
    #[serde(default)]
    pub file_names: Vec<String>,
    /// The `languageId` a server is told when a file is opened; the id
    /// when absent.
    #[serde(default)]
    pub language_id: Option<String>,
    /// Per extension, a `languageId` other than the language's own
    /// (`tsx` → `typescriptreact`, `scss` → `scss`).
    #[serde(default)]
    pub language_ids: BTreeMap<String, String>,
    /// Server ids in order of preference. Empty: every server whose
    /// `languages` names this one, in table order.
    #[serde(default)]
    pub servers: Vec<String>,
}

impl LanguageConfig {
    fn new(id: &str, extensions: &[&str]) -> Self {
        Self {
            id: id.into(),
            extensions: extensions.iter().map(|e| e.to_string()).collect(),
            file_names: Vec::new(),
            language_id: None,
            language_ids: BTreeMap::new(),
            servers: Vec::new(),
        }
    }

    fn names(mut self, names: &[&str]) -> Self {
        self.file_names = names.iter().map(|n| n.to_string()).collect();
        self
    }

    fn told(mut self, language_id: &str) -> Self {
        self.language_id = Some(language_id.into());
        self
    }

    fn told_for(mut self, ext: &str, language_id: &str) -> Self {
        self.language_ids.insert(ext.into(), language_id.into());
        self
    }

    /// Whether `path` is a file of this language.
    pub fn matches(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str());
        if name.is_some_and(|n| self.file_names.iter().any(|f| f == n)) {
            return true;
        }
        extension(path).is_some_and(|ext| self.extensions.iter().any(|e| e.eq_ignore_ascii_case(&ext)))
    }

    /// The `languageId` for `path`.
    pub fn language_id_for(&self, path: &Path) -> &str {
        extension(path)
            .and_then(|ext| self.language_ids.iter().find(|(e, _)| e.eq_ignore_ascii_case(&ext)))
            .map(|(_, id)| id.as_str())
            .unwrap_or_else(|| self.language_id.as_deref().unwrap_or(&self.id))
    }

    /// This entry over `base`: the fields it leaves empty are `base`'s
    /// (the extensions and file names together: giving either replaces both).
    fn over(mut self, base: LanguageConfig) -> LanguageConfig {
        if self.extensions.is_empty() && self.file_names.is_empty() {
            self.extensions = base.extensions;
            self.file_names = base.file_names;
        }
        if self.language_id.is_none() {
            self.language_id = base.language_id;
        }
        if self.language_ids.is_empty() {
            self.language_ids = base.language_ids;
        }
        if self.servers.is_empty() {
            self.servers = base.servers;
        }
        self
    }

    /// What is wrong with the entry, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.id.trim().is_empty() {
            return Some(
                "a [[language]] entry has an empty `id`; give it the name servers list it by".into(),
            );
        }
        if self.extensions.is_empty() && self.file_names.is_empty() {
            return Some(format!(
                "[[language]] `{}` has neither `extensions` nor `file_names`; list what its files are called",
                self.id
            ));
        }
        if let Some(e) = self.extensions.iter().find(|e| e.starts_with('.') || e.is_empty()) {
            return Some(format!(
                "[[language]] `{}`: extension `{e}` should be written without the dot (`py`, not `.py`)",
                self.id
            ));
        }
        None
    }
}

fn extension(path: &Path) -> Option<String> {
    path.extension()?.to_str().map(str::to_string)
}

/// The built-in languages, most specific first where extensions could be
/// read two ways (`.h` is C, as the grammars read it).
pub fn builtin() -> Vec<LanguageConfig> {
    use LanguageConfig as L;
    vec![
        L::new("python", &["py", "pyi", "pyw"]),
        L::new("c", &["c", "h"]),
        L::new("cpp", &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "tpp"]),
        L::new("rust", &["rs"]),
        L::new("typescript", &["ts", "mts", "cts", "tsx"]).told_for("tsx", "typescriptreact"),
        L::new("javascript", &["js", "mjs", "cjs", "jsx"]).told_for("jsx", "javascriptreact"),
        L::new("go", &["go"]),
        L::new("dart", &["dart"]),
        L::new("java", &["java"]),
        L::new("kotlin", &["kt", "kts"]),
        L::new("php", &["php", "phtml", "php8"]),
        L::new("bash", &["sh", "bash", "zsh", "ksh"])
            .names(&[".bashrc", ".bash_profile", ".profile", ".zshrc", "PKGBUILD"])
            .told("shellscript"),
        L::new("yaml", &["yaml", "yml"]),
        L::new("json", &["json", "jsonc", "json5"]).told_for("jsonc", "jsonc"),
        L::new("html", &["html", "htm", "xhtml"]),
        L::new("css", &["css", "scss", "less"]).told_for("scss", "scss").told_for("less", "less"),
        L::new("ruby", &["rb", "rake", "gemspec", "ru"]).names(&["Gemfile", "Rakefile", "Guardfile"]),
        L::new("csharp", &["cs", "csx"]),
        L::new("lua", &["lua"]),
        L::new("elixir", &["ex", "exs"]),
        L::new("haskell", &["hs", "lhs"]),
        L::new("swift", &["swift"]),
        L::new("zig", &["zig", "zon"]),
        L::new("scala", &["scala", "sc", "sbt"]),
        L::new("terraform", &["tf", "tfvars"]),
        L::new("ocaml", &["ml", "mli"]),
    ]
}

/// The languages of a working directory, shared by its supervisor and
/// every server actor (cheap to clone).
#[derive(Debug, Clone, PartialEq)]
pub struct Languages(Arc<Vec<LanguageConfig>>);

impl Default for Languages {
    fn default() -> Self {
        Self::new(builtin())
    }
}

impl Languages {
    /// A table of `entries`, looked at in order.
    pub fn new(entries: Vec<LanguageConfig>) -> Self {
        Self(Arc::new(entries))
    }

    /// The built-in table with `added` merged in: an entry of a known id
    /// changes it (the fields it gives), and every entry of `added` is
    /// looked at before the built-in ones.
    pub fn merged(added: Vec<LanguageConfig>) -> Result<Self, String> {
        let mut table = builtin();
        let mut first: Vec<LanguageConfig> = Vec::new();
        for entry in added {
            if first.iter().any(|l| l.id == entry.id) {
                return Err(format!("[[language]] `{}` is given twice; merge the two entries", entry.id));
            }
            let entry = match table.iter().position(|l| l.id == entry.id) {
                Some(k) => entry.over(table.remove(k)),
                None => entry,
            };
            if let Some(problem) = entry.problem() {
                return Err(problem);
            }
            first.push(entry);
        }
        first.extend(table);
        Ok(Self::new(first))
    }

    /// The language of `path`: a whole-name match anywhere in the table
    /// first (a `Gemfile` has no extension), then the first by extension.
    pub fn of(&self, path: &Path) -> Option<&LanguageConfig> {
        let name = path.file_name().and_then(|n| n.to_str())?;
        self.0
            .iter()
            .find(|l| l.file_names.iter().any(|f| f == name))
            .or_else(|| self.0.iter().find(|l| l.matches(path)))
    }

    /// The language of that id.
    pub fn get(&self, id: &str) -> Option<&LanguageConfig> {
        self.0.iter().find(|l| l.id == id)
    }

    /// Every language, in table order.
    pub fn all(&self) -> &[LanguageConfig] {
        &self.0
    }

    /// The ids, in table order.
    pub fn ids(&self) -> Vec<&str> {
        self.0.iter().map(|l| l.id.as_str()).collect()
    }

    /// The `languageId` sent in `didOpen` for `path` (`plaintext` when
    /// no language claims it).
    pub fn document_language_id(&self, path: &Path) -> String {
        self.of(path).map_or_else(|| "plaintext".to_string(), |l| l.language_id_for(path).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_by_name_then_extension() {
        let table = Languages::default();
        let id = |p: &str| table.of(Path::new(p)).map(|l| l.id.clone());
        assert_eq!(id("a/b.py").as_deref(), Some("python"));
        assert_eq!(id("x.TSX").as_deref(), Some("typescript"));
        assert_eq!(id("x.h").as_deref(), Some("c"));
        assert_eq!(id("app/Gemfile").as_deref(), Some("ruby"));
        assert_eq!(id("README"), None);
        assert_eq!(table.document_language_id(Path::new("x.tsx")), "typescriptreact");
        assert_eq!(table.document_language_id(Path::new("run.sh")), "shellscript");
        assert_eq!(table.document_language_id(Path::new("a.scss")), "scss");
        assert_eq!(table.document_language_id(Path::new("notes.txt")), "plaintext");
    }

    #[test]
    fn a_project_entry_replaces_or_comes_first() {
        let fortran = LanguageConfig::new("fortran", &["f90"]);
        let headers_are_cpp = LanguageConfig::new("cpp", &["h", "cpp"]);
        let table = Languages::merged(vec![fortran, headers_are_cpp]).unwrap();
        assert_eq!(table.all()[0].id, "fortran");
        assert_eq!(table.of(Path::new("m.f90")).unwrap().id, "fortran");
        // The project's reading of `.h` wins over the built-in C's.
        assert_eq!(table.of(Path::new("x.h")).unwrap().id, "cpp");
        assert_eq!(table.of(Path::new("x.cc")), None, "the replacement lists only h and cpp");
        // `servers` alone keeps the rest: `.tsx` is still typescriptreact.
        let mut prefer = LanguageConfig::new("typescript", &[]);
        prefer.servers = vec!["my-ts".into()];
        let table = Languages::merged(vec![prefer]).unwrap();
        let ts = table.get("typescript").unwrap();
        assert_eq!(ts.servers, ["my-ts"]);
        assert_eq!(table.document_language_id(Path::new("a.tsx")), "typescriptreact");
        assert!(ts.matches(Path::new("a.mts")));
        let bad = Languages::merged(vec![LanguageConfig::new("x", &[])]).unwrap_err();
        assert!(bad.contains("neither `extensions` nor `file_names`"), "{bad}");
        let dotted = Languages::merged(vec![LanguageConfig::new("x", &[".x"])]).unwrap_err();
        assert!(dotted.contains("without the dot"), "{dotted}");
        let twice =
            Languages::merged(vec![LanguageConfig::new("x", &["x"]), LanguageConfig::new("x", &["y"])]);
        assert!(twice.unwrap_err().contains("`x` is given twice"));
    }
}
