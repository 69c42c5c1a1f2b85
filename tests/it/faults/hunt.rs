//! A hunt for wrong answers, in the spirit of Jepsen: random `lsp`
//! operations from many callers at once — three MCP sessions of one
//! `tether serve --http` run, parallel calls in one stdio session, and
//! three conversations through the Rust API — interleaved with outside
//! changes (a caller appended and removed, a file broken and fixed, a
//! module created and deleted, a `git checkout` of another branch), some
//! made while the calls are in flight, on a machine kept busy by two
//! CPU-bound processes, with the Rust API run's language server killed
//! three times, each in the middle of a round — on pyright,
//! typescript-language-server, gopls, clangd, rust-analyzer and jdtls,
//! each with a project of its language ([`Lang`]).
//!
//! The world keeps a record of what is on disk; the checker needs no
//! oracle: an answer must be right for the content on disk before the
//! round (or, when the change was made during it, after it), or say that
//! it may not be — partial, pending, stale, unconfirmed, or an error that
//! names its cause. The one thing that fails the test is a wrong answer
//! that reads as complete.
//!
//! The hunt with writers (last in this file) holds the write side to the
//! same standard: conversations writing the same files at once lose
//! nothing, and each refusal says why.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Rng;
use serde_json::{Value, json};

/// Rounds of the hunt; each is one operation from every caller.
const ROUNDS: usize = 40;
/// MCP sessions over HTTP.
const HTTP_SESSIONS: usize = 3;
/// Parallel calls in the stdio session.
const STDIO_PARALLEL: usize = 2;
/// Conversations through the Rust API.
const API_CONVERSATIONS: usize = 3;
/// Modules calling `target` from the start.
const MODULES: usize = 4;
/// Extra modules the `more` branch adds.
const BRANCH_EXTRAS: usize = 3;
/// The rounds in which the Rust API run's language server is killed.
const KILL_ROUNDS: [usize; 3] = [11, 21, 31];
/// Longest one call may take before it counts as a hang: every bounded
/// wait an `lsp` call may make, added up (the product's own bound). Under
/// a full test run's load a cold jdtls takes most of a minute to start,
/// and one killed in the middle of a round starts again in the next.
const CALL_BOUND: Duration = tether::tools::lsp::CALL_BOUND;
/// Longest one round may take before it counts as a hang.
const ROUND_BOUND: Duration = Duration::from_secs(CALL_BOUND.as_secs() + 30);
/// How long `tether serve --http` may take to say it listens.
const LISTEN_WITHIN: Duration = Duration::from_secs(20);
const TOKEN: &str = "hunt-token-0123456789abcdef";

/// One language's project for the hunt: `target` declared in a core
/// file, called from every module; how each file reads, how many
/// references each holds, and what a right answer says.
struct Lang {
    /// The language's id, as `symbols` rows name it.
    id: &'static str,
    /// The server, for messages.
    server: &'static str,
    /// Fails with the install hint when the server is missing.
    require: fn(),
    /// Files that never change (a build file, a header), given the root.
    fixed: fn(&Path) -> Vec<(String, String)>,
    /// Where `target` is declared: file and 1-based line, and the
    /// definition's place as an answer shows it (`file:line:column`).
    core: (&'static str, u32),
    core_text: &'static str,
    definition_at: &'static [&'static str],
    /// The references to `target` the fixed files and the core hold.
    core_refs: usize,
    /// Module `i`'s file, its text, and the line holding its call.
    module_rel: fn(usize) -> String,
    module_text: fn(usize) -> String,
    module_call_line: u32,
    /// References a module holds from the start.
    module_refs: usize,
    /// A function calling `target(n)`, appended to module `i`.
    appended: fn(usize, usize) -> String,
    /// A line with a type error, and a piece of the server's message.
    broken: &'static str,
    /// What closes a module after its appended functions and its error
    /// (a Java class's brace).
    closing: &'static str,
    /// The `symbols` row of module `i`'s function.
    symbol_row: fn(&Lang, usize) -> String,
    broken_says: &'static str,
    /// A module created outside: its file and text, and its references.
    created: fn(usize) -> (String, String),
    created_refs: usize,
    /// The `more` branch's extra file `k`, and the references each holds.
    extra: fn(usize) -> (String, String),
    extra_refs: usize,
    /// What a hover on `target` shows.
    hover_says: &'static [&'static str],
}

/// A function's `symbols` row: `use_0 (function, go) pkg/m0.go`.
fn function_row(lang: &Lang, i: usize) -> String {
    format!("use_{i} (function, {}) {}", lang.id, (lang.module_rel)(i))
}

