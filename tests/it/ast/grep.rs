//! `ast_grep` end to end through the runtime (S5).

use crate::common::{Harness, positions};
use serde_json::json;

const DART: &str = r#"class Holder {
  Foo? a;
  Foo? b;

  void close() {
    if (a != null) a.dispose();
    if (a != null) b.dispose();
    dispose(a);
    // dispose(a) in a comment
    print("dispose(a) in a string");
  }
}

void dispose(Object? x) {}
"#;

#[tokio::test]
async fn the_spec_example_matches_only_the_guard_that_disposes_what_it_tested() {
    let h = Harness::new(&[("lib/holder.dart", DART)]);
    let r = h.ok("ast_grep", json!({"pattern": "if ($X != null) $X.dispose()", "language": "dart"})).await;
    assert_eq!(positions(&r), vec!["lib/holder.dart:6:5"], "{}", r.text);
    let data = r.data.unwrap();
    assert_eq!(data["matches"][0]["captures"]["X"], "a");
    assert!(r.text.contains("lib/holder.dart:6:5: if (a != null) a.dispose();"), "{}", r.text);
}

#[tokio::test]
async fn the_ladder_finds_dart_calls_inside_function_bodies_but_not_in_strings_or_comments() {
    let h = Harness::new(&[("lib/holder.dart", DART)]);
    let r = h.ok("ast_grep", json!({"pattern": "dispose($X)", "path": "lib/holder.dart"})).await;
    // The call on line 8 only: not the comment, not the string, and not the
    // function *declaration* on line 14 that top-level parsing would match.
    assert_eq!(positions(&r), vec!["lib/holder.dart:8:5"], "{}", r.text);
}

#[tokio::test]
async fn metavariables_single_multi_and_wildcard() {
    let py = "f(1)\nf(1, 2, 3)\nf()\ng(x, x)\ng(x, y)\n";
    let h = Harness::new(&[("a.py", py)]);
    let single = h.ok("ast_grep", json!({"pattern": "f($A)", "path": "a.py"})).await;
    assert_eq!(positions(&single), vec!["a.py:1:1"]);
    let multi = h.ok("ast_grep", json!({"pattern": "f($$$ARGS)", "path": "a.py"})).await;
    assert_eq!(positions(&multi), vec!["a.py:1:1", "a.py:2:1", "a.py:3:1"]);
    let data = multi.data.unwrap();
    assert_eq!(data["matches"][1]["captures"]["ARGS"], "1, 2, 3");
    let wild = h.ok("ast_grep", json!({"pattern": "g($_, $_)", "path": "a.py"})).await;
    assert_eq!(positions(&wild), vec!["a.py:4:1", "a.py:5:1"], "$_ binds nothing, so both match");
    let same = h.ok("ast_grep", json!({"pattern": "g($A, $A)", "path": "a.py"})).await;
    assert_eq!(positions(&same), vec!["a.py:4:1"], "a repeated metavariable captures the same text");
}

#[tokio::test]
async fn matches_are_structural_across_spacing_and_line_breaks() {
    let c = "int main(void) {\n  printf(\"%d\",\n         1);\n  printf ( \"x\" );\n  /* printf(\"no\") */\n  return 0;\n}\n";
    let h = Harness::new(&[("m.c", c)]);
    let r = h.ok("ast_grep", json!({"pattern": "printf($$$A)", "path": "m.c"})).await;
    assert_eq!(positions(&r), vec!["m.c:2:3", "m.c:4:3"], "{}", r.text);
    let data = r.data.unwrap();
    let first = &data["matches"][0];
    assert_eq!((first["end_line"].as_u64(), first["end_column"].as_u64()), (Some(3), Some(12)));
    assert!(first["start_byte"].as_u64().unwrap() < first["end_byte"].as_u64().unwrap());
}

#[tokio::test]
async fn unparseable_patterns_are_errors_naming_the_contexts_tried() {
    let h = Harness::new(&[("a.py", "x = 1\n")]);
    let text = h.err("ast_grep", json!({"pattern": "def (:", "language": "python"})).await;
    for context in ["a statement", "an expression", "a class member", "a top-level declaration"] {
        assert!(text.contains(context), "{text}");
    }
    // In a directory of one language, the same pattern is an error, not "no matches".
    let text = h.err("ast_grep", json!({"pattern": "def (:"})).await;
    assert!(text.contains("not parseable python"), "{text}");
}

