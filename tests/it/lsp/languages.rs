//! The languages beyond the first seven, against their real servers as
//! `tether install` puts them in place: jdtls (Java), intelephense (PHP),
//! bash-language-server with shellcheck, yaml-language-server, the
//! vscode-langservers-extracted JSON, HTML and CSS servers, basedpyright
//! and pylsp, and fortls for Fortran — a language only `tether.toml`
//! names (jdtls has `lsp::java`). For each: what it answers, what it
//! says it cannot, and diagnostics on write. Then the languages no registry here serves
//! (their entries name the binary and upstream's install), and a monorepo
//! of four roots in three languages asked one workspace question.
//! A missing server fails its test with the command that installs it.

use std::path::Path;

use crate::common::Harness;
use serde_json::{Value, json};

/// Fails, naming the install command, unless `command` is in tether's
/// tools prefix or on PATH.
pub(super) fn installed(command: &str, server: &str) {
    let prefix = tether_actors::tools_prefix::bin().expect("a home directory for tether's tools prefix");
    let in_prefix = prefix.join(command).is_file();
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(command).is_file()));
    assert!(
        in_prefix || on_path,
        "`{command}` is neither in {} nor on PATH; install it with `tether install {server}` (the README's test command does)",
        prefix.display()
    );
}

/// A runtime over the files of `tests/fixtures/lsp/<name>` and `extra`,
/// all in place before it starts (it reads `tether.toml` then).
pub(super) fn fixture_with(name: &str, extra: &[(&str, &str)]) -> Harness {
    fn gather(dir: &Path, rel: &str, files: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = format!("{rel}{}", entry.file_name().to_string_lossy());
            if entry.file_type().unwrap().is_dir() {
                gather(&entry.path(), &format!("{name}/"), files);
            } else {
                files.push((name, std::fs::read_to_string(entry.path()).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    gather(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp").join(name), "", &mut files);
    files.extend(extra.iter().map(|(p, c)| (p.to_string(), c.to_string())));
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    Harness::new(&refs)
}

/// A root marker for servers that take a git checkout as a project.
pub(super) const GIT: (&str, &str) = (".git/HEAD", "ref: refs/heads/main\n");

/// One `lsp` call that must succeed; asked again while the server, busy
/// beside the suite's others, said nothing within the request's bound.
pub(super) async fn lsp(h: &Harness, args: Value) -> String {
    crate::common::ok_once_answered(h, "lsp", args).await.text
}

/// `write`s `content` to `path`, read first when it exists (a write
/// replaces only what its conversation saw).
pub(super) async fn wrote(h: &Harness, path: &str, content: &str) -> String {
    if h.path(path).exists() {
        h.ok("read", json!({"path": path})).await;
    }
    h.ok("write", json!({"path": path, "content": content})).await.text
}

#[tokio::test]
async fn intelephense_answers_for_php() {
    installed("intelephense", "intelephense");
    let h = fixture_with("php", &[]);
    let def =
        lsp(&h, json!({"action": "definition", "file": "src/main.php", "line": 6, "symbol": "Square"})).await;
    assert!(def.contains("src/Shapes.php:5:7: class Square"), "{def}");
    let refs =
        lsp(&h, json!({"action": "references", "file": "src/Shapes.php", "line": 5, "symbol": "Square"}))
            .await;
    assert!(refs.starts_with("3 references to `Square` in 2 files"), "{refs}");
    assert!(refs.contains("7:21: echo total([$a, new Square(3.0)]);"), "{refs}");
    let hover =
        lsp(&h, json!({"action": "hover", "file": "src/main.php", "line": 7, "symbol": "total"})).await;
    assert!(hover.contains("function total(array $squares): float"), "{hover}");
    let syms = lsp(&h, json!({"action": "symbols", "file": "src/Shapes.php"})).await;
    assert!(syms.contains("Square (class) 5:7") && syms.contains("  area (method) 9:21"), "{syms}");
    let ws = lsp(&h, json!({"action": "symbols", "query": "Square"})).await;
    assert!(
        ws.starts_with("1 workspace symbol(s) match `Square`:\nSquare (class, php) src/Shapes.php:"),
        "{ws}"
    );
    let w = wrote(&h, "src/broken.php", "<?php\nnamespace App;\n\n$x = ;\n").await;
    assert!(w.contains("+ src/broken.php:4:6: error [P1001] Unexpected ';'."), "{w}");
}

#[tokio::test]
async fn bash_language_server_answers_with_shellcheck_diagnostics() {
    installed("bash-language-server", "bash-language-server");
    installed("shellcheck", "bash-language-server");
    let h = fixture_with("bash", &[]);
    let def = lsp(&h, json!({"action": "definition", "file": "main.sh", "line": 3, "symbol": "greet"})).await;
    assert!(def.contains("lib.sh:3:1: greet() {"), "{def}");
    let refs = lsp(&h, json!({"action": "references", "file": "lib.sh", "line": 3, "symbol": "greet"})).await;
    assert!(refs.starts_with("3 references to `greet` in 2 files"), "{refs}");
    let hover = lsp(&h, json!({"action": "hover", "file": "main.sh", "line": 3, "symbol": "greet"})).await;
    assert!(hover.contains("Greets whoever is named.") && hover.contains("defined in lib.sh"), "{hover}");
    let ws = lsp(&h, json!({"action": "symbols", "query": "greet"})).await;
    assert!(ws.contains("greet (function, bash) lib.sh:3:1"), "{ws}");
    let w = wrote(&h, "clean.sh", "#!/usr/bin/env bash\nx=$1\nrm $x/*\n").await;
    assert!(w.contains("+ clean.sh:3:4: info [SC2086] Double quote to prevent globbing"), "{w}");
}

#[tokio::test]
async fn the_css_server_finds_custom_properties_and_hovers_without_image_blobs() {
    installed("vscode-css-language-server", "vscode-css-language-server");
    let h = fixture_with("css", &[]);
    let def =
        lsp(&h, json!({"action": "definition", "file": "styles.css", "line": 6, "symbol": "--brand"})).await;
    assert!(def.contains("styles.css:2:3: --brand: #336699;"), "{def}");
    let refs =
        lsp(&h, json!({"action": "references", "file": "styles.css", "line": 2, "symbol": "--brand"})).await;
    assert!(refs.starts_with("3 references to `--brand` in 1 file"), "{refs}");
    let hover =
        lsp(&h, json!({"action": "hover", "file": "styles.css", "line": 7, "symbol": "padding"})).await;
    assert!(hover.contains("thickness of the padding area"), "{hover}");
    assert!(!hover.contains("data:image"), "the base64 badge is left out: {hover}");
    assert!(hover.len() < 1_000, "{} characters: {hover}", hover.len());
    let syms = lsp(&h, json!({"action": "symbols", "file": "styles.css"})).await;
    assert!(syms.contains(".card (class) 5:1"), "{syms}");
    let w = wrote(&h, "bad.css", ".a {\n  color red;\n}\n\n.b {}\n").await;
    assert!(w.contains("+ bad.css:2:9: error [css-colonexpected] colon expected"), "{w}");
    assert!(w.contains("+ bad.css:5:1: warning [emptyRules] Do not use empty rulesets"), "{w}");
}

#[tokio::test]
async fn the_html_json_and_yaml_servers_answer_what_they_offer_and_say_what_they_do_not() {
    installed("vscode-html-language-server", "vscode-html-language-server");
    installed("vscode-json-language-server", "vscode-json-language-server");
    installed("yaml-language-server", "yaml-language-server");
    let h = Harness::new(&[
        (
            "index.html",
            "<!DOCTYPE html>\n<html>\n  <head><title>Shapes</title></head>\n  <body>\n    <div id=\"main\" class=\"card\">\n      <h1 class=\"title\">Squares</h1>\n    </div>\n  </body>\n</html>\n",
        ),
        (
            "package.json",
            "{\n  \"name\": \"shapes\",\n  \"version\": \"1.0.0\",\n  \"scripts\": { \"test\": \"node t.js\" }\n}\n",
        ),
        (
            "config.yaml",
            "defaults: &defaults\n  retries: 3\n  timeout: 10\nservice:\n  <<: *defaults\n  name: shapes\n",
        ),
    ]);
    let hover = lsp(&h, json!({"action": "hover", "file": "index.html", "line": 6, "symbol": "h1"})).await;
    assert!(hover.starts_with("The h1 element represents a section heading."), "{hover}");
    assert!(!hover.contains("data:image"), "{hover}");
    let syms = lsp(&h, json!({"action": "symbols", "file": "index.html"})).await;
    assert!(syms.contains("div#main.card (field) 5:5") && syms.contains("h1.title (field) 6:7"), "{syms}");

    let syms = lsp(&h, json!({"action": "symbols", "file": "package.json"})).await;
    assert!(syms.contains("version (string) 3:3") && syms.contains("  test (string) 4:16"), "{syms}");
    // What `symbols` lists, `lsp_edit` finds: one rule for both.
    let edited = h
        .ok("lsp_edit", json!({"action": "replace", "file": "package.json", "symbol": "scripts.test", "text": "\"test\": \"node --test\""}))
        .await;
    assert!(
        edited.text.contains("found by vscode-json-language-server's document symbols"),
        "{}",
        edited.text
    );
    assert!(
        h.read("package.json").contains("\"scripts\": { \"test\": \"node --test\" }"),
        "{}",
        h.read("package.json")
    );
    let def = h
        .err("lsp", json!({"action": "definition", "file": "package.json", "line": 2, "symbol": "name"}))
        .await;
    assert_eq!(
        def,
        "lsp definition: vscode-json-language-server does not answer definition (it announced no `definitionProvider`); ask another action, or search the text (`ast_grep`)"
    );
    let w = wrote(&h, "bad.json", "{\n  \"a\": 1,\n  \"b\": \n}\n").await;
    assert!(w.contains("+ bad.json:4:1: error [516] Value expected"), "{w}");

    let def =
        lsp(&h, json!({"action": "definition", "file": "config.yaml", "line": 5, "symbol": "defaults"}))
            .await;
    assert!(def.contains("config.yaml:2:3: retries: 3"), "an alias leads to its anchor's node: {def}");
    let syms = lsp(&h, json!({"action": "symbols", "file": "config.yaml"})).await;
    assert!(syms.contains("service (module) 4:1") && syms.contains("  name (string) 6:3"), "{syms}");
    let refs = h
        .err("lsp", json!({"action": "references", "file": "config.yaml", "line": 1, "symbol": "defaults"}))
        .await;
    assert!(
        refs.contains(
            "yaml-language-server does not answer references (it announced no `referencesProvider`)"
        ),
        "{refs}"
    );
    let w = wrote(&h, "bad.yaml", "a: 1\n  b: [\n").await;
    assert!(w.contains("error [0] Nested mappings are not allowed in compact mappings"), "{w}");

    // None of the three searches workspace symbols: said, not "none match".
    let ws = h.err("lsp", json!({"action": "symbols", "query": "card"})).await;
    assert!(ws.starts_with("lsp symbols: no server here searches workspace symbols for `card`"), "{ws}");
    assert!(
        ws.contains("yaml (yaml-language-server)") && ws.contains("json (vscode-json-language-server)"),
        "{ws}"
    );
}

/// The Python fixture with `server` preferred over pyright.
fn python_with(server: &str) -> Harness {
    let toml =
        format!("[[language]]\nid = \"python\"\nextensions = [\"py\", \"pyi\"]\nservers = [\"{server}\"]\n");
    fixture_with("python", &[("tether.toml", &toml)])
}

async fn python_answers(h: &Harness, server: &str) {
    let def =
        lsp(h, json!({"action": "definition", "file": "app.py", "line": 4, "symbol": "total_area"})).await;
    assert!(def.contains("shapes.py:16:5: def total_area(shapes: list[Shape]) -> float:"), "{server}: {def}");
    let refs =
        lsp(h, json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square"})).await;
    assert!(refs.starts_with("4 references to `Square` in 2 files"), "{server}: {refs}");
    let hover = lsp(h, json!({"action": "hover", "file": "app.py", "line": 4, "symbol": "total_area"})).await;
    assert!(
        hover.contains("total_area(shapes: list[Shape]) -> float") && hover.contains("Sum of the areas"),
        "{server}: {hover}"
    );
    let status = lsp(h, json!({"action": "status"})).await;
    assert!(
        status.contains(&format!("running {server}@. [ready]")),
        "{server} answered, not pyright: {status}"
    );
}

#[tokio::test]
async fn basedpyright_serves_python_when_preferred() {
    installed("basedpyright-langserver", "basedpyright");
    let h = python_with("basedpyright");
    python_answers(&h, "basedpyright").await;
    let ws = lsp(&h, json!({"action": "symbols", "query": "Square"})).await;
    assert!(ws.contains("Square (class, python) shapes.py:8:7"), "{ws}");
    let w = wrote(&h, "bad.py", "def f() -> int:\n    return undefined_name\n").await;
    assert!(
        w.contains("+ bad.py:2:12: error [reportUndefinedVariable] \"undefined_name\" is not defined"),
        "{w}"
    );
}

#[tokio::test]
async fn pylsp_serves_python_when_preferred() {
    installed("pylsp", "pylsp");
    let h = python_with("pylsp");
    python_answers(&h, "pylsp").await;
    let ws = h.err("lsp", json!({"action": "symbols", "query": "Square"})).await;
    assert!(ws.contains("not searched: python (pylsp)"), "pylsp has no workspace symbols: {ws}");
    let w = wrote(&h, "bad.py", "def f() -> int:\n    return undefined_name\n").await;
    assert!(w.contains("+ bad.py:2:12: error undefined name 'undefined_name'"), "{w}");
}

#[tokio::test]
async fn a_language_only_tether_toml_names_is_served_by_its_server() {
    installed("fortls", "fortls (with --workdir tests/fixtures/lsp/fortran)");
    let h = fixture_with("fortran", &[]);
    let def = lsp(&h, json!({"action": "definition", "file": "main.f90", "line": 4, "symbol": "area"})).await;
    assert!(def.contains("shapes.f90:4:12: function area(side) result(a)"), "{def}");
    let refs =
        lsp(&h, json!({"action": "references", "file": "shapes.f90", "line": 4, "symbol": "area"})).await;
    assert!(refs.starts_with("5 references to `area` in 2 files"), "{refs}");
    let hover = lsp(&h, json!({"action": "hover", "file": "main.f90", "line": 4, "symbol": "area"})).await;
    assert!(hover.contains("FUNCTION area(side) RESULT(a)"), "{hover}");
    let ws = lsp(&h, json!({"action": "symbols", "query": "area"})).await;
    assert!(ws.contains("area (function, fortran) shapes.f90:4:"), "{ws}");
    let w = wrote(
        &h,
        "twice.f90",
        "program twice\n  implicit none\n  real :: a\n  real :: a\n  a = 1\nend program twice\n",
    )
    .await;
    assert!(w.contains("+ twice.f90:4:11: error Variable \"a\" declared twice in scope"), "{w}");
    let status = lsp(&h, json!({"action": "status"})).await;
    assert!(
        status.contains("fortran (3 files): usable") || status.contains("fortran (2 files): usable"),
        "{status}"
    );
}

#[tokio::test]
async fn languages_no_registry_here_serves_name_their_binary_and_how_to_install_it() {
    let h = Harness::new(&[
        ("app.rb", "puts 1\n"),
        ("Program.cs", "class P {}\n"),
        ("init.lua", "print(1)\n"),
        ("lib/x.ex", "defmodule X do end\n"),
        ("Main.hs", "main = pure ()\n"),
        ("main.swift", "print(1)\n"),
        ("main.zig", "pub fn main() void {}\n"),
        ("Main.scala", "object Main\n"),
        ("main.tf", "variable \"x\" {}\n"),
        ("main.ml", "let () = ()\n"),
        ("Main.kt", "fun main() {}\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
    ]);
    let status = lsp(&h, json!({"action": "status"})).await;
    for (language, server, how) in [
        ("ruby", "ruby-lsp", "gem install ruby-lsp"),
        ("csharp", "csharp-ls", "dotnet tool install --global csharp-ls"),
        ("lua", "lua-language-server", "LuaLS/lua-language-server/releases"),
        ("elixir", "elixir-ls", "elixir-lsp/elixir-ls/releases"),
        ("haskell", "haskell-language-server", "ghcup install hls"),
        ("swift", "sourcekit-lsp", "swift.org/install"),
        ("zig", "zls", "zigtools/zls/releases"),
        ("scala", "metals", "coursier install metals"),
        ("terraform", "terraform-ls", "releases.hashicorp.com/terraform-ls"),
        ("ocaml", "ocamllsp", "opam install ocaml-lsp-server"),
        ("kotlin", "kotlin-lsp", "Kotlin/kotlin-lsp/releases"),
    ] {
        let (head, block) = status
            .split_once(&format!("\n{language} (1 file): "))
            .map(|(_, rest)| {
                let mut lines = rest.lines();
                let head = lines.next().unwrap_or("").to_string();
                (head, lines.take_while(|l| l.starts_with("  ")).collect::<String>())
            })
            .unwrap_or_else(|| panic!("{language} has a row: {status}"));
        if head == "usable" && block.contains(&format!("{server}: usable")) {
            // This machine has the server after all.
            continue;
        }
        assert_eq!(head, "not usable", "{language}: {block}");
        assert!(
            block.contains(&format!("{server}: `")) && block.contains("not found on PATH"),
            "{language}: {block}"
        );
        assert!(block.contains("to install it: ") && block.contains(how), "{language}: {block}");
    }
    let hover = h.err("lsp", json!({"action": "hover", "file": "app.rb", "line": 1, "symbol": "puts"})).await;
    assert!(
        hover.contains("ruby-lsp: `ruby-lsp` not found on PATH") && hover.contains("gem install ruby-lsp"),
        "{hover}"
    );

    // The same entry, its command a stand-in: the built-in language routes.
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/fake_lsp.py");
    let h = Harness::new(&[
        ("app.rb", "puts 1\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        (
            "tether.toml",
            "[[server]]\nid = \"ruby-lsp\"\ncommand = \"./fake_lsp.py\"\nlanguages = [\"ruby\"]\nroot_markers = [\".git\"]\n",
        ),
    ]);
    std::fs::copy(&fake, h.path("fake_lsp.py")).unwrap();
    let hover = lsp(&h, json!({"action": "hover", "file": "app.rb", "line": 1, "symbol": "puts"})).await;
    assert_eq!(hover, "fake hover");
}

#[tokio::test]
async fn tether_install_plans_from_the_languages_here() {
    let h = Harness::new(&[("index.php", "<?php\n"), ("app.rb", "puts 1\n"), ("x.f90", "end\n")]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["install", "--dry-run", "--workdir"])
        .arg(h.root())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("would install intelephense: npm install --prefix")
            || text.contains("already there: intelephense ("),
        "{text}"
    );
    assert!(text.contains("not installed: ruby-lsp: no registry tether reaches ships it; to install it: gem install ruby-lsp"), "{text}");
    assert!(!text.contains("fortls"), "no language of the table claims .f90 here: {text}");
    assert_eq!(out.status.code(), Some(1), "ruby cannot be installed: {text}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["install", "--dry-run", "cobol", "--workdir"])
        .arg(h.root())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "not installed: `cobol` is neither a language, a server nor a debug adapter of the tables"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_monorepo_workspace_question_asks_every_root_and_ranks_exact_names_first() {
    installed("pyright-langserver", "pyright");
    installed("typescript-language-server", "typescript-language-server");
    installed("gopls", "gopls");
    let h = Harness::new(&[
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("backend/pyproject.toml", "[project]\nname = \"backend\"\n"),
        ("backend/app/deps.py", "def Depends(x=None):\n    return x\n\n\ndependencies = [Depends()]\n"),
        ("backend/app/routes.py", "from app.deps import Depends\n\nroute_dependencies = Depends()\n"),
        ("tools/pyproject.toml", "[project]\nname = \"tools\"\n"),
        ("tools/cli.py", "class Depends:\n    pass\n"),
        ("web/tsconfig.json", "{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\"]}\n"),
        (
            "web/src/deps.ts",
            "export function Depends(): number {\n  return 1;\n}\nexport const dependsOn = Depends();\n",
        ),
        ("svc/go.mod", "module svc\n\ngo 1.19\n"),
        ("svc/deps.go", "package svc\n\n// Depends is the Go one.\nfunc Depends() int { return 1 }\n"),
        ("scripts/release.rb", "puts 1\n"),
    ]);
    let r = h.ok("lsp", json!({"action": "symbols", "query": "Depends"})).await;
    let data = r.data.clone().unwrap();
    let rows = data["symbols"].as_array().unwrap();
    let exact: Vec<(&str, &str)> = rows
        .iter()
        .take_while(|s| s["match"] == "exact")
        .map(|s| (s["language"].as_str().unwrap(), s["root"].as_str().unwrap()))
        .collect();
    for want in [("python", "backend"), ("python", "tools"), ("typescript", "web"), ("go", "svc")] {
        assert!(exact.contains(&want), "{want:?} among the exact matches, which come first: {}", r.text);
    }
    assert!(rows.iter().skip(exact.len()).all(|s| s["match"] != "exact"), "{}", r.text);
    assert!(r.text.contains("Depends (function, go, root svc) svc/deps.go:4:6"), "{}", r.text);
    assert!(
        r.text.contains("note: ruby: not asked (1 file(s)): ruby-lsp: `ruby-lsp` not found on PATH; to install it: gem install ruby-lsp"),
        "{}",
        r.text
    );
    let status = lsp(&h, json!({"action": "status"})).await;
    // A running server's other languages are not rows of 0 files.
    assert!(!status.contains("javascript (0 files)"), "{status}");
    for server in ["pyright@backend", "pyright@tools", "typescript-language-server@web", "gopls@svc"] {
        assert!(status.contains(&format!("running {server} [")), "{server}: {status}");
    }
    assert!(
        status.contains("python (3 files): usable")
            && status.contains("pyright: usable (roots at backend, tools;"),
        "{status}"
    );
}

#[tokio::test]
async fn a_workspace_question_says_which_roots_and_directories_it_left_out() {
    // Eight Python roots served by a stand-in (it searches no workspace
    // symbols), and a directory under none of them.
    let fake =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/fake_lsp.py"))
            .unwrap();
    let mut files: Vec<(String, String)> = vec![
        ("stand-in".into(), fake),
        (
            "tether.toml".into(),
            "[[server]]\nid = \"fake\"\ncommand = \"./stand-in\"\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\n".into(),
        ),
        ("loose/script.py".into(), "x = 1\n".into()),
    ];
    for k in 0..8 {
        files.push((format!("pkg{k}/pyproject.toml"), String::new()));
        files.push((format!("pkg{k}/m.py"), "def present():\n    return 1\n".into()));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let h = Harness::new(&refs);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(h.path("stand-in"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = h.call("lsp", json!({"action": "symbols", "query": "present"})).await;
    assert!(r.is_error, "six stand-ins asked, none searches: {}", r.text);
    assert!(r.text.contains("python: 2 more root(s) not asked (at most 6 per language)"), "{}", r.text);
    assert!(
        r.text.contains("python: its files in 1 more directory were not searched: fake: no pyproject.toml in the directory of loose/script.py or above it"),
        "{}",
        r.text
    );
    assert!(r.text.contains("not searched: python (fake) (no workspace symbols"), "once: {}", r.text);
}