fn python() -> Lang {
    Lang {
        id: "python",
        server: "pyright",
        require: || common::require("pyright", &["--version"], "npm install -g pyright"),
        fixed: |_| vec![("pyproject.toml".into(), String::new()), ("pkg/__init__.py".into(), String::new())],
        core: ("pkg/core.py", 1),
        core_text: "def target(x: int) -> int:\n    return x + 1\n",
        definition_at: &["pkg/core.py:1:5"],
        core_refs: 1,
        module_rel: |i| format!("pkg/m{i}.py"),
        module_text: |i| {
            format!("from pkg.core import target\n\n\ndef use_{i}() -> int:\n    return target({i})\n")
        },
        module_call_line: 5,
        module_refs: 2,
        appended: |i, n| format!("\n\ndef extra_{i}_{n}() -> int:\n    return target({n})\n"),
        broken: "\n\n_bad = 1 + \"x\"\n",
        broken_says: "Operator \"+\" not supported",
        closing: "",
        symbol_row: function_row,
        created: |k| {
            (
                format!("pkg/new{k}.py"),
                format!(
                    "from pkg.core import target\n\n\ndef new_fn_{k}() -> int:\n    return target({k})\n"
                ),
            )
        },
        created_refs: 2,
        extra: |k| {
            (format!("pkg/extra{k}.py"), format!("from pkg.core import target\n\nVALUE_{k} = target({k})\n"))
        },
        extra_refs: 2,
        hover_says: &["target", "int"],
    }
}

fn typescript() -> Lang {
    Lang {
        id: "typescript",
        server: "typescript-language-server",
        require: || {
            common::require(
                "typescript-language-server",
                &["--version"],
                "npm install -g typescript-language-server typescript@5",
            )
        },
        fixed: |_| {
            vec![(
                "tsconfig.json".into(),
                r#"{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["pkg/**/*.ts"]}"#.into(),
            )]
        },
        core: ("pkg/core.ts", 1),
        core_text: "export function target(x: number): number {\n  return x + 1;\n}\n",
        definition_at: &["pkg/core.ts:1:17"],
        core_refs: 1,
        module_rel: |i| format!("pkg/m{i}.ts"),
        module_text: |i| {
            format!(
                "import {{ target }} from './core';\n\nexport function use_{i}(): number {{\n  return target({i});\n}}\n"
            )
        },
        module_call_line: 4,
        module_refs: 2,
        appended: |i, n| format!("\nexport function extra_{i}_{n}(): number {{\n  return target({n});\n}}\n"),
        broken: "\nexport const _bad: number = \"x\";\n",
        broken_says: "is not assignable to type 'number'",
        closing: "",
        symbol_row: function_row,
        created: |k| {
            (
                format!("pkg/new{k}.ts"),
                format!(
                    "import {{ target }} from './core';\n\nexport function new_fn_{k}(): number {{\n  return target({k});\n}}\n"
                ),
            )
        },
        created_refs: 2,
        extra: |k| {
            (
                format!("pkg/extra{k}.ts"),
                format!("import {{ target }} from './core';\n\nexport const VALUE_{k} = target({k});\n"),
            )
        },
        extra_refs: 2,
        hover_says: &["target", "number"],
    }
}

fn go() -> Lang {
    Lang {
        id: "go",
        server: "gopls",
        require: || common::require("gopls", &["version"], "apt-get install gopls"),
        fixed: |_| vec![("go.mod".into(), "module example.com/hunt\n\ngo 1.21\n".into())],
        core: ("pkg/core.go", 3),
        core_text: "package pkg\n\nfunc target(x int) int {\n\treturn x + 1\n}\n",
        definition_at: &["pkg/core.go:3:6"],
        core_refs: 1,
        module_rel: |i| format!("pkg/m{i}.go"),
        module_text: |i| format!("package pkg\n\nfunc use_{i}() int {{\n\treturn target({i})\n}}\n"),
        module_call_line: 4,
        module_refs: 1,
        appended: |i, n| format!("\nfunc extra_{i}_{n}() int {{\n\treturn target({n})\n}}\n"),
        broken: "\nvar _bad int = \"x\"\n",
        broken_says: "cannot use \"x\"",
        closing: "",
        symbol_row: function_row,
        created: |k| {
            (
                format!("pkg/new{k}.go"),
                format!("package pkg\n\nfunc new_fn_{k}() int {{\n\treturn target({k})\n}}\n"),
            )
        },
        created_refs: 1,
        extra: |k| (format!("pkg/extra{k}.go"), format!("package pkg\n\nvar VALUE_{k} = target({k})\n")),
        extra_refs: 1,
        hover_says: &["func target(x int) int"],
    }
}