#[tokio::test]
async fn a_pattern_with_syntax_errors_is_read_as_the_cli_reads_it_and_says_so() {
    let h = Harness::new(&[
        ("a.cpp", "int f(int n) {\n  int s = 0;\n  for (int i = 0; i < n; ++i) s += i;\n  return s;\n}\n"),
        ("b.ts", "import fs from \"fs\"\nimport * as path from \"path\"\n"),
        ("c.py", "print(1)\n"),
    ]);
    // No clean reading of `for ($$$I) $S` in C++: the CLI's finds the loop,
    // and the answer says how the pattern was read.
    let r = h.ok("ast_grep", json!({"pattern": "for ($$$I) $S", "language": "cpp"})).await;
    assert!(r.text.starts_with("1 match for `for ($$$I) $S`"), "{}", r.text);
    assert!(r.text.contains("a.cpp:3:3: for (int i = 0; i < n; ++i) s += i;"), "{}", r.text);
    assert!(r.text.contains("note: the pattern has syntax errors as cpp code"), "{}", r.text);
    assert!(
        r.data.unwrap()["coverage"]["pattern_loose_in"]["cpp"]
            .as_str()
            .unwrap()
            .contains("not parseable cpp")
    );
    // Loose, as the CLI is: `$X` also takes `* as path`.
    let r = h.ok("ast_grep", json!({"pattern": "import $X from $M", "language": "typescript"})).await;
    assert!(
        r.text.starts_with("2 matches for") && r.text.contains("note: the pattern has syntax errors"),
        "{}",
        r.text
    );
    // Read loosely and matching nothing, it is a pattern to fix.
    let text = h.err("ast_grep", json!({"pattern": "print((", "language": "python"})).await;
    assert!(text.contains("not parseable python") && text.contains("it matched nothing"), "{text}");
    // A rewrite writes in the shape the pattern spells: it needs a clean one.
    let text = h
        .err("ast_edit", json!({"pattern": "for ($$$I) $S", "rewrite": "while (1) $S", "language": "cpp"}))
        .await;
    assert!(text.contains("not parseable cpp"), "{text}");
    assert_eq!(h.read("a.cpp").matches("for (").count(), 1, "nothing written");
}

#[tokio::test]
async fn a_directory_without_language_searches_every_language_present_and_says_which() {
    let h = Harness::new(&[("a.py", "print(1)\n"), ("b.js", "print(2);\n"), ("notes.txt", "print(3)\n")]);
    let r = h.ok("ast_grep", json!({"pattern": "print($A)"})).await;
    assert_eq!(positions(&r), vec!["a.py:1:1", "b.js:1:1"]);
    assert!(r.text.contains("javascript 1") && r.text.contains("python 1"), "{}", r.text);
    let only = h.ok("ast_grep", json!({"pattern": "print($A)", "language": "javascript"})).await;
    assert_eq!(positions(&only), vec!["b.js:1:1"]);
}

#[tokio::test]
async fn empty_results_say_what_was_searched() {
    let h = Harness::new(&[("a.py", "x = 1\n"), ("docs/readme.txt", "hi\n")]);
    let r = h.ok("ast_grep", json!({"pattern": "print($A)"})).await;
    assert!(r.text.starts_with("no matches for `print($A)`; searched 1 file (python 1)"), "{}", r.text);
    let r = h.ok("ast_grep", json!({"pattern": "print($A)", "path": "docs"})).await;
    assert!(r.text.contains("nothing was searched"), "{}", r.text);
}

#[tokio::test]
async fn gitignored_binary_and_large_files_are_skipped_and_counted() {
    let big = format!("x = 1\n{}", "# pad\n".repeat(3_000_000));
    let h = Harness::new(&[
        (".gitignore", "build/\n"),
        ("build/gen.py", "print(1)\n"),
        ("src/a.py", "print(2)\n"),
        ("src/bin.py", "print(3)\0\0\0"),
        ("src/huge.py", &big),
    ]);
    // .gitignore applies inside a git checkout.
    std::fs::create_dir(h.path(".git")).unwrap();
    let r = h.ok("ast_grep", json!({"pattern": "print($A)"})).await;
    assert_eq!(positions(&r), vec!["src/a.py:1:1"], "{}", r.text);
    assert!(r.text.contains("1 binary") && r.text.contains("1 over 16 MiB"), "{}", r.text);
}

#[tokio::test]
async fn the_cap_is_stated_and_data_carries_up_to_max_results() {
    let py: String = (0..120).map(|i| format!("print({i})\n")).collect();
    let h = Harness::new(&[("many.py", &py)]);
    let r = h.ok("ast_grep", json!({"pattern": "print($A)"})).await;
    assert_eq!(positions(&r).len(), 50);
    assert!(r.text.contains("showing 50 of 120 matches"), "{}", r.text);
    assert_eq!(r.data.as_ref().unwrap()["total"], 120);
    let r = h.ok("ast_grep", json!({"pattern": "print($A)", "max_results": 100000})).await;
    assert_eq!(positions(&r).len(), 120);
    assert!(!r.text.contains("showing"), "{}", r.text);
    let text = h.err("ast_grep", json!({"pattern": "print($A)", "max_results": 100001})).await;
    assert!(text.contains("`max_results`") && text.contains("1 to 100000"), "{text}");
}

