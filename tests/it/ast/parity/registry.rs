//! Parity with the ast-grep CLI in the languages beyond the first nine, on
//! packages nobody here wrote, fetched from the registries by
//! `scripts/corpora.sh` (the README's test command runs it) into
//! `~/.cache/tether-test/corpora/<language>/` (`TETHER_CORPORA` moves it).
//!
//! Per language, everyday patterns — calls, conditionals, declarations,
//! assignments — each with a floor on the matches. tether's matches include
//! every one of the CLI's, and each match only tether finds has the
//! pattern's shape. Where the CLI finds nothing because it reads the
//! pattern at a file's top level, where no statement stands (Solidity's
//! `if`, C#'s `if` with a block, PHP's methods), the test says so and
//! checks the truth instead; where the CLI matches a piece of the construct
//! (Dart's `await`, which it reads as a bare name), each of its matches must
//! start one of tether's.

use std::path::Path;

use serde_json::json;

use super::{cli_matches, cli_outcome, has_the_shape_of, includes_cli, our_matches};
use crate::common::{Harness, copy_dir, corpus};

/// A workspace holding a copy of one language's corpus.
fn workspace(lang: &str, inside: &str) -> Harness {
    let h = Harness::new(&[]);
    copy_dir(&corpus(lang, inside), &h.path("src"));
    h
}

/// How a pattern is held against the CLI.
#[derive(Clone, Copy)]
enum Check {
    /// Every CLI match is one of tether's.
    Includes,
    /// The CLI reads the pattern where the construct cannot stand and finds
    /// nothing; tether's matches are checked for the pattern's shape.
    CliFindsNone,
    /// The CLI matches a piece of each construct: each of its matches
    /// starts one of tether's, which have the pattern's shape.
    CliMatchesAPiece,
    /// The CLI reads the pattern with a syntax error, its error node
    /// matching more than the construct (PHP's `$A = $B` also finds a
    /// parameter's default and a property's value): each of tether's
    /// matches is one of the CLI's (the actors crate's `stand_ins` tests
    /// count tether's against the syntax tree).
    CliMatchesMore,
}

use Check::*;

