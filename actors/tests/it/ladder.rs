//! The ladder in every language with calls: a call pattern finds the
//! calls, and not the declaration of the same name, nor the call written
//! in a string or a comment. Each source is written for the purpose; the
//! call is always on the line marked `CALL`.

use tether_actors::ast::lang::Lang;
use tether_actors::ast::scan::Scope;
use tether_actors::ast::search::search;

/// (language, file name, pattern, source). Lines holding `CALL` are the
/// only ones that may match.
const CASES: &[(Lang, &str, &str, &str)] = &[
    (
        Lang::JAVA,
        "A.java",
        "dispose($X)",
        "class A {\n  void dispose(Object x) { }\n  void f() {\n    dispose(x); // CALL\n    String s = \"dispose(x)\";\n    // dispose(x)\n  }\n}\n",
    ),
    (
        Lang::KOTLIN,
        "a.kt",
        "dispose($X)",
        "fun dispose(x: Any) {}\nfun f() {\n    dispose(x) // CALL\n    val s = \"dispose(x)\"\n    // dispose(x)\n}\n",
    ),
    (
        Lang::CSHARP,
        "a.cs",
        "dispose($X)",
        "class A {\n    void dispose(object x) {}\n    void F() {\n        dispose(x); // CALL\n        var s = \"dispose(x)\";\n        // dispose(x)\n    }\n}\n",
    ),
    (
        Lang::PHP,
        "a.php",
        "dispose($X)",
        "<?php\nfunction dispose($x) {}\ndispose($x); // CALL\n$s = \"dispose(x)\";\n// dispose(x)\n",
    ),
    (
        Lang::SWIFT,
        "a.swift",
        "dispose($X)",
        "func dispose(_ x: Any) {}\nfunc f() {\n    dispose(x) // CALL\n    let s = \"dispose(x)\"\n    // dispose(x)\n}\n",
    ),
    (
        Lang::SCALA,
        "a.scala",
        "dispose($X)",
        "object A {\n  def dispose(x: Any): Unit = {}\n  def f(): Unit = {\n    dispose(x) // CALL\n    val s = \"dispose(x)\"\n    // dispose(x)\n  }\n}\n",
    ),
    (
        Lang::RUBY,
        "a.rb",
        "dispose($X)",
        "def dispose(x)\nend\ndef f\n  dispose(x) # CALL\n  s = \"dispose(x)\"\n  # dispose(x)\nend\n",
    ),
    (
        Lang::LUA,
        "a.lua",
        "dispose($X)",
        "function dispose(x) end\nfunction f()\n  dispose(x) -- CALL\n  local s = \"dispose(x)\"\n  -- dispose(x)\nend\n",
    ),
    (
        Lang::BASH,
        "a.sh",
        "dispose $X",
        "dispose() { :; }\nf() {\n  dispose x # CALL\n  s=\"dispose x\"\n  # dispose x\n}\n",
    ),
    // In Elixir a `def` is itself a call, so only strings and comments
    // stand against the call here.
    (
        Lang::ELIXIR,
        "a.ex",
        "dispose($X)",
        "defmodule A do\n  def f do\n    dispose(x) # CALL\n    s = \"dispose(x)\"\n    # dispose(x)\n  end\nend\n",
    ),
    (
        Lang::HASKELL,
        "a.hs",
        "dispose $X",
        "dispose x = x\nf = dispose x -- CALL\ns = \"dispose x\"\n-- dispose x\n",
    ),
    (
        Lang::SOLIDITY,
        "a.sol",
        "dispose($X)",
        "contract A {\n    function dispose(uint x) public {}\n    function f() public {\n        dispose(x); // CALL\n        string memory s = \"dispose(x)\";\n        // dispose(x)\n    }\n}\n",
    ),
    (
        Lang::ZIG,
        "a.zig",
        "dispose($X)",
        "fn dispose(x: u32) void {\n    _ = x;\n}\nfn f() void {\n    dispose(x); // CALL\n    const s = \"dispose(x)\";\n    // dispose(x)\n}\n",
    ),
    (
        Lang::HCL,
        "a.tf",
        "dispose($X)",
        "locals {\n  a = dispose(x) # CALL\n  s = \"dispose(x)\"\n  # dispose(x)\n}\n",
    ),
    (
        Lang::NIX,
        "a.nix",
        "dispose $X",
        "let\n  dispose = x: x;\n  a = dispose x; # CALL\n  s = \"dispose x\";\n  # dispose x\nin a\n",
    ),
    (
        Lang::DART,
        "a.dart",
        "dispose($X)",
        "void dispose(Object x) {}\nvoid f() {\n  dispose(x); // CALL\n  var s = 'dispose(x)';\n  // dispose(x)\n}\n",
    ),
    (
        Lang::PYTHON,
        "a.py",
        "dispose($X)",
        "def dispose(x):\n    pass\ndef f():\n    dispose(x)  # CALL\n    s = 'dispose(x)'\n    # dispose(x)\n",
    ),
    (
        Lang::RUST,
        "a.rs",
        "dispose($X)",
        "fn dispose(x: u32) {}\nfn f() {\n    dispose(x); // CALL\n    let s = \"dispose(x)\";\n    // dispose(x)\n}\n",
    ),
    (
        Lang::C,
        "a.c",
        "dispose($X)",
        "void dispose(int x) {}\nvoid f(void) {\n    dispose(x); // CALL\n    const char *s = \"dispose(x)\";\n    // dispose(x)\n}\n",
    ),
    (
        Lang::CPP,
        "a.cpp",
        "dispose($X)",
        "void dispose(int x) {}\nvoid f() {\n    dispose(x); // CALL\n    auto s = \"dispose(x)\";\n    // dispose(x)\n}\n",
    ),
    (
        Lang::JAVASCRIPT,
        "a.js",
        "dispose($X)",
        "function dispose(x) {}\nfunction f() {\n  dispose(x); // CALL\n  const s = 'dispose(x)';\n  // dispose(x)\n}\n",
    ),
    (
        Lang::TYPESCRIPT,
        "a.ts",
        "dispose($X)",
        "function dispose(x: unknown): void {}\nfunction f() {\n  dispose(x); // CALL\n  const s = 'dispose(x)';\n  // dispose(x)\n}\n",
    ),
    (
        Lang::TSX,
        "a.tsx",
        "dispose($X)",
        "function dispose(x: unknown): void {}\nfunction F() {\n  dispose(x); // CALL\n  return <div title=\"dispose(x)\">{/* dispose(x) */}</div>;\n}\n",
    ),
    (
        Lang::GO,
        "a.go",
        "dispose($X)",
        "package p\nfunc dispose(x int) {}\nfunc f() {\n\tdispose(x) // CALL\n\ts := \"dispose(x)\"\n\t// dispose(x)\n\t_ = s\n}\n",
    ),
];