#[tokio::test]
async fn every_language_with_calls_finds_a_call_by_the_file_extension_alone() {
    let files = [
        ("a.dart", "void main() { foo(1); }\n"),
        ("a.py", "foo(1)\n"),
        ("a.rs", "fn main() { foo(1); }\n"),
        ("a.c", "void main(void) { foo(1); }\n"),
        ("a.cpp", "int main() { foo(1); }\n"),
        ("a.js", "foo(1);\n"),
        ("a.ts", "foo(1);\n"),
        ("a.tsx", "foo(1);\n"),
        ("a.go", "package main\nfunc main() { foo(1) }\n"),
        ("A.java", "class A { void m() { foo(1); } }\n"),
        ("a.kt", "fun main() { foo(1) }\n"),
        ("a.cs", "class A { void M() { foo(1); } }\n"),
        ("a.php", "<?php\nfoo(1);\n"),
        ("a.swift", "foo(1)\n"),
        ("a.scala", "object A { foo(1) }\n"),
        ("a.rb", "foo(1)\n"),
        ("a.lua", "foo(1)\n"),
        ("a.ex", "foo(1)\n"),
        ("a.sol", "contract A { function f() public { foo(1); } }\n"),
        ("a.zig", "fn f() void { foo(1); }\n"),
        ("main.tf", "locals { a = foo(1) }\n"),
    ];
    let h = Harness::new(&files);
    for (path, _) in files {
        let r = h.ok("ast_grep", json!({"pattern": "foo($A)", "path": path})).await;
        assert_eq!(positions(&r).len(), 1, "{path}: {}", r.text);
    }
}

#[tokio::test]
async fn a_file_of_unknown_type_needs_a_language() {
    let h = Harness::new(&[("script", "print(1)\n")]);
    let text = h.err("ast_grep", json!({"pattern": "print($A)", "path": "script"})).await;
    assert!(text.contains("pass `language`"), "{text}");
    let r = h.ok("ast_grep", json!({"pattern": "print($A)", "path": "script", "language": "python"})).await;
    assert_eq!(positions(&r), vec!["script:1:1"]);
    let text = h.err("ast_grep", json!({"pattern": "x", "language": "cobol"})).await;
    assert!(text.contains("`language`") && text.contains("dart"), "{text}");
}

#[tokio::test]
async fn a_small_java_project_is_searched_as_a_new_user_would_search_it() {
    let h = Harness::new(&[
        (
            "src/main/java/app/Main.java",
            "package app;\n\npublic class Main {\n    public static void main(String[] args) {\n        System.out.println(greet(\"world\"));\n    }\n\n    static String greet(String who) {\n        return \"hello \" + who;\n    }\n}\n",
        ),
        ("build.gradle.kts", "plugins { java }\n"),
    ]);
    let r = h.ok("ast_grep", json!({"pattern": "System.out.println($A)"})).await;
    assert_eq!(positions(&r), vec!["src/main/java/app/Main.java:5:9"], "{}", r.text);
    assert!(r.text.contains("java 1"), "{}", r.text);
    let r = h.ok("ast_grep", json!({"pattern": "greet($W)", "language": "java"})).await;
    assert_eq!(
        positions(&r),
        vec!["src/main/java/app/Main.java:5:28"],
        "the call, not the declaration: {}",
        r.text
    );
}

#[tokio::test]
async fn dotfiles_are_searched_and_what_the_walk_left_out_is_counted() {
    let h = Harness::new(&[
        (".gitignore", "node_modules/\ndist/\n"),
        (".eslintrc.js", "module.exports = config({});\n"),
        (".storybook/main.js", "export default config({ stories: [] });\n"),
        ("src/a.js", "config(1);\n"),
        ("src/latin1.js", "config(2);\n"),
        ("node_modules/x/index.js", "config(3);\n"),
        ("dist/bundle.js", "config(4);\n"),
        (".git/hooks/pre-commit.js", "config(5);\n"),
    ]);
    std::fs::write(h.path("src/latin1.js"), b"config(2); // caf\xe9\n").unwrap();
    std::os::unix::fs::symlink(h.path("src/a.js"), h.path("src/link.js")).unwrap();
    let r = h.ok("ast_grep", json!({"pattern": "config($A)", "language": "javascript"})).await;
    assert_eq!(
        positions(&r),
        vec![".eslintrc.js:1:18", ".storybook/main.js:1:16", "src/a.js:1:1"],
        "{}",
        r.text
    );
    for said in [
        "2 paths left out by .gitignore/.ignore (dist/, node_modules/)",
        "1 not UTF-8",
        "1 symlink, not followed",
    ] {
        assert!(r.text.contains(said), "{said}: {}", r.text);
    }
    assert!(!r.text.contains(".git/"), "a version-control store is neither searched nor counted: {}", r.text);
    let cov = &r.data.as_ref().unwrap()["coverage"];
    assert_eq!(cov["skipped_ignored"], 2);
    assert_eq!(cov["skipped_symlinks"], 1);
}

