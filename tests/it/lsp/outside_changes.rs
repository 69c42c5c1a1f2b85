//! Changes made outside tether reach the real language servers before the
//! next query: a write in place, a write by rename-over, a new file, a new
//! file in a new directory, a delete, a `git checkout` of a branch that
//! changes many files — against pyright, typescript-language-server,
//! clangd, rust-analyzer and gopls. Every answer is asserted on its exact
//! count and lines: never the old index, never an old list labelled fresh.

use crate::common;

use crate::common::Harness;
use serde_json::{Value, json};

/// One language's small project and how to write code in it.
struct Project {
    /// The server, for messages.
    server: &'static str,
    /// The file extension.
    ext: &'static str,
    /// The files it starts with.
    files: Vec<(String, String)>,
    /// Where the function `name` is declared (file, 1-based line): the
    /// place `references` is asked about.
    decl: (&'static str, u32),
    /// Where `definition` from a call lands (file, 1-based line).
    def: (&'static str, u32),
    /// The function's name.
    name: &'static str,
    /// The file that calls it from the start, and the line of that call.
    user: (&'static str, u32),
    /// References at the start.
    initial: usize,
    /// A new file at `rel` calling the function `calls` times: its text
    /// and the references it adds.
    caller: fn(rel: &str, calls: usize) -> (String, usize),
    /// A line calling the function once, appended to `user` (`k` makes it unique).
    call_line: fn(k: usize) -> String,
    /// A line holding one type error, and a word of the message.
    error_line: (&'static str, &'static str),
    /// A new function appended to the declaring file (its name is `g_new`'s equivalent).
    new_function: (&'static str, &'static str),
    /// What else a new file needs (Rust: a `mod` line), given its path.
    declare: fn(h: &Harness, rel: &str, present: bool),
    /// How a diagnostics answer is labelled: `fresh` where the server says
    /// which version its lists are about, `unconfirmed` where it does not.
    diagnostics_label: &'static str,
}

fn no_declare(_h: &Harness, _rel: &str, _present: bool) {}

fn depth_prefix(rel: &str) -> String {
    "../".repeat(rel.matches('/').count())
}

fn python() -> Project {
    Project {
        server: "pyright",
        ext: "py",
        files: vec![
            ("pyproject.toml".into(), String::new()),
            ("a.py".into(), "def f():\n    return 1\n".into()),
            ("b.py".into(), "from a import f\n\nf()\n".into()),
        ],
        decl: ("a.py", 1),
        def: ("a.py", 1),
        name: "f",
        user: ("b.py", 3),
        initial: 3,
        caller: |_rel, calls| (format!("from a import f\n{}", "f()\n".repeat(calls)), calls + 1),
        call_line: |_k| "f()\n".into(),
        error_line: ("x: int = \"s\"\n", "not assignable"),
        new_function: ("def g_new():\n    return 2\n", "g_new"),
        declare: no_declare,
        diagnostics_label: "fresh",
    }
}

fn typescript() -> Project {
    Project {
        server: "typescript-language-server",
        ext: "ts",
        files: vec![
            (
                "tsconfig.json".into(),
                r#"{"compilerOptions": {"strict": true}, "include": ["**/*.ts"]}"#.into(),
            ),
            ("a.ts".into(), "export function f(): number {\n  return 1;\n}\n".into()),
            ("b.ts".into(), "import { f } from './a';\n\nf();\n".into()),
        ],
        decl: ("a.ts", 1),
        def: ("a.ts", 1),
        name: "f",
        user: ("b.ts", 3),
        initial: 3,
        caller: |rel, calls| {
            let prefix = depth_prefix(rel);
            let from = if prefix.is_empty() { "./a".to_string() } else { format!("{prefix}a") };
            (format!("import {{ f }} from '{from}';\n{}", "f();\n".repeat(calls)), calls + 1)
        },
        call_line: |_k| "f();\n".into(),
        error_line: ("const bad: number = \"s\";\n", "not assignable"),
        new_function: ("export function gNew(): number {\n  return 2;\n}\n", "gNew"),
        declare: no_declare,
        diagnostics_label: "fresh",
    }
}

fn c() -> Project {
    Project {
        server: "clangd",
        ext: "c",
        files: vec![
            ("a.h".into(), "int f(void);\n".into()),
            ("a.c".into(), "#include \"a.h\"\nint f(void) { return 1; }\n".into()),
            ("b.c".into(), "#include \"a.h\"\nint g(void) {\n  return f();\n}\n".into()),
        ],
        decl: ("a.h", 1),
        def: ("a.c", 2),
        name: "f",
        user: ("b.c", 3),
        initial: 3,
        caller: |rel, calls| {
            let stem = rel.replace(['/', '.'], "_");
            let body = "  s += f();\n".repeat(calls);
            (
                format!(
                    "#include \"{}a.h\"\nint use_{stem}(void) {{\n  int s = 0;\n{body}  return s;\n}}\n",
                    depth_prefix(rel)
                ),
                calls,
            )
        },
        call_line: |k| format!("int h{k}(void) {{ return f(); }}\n"),
        error_line: ("int bad(void) { return missing_name; }\n", "missing_name"),
        new_function: ("int g_new(void);\n", "g_new"),
        declare: no_declare,
        diagnostics_label: "fresh",
    }
}

fn rust() -> Project {
    Project {
        server: "rust-analyzer",
        ext: "rs",
        files: vec![
            (
                "Cargo.toml".into(),
                "[package]\nname = \"toy\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".into(),
            ),
            ("src/lib.rs".into(), "pub mod b;\npub fn f() -> u32 {\n    1\n}\n".into()),
            ("src/b.rs".into(), "pub fn g() -> u32 {\n    crate::f()\n}\n".into()),
        ],
        decl: ("src/lib.rs", 2),
        def: ("src/lib.rs", 2),
        name: "f",
        user: ("src/b.rs", 2),
        initial: 2,
        caller: |_rel, calls| {
            let body = "    s += crate::f();\n".repeat(calls);
            (format!("pub fn uses() -> u32 {{\n    let mut s = 0;\n{body}    s\n}}\n"), calls)
        },
        call_line: |k| format!("pub fn h{k}() -> u32 {{ crate::f() }}\n"),
        error_line: ("pub fn bad() -> u32 { \"s\" }\n", "expected u32"),
        new_function: ("pub fn g_new() -> u32 {\n    2\n}\n", "g_new"),
        declare: |h, rel, present| {
            // `src/x.rs` is `pub mod x;` in lib.rs; `src/sub/y.rs` also
            // needs `src/sub/mod.rs` with `pub mod y;`.
            let rel = rel.strip_prefix("src/").expect("under src");
            let mut parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
            let leaf = parts.pop().unwrap();
            let module_file = if parts.is_empty() {
                "src/lib.rs".to_string()
            } else {
                format!("src/{}/mod.rs", parts.join("/"))
            };
            let line = format!("pub mod {leaf};\n");
            let mut text = std::fs::read_to_string(h.path(&module_file)).unwrap_or_default();
            if present && !text.contains(&line) {
                text.push_str(&line);
            } else if !present {
                text = text.replace(&line, "");
            }
            h.write(&module_file, &text);
            if let Some(top) = parts.first() {
                let line = format!("pub mod {top};\n");
                let mut lib = h.read("src/lib.rs");
                if present && !lib.contains(&line) {
                    lib.push_str(&line);
                    h.write("src/lib.rs", &lib);
                }
            }
        },
        diagnostics_label: "fresh",
    }
}

fn go() -> Project {
    Project {
        server: "gopls",
        ext: "go",
        files: vec![
            ("go.mod".into(), "module x\n\ngo 1.19\n".into()),
            ("a.go".into(), "package x\n\nfunc F() int {\n\treturn 1\n}\n".into()),
            ("b.go".into(), "package x\n\nfunc G() int {\n\treturn F()\n}\n".into()),
        ],
        decl: ("a.go", 3),
        def: ("a.go", 3),
        name: "F",
        user: ("b.go", 4),
        initial: 2,
        caller: |rel, calls| {
            let stem: String = rel.replace(['/', '.'], "_");
            match rel.rsplit_once('/') {
                None => (
                    format!(
                        "package x\n\nfunc Use_{stem}() int {{\n\ts := 0\n{}\treturn s\n}}\n",
                        "\ts += F()\n".repeat(calls)
                    ),
                    calls,
                ),
                Some((dir, _)) => {
                    let package = dir.rsplit('/').next().unwrap();
                    (
                        format!(
                            "package {package}\n\nimport \"x\"\n\nfunc Use_{stem}() int {{\n\ts := 0\n{}\treturn s\n}}\n",
                            "\ts += x.F()\n".repeat(calls)
                        ),
                        calls,
                    )
                }
            }
        },
        call_line: |k| format!("func H{k}() int {{ return F() }}\n"),
        error_line: ("func Bad() int { return \"s\" }\n", "cannot use"),
        new_function: ("func GNew() int {\n\treturn 2\n}\n", "GNew"),
        declare: no_declare,
        diagnostics_label: "fresh",
    }
}

/// `references` of the project's function: the total and every (file, line).
async fn references(h: &Harness, p: &Project) -> (usize, Vec<(String, u64)>, String) {
    let r = h
        .ok("lsp", json!({"action": "references", "file": p.decl.0, "line": p.decl.1, "symbol": p.name}))
        .await;
    let data = r.data.clone().unwrap_or(Value::Null);
    let total = data["total"].as_u64().unwrap_or(0) as usize;
    let places = data["references"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (r["path"].as_str().unwrap_or("").to_string(), r["line"].as_u64().unwrap_or(0)))
        .collect();
    (total, places, r.text)
}

fn lines_of(h: &Harness, rel: &str) -> u64 {
    h.read(rel).lines().count() as u64
}

fn append(h: &Harness, rel: &str, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(h.path(rel)).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// A write the way editors save: a temporary file renamed over the original.
fn rename_over(h: &Harness, rel: &str, text: &str) {
    let tmp = h.path(&format!("{rel}.tmp~"));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(tmp, h.path(rel)).unwrap();
}

fn git(h: &Harness, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(h.root())
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The whole sequence against one server.
async fn every_outside_change_reaches(p: Project) {
    let files: Vec<(&str, &str)> = p.files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let h = Harness::new(&files);
    if p.server == "clangd" {
        // clangd indexes the files its compilation database names.
        let root = h.root();
        let entries: Vec<Value> = ["a.c", "b.c"]
            .iter()
            .map(|f| json!({"directory": root, "file": root.join(f), "command": format!("cc -c {f}")}))
            .collect();
        h.write("compile_commands.json", &serde_json::to_string(&entries).unwrap());
    }
    let ext = p.ext;
    let who = p.server;

    let (total, _, text) = references(&h, &p).await;
    assert_eq!(total, p.initial, "{who}: the starting references\n{text}");
    let mut expected = p.initial;

    // 1. A write in place.
    append(&h, p.user.0, &(p.call_line)(1));
    let line = lines_of(&h, p.user.0);
    expected += 1;
    let (total, places, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: after an in-place write\n{text}");
    assert!(places.contains(&(p.user.0.to_string(), line)), "{who}: the new call at line {line}\n{text}");

    // 2. A write by rename-over.
    let mut content = h.read(p.user.0);
    content.push_str(&(p.call_line)(2));
    rename_over(&h, p.user.0, &content);
    let line = lines_of(&h, p.user.0);
    expected += 1;
    let (total, places, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: after a rename-over\n{text}");
    assert!(
        places.contains(&(p.user.0.to_string(), line)),
        "{who}: the renamed-over call at line {line}\n{text}"
    );

    // 3. A new file, and 4. a new file in a new directory.
    let new_file = if ext == "rs" { format!("src/c.{ext}") } else { format!("c.{ext}") };
    let (body, added_c) = (p.caller)(&new_file, 2);
    h.write(&new_file, &body);
    (p.declare)(&h, &new_file, true);
    expected += added_c;
    let (total, places, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: after creating {new_file}\n{text}");
    assert!(places.iter().any(|(f, _)| *f == new_file), "{who}: {new_file} is listed\n{text}");
    let deep_file = if ext == "rs" { format!("src/sub/deep.{ext}") } else { format!("sub/deep/d.{ext}") };
    let (body, added_d) = (p.caller)(&deep_file, 3);
    h.write(&deep_file, &body);
    (p.declare)(&h, &deep_file, true);
    expected += added_d;
    let (total, places, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: after creating {deep_file} in a new directory\n{text}");
    assert_eq!(places.iter().filter(|(f, _)| *f == deep_file).count(), added_d, "{who}: {text}");

    // 5. A delete.
    std::fs::remove_file(h.path(&new_file)).unwrap();
    (p.declare)(&h, &new_file, false);
    expected -= added_c;
    let (total, places, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: after deleting {new_file}\n{text}");
    assert!(!places.iter().any(|(f, _)| *f == new_file), "{who}: {new_file} is gone\n{text}");

    // 6. `definition` follows a declaration moved down three lines.
    let definition = || async {
        h.ok("lsp", json!({"action": "definition", "file": p.user.0, "line": p.user.1, "symbol": p.name}))
            .await
            .text
    };
    let at = format!("{}:{}:", p.def.0, p.def.1);
    let before = definition().await;
    assert!(before.contains(&at), "{who}: definition at {at}\n{before}");
    let comment = if ext == "py" { "# moved\n" } else { "// moved\n" };
    let comment = if ext == "c" { "/* moved */\n" } else { comment };
    rename_over(&h, p.def.0, &format!("{}{}", comment.repeat(3), h.read(p.def.0)));
    let at = format!("{}:{}:", p.def.0, p.def.1 + 3);
    let after = definition().await;
    assert!(after.contains(&at), "{who}: definition moved to {at}\n{after}");
    let decl = (p.decl.0, if p.decl.0 == p.def.0 { p.decl.1 + 3 } else { p.decl.1 });
    let p = Project { decl, ..p };

    // 7. `symbols` lists a function added outside, in the file and the workspace.
    append(&h, p.decl.0, p.new_function.0);
    let line = lines_of(&h, p.decl.0) - p.new_function.0.lines().count() as u64 + 1;
    let syms = h.ok("lsp", json!({"action": "symbols", "file": p.decl.0})).await.text;
    assert!(syms.contains(&format!("{} (function) {line}:", p.new_function.1)), "{who}: {syms}");
    let ws = h.ok("lsp", json!({"action": "symbols", "query": p.new_function.1})).await.text;
    assert!(
        ws.contains(&format!("{} (function, ", p.new_function.1))
            && ws.contains(&format!(" {}:{line}:", p.decl.0)),
        "{who}: {ws}"
    );

    // 8. Diagnostics of a file changed outside: fresh, then fresh again once fixed.
    let clean = h.read(p.user.0);
    append(&h, p.user.0, p.error_line.0);
    let line = lines_of(&h, p.user.0);
    let diags = h.ok("lsp", json!({"action": "diagnostics", "file": p.user.0})).await.text;
    let label = format!("({}", p.diagnostics_label);
    assert!(diags.contains(&label) && diags.contains(p.error_line.1), "{who}: the new error\n{diags}");
    assert!(diags.contains(&format!("{}:{line}:", p.user.0)), "{who}: at line {line}\n{diags}");
    rename_over(&h, p.user.0, &clean);
    let diags = h.ok("lsp", json!({"action": "diagnostics", "file": p.user.0})).await.text;
    assert!(diags.starts_with(&format!("no diagnostics for `{}` {label}", p.user.0)), "{who}: {diags}");

    // 9. A checkout of a branch that adds twelve callers and changes one more.
    git(&h, &["init", "-q"]);
    git(&h, &["add", "-A"]);
    git(&h, &["commit", "-qm", "base"]);
    git(&h, &["checkout", "-qb", "many"]);
    let mut added = 0;
    for i in 0..12 {
        let rel = if ext == "rs" { format!("src/many/m{i}.rs") } else { format!("many/m{i}.{ext}") };
        let (body, n) = (p.caller)(&rel, 1);
        h.write(&rel, &body);
        (p.declare)(&h, &rel, true);
        added += n;
    }
    append(&h, p.user.0, &(p.call_line)(3));
    added += 1;
    git(&h, &["add", "-A"]);
    git(&h, &["commit", "-qm", "many"]);
    git(&h, &["checkout", "-q", "main"]);
    let (total, _, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: back on main\n{text}");
    git(&h, &["checkout", "-q", "many"]);
    let (total, places, text) = references(&h, &p).await;
    assert_eq!(total, expected + added, "{who}: after checking out the branch\n{text}");
    assert_eq!(places.iter().filter(|(f, _)| f.contains("many/")).count(), added - 1, "{who}: {text}");
    git(&h, &["checkout", "-q", "main"]);
    let (total, _, text) = references(&h, &p).await;
    assert_eq!(total, expected, "{who}: after checking out main again\n{text}");

    let status = h.ok("lsp", json!({"action": "status"})).await.text;
    assert!(status.starts_with("file watching: events on"), "{status}");
}

#[tokio::test]
async fn pyright_sees_every_outside_change() {
    crate::common::require_on_path("pyright-langserver", "npm install -g pyright");
    every_outside_change_reaches(python()).await;
}

#[tokio::test]
async fn typescript_language_server_sees_every_outside_change() {
    crate::common::require_on_path(
        "typescript-language-server",
        "npm install -g typescript-language-server typescript@5",
    );
    every_outside_change_reaches(typescript()).await;
}

#[tokio::test]
async fn clangd_sees_every_outside_change() {
    crate::common::require_on_path("clangd", "apt-get install clangd");
    every_outside_change_reaches(c()).await;
}

#[tokio::test]
async fn rust_analyzer_sees_every_outside_change() {
    common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer");
    every_outside_change_reaches(rust()).await;
}

#[tokio::test]
async fn gopls_sees_every_outside_change() {
    crate::common::require_on_path("gopls", "apt-get install gopls golang-go");
    every_outside_change_reaches(go()).await;
}

/// More files than are worth opening one by one: the server is restarted
/// and reads (and, for clangd, re-indexes) everything. The seventy files
/// arrive as one directory renamed into place, so the watcher reports
/// them in one batch however busy the machine is (a checkout writes them
/// one by one, and on a loaded machine slower than the watcher's
/// debounce: several batches, each opened file by file — right answers,
/// and no restart to see).
#[tokio::test]
async fn clangd_takes_in_70_new_files_at_once_by_restarting() {
    crate::common::require_on_path("clangd", "apt-get install clangd");
    let p = c();
    let files: Vec<(&str, &str)> = p.files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let h = Harness::new(&files);
    let root = h.root();
    // Every file named, so the restarted clangd indexes them in the background.
    let mut names: Vec<String> = vec!["a.c".into(), "b.c".into()];
    names.extend((0..70).map(|i| format!("many/m{i}.c")));
    let entries: Vec<Value> = names
        .iter()
        .map(|f| json!({"directory": root, "file": root.join(f), "command": format!("cc -c {f}")}))
        .collect();
    h.write("compile_commands.json", &serde_json::to_string(&entries).unwrap());
    let (total, _, text) = references(&h, &p).await;
    assert_eq!(total, p.initial, "{text}");
    git(&h, &["init", "-q"]);
    git(&h, &["add", "-A"]);
    git(&h, &["commit", "-qm", "base"]);
    git(&h, &["checkout", "-qb", "many"]);
    for i in 0..70 {
        let rel = format!("many/m{i}.c");
        h.write(&rel, &(p.caller)(&rel, 1).0);
    }
    git(&h, &["add", "-A"]);
    git(&h, &["commit", "-qm", "many"]);
    git(&h, &["checkout", "-q", "main"]);
    let (total, _, text) = references(&h, &p).await;
    assert_eq!(total, p.initial, "back on main\n{text}");
    // The branch's seventy files, written elsewhere and renamed in.
    let outside = tempfile::tempdir_in(root.parent().unwrap()).unwrap(); // the same file system
    std::fs::create_dir(outside.path().join("many")).unwrap();
    for i in 0..70 {
        let rel = format!("many/m{i}.c");
        std::fs::write(outside.path().join(&rel), (p.caller)(&rel, 1).0).unwrap();
    }
    std::fs::rename(outside.path().join("many"), root.join("many")).unwrap();
    let (total, _, text) = references(&h, &p).await;
    assert_eq!(total, p.initial + 70, "after 70 new files at once\n{text}");
    let server = common::node_of(&h, "lsp-server").await;
    assert!(server["restarts"].as_u64() >= Some(1), "the server was restarted: {server}");
}
