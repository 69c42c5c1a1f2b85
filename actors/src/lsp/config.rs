//! The language-server table in force for a working directory: which
//! servers serve which languages ([`Table`]) — the built-in entries
//! ([`super::servers`]; an entry's shape is [`super::entry`]) with
//! `tether.toml`'s replacing or adding to them — and the file's other
//! sections (`[watch]`, `[lsp]`):
//!
//! ```toml
//! [[server]]
//! id = "pyright"                 # replaces the built-in entry of that id
//! command = "pyright-langserver"
//! args = ["--stdio"]
//! languages = ["python"]
//! root_markers = ["pyproject.toml", "setup.py"]
//! initialization_options = {}
//! settings = { python = { analysis = { typeCheckingMode = "basic" } } }
//! checker = { command = "pyright", args = ["--outputjson"], format = "pyright" }
//! reopen = ["created"]           # see ServerConfig::reopen
//! index_after_parse = false      # see ServerConfig::index_after_parse
//! keep_reopened = false          # see ServerConfig::keep_reopened
//! phased_diagnostics = false     # see ServerConfig::phased_diagnostics
//! tsserver_requests = false      # see ServerConfig::tsserver_requests
//! workspace_symbols_types_only = false # see ServerConfig::workspace_symbols_types_only
//! project_index_file = "compile_commands.json" # see ServerConfig::project_index_file
//! check_progress = "…/flycheck"  # see ServerConfig::check_progress
//! fatal_log = "[tsserver] Exited" # see ServerConfig::fatal_log
//! unmanaged_fallback = "Failed to import projects" # see ServerConfig::unmanaged_fallback
//! start_memory_mb = 150          # see ServerConfig::start_memory_mb
//! import_check = { build_files = ["build.gradle"], command = "java.project.getAll", after_secs = 20 }
//!
//! install = { npm = ["pyright@1.1.414"] }  # what `tether install` runs
//!
//! [watch]
//! mode = "events"                # or "scan": stat the tree before each query
//!
//! [lsp]
//! memory_budget_mb = 6144        # see super::limits
//! idle_limit_minutes = 30
//! ```
//!
//! Languages (`[[language]]`, see [`super::languages`]) say which files
//! are whose. For a language, servers are tried in its `servers` order,
//! then table order; the first whose root marker exists and whose binary
//! resolves is used. A server with no root markers serves the working
//! directory as one project (YAML, JSON, shell scripts).

use std::path::Path;

use serde::Deserialize;

use super::languages::{LanguageConfig, Languages};

/// The file name of the per-directory override.
pub const CONFIG_FILE: &str = "tether.toml";

pub use super::entry::{
    Checker, CheckerFormat, FEATURE_CODE_ACTIONS, FEATURE_FORMAT, FEATURES, ImportCheck, Install,
    ServerConfig,
};

pub use super::servers::builtin;

/// A working directory's tables: its languages and its servers.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Which files are whose.
    pub languages: Languages,
    /// The servers, in table order.
    pub servers: Vec<ServerConfig>,
}

impl Default for Table {
    fn default() -> Self {
        Self { languages: Languages::default(), servers: builtin() }
    }
}

impl Table {
    /// The servers of `language`, in order of preference: those its entry
    /// names, in that order, then the others that list it, in table order.
    pub fn candidates(&self, language: &str) -> Vec<&ServerConfig> {
        self.serving(language).into_iter().filter(|s| s.only_features.is_empty()).collect()
    }

    /// The helper servers of `language` that offer `feature`, in the
    /// language's order of preference.
    pub fn helpers(&self, language: &str, feature: &str) -> Vec<&ServerConfig> {
        self.serving(language).into_iter().filter(|s| s.only_features.iter().any(|f| f == feature)).collect()
    }

    /// Every helper server of `language`, whatever it is asked for.
    pub fn all_helpers(&self, language: &str) -> Vec<&ServerConfig> {
        self.serving(language).into_iter().filter(|s| !s.only_features.is_empty()).collect()
    }

    /// Every server of `language`, those the language names first.
    fn serving(&self, language: &str) -> Vec<&ServerConfig> {
        let serving: Vec<&ServerConfig> =
            self.servers.iter().filter(|s| s.languages.iter().any(|l| l == language)).collect();
        let preferred = self.languages.get(language).map(|l| l.servers.as_slice()).unwrap_or(&[]);
        let mut ordered: Vec<&ServerConfig> =
            preferred.iter().filter_map(|id| self.servers.iter().find(|s| &s.id == id)).collect();
        for s in serving {
            if !ordered.iter().any(|o| o.id == s.id) {
                ordered.push(s);
            }
        }
        ordered
    }