fn c() -> Lang {
    Lang {
        id: "c",
        server: "clangd",
        require: || common::require("clangd", &["--version"], "apt-get install clangd"),
        // clangd indexes the files its compilation database names (the
        // modules created later are opened by tether, and so indexed).
        fixed: |root| {
            let mut named = vec!["pkg/core.c".to_string()];
            named.extend((0..MODULES).map(|i| format!("pkg/m{i}.c")));
            named.extend((0..BRANCH_EXTRAS).map(|k| format!("pkg/extra{k}.c")));
            let entries: Vec<Value> = named
                .iter()
                .map(|f| json!({"directory": root, "file": root.join(f), "command": format!("cc -std=c11 -c {f}")}))
                .collect();
            vec![
                ("compile_commands.json".into(), serde_json::to_string(&entries).unwrap()),
                ("pkg/core.h".into(), "int target(int x);\n".into()),
            ]
        },
        core: ("pkg/core.c", 3),
        core_text: "#include \"core.h\"\n\nint target(int x) { return x + 1; }\n",
        // Before its index has the definition, clangd names the declaration.
        definition_at: &["pkg/core.c:3:5", "pkg/core.h:1:5"],
        core_refs: 2,
        module_rel: |i| format!("pkg/m{i}.c"),
        module_text: |i| format!("#include \"core.h\"\n\nint use_{i}(void) {{\n  return target({i});\n}}\n"),
        module_call_line: 4,
        module_refs: 1,
        appended: |i, n| format!("\nint extra_{i}_{n}(void) {{\n  return target({n});\n}}\n"),
        broken: "\nstatic int bad_value = undeclared_name;\n",
        broken_says: "undeclared identifier 'undeclared_name'",
        closing: "",
        symbol_row: function_row,
        created: |k| {
            (
                format!("pkg/new{k}.c"),
                format!("#include \"core.h\"\n\nint new_fn_{k}(void) {{\n  return target({k});\n}}\n"),
            )
        },
        created_refs: 1,
        extra: |k| {
            (
                format!("pkg/extra{k}.c"),
                format!("#include \"core.h\"\n\nint value_{k}(void) {{ return target({k}); }}\n"),
            )
        },
        extra_refs: 1,
        hover_says: &["target", "int"],
    }
}

fn rust() -> Lang {
    Lang {
        id: "rust",
        server: "rust-analyzer",
        require: || common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer"),
        fixed: |_| {
            vec![(
                "Cargo.toml".into(),
                "[package]\nname = \"hunt\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".into(),
            )]
        },
        core: ("src/lib.rs", 6),
        core_text: "pub mod m0;\npub mod m1;\npub mod m2;\npub mod m3;\n\npub fn target(x: i32) -> i32 {\n    x + 1\n}\n",
        definition_at: &["src/lib.rs:6:8"],
        core_refs: 1,
        module_rel: |i| format!("src/m{i}.rs"),
        module_text: |i| format!("use crate::target;\n\npub fn use_{i}() -> i32 {{\n    target({i})\n}}\n"),
        module_call_line: 4,
        module_refs: 2,
        appended: |i, n| format!("\npub fn extra_{i}_{n}() -> i32 {{\n    target({n})\n}}\n"),
        broken: "\npub fn bad() -> i32 {\n    \"x\"\n}\n",
        broken_says: "expected i32",
        closing: "",
        symbol_row: function_row,
        // A new file under tests/ is a target of its own, which
        // rust-analyzer picks up by reloading the workspace. Its calls are
        // plain: a call inside `assert_eq!(…)` in a target it has just
        // loaded can be missing from an answer it gives while it still
        // expands the macro, which tether does not yet label (left open).
        created: |k| {
            (
                format!("tests/new{k}.rs"),
                format!("use hunt::target;\n\n#[test]\nfn new_fn_{k}() {{\n    let _ = target({k});\n}}\n"),
            )
        },
        created_refs: 2,
        extra: |k| {
            (
                format!("tests/extra{k}.rs"),
                format!("use hunt::target;\n\n#[test]\nfn value_{k}() {{\n    let _ = target({k});\n}}\n"),
            )
        },
        extra_refs: 2,
        hover_says: &["target", "i32"],
    }
}