async fn check(h: &Harness, lang: &str, cases: &[(&str, usize, Check)]) {
    for &(pattern, at_least, how) in cases {
        match how {
            Includes => {
                includes_cli(h, lang, pattern, at_least).await;
            }
            CliMatchesMore => {
                let ours = our_matches(h, pattern, lang).await;
                let theirs = cli_matches(&h.root(), pattern, lang);
                assert!(
                    ours.len() >= at_least,
                    "`{pattern}` ({lang}): {} matches, expected {at_least}",
                    ours.len()
                );
                let only_ours: Vec<_> = ours.keys().filter(|m| !theirs.contains(*m)).take(5).collect();
                assert!(only_ours.is_empty(), "`{pattern}` ({lang}): the CLI misses {only_ours:?}");
                assert!(
                    theirs.len() > ours.len(),
                    "`{pattern}` ({lang}): the CLI now reads it as tether does"
                );
            }
            CliFindsNone | CliMatchesAPiece => {
                let ours = our_matches(h, pattern, lang).await;
                // Refusing the pattern is finding nothing, too.
                let theirs = cli_outcome(&h.root(), pattern, lang).unwrap_or_default();
                assert!(
                    ours.len() >= at_least,
                    "`{pattern}` ({lang}): {} matches, expected {at_least}",
                    ours.len()
                );
                for (at, text) in &ours {
                    assert!(has_the_shape_of(pattern, text), "`{pattern}` ({lang}) at {at:?}: `{text}`");
                }
                if matches!(how, CliFindsNone) {
                    assert!(theirs.is_empty(), "`{pattern}` ({lang}): the CLI now finds {}", theirs.len());
                } else {
                    for (file, start, _) in &theirs {
                        let starts_ours = ours.keys().any(|(f, s, _)| f == file && s == start);
                        assert!(
                            starts_ours,
                            "`{pattern}` ({lang}): the CLI's {file}@{start} starts none of ours"
                        );
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn java_from_capacitor_android() {
    let h = workspace("java", "out/package/capacitor/src/main/java");
    check(
        &h,
        "java",
        &[
            ("$A.$M($$$P)", 1500, Includes),
            ("if ($C) { $$$B }", 300, Includes),
            ("public $T $M($$$P) { $$$B }", 200, Includes),
            ("$A = $B;", 250, Includes),
            ("return $A;", 400, Includes),
            ("Logger.debug($$$A)", 15, Includes),
        ],
    )
    .await;
}

#[tokio::test]
async fn kotlin_and_swift_from_expo_modules_core() {
    let h = workspace("kotlin", "out/package/android/src");
    check(
        &h,
        "kotlin",
        &[
            ("fun $F($$$P) { $$$B }", 40, Includes),
            ("if ($C) { $$$B }", 150, Includes),
            ("val $A = $B", 250, Includes),
            ("$A = $B", 150, Includes),
        ],
    )
    .await;
    let h = workspace("swift", "out/package/ios");
    check(
        &h,
        "swift",
        &[
            ("func $F($$$P) { $$$B }", 70, Includes),
            ("if $C { $$$B }", 80, Includes),
            ("let $A = $B", 400, Includes),
            ("guard $C else { $$$B }", 6, Includes),
            ("$A.$M($$$P)", 1000, Includes),
        ],
    )
    .await;
}

#[tokio::test]
async fn csharp_from_pythonnet() {
    let h = workspace("csharp", "out/pythonnet-3.0.5/src");
    check(
        &h,
        "csharp",
        &[
            ("Console.WriteLine($$$A)", 10, Includes),
            ("$A = $B;", 600, Includes),
            ("var $A = $B;", 400, Includes),
            ("if ($C) $S", 900, Includes),
            ("throw new $E($$$A);", 200, Includes),
            ("return $A;", 800, Includes),
            // `{ $$$B }` is no block to the CLI: a bare name is no C# statement.
            ("if ($C) { $$$B }", 600, CliFindsNone),
            ("foreach (var $X in $Y) { $$$B }", 40, CliFindsNone),
        ],
    )
    .await;
}

#[tokio::test]
async fn php_from_pear() {
    let h = workspace("php", "out/usr/share/php");
    check(
        &h,
        "php",
        &[
            ("$A = $B", 4000, CliMatchesMore),
            ("if ($C) { $$$B }", 3000, Includes),
            ("function $F($$$P) { $$$B }", 12, Includes),
            ("$O->$M($$$A)", 3000, Includes),
            ("return $A;", 1500, Includes),
            ("foreach ($A as $K => $V) { $$$B }", 150, Includes),
            // A method stands only in a class, where the CLI does not look.
            ("public function $F($$$P) { $$$B }", 50, CliFindsNone),
            // `$A` as `µA` is a constant, which PHP cannot assign: the CLI
            // refuses the pattern; a variable stands in for it here.
            ("$A = $B;", 4000, CliFindsNone),
        ],
    )
    .await;
}

#[tokio::test]
async fn ruby_from_its_standard_library() {
    let h = workspace("ruby", "out/usr/lib/ruby/3.1.0");
    check(
        &h,
        "ruby",
        &[
            ("def $M($$$P) $$$B end", 3000, Includes),
            ("if $C\n  $$$B\nend", 1200, Includes),
            ("$A = $B", 15000, Includes),
            ("raise $$$A", 800, Includes),
            ("$R.each do |$X| $$$B end", 500, Includes),
        ],
    )
    .await;
}

#[tokio::test]
async fn lua_from_penlight_and_bash_from_dracut() {
    let h = workspace("lua", "out/usr/share/lua/5.1/pl");
    check(
        &h,
        "lua",
        &[
            ("local $A = $B", 800, Includes),
            ("if $C then $$$B end", 700, Includes),
            ("function $F($$$P) $$$B end", 450, Includes),
            ("error($$$A)", 35, Includes),
            ("return $A", 700, Includes),
        ],
    )
    .await;
    let h = workspace("bash", "out/usr/lib/dracut");
    check(
        &h,
        "bash",
        &[
            ("echo $$$A", 200, Includes),
            ("if $C; then $$$B; fi", 500, Includes),
            ("install() { $$$B; }", 60, Includes),
            ("local $A", 300, Includes),
            ("return $A", 450, Includes),
        ],
    )
    .await;
}

#[tokio::test]
async fn scala_from_plm_lessons_and_elixir_from_snyk() {
    let h = workspace("scala", "src/lessons");
    check(
        &h,
        "scala",
        &[
            ("def $F($$$P): $T = $B", 50, Includes),
            ("if ($C) $A", 250, Includes),
            ("val $A = $B", 100, Includes),
            ("var $A = $B", 90, Includes),
            ("$F($$$A)", 1500, Includes),
        ],
    )
    .await;
    let h = workspace("elixir", "out/package/elixirsrc");
    check(
        &h,
        "elixir",
        &[
            ("def $F($$$A) do $$$B end", 20, Includes),
            ("$A = $B", 20, Includes),
            ("$M.$F($$$A)", 50, Includes),
            ("case $E do $$$B end", 12, Includes),
        ],
    )
    .await;
}

#[tokio::test]
async fn solidity_from_openzeppelin() {
    let h = workspace("solidity", "out/package");
    check(
        &h,
        "solidity",
        &[
            ("function $F($$$P) $$$M { $$$B }", 500, Includes),
            ("event $E($$$A);", 55, Includes),
            // Statements stand only in a function body, where the CLI does not look.
            ("if ($C) { $$$B }", 300, CliFindsNone),
            ("revert $E($$$A);", 180, CliFindsNone),
            ("emit $E($$$A);", 50, CliFindsNone),
        ],
    )
    .await;
    // Every `emit` statement, once: one per line that starts with `emit`.
    let emits = our_matches(&h, "emit $E($$$A);", "solidity").await;
    let written = lines_starting_with(&h.root(), ".sol", "emit ");
    assert_eq!(emits.len(), written, "`emit $E($$$A);`: every emit, once");
}

#[tokio::test]
async fn haskell_from_hugs_and_nix_from_nixpkgs_fmt() {
    let h = workspace("haskell", "out/usr/lib/hugs/packages/base");
    check(
        &h,
        "haskell",
        &[
            ("if $C then $A else $B", 80, Includes),
            ("$F :: $T", 1200, Includes),
            ("$F $$$A = $B", 2800, Includes),
            ("return $A", 250, Includes),
            ("do $$$S", 240, Includes),
        ],
    )
    .await;
    let h = workspace("nix", "out/nixpkgs-fmt-1.3.0/test_data");
    check(
        &h,
        "nix",
        &[
            ("if $C then $A else $B", 60, Includes),
            ("let $A = $B; in $C", 55, Includes),
            ("{ $$$A }: $B", 40, Includes),
            ("import $P", 12, Includes),
            ("with $A; $B", 24, Includes),
            // A binding stands only in a set or a `let`, where the CLI does not look.
            ("$A = $B;", 350, CliFindsNone),
        ],
    )
    .await;
}

#[tokio::test]
async fn terraform_from_terraform_json_and_zig_from_pydust() {
    let h = workspace("hcl", "out/usr/share/gocode/src/github.com/hashicorp/terraform-json/testdata");
    check(
        &h,
        "hcl",
        &[
            ("$K = $V", 70, Includes),
            ("$K = \"$V\"", 35, Includes),
            ("resource \"$T\" \"$N\" {\n  $A = $B\n}", 12, Includes),
            ("variable \"$N\" {\n  $A = $B\n}", 11, Includes),
            // A body holds attributes and blocks, never a bare name: the CLI
            // finds nothing; a block stands in for `$$$B` here.
            ("resource $T $N { $$$B }", 23, CliFindsNone),
        ],
    )
    .await;
    let h = workspace("zig", "out/pydust");
    check(
        &h,
        "zig",
        &[
            ("const $A = $B;", 550, Includes),
            ("pub fn $F($$$P) $R { $$$B }", 180, Includes),
            ("$F($$$A)", 950, Includes),
            ("return $A;", 270, Includes),
            // The CLI reads `if` only as an expression; the statements are tether's too.
            ("if ($C) { $$$B }", 100, Includes),
        ],
    )
    .await;
}

#[tokio::test]
async fn dart_from_flutter_rust_bridge() {
    let h = workspace("dart", "out/flutter_rust_bridge_codegen-2.13.0/assets/integration_template");
    check(
        &h,
        "dart",
        &[
            ("return $A;", 150, Includes),
            ("class $C { $$$B }", 30, Includes),
            ("import '$P';", 190, Includes),
            // Functions at the top level, in classes and in bodies.
            ("$T $F($$$P) { $$$B }", 40, Includes),
            ("final $A = $B;", 300, Includes),
            ("if ($C) { $$$B }", 140, CliFindsNone),
            ("await $A", 40, CliMatchesAPiece),
        ],
    )
    .await;
}

#[tokio::test]
async fn data_and_markup_languages() {
    let h = workspace("yaml", "out/ansible_core-2.16.14");
    check(
        &h,
        "yaml",
        &[("name: $N", 6000, Includes), ("when: $C", 450, Includes), ("- name: $N", 5000, Includes)],
    )
    .await;
    let h = workspace("json", "out/package");
    check(
        &h,
        "json",
        &[
            ("$K: $V", 30000, Includes),
            ("{ $$$A }", 9000, Includes),
            ("[$$$A]", 1800, Includes),
            // JSON has no names: the CLI refuses a quoted key beside `$V`.
            ("\"version\": $V", 35, CliFindsNone),
        ],
    )
    .await;
    let h = workspace("css", "out/package/src");
    check(
        &h,
        "css",
        &[
            ("$P: $V;", 1600, Includes),
            (".$C { $$$B }", 1300, Includes),
            ("@media $Q { $$$B }", 70, Includes),
        ],
    )
    .await;
    let h = workspace("html", "out/usr/share/doc/git-doc");
    check(
        &h,
        "html",
        &[
            ("<a href=$H>$$$C</a>", 2000, Includes),
            ("<p>$$$B</p>", 10000, Includes),
            ("<code>$A</code>", 9000, Includes),
        ],
    )
    .await;
    let h = workspace("markdown", "out/package");
    check(&h, "markdown", &[("# $T", 30, Includes), ("## $T", 140, Includes), ("- $A", 380, Includes)]).await;
}

#[tokio::test]
async fn a_search_without_language_finds_each_languages_matches() {
    // Java, Kotlin and Swift side by side: one search, every language.
    let h = Harness::new(&[]);
    copy_dir(&corpus("java", "out/package/capacitor/src/main/java"), &h.path("java"));
    copy_dir(&corpus("kotlin", "out/package/android/src"), &h.path("kotlin"));
    copy_dir(&corpus("swift", "out/package/ios"), &h.path("swift"));
    let r = h.ok("ast_grep", json!({"pattern": "$A.$M($$$P)", "max_results": 100000})).await;
    let data = r.data.unwrap();
    for lang in ["java", "kotlin", "swift"] {
        let n = data["matches"].as_array().unwrap().iter().filter(|m| m["language"] == lang).count();
        let alone = our_matches(&h, "$A.$M($$$P)", lang).await.len();
        assert_eq!(n, alone, "{lang}: the mixed search finds what a search of {lang} alone does");
        assert!(n > 500, "{lang}: {n}");
    }
}

/// Lines, in files whose name ends with `suffix`, that start (past blanks)
/// with `prefix`.
fn lines_starting_with(dir: &Path, suffix: &str, prefix: &str) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            n += lines_starting_with(&path, suffix, prefix);
        } else if path.to_string_lossy().ends_with(suffix) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            n += text.lines().filter(|l| l.trim_start().starts_with(prefix)).count();
        }
    }
    n
}