    /// The language of `path`, by the language table.
    pub fn language_of(&self, path: &Path) -> Option<&LanguageConfig> {
        self.languages.of(path)
    }

    /// What does not hold together: a server of a language no entry
    /// names, a preference naming no server.
    fn problem(&self) -> Option<String> {
        for server in &self.servers {
            if let Some(l) = server.languages.iter().find(|l| self.languages.get(l).is_none()) {
                return Some(format!(
                    "[[server]] `{}` serves `{l}`, which no [[language]] names; add one with its `extensions`",
                    server.id
                ));
            }
            if let Some(f) = server.only_features.iter().find(|f| !FEATURES.contains(&f.as_str())) {
                return Some(format!(
                    "[[server]] `{}` has `only_features` `{f}`, which tether does not know; give some of {}",
                    server.id,
                    FEATURES.join(", ")
                ));
            }
        }
        for language in self.languages.all() {
            if let Some(id) = language.servers.iter().find(|id| !self.servers.iter().any(|s| &s.id == *id)) {
                return Some(format!(
                    "[[language]] `{}` prefers server `{id}`, which no [[server]] defines; add it or drop it from `servers`",
                    language.id
                ));
            }
        }
        None
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    server: Vec<ServerConfig>,
    #[serde(default)]
    language: Vec<LanguageConfig>,
    /// Debug-adapter overrides, read by `crate::dap::adapters::load`.
    #[serde(default)]
    #[allow(dead_code)]
    adapter: Vec<toml::Value>,
    /// Worker commands per tier, read by `crate::workers::command`.
    #[serde(default)]
    #[allow(dead_code)]
    vibe: Option<toml::Value>,
    /// How the working directory is watched.
    #[serde(default)]
    watch: Option<WatchSection>,
    /// The servers' memory budget and idle limit ([`super::limits`]).
    #[serde(default)]
    lsp: Option<LspSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WatchSection {
    mode: WatchMode,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WatchMode {
    Events,
    Scan,
}

/// The `[lsp]` section of `tether.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspSection {
    /// The megabytes the servers together may hold.
    pub memory_budget_mb: Option<u64>,
    /// Minutes; fractions are taken (`0.5` is 30 s).
    pub idle_limit_minutes: Option<f64>,
}

impl LspSection {
    /// What does not hold: a budget of nothing, a negative idle limit.
    pub fn problem(&self) -> Option<String> {
        if self.memory_budget_mb == Some(0) {
            return Some("[lsp] memory_budget_mb is 0: give the megabytes the language servers may hold together, or leave it out for a quarter of the machine's memory".into());
        }
        match self.idle_limit_minutes {
            Some(m) if !m.is_finite() || m < 0.0 => {
                Some(format!("[lsp] idle_limit_minutes is {m}: give 0 (never stop an idle server) or more"))
            }
            _ => None,
        }
    }
}

/// How `tether.toml` asks for the working directory to be watched
/// (`[watch] mode`): events by default.
pub fn watch_preference(workdir: &Path) -> Result<crate::watch::Preference, String> {
    let Some(parsed) = read(workdir)? else { return Ok(Default::default()) };
    Ok(match parsed.watch.map(|w| w.mode) {
        Some(WatchMode::Scan) => crate::watch::Preference::Scan,
        Some(WatchMode::Events) | None => crate::watch::Preference::Events,
    })
}

/// `tether.toml`'s `[lsp]` section (empty when there is none).
pub fn lsp_section(workdir: &Path) -> Result<LspSection, String> {
    let section = read(workdir)?.and_then(|parsed| parsed.lsp).unwrap_or_default();
    match section.problem() {
        Some(problem) => Err(format!("{CONFIG_FILE}: {problem}")),
        None => Ok(section),
    }
}

/// `workdir`'s `tether.toml`, parsed; `None` when there is none.
fn read(workdir: &Path) -> Result<Option<FileConfig>, String> {
    let text = match std::fs::read_to_string(workdir.join(CONFIG_FILE)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {CONFIG_FILE}: {e}")),
    };
    toml::from_str(&text).map(Some).map_err(|e| format!("{CONFIG_FILE} is not valid: {e}"))
}

/// The tables for `workdir`: the built-in ones, with `tether.toml`'s
/// entries replacing built-ins of the same id and new ids placed first (so
/// a project's own choice wins for its languages) — in a trusted checkout
/// ([`crate::trust`]); a restricted one's `[[server]]` entries are left out.
pub fn load(workdir: &Path) -> Result<Table, String> {
    let Some(parsed) = read(workdir)? else { return Ok(Table::default()) };
    if let Some(problem) = parsed.lsp.as_ref().and_then(|section| section.problem()) {
        return Err(format!("{CONFIG_FILE}: {problem}"));
    }
    let mut table = builtin();
    let mut added = Vec::new();
    // A restricted checkout's `[[server]]` commands are not its to run;
    // its languages, watch mode and budget still apply.
    let servers = if crate::trust::of(workdir).is_trusted() { parsed.server } else { Vec::new() };
    for server in servers {
        match table.iter_mut().find(|s| s.id == server.id) {
            Some(existing) => *existing = server,
            None => added.push(server),
        }
    }
    added.extend(table);
    let languages = Languages::merged(parsed.language).map_err(|e| format!("{CONFIG_FILE}: {e}"))?;
    let table = Table { languages, servers: added };
    match table.problem() {
        Some(problem) => Err(format!("{CONFIG_FILE}: {problem}")),
        None => Ok(table),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tether_toml_replaces_and_adds_entries() {
        let dir = tempfile::tempdir().unwrap();
        // Its `tether.toml` is read only in a trusted checkout.
        crate::trust::set(&dir.path().canonicalize().unwrap(), crate::trust::Trust::Trusted);
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            r#"
[[server]]
id = "clangd"
command = "clangd-19"
languages = ["c", "cpp"]
root_markers = ["CMakeLists.txt"]

[[server]]
id = "jedi"
command = "jedi-language-server"
languages = ["python"]
root_markers = ["setup.py"]
settings = { python = { x = 1 } }
"#,
        )
        .unwrap();
        let table = load(dir.path()).unwrap().servers;
        assert_eq!(table[0].id, "jedi", "new entries come first");
        let clangd = table.iter().find(|s| s.id == "clangd").unwrap();
        assert_eq!(clangd.command, "clangd-19");
        assert_eq!(table.iter().filter(|s| s.id == "clangd").count(), 1);
        std::fs::write(dir.path().join(CONFIG_FILE), "[[server]]\nid = 3\n").unwrap();
        assert!(load(dir.path()).unwrap_err().contains("tether.toml is not valid"));
    }

    #[test]
    fn a_language_is_added_with_its_server_and_its_preference() {
        let dir = tempfile::tempdir().unwrap();
        // Its `tether.toml` is read only in a trusted checkout.
        crate::trust::set(&dir.path().canonicalize().unwrap(), crate::trust::Trust::Trusted);
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            r#"
[[language]]
id = "fortran"
extensions = ["f90"]

[[server]]
id = "fortls"
command = "fortls"
languages = ["fortran"]

[[language]]
id = "python"
extensions = ["py"]
servers = ["pylsp", "pyright"]
"#,
        )
        .unwrap();
        let table = load(dir.path()).unwrap();
        assert_eq!(table.language_of(Path::new("m.f90")).unwrap().id, "fortran");
        let order: Vec<&str> = table.candidates("python").iter().map(|s| s.id.as_str()).collect();
        assert_eq!(order, ["pylsp", "pyright", "basedpyright"]);
        assert_eq!(table.candidates("fortran")[0].id, "fortls");
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[[server]]\nid = \"x\"\ncommand = \"x\"\nlanguages = [\"cobol\"]\n",
        )
        .unwrap();
        let e = load(dir.path()).unwrap_err();
        assert!(e.contains("serves `cobol`, which no [[language]] names"), "{e}");
    }

    #[test]
    fn every_builtin_server_serves_a_known_language_and_says_how_to_install_it() {
        let table = Table::default();
        assert_eq!(table.problem(), None);
        for server in &table.servers {
            assert!(server.install.is_some(), "{} has no install", server.id);
        }
        for language in table.languages.all() {
            assert!(!table.candidates(&language.id).is_empty(), "{} has no server", language.id);
        }
    }
}