fn java() -> Lang {
    Lang {
        id: "java",
        server: "jdtls",
        require: || {
            let prefix =
                tether_actors::tools_prefix::bin().expect("a home directory for tether's tools prefix");
            let on_path = std::env::var_os("PATH")
                .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("jdtls").is_file()));
            assert!(
                prefix.join("jdtls").is_file() || on_path,
                "`jdtls` is neither in {} nor on PATH; install it with `tether install jdtls` (the README's test command does)",
                prefix.display()
            );
        },
        fixed: |_| Vec::new(),
        core: ("src/pkg/Core.java", 4),
        core_text: "package pkg;\n\npublic class Core {\n    public static int target(int x) {\n        return x + 1;\n    }\n}\n",
        definition_at: &["src/pkg/Core.java:4:23"],
        core_refs: 1,
        module_rel: |i| format!("src/pkg/M{i}.java"),
        // The class's closing brace comes after what is appended.
        module_text: |i| {
            format!(
                "package pkg;\n\npublic class M{i} {{\n    public static int use_{i}() {{\n        return Core.target({i});\n    }}\n"
            )
        },
        module_call_line: 5,
        module_refs: 1,
        appended: |i, n| {
            format!("\n    public static int extra_{i}_{n}() {{\n        return Core.target({n});\n    }}\n")
        },
        broken: "\n    static int bad = \"x\";\n",
        broken_says: "Type mismatch",
        closing: "}\n",
        symbol_row: |_, i| format!("M{i}.use_{i} (method, java) src/pkg/M{i}.java"),
        created: |k| {
            (
                format!("src/pkg/New{k}.java"),
                format!(
                    "package pkg;\n\npublic class New{k} {{\n    public static int new_fn_{k}() {{\n        return Core.target({k});\n    }}\n}}\n"
                ),
            )
        },
        created_refs: 1,
        extra: |k| {
            (
                format!("src/pkg/Extra{k}.java"),
                format!(
                    "package pkg;\n\npublic class Extra{k} {{\n    static final int VALUE = Core.target({k});\n}}\n"
                ),
            )
        },
        extra_refs: 1,
        hover_says: &["target", "int"],
    }
}

/// What is on disk, as the world last wrote it.
#[derive(Debug, Clone, PartialEq)]
struct World {
    /// Calls appended to each module, by number.
    appended: Vec<Vec<usize>>,
    /// Which modules hold a type error.
    broken: Vec<bool>,
    /// Modules created outside (each calls `target`).
    created: Vec<usize>,
    /// Whether the `more` branch is checked out.
    branch_more: bool,
    /// How many of that branch's files are on disk (a checkout writes
    /// them one by one).
    branch_files: usize,
}

impl World {
    fn new() -> Self {
        World {
            appended: vec![Vec::new(); MODULES],
            broken: vec![false; MODULES],
            created: Vec::new(),
            branch_more: false,
            branch_files: 0,
        }
    }

    /// References to `target`, its declaration included.
    fn references(&self, lang: &Lang) -> usize {
        let modules: usize = self.appended.iter().map(|a| lang.module_refs + a.len()).sum();
        lang.core_refs
            + modules
            + lang.created_refs * self.created.len()
            + lang.extra_refs * self.branch_files
    }

    fn module(&self, lang: &Lang, i: usize) -> String {
        let mut text = (lang.module_text)(i);
        for n in &self.appended[i] {
            text.push_str(&(lang.appended)(i, *n));
        }
        if self.broken[i] {
            text.push_str(lang.broken);
        }
        text.push_str(lang.closing);
        text
    }
}

/// What every caller is asked in a round.
#[derive(Debug, Clone)]
enum Op {
    References,
    Definition(usize),
    Hover,
    Diagnostics(usize),
    Symbols,
}

impl Op {
    fn args(&self, lang: &Lang) -> Value {
        let (core, line) = lang.core;
        match self {
            Op::References => json!({"action": "references", "file": core, "line": line, "symbol": "target"}),
            Op::Definition(i) => json!({"action": "definition", "file": (lang.module_rel)(*i),
                                        "line": lang.module_call_line, "symbol": "target"}),
            Op::Hover => json!({"action": "hover", "file": core, "line": line, "symbol": "target"}),
            Op::Diagnostics(i) => json!({"action": "diagnostics", "file": (lang.module_rel)(*i)}),
            Op::Symbols => json!({"action": "symbols", "query": "use_"}),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Op::References => "references",
            Op::Definition(_) => "definition",
            Op::Hover => "hover",
            Op::Diagnostics(_) => "diagnostics",
            Op::Symbols => "symbols",
        }
    }
}

/// Words by which an answer says it may not be complete or current.
const LABELS: &[&str] = &[
    "may be incomplete",
    "still indexing",
    "still re-reading",
    "still analysing",
    "(pending",
    "(stale since",
    "(unconfirmed",
    "no diagnostics known",
    "ask again",
    "may be only partly loaded",
    // jdtls: a file holding the name that the answer does not list.
    "these may be uses",
];

/// How the checker judged one answer.
#[derive(Debug, PartialEq)]
enum Verdict {
    Right,
    Labelled,
    /// An error that names its cause (the killed server, a file changed
    /// while the call waited).
    Error,
    /// Wrong, and reads as complete: what the hunt is for.
    Wrong(String),
}