#[tokio::test]
async fn scripts_and_styles_in_html_are_searched_in_their_own_languages() {
    let page = "<!doctype html>\n<html>\n<head>\n<style>\na { color: red; }\n</style>\n</head>\n<body>\n<script>\n  console.log(1);\n</script>\n<script lang=\"ts\">\n  console.log(2 as number);\n</script>\n<p>console.log(3)</p>\n</body>\n</html>\n";
    let h = Harness::new(&[("index.html", page), ("app.js", "console.log(4);\n")]);
    let r = h.ok("ast_grep", json!({"pattern": "console.log($A)", "language": "javascript"})).await;
    assert_eq!(positions(&r), vec!["app.js:1:1", "index.html:10:3"], "{}", r.text);
    assert!(r.text.contains("1 javascript region embedded"), "{}", r.text);
    let data = r.data.as_ref().unwrap();
    assert_eq!(data["matches"][1]["language"], "javascript");
    let r = h.ok("ast_grep", json!({"pattern": "console.log($A)"})).await;
    assert_eq!(
        positions(&r),
        vec!["app.js:1:1", "index.html:10:3", "index.html:13:3"],
        "every language: {}",
        r.text
    );
    let r = h.ok("ast_grep", json!({"pattern": "a { color: $C; }", "language": "css"})).await;
    assert_eq!(positions(&r), vec!["index.html:5:1"], "{}", r.text);
}

#[tokio::test]
async fn headers_left_out_of_a_cpp_search_are_said_and_a_named_header_is_read_as_asked() {
    let h = Harness::new(&[
        ("lib.h", "int twice(int x);\nvoid f(void) { twice(2); }\n"),
        ("main.cpp", "int main() { return twice(1); }\n"),
    ]);
    let r = h.ok("ast_grep", json!({"pattern": "twice($A)", "language": "cpp"})).await;
    assert_eq!(positions(&r), vec!["main.cpp:1:21"], "{}", r.text);
    assert!(
        r.text.contains("1 c file not searched (.c and .h files are C, as the ast-grep CLI reads them"),
        "{}",
        r.text
    );
    let r = h.ok("ast_grep", json!({"pattern": "twice($A)", "language": "cpp", "path": "lib.h"})).await;
    assert_eq!(positions(&r), vec!["lib.h:2:16"], "{}", r.text);
    assert!(r.text.contains("by its extension it is c"), "{}", r.text);
}

#[tokio::test]
async fn a_lower_case_metavariable_that_matches_nothing_gets_a_hint() {
    let h = Harness::new(&[("a.py", "print(1)\n"), ("a.js", "print(1);\n")]);
    let hint = "`$x` is literal text, not a metavariable: metavariables are upper case (`$X`";
    // In JavaScript `$x` is a name, and no call passes it.
    let r = h.ok("ast_grep", json!({"pattern": "print($x)", "language": "javascript"})).await;
    assert!(r.text.starts_with("no matches"), "{}", r.text);
    assert!(r.text.contains(hint), "{}", r.text);
    // In Python it is no code at all.
    let text = h.err("ast_grep", json!({"pattern": "print($x)", "language": "python"})).await;
    assert!(text.contains(hint), "{text}");
    let r = h.ok("ast_grep", json!({"pattern": "print($X)"})).await;
    assert!(!r.text.contains("literal text"), "{}", r.text);
}

#[tokio::test]
async fn a_file_of_no_known_language_asks_for_the_language_argument() {
    let h = Harness::new(&[("notes.xyz", "print(1)\n")]);
    let text = h.err("ast_grep", json!({"pattern": "print($A)", "path": "notes.xyz"})).await;
    assert!(
        text.contains("argument `path`: cannot tell the language of `notes.xyz` from its extension; pass `language` (one of: "),
        "{text}"
    );
    let r =
        h.ok("ast_grep", json!({"pattern": "print($A)", "path": "notes.xyz", "language": "python"})).await;
    assert!(r.text.contains("notes.xyz:1"), "{}", r.text);
}
