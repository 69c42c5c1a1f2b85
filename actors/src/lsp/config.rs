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
//! [watch]
//! mode = "events"                # or "scan": stat the tree before each query
//! ```
//!
//! For a language, servers are tried in table order; the first whose root
//! marker exists and whose binary resolves is used.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Files or directories whose presence marks a project root.
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
    }
}

fn checker(command: &str, args: &[&str], format: CheckerFormat) -> Option<Checker> {
    Some(Checker { command: command.into(), args: args.iter().map(|s| s.to_string()).collect(), format })
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

/// The built-in table.
pub fn builtin() -> Vec<ServerConfig> {
    let pyright_check = checker("pyright", &["--outputjson"], CheckerFormat::Pyright);
    vec![
        ServerConfig {
            reopen: vec![ChangeKind::Created],
            keep_reopened: true,
            phased_diagnostics: true,
            ..entry("pyright", "pyright-langserver", &["--stdio"], &["python"], PYTHON_MARKERS, pyright_check)
        },
        ServerConfig {
            reopen: vec![ChangeKind::Created],
            keep_reopened: true,
            phased_diagnostics: true,
            ..entry(
                "basedpyright",
                "basedpyright-langserver",
                &["--stdio"],
                &["python"],
                PYTHON_MARKERS,
                checker("basedpyright", &["--outputjson"], CheckerFormat::Pyright),
            )
        },
        entry("pylsp", "pylsp", &[], &["python"], PYTHON_MARKERS, None),
        ServerConfig {
            reopen: vec![ChangeKind::Created, ChangeKind::Changed, ChangeKind::Deleted],
            index_after_parse: true,
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
            ..entry(
                "gopls",
                "gopls",
                &[],
                &["go"],
                &["go.mod", "go.work"],
                checker("go", &["vet", "./..."], CheckerFormat::LineColMessage),
            )
        },
        entry("dart", "dart", &["language-server", "--protocol=lsp"], &["dart"], &["pubspec.yaml"], None),
    ]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    server: Vec<ServerConfig>,
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

/// The table for `workdir`: the built-in one, with `tether.toml`'s entries
/// replacing built-ins of the same id and new ids placed first (so a
/// project's own choice wins for its languages).
pub fn load(workdir: &Path) -> Result<Vec<ServerConfig>, String> {
    let path = workdir.join(CONFIG_FILE);
    let mut table = builtin();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(table),
        Err(e) => return Err(format!("cannot read {CONFIG_FILE}: {e}")),
    };
    let parsed: FileConfig = toml::from_str(&text).map_err(|e| format!("{CONFIG_FILE} is not valid: {e}"))?;
    let mut added = Vec::new();
    for server in parsed.server {
        match table.iter_mut().find(|s| s.id == server.id) {
            Some(existing) => *existing = server,
            None => added.push(server),
        }
    }
    added.extend(table);
    Ok(added)
}

/// The LSP language id of a file, from its extension.
pub fn language_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "py" | "pyi" => "python",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" => "cpp",
        "rs" => "rust",
        "ts" | "mts" | "cts" | "tsx" => "typescript",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "go" => "go",
        "dart" => "dart",
        _ => return None,
    })
}

/// The `languageId` sent in `didOpen` (React flavours differ from the family).
pub fn document_language_id(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("tsx") => "typescriptreact",
        Some("jsx") => "javascriptreact",
        _ => language_of(path).unwrap_or("plaintext"),
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
        let table = load(dir.path()).unwrap();
        assert_eq!(table[0].id, "jedi", "new entries come first");
        let clangd = table.iter().find(|s| s.id == "clangd").unwrap();
        assert_eq!(clangd.command, "clangd-19");
        assert_eq!(table.iter().filter(|s| s.id == "clangd").count(), 1);
        std::fs::write(dir.path().join(CONFIG_FILE), "[[server]]\nid = 3\n").unwrap();
        assert!(load(dir.path()).unwrap_err().contains("tether.toml is not valid"));
    }

    #[test]
    fn languages_come_from_extensions() {
        assert_eq!(language_of(Path::new("a/b.py")), Some("python"));
        assert_eq!(language_of(Path::new("x.tsx")), Some("typescript"));
        assert_eq!(document_language_id(Path::new("x.tsx")), "typescriptreact");
        assert_eq!(language_of(Path::new("README")), None);
    }
}