fn judge(lang: &Lang, op: &Op, text: &str, is_error: bool, states: &[&World]) -> Verdict {
    if is_error {
        return if text.starts_with("client failure") {
            Verdict::Wrong(format!("the call failed: {text}"))
        } else {
            Verdict::Error
        };
    }
    let right = |w: &World| -> bool {
        match op {
            Op::References => references_total(text) == Some(w.references(lang)),
            Op::Definition(_) => lang.definition_at.iter().any(|at| text.contains(at)),
            Op::Hover => lang.hover_says.iter().all(|s| text.contains(s)),
            Op::Diagnostics(i) => {
                let shows = text.contains(lang.broken_says);
                text.contains("(fresh)") && shows == w.broken[*i]
            }
            Op::Symbols => (0..MODULES).all(|i| text.contains(&(lang.symbol_row)(lang, i))),
        }
    };
    if states.iter().any(|w| right(w)) {
        return Verdict::Right;
    }
    if LABELS.iter().any(|l| text.contains(l)) {
        return Verdict::Labelled;
    }
    Verdict::Wrong(text.chars().take(1600).collect())
}

fn references_total(text: &str) -> Option<usize> {
    if text.starts_with("no references") {
        return Some(0);
    }
    text.split(' ').next()?.parse().ok()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=hunt", "-c", "user.email=hunt@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs (apt-get install git)");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Writes `text` at `rel` under `dir`, making its folders.
fn put(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Lays out the project: the core declares `target`, each module calls
/// it; a `more` branch adds three modules more.
fn project(dir: &Path, lang: &Lang) {
    let write = |rel: &str, text: &str| put(dir, rel, text);
    for (rel, text) in (lang.fixed)(dir) {
        write(&rel, &text);
    }
    write(lang.core.0, lang.core_text);
    for i in 0..MODULES {
        write(&(lang.module_rel)(i), &World::new().module(lang, i));
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    git(dir, &["checkout", "-qb", "more"]);
    for k in 0..BRANCH_EXTRAS {
        let (rel, text) = (lang.extra)(k);
        write(&rel, &text);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "more"]);
    git(dir, &["checkout", "-q", "main"]);
}

/// One outside change, made with plain file I/O (or git); returns what it
/// was. `trail` gets every state the disk passes through on the way: a
/// change of several files is written one file at a time, and an answer
/// computed between two of them is right for that state.
fn change(
    dir: &Path,
    lang: &Lang,
    world: &mut World,
    rng: &mut Rng,
    serial: &mut usize,
    trail: &mut Vec<World>,
) -> String {
    *serial += 1;
    let n = *serial;
    let dirty = world.appended.iter().any(|a| !a.is_empty())
        || world.broken.iter().any(|b| *b)
        || !world.created.is_empty();
    let pick = rng.below(10);
    let i = rng.below(MODULES);
    let module = |w: &World, i: usize, trail: &mut Vec<World>| {
        std::fs::write(dir.join((lang.module_rel)(i)), w.module(lang, i)).unwrap();
        trail.push(w.clone());
    };
    match pick {
        0..=2 => {
            world.appended[i].push(n);
            module(world, i, trail);
            format!("appended a call to m{i}")
        }
        3 if !world.appended[i].is_empty() => {
            world.appended[i].pop();
            module(world, i, trail);
            format!("removed a call from m{i}")
        }
        3..=5 => {
            world.broken[i] = !world.broken[i];
            module(world, i, trail);
            format!("{} m{i}", if world.broken[i] { "broke" } else { "fixed" })
        }
        6..=7 if world.created.len() < 3 => {
            world.created.push(n);
            let (rel, text) = (lang.created)(n);
            std::fs::write(dir.join(rel), text).unwrap();
            trail.push(world.clone());
            format!("created new{n}")
        }
        6..=7 => {
            let k = world.created.remove(0);
            std::fs::remove_file(dir.join((lang.created)(k).0)).unwrap();
            trail.push(world.clone());
            format!("deleted new{k}")
        }
        _ if dirty => {
            // Back to what the branch holds, then (next time) a checkout.
            for i in 0..MODULES {
                world.appended[i].clear();
                world.broken[i] = false;
                module(world, i, trail);
            }
            while !world.created.is_empty() {
                let k = world.created.remove(0);
                std::fs::remove_file(dir.join((lang.created)(k).0)).unwrap();
                trail.push(world.clone());
            }
            "reverted every change".to_string()
        }
        _ => {
            world.branch_more = !world.branch_more;
            git(dir, &["checkout", "-q", if world.branch_more { "more" } else { "main" }]);
            for present in 1..BRANCH_EXTRAS {
                trail.push(World { branch_files: present, ..world.clone() });
            }
            world.branch_files = if world.branch_more { BRANCH_EXTRAS } else { 0 };
            trail.push(world.clone());
            format!("checked out {}", if world.branch_more { "more" } else { "main" })
        }
    }
}

/// Kills what it holds when the test ends, however it ends.
struct Reaper(Vec<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn busy_process() -> Child {
    Command::new("sh").args(["-c", "while :; do :; done"]).stdin(Stdio::null()).spawn().expect("sh runs")
}

fn serve_http(dir: &Path, reaper: &mut Reaper) -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let (child, rx) = common::serve_http(dir, &addr, &[], TOKEN, LISTEN_WITHIN);
    reaper.0.push(child);
    // Keep draining its stderr so it never blocks on a full pipe.
    std::thread::spawn(move || while rx.recv().is_ok() {});
    format!("http://{addr}/mcp")
}

/// The MCP callers: a child process speaking one line per round.
struct McpCallers {
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl McpCallers {
    fn start(url: &str, dir: &Path, reaper: &mut Reaper) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hunt_callers.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args([url, TOKEN, env!("CARGO_BIN_EXE_tether")])
            .arg(dir)
            .args([HTTP_SESSIONS.to_string(), STDIO_PARALLEL.to_string(), CALL_BOUND.as_secs().to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the MCP callers (pip install mcp==2.3.0)");
        let lines = common::lines_of(child.stdout.take().unwrap());
        let stdin = child.stdin.take().unwrap();
        reaper.0.push(child);
        let ready = lines.recv_timeout(Duration::from_secs(60)).expect("the MCP callers start");
        assert_eq!(ready, "ready");
        Self { stdin, lines }
    }

    fn send(&mut self, round: usize, args: &Value) {
        writeln!(self.stdin, "{}", json!({"round": round, "tool": "lsp", "args": args})).unwrap();
        self.stdin.flush().unwrap();
    }

    fn answers(&mut self, round: usize) -> Vec<(String, String, bool, f64)> {
        let line = self
            .lines
            .recv_timeout(ROUND_BOUND)
            .unwrap_or_else(|_| fail_loudly(&format!("round {round}: the MCP callers hung")));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["round"].as_u64(), Some(round as u64));
        v["answers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["who"].as_str().unwrap().to_string(),
                    a["text"].as_str().unwrap().to_string(),
                    a["is_error"].as_bool().unwrap(),
                    a["ms"].as_f64().unwrap(),
                )
            })
            .collect()
    }
}

/// Whether an error says which of tether's bounded waits ran out ("jdtls
/// did not start within 60 s"): on a loaded machine a server may take
/// longer than a bound, and an error that says so reads as no answer, not
/// as a complete one. That most answers are right is checked apart.
fn names_a_bounded_wait(text: &str) -> bool {
    text.split(" within ").skip(1).any(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && (rest[digits..].starts_with(" s") || rest[digits..].starts_with(" ms"))
    })
}