#[test]
fn a_call_pattern_finds_the_calls_not_declarations_strings_or_comments() {
    let mut failures = Vec::new();
    for &(lang, name, pattern, source) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(name), source).unwrap();
        let scope = Scope { root: root.clone(), path: root.clone(), lang: Some(lang), prefilter: true };
        let found = match search(&scope, pattern, 100) {
            Ok(found) => found,
            Err(e) => {
                failures.push(format!("{lang}: {e}"));
                continue;
            }
        };
        let lines: Vec<usize> = found.matches.iter().map(|m| m.line).collect();
        let want: Vec<usize> =
            source.lines().enumerate().filter(|(_, l)| l.contains("CALL")).map(|(i, _)| i + 1).collect();
        if lines != want {
            failures.push(format!("{lang}: `{pattern}` matched lines {lines:?}, the calls are on {want:?}"));
        }
        if let Some(why) = found.coverage.pattern_loose_in.get(lang.id()) {
            failures.push(format!("{lang}: `{pattern}` read loosely: {why}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_language_with_calls_is_in_the_table() {
    let data = [Lang::CSS, Lang::HTML, Lang::JSON, Lang::YAML, Lang::MARKDOWN];
    for lang in Lang::ALL {
        let covered = CASES.iter().any(|(l, ..)| *l == lang);
        assert!(covered || data.contains(&lang), "{lang} has no ladder case");
    }
}

#[test]
fn a_multi_line_string_in_a_pattern_is_matched_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.py"), "def f():\n    x = \"\"\"\nfoo\n\"\"\"\n\nx = \"\"\"\nfoo\n\"\"\"\n")
        .unwrap();
    let scope = Scope { root: root.clone(), path: root, lang: Some(Lang::PYTHON), prefilter: true };
    let found = search(&scope, "x = \"\"\"\nfoo\n\"\"\"", 100).unwrap();
    assert_eq!(found.matches.iter().map(|m| m.line).collect::<Vec<_>>(), [2, 6]);
}