/// Fails the test with `why`, written first straight to the process's
/// stderr: the test harness captures only what the test prints, and a CI
/// log that keeps the lines beside a failing test's name then shows the
/// cause there too.
fn fail_loudly(why: &str) -> ! {
    let _ = writeln!(std::io::stderr().lock(), "hunt failed: {why}");
    panic!("{why}");
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_callers_outside_changes_load_and_a_killed_server_never_get_a_wrong_answer_that_reads_complete()
{
    hunt(&python()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hunt_on_typescript_language_server_killed_three_times_finds_no_wrong_answer() {
    hunt(&typescript()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hunt_on_gopls_killed_three_times_finds_no_wrong_answer() {
    hunt(&go()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hunt_on_clangd_killed_three_times_finds_no_wrong_answer() {
    hunt(&c()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hunt_on_rust_analyzer_killed_three_times_finds_no_wrong_answer() {
    hunt(&rust()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hunt_on_jdtls_killed_three_times_finds_no_wrong_answer() {
    hunt(&java()).await;
}

/// The hunt on `lang`'s server: see the module's documentation.
async fn hunt(lang: &Lang) {
    (lang.require)();
    common::require("git", &["--version"], "apt-get install git");
    let seed = std::env::var("HUNT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_2026_u64);
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().canonicalize().unwrap();
    project(&root, lang);

    let mut reaper = Reaper(vec![busy_process(), busy_process()]);
    let url = serve_http(&root, &mut reaper);
    let mut mcp = McpCallers::start(&url, &root, &mut reaper);
    let rt = tether::Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(&root)
        .connect_all()
        .start()
        .unwrap();

    let mut world = World::new();
    let mut serial = 0;
    let mut tally: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut by_op: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut wrong: Vec<String> = Vec::new();
    let mut latencies: Vec<f64> = Vec::new();
    let (mut changes, mut mid_call, mut killed) = (0, 0, 0);
    let started = Instant::now();

    for round in 0..ROUNDS {
        if round > 0 && rng.chance(60) {
            let what = change(&root, lang, &mut world, &mut rng, &mut serial, &mut Vec::new());
            changes += 1;
            eprintln!("round {round}: {what}");
        }
        let op = match rng.below(10) {
            0..=3 => Op::References,
            4 => Op::Definition(rng.below(MODULES)),
            5 => Op::Hover,
            6..=8 => Op::Diagnostics(rng.below(MODULES)),
            _ => Op::Symbols,
        };
        let before = world.clone();
        let kill_round = KILL_ROUNDS.contains(&round);
        let during = round > 2 && !kill_round && rng.chance(20);
        let args = op.args(lang);
        mcp.send(round, &args);
        let calls = (0..API_CONVERSATIONS).map(|k| {
            let rt = &rt;
            let args = args.clone();
            async move {
                let t = Instant::now();
                let r = rt.call_in(&format!("api-{k}"), "lsp", args).await;
                (format!("api-{k}"), r.text, r.is_error, t.elapsed().as_secs_f64() * 1000.0)
            }
        });
        let api = tokio::time::timeout(ROUND_BOUND, futures::future::join_all(calls));
        // A change while the calls are in flight, or the kill.
        let mut world_during = world.clone();
        let mut trail = Vec::new();
        let side = async {
            if during {
                tokio::time::sleep(Duration::from_millis(30)).await;
                let what = change(&root, lang, &mut world_during, &mut rng, &mut serial, &mut trail);
                eprintln!("round {round}: {what} (during the calls)");
                Some(what)
            } else if kill_round {
                tokio::time::sleep(Duration::from_millis(20)).await;
                if let Some(pid) = rt
                    .tree()
                    .await
                    .root
                    .walk()
                    .into_iter()
                    .filter(|n| n.kind == "lsp-server")
                    .find_map(|n| n.pid)
                {
                    // SAFETY: kill(2) on a pid the runtime reports as its child.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    eprintln!("round {round}: killed {} {pid} under the Rust API run", lang.server);
                }
                None
            } else {
                None
            }
        };
        let (api, side) = tokio::join!(api, side);
        let api = api.unwrap_or_else(|_| fail_loudly(&format!("round {round}: a Rust API call hung")));
        if side.is_some() {
            mid_call += 1;
            changes += 1;
        }
        if kill_round {
            killed += 1;
        }
        let answers: Vec<_> = api.into_iter().chain(mcp.answers(round)).collect();
        let states: Vec<&World> =
            if world_during != before { vec![&before, &world_during] } else { vec![&before] };
        for (who, text, is_error, ms) in &answers {
            latencies.push(*ms);
            *by_op.entry(op.name()).or_default() += 1;
            let verdict = judge(lang, &op, text, *is_error, &states);
            let word = match &verdict {
                Verdict::Right => "right",
                Verdict::Labelled => "labelled",
                Verdict::Error => "error",
                Verdict::Wrong(_) => "wrong",
            };
            *tally.entry(word).or_default() += 1;
            match verdict {
                Verdict::Wrong(why) => {
                    wrong.push(format!("round {round} {} from {who} ({before:?}): {why}", op.name()))
                }
                // The server's death is noticed a moment after the kill:
                // calls of the next round may be in flight then.
                Verdict::Error
                    if !kill_round
                        && !text.contains("changed on disk")
                        && !names_a_bounded_wait(text)
                        && !((text.contains("exited") || text.contains("can no longer answer"))
                            && KILL_ROUNDS.contains(&round.saturating_sub(1))) =>
                {
                    wrong.push(format!(
                        "round {round} {} from {who}: an error outside the kill round: {text}",
                        op.name()
                    ))
                }
                _ => {}
            }
        }
        world = world_during;
    }

    latencies.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let ops: usize = tally.values().sum();
    let summary = format!(
        "hunt ({}): {ops} operations ({by_op:?}) by {} callers ({HTTP_SESSIONS} HTTP sessions, {STDIO_PARALLEL} parallel in one stdio session, {API_CONVERSATIONS} Rust API conversations) over {ROUNDS} rounds; {changes} outside changes ({mid_call} during calls); the server killed {killed} times; 2 CPU-bound processes beside; verdicts {tally:?}; latency p50 {:.0} ms, p99 {:.0} ms; {:.0} s in all (seed {seed:#x})",
        lang.server,
        HTTP_SESSIONS + STDIO_PARALLEL + API_CONVERSATIONS,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        started.elapsed().as_secs_f64()
    );
    eprintln!("{summary}");
    let right = tally.get("right").copied().unwrap_or(0);
    if right * 4 < ops {
        wrong.push(format!("only {right} of {ops} answers were right, the rest labelled or errors that name their cause: too few to hold the rest to anything"));
    }
    if !wrong.is_empty() {
        fail_loudly(&format!("{summary}\nwhat it found ({}):\n{}", wrong.len(), wrong.join("\n\n")));
    }
    rt.shutdown();
}

/// Rounds of the hunt with writers; each is one operation from every
/// conversation.
const WRITER_ROUNDS: usize = 60;
/// Conversations writing at once, each an MCP session of one run.
const WRITERS: usize = 4;
/// Times the language server is SIGKILLed during the hunt with writers.
const WRITER_KILLS: usize = 2;
/// Longest the hunt with writers may take before it counts as a hang.
const WRITERS_BOUND: Duration = Duration::from_secs(900);

/// The hunt with writers (`tests/mcp/hunt_writers.py`, which holds the
/// checker): four MCP sessions of one `tether serve --http` run `write`
/// (after a `read`), `edit`, `apply_patch`, `lsp_rename` and `ast_edit` +
/// `resolve` the same four files at once, a program outside tether writes
/// them too, two CPU-bound processes run beside and pyright is killed
/// twice. After every round some order of the accepted changes must give
/// the files on disk; every refusal names its cause and had one (another
/// writer of its files, or the killed server); a reader polling the files
/// never sees one partly written.
#[test]
fn writers_on_one_run_lose_nothing_and_every_refusal_names_its_cause() {
    common::require("pyright", &["--version"], "npm install -g pyright");
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().canonicalize().unwrap();
    let write = |rel: &str, text: &str| put(&root, rel, text);
    write("pyproject.toml", "");
    write("pkg/__init__.py", "");
    let hot: Vec<String> = (0..4).map(|i| format!("pkg/h{i}.py")).collect();
    for (i, rel) in hot.iter().enumerate() {
        write(rel, &format!("def use_{i}(x: int) -> int:\n    return x + {i}\n"));
    }
    let figures = root.join("figures.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hunt_writers.py");
    // First, that its checker can fail: it must catch a lost update, a
    // half-made change and a refused change that wrote.
    let out = Command::new("python3").arg(&script).arg("--self-test").output().expect("python3 runs");
    assert!(out.status.success(), "the checker's self-test: {}", String::from_utf8_lossy(&out.stderr));
    let seed = std::env::var("HUNT_SEED").unwrap_or_else(|_| "2026".into());
    let mut child = Command::new("python3")
        .arg(&script)
        .args(["--tether", env!("CARGO_BIN_EXE_tether"), "--root"])
        .arg(&root)
        .args(["--lang", "python", "--names", "pkg/hunt_names.py", "--hot"])
        .args(&hot)
        .args(["--rounds", &WRITER_ROUNDS.to_string(), "--conversations", &WRITERS.to_string()])
        .args(["--kills", &WRITER_KILLS.to_string(), "--seed", &seed, "--json"])
        .arg(&figures)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs the hunt with writers (pip install mcp==2.3.0)");
    let (out, err) =
        (common::lines_of(child.stdout.take().unwrap()), common::lines_of(child.stderr.take().unwrap()));
    let deadline = Instant::now() + WRITERS_BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the hunt with writers did not end within {WRITERS_BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // The pipes close once the engine and what it started are gone.
    let drain = |rx: std::sync::mpsc::Receiver<String>| -> Vec<String> {
        std::iter::from_fn(|| rx.recv_timeout(Duration::from_secs(10)).ok()).collect()
    };
    let said: Vec<String> = drain(out).into_iter().chain(drain(err)).collect();
    eprintln!("{}", said.join("\n"));
    assert!(status.success(), "violations (or a failed run): {}", said.join("\n"));
    let figures: Value = serde_json::from_str(&std::fs::read_to_string(&figures).unwrap()).unwrap();
    assert_eq!(figures["violations"], 0);
    assert!(figures["servers_killed"].as_u64().unwrap() >= WRITER_KILLS as u64, "{figures}");
    assert!(figures["calls"].as_u64().unwrap() >= 200, "a few hundred operations: {figures}");
    assert!(figures["outside_writes"].as_u64().unwrap() > 0, "{figures}");
    let kinds = figures["by_kind"].as_object().unwrap();
    for kind in ["write", "edit", "apply_patch", "lsp_rename", "ast_edit+resolve"] {
        let accepted = kinds.get(kind).and_then(|k| k[0].as_u64()).unwrap_or(0);
        assert!(accepted > 0, "no {kind} was accepted, so none was checked: {figures}");
    }
}
