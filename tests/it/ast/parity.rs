//! Same matches as the ast-grep CLI (PyPI `ast-grep-cli`), the peer the
//! benchmarks compare against, on real code already on the test machine,
//! none of it written for the test: parts of the Python standard library,
//! glibc's headers (C), libstdc++'s policy-based data structures (C++),
//! the Go standard library, serde_json from the cargo registry (Rust) and
//! this repository's own sources, and Ajv from npm's global modules
//! (JavaScript, TypeScript) with TypeScript's `lib.es5.d.ts`. Every pattern
//! must find at least a stated number of matches, so a pattern both tools
//! miss cannot pass. Where the sets differ the test proves the CLI wrong
//! and checks the truth instead (a literal's count, a directive's text).
//!
//! `registry` does the same for the languages beyond these, on packages
//! fetched from Debian, npm, PyPI and crates.io (`scripts/corpora.sh`).
//!
//! The CLI is required: if it is missing the test fails with the install
//! command instead of skipping.

mod registry;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Harness, copy_dir};
use serde_json::{Value, json};

const INSTALL_HINT: &str =
    "install the peer with `python3 -m pip install ast-grep-cli` (the README's test command does)";

fn cli_matches(dir: &Path, pattern: &str, lang: &str) -> BTreeSet<(String, u64, u64)> {
    cli_outcome(dir, pattern, lang).unwrap_or_else(|e| panic!("ast-grep failed on `{pattern}`: {e}"))
}

/// The CLI's matches, or what it said when it refused the pattern.
fn cli_outcome(dir: &Path, pattern: &str, lang: &str) -> Result<BTreeSet<(String, u64, u64)>, String> {
    // `--pattern=…`: a pattern starting with `-` (a YAML list item) is no flag.
    let out = Command::new("ast-grep")
        .args(["run", &format!("--pattern={pattern}"), "-l", lang, "--json=stream", "."])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("ast-grep did not run ({e}); {INSTALL_HINT}"));
    if !(out.status.success() || out.status.code() == Some(1)) {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let file = v["file"].as_str().unwrap().trim_start_matches("./").to_string();
            let range = &v["range"]["byteOffset"];
            (file, range["start"].as_u64().unwrap(), range["end"].as_u64().unwrap())
        })
        .collect())
}

/// Our matches, keyed like the CLI's, with each match's text.
async fn our_matches(h: &Harness, pattern: &str, lang: &str) -> BTreeMap<(String, u64, u64), String> {
    let r = h.ok("ast_grep", json!({"pattern": pattern, "language": lang, "max_results": 100000})).await;
    let data = r.data.unwrap();
    assert!(data["total"].as_u64().unwrap() <= 100_000);
    data["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let key = (
                m["path"].as_str().unwrap().to_string(),
                m["start_byte"].as_u64().unwrap(),
                m["end_byte"].as_u64().unwrap(),
            );
            (key, m["text"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Each pattern finds at least its stated number of matches, and every
/// match the CLI finds; a match only tether finds must have the pattern's
/// shape (see [`has_the_shape_of`]).
async fn same_as_cli(h: &Harness, lang: &str, patterns: &[(&str, usize)]) {
    for &(pattern, at_least) in patterns {
        includes_cli(h, lang, pattern, at_least).await;
    }
}

/// tether's matches of `pattern` include every one of the CLI's and are
/// at least `at_least`; each match only tether finds has the pattern's
/// shape. Returns tether's matches and the CLI's.
async fn includes_cli(
    h: &Harness,
    lang: &str,
    pattern: &str,
    at_least: usize,
) -> (BTreeMap<(String, u64, u64), String>, BTreeSet<(String, u64, u64)>) {
    let ours = our_matches(h, pattern, lang).await;
    let theirs = cli_matches(&h.root(), pattern, lang);
    assert!(
        ours.len() >= at_least,
        "`{pattern}` ({lang}) finds {} matches, expected at least {at_least}",
        ours.len()
    );
    let missing: Vec<_> = theirs.iter().filter(|m| !ours.contains_key(*m)).take(5).collect();
    assert!(
        missing.is_empty(),
        "`{pattern}` ({lang}): the CLI finds matches tether does not, e.g. {missing:?}"
    );
    for (at, text) in ours.iter().filter(|(m, _)| !theirs.contains(*m)) {
        assert!(
            has_the_shape_of(pattern, text),
            "`{pattern}` ({lang}) at {at:?}: `{text}` is not of the pattern's shape"
        );
    }
    (ours, theirs)
}

/// Whether `text` has the literal parts of `pattern`, in order, blanks
/// aside, the first at its start where the pattern starts with one. A
/// check of the truth independent of either tool's parse. (The last part
/// need not end the text: an `if` runs on to its `else`.)
pub(crate) fn has_the_shape_of(pattern: &str, text: &str) -> bool {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let mut chunks = Vec::new();
    let mut literal = String::new();
    let mut chars = pattern.chars().peekable();
    let mut starts_with_var = false;
    while let Some(c) = chars.next() {
        let is_var =
            c == '$' && chars.peek().is_some_and(|n| *n == '$' || *n == '_' || n.is_ascii_uppercase());
        if !is_var {
            literal.push(c);
            continue;
        }
        while chars
            .peek()
            .is_some_and(|n| *n == '$' || *n == '_' || n.is_ascii_uppercase() || n.is_ascii_digit())
        {
            chars.next();
        }
        if chunks.is_empty() && squash(&literal).is_empty() {
            starts_with_var = true;
        }
        chunks.push(squash(&std::mem::take(&mut literal)));
    }
    chunks.push(squash(&literal));
    // A text cut at the answer's limit ends with `…`: only what it holds is checked.
    let cut = text.ends_with('…');
    let text = squash(text.trim_end_matches('…'));
    let chunks: Vec<&String> = chunks.iter().filter(|c| !c.is_empty()).collect();
    let mut rest = text.as_str();
    for (i, chunk) in chunks.iter().enumerate() {
        let Some(at) = rest.find(chunk.as_str()) else { return cut && i > 0 };
        if i == 0 && !starts_with_var && at != 0 {
            return false;
        }
        rest = &rest[at + chunk.len()..];
    }
    true
}

#[test]
fn the_shape_check_reads_literals_between_metavariables() {
    assert!(has_the_shape_of("if ($C) { $$$B }", "if (x) {\n  a();\n} else {\n  b();\n}"));
    assert!(has_the_shape_of("$A = $B;", "x.y = f(1);"));
    assert!(has_the_shape_of("emit $E($$$A);", "emit Done(a, b);"));
    assert!(!has_the_shape_of("emit $E($$$A);", "revert Done(a, b);"));
    assert!(!has_the_shape_of("$A = $B;", "x == y"));
    assert!(has_the_shape_of("if ($C) { $$$B }", "if (x) {\n  a();…"), "a cut text holds what it holds");
    assert!(has_the_shape_of("$F($$$A)", "f(x)"));
}

/// Copies the files of `src` (not its subdirectories) whose name ends with
/// `suffix` into `dst`.
fn copy_files(src: &Path, dst: &Path, suffix: &str) -> usize {
    std::fs::create_dir_all(dst).unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(src).unwrap_or_else(|e| panic!("{}: {e}", src.display())).flatten() {
        let path = entry.path();
        if path.is_file() && entry.file_name().to_string_lossy().ends_with(suffix) {
            std::fs::copy(&path, dst.join(entry.file_name())).unwrap();
            n += 1;
        }
    }
    n
}

/// One line of a program's standard output.
fn output_of(program: &str, args: &[&str], hint: &str) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} did not run ({e}); {hint}"));
    assert!(out.status.success(), "{program} {args:?} failed; {hint}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn npm_global(package: &str) -> PathBuf {
    let root =
        PathBuf::from(output_of("npm", &["root", "-g"], "the README's test command installs node and npm"));
    let dir = root.join(package);
    assert!(dir.is_dir(), "{} is missing; the README's test command installs it with npm", dir.display());
    dir
}

fn python_stdlib() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3 runs (the README's test command installs it)");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Copies `src` (a directory of the stdlib) into `dst`, `.py` files only.
fn copy_py(src: &Path, dst: &Path) {
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let path = entry.path();
        let target = dst.join(entry.file_name());
        if path.is_dir() {
            if entry.file_name() != "__pycache__" {
                std::fs::create_dir_all(&target).unwrap();
                copy_py(&path, &target);
            }
        } else if path.extension().is_some_and(|e| e == "py") {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[tokio::test]
async fn python_stdlib_packages_match_the_cli() {
    let stdlib = python_stdlib();
    let h = Harness::new(&[]);
    for package in ["json", "email", "asyncio", "unittest"] {
        let dst = h.path(package);
        std::fs::create_dir_all(&dst).unwrap();
        copy_py(&stdlib.join(package), &dst);
    }
    // The minimums hold without the packages' own test suites, which some
    // distributions leave out of the standard library.
    same_as_cli(
        &h,
        "python",
        &[
            ("print($A)", 5),
            ("super().__init__($$$A)", 20),
            ("$A if $C else $B", 30),
            ("isinstance($OBJ, $$$T)", 100),
            ("raise $E from $C", 10),
            ("def $F(self, $$$A):\n    $$$B", 400),
            ("lambda $$$A: $B", 10),
        ],
    )
    .await;
}

#[tokio::test]
async fn rust_sources_match_the_cli() {
    let h = Harness::new(&[]);
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, files) in [("src", &src.join("src")), ("actors", &src.join("actors/src"))] {
        copy_dir(files, &h.path(dir));
    }
    // Patterns the CLI also parses at the top level. Where it does not
    // (`Lang::$X` is no Rust item), the scaffold ladder finds matches the CLI
    // cannot — see `the_ladder_goes_where_top_level_parsing_cannot`.
    same_as_cli(
        &h,
        "rust",
        &[
            ("Ok($X)", 20),
            ("$A.map_err($F)", 5),
            ("format!($$$A)", 20),
            ("if let Some($X) = $Y { $$$B }", 20),
        ],
    )
    .await;
}

/// The highest version of `krate` in the cargo registry (the build of this
/// test fetched it there).
fn registry_crate(krate: &str) -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .unwrap()
        .flatten()
        .flat_map(|index| std::fs::read_dir(index.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.strip_prefix(krate)
                .and_then(|v| v.strip_prefix('-'))
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| panic!("{krate} is not in the cargo registry under {}", home.display()))
}

#[tokio::test]
async fn a_registry_crate_matches_the_cli() {
    let h = Harness::new(&[]);
    copy_dir(&registry_crate("serde_json").join("src"), &h.path("serde_json"));
    same_as_cli(
        &h,
        "rust",
        &[
            ("impl $T for $U { $$$B }", 40),
            ("match $X { $$$A }", 100),
            ("#[inline]", 100),
            ("Err($E)", 100),
            ("&mut $X", 30),
        ],
    )
    .await;
}

/// Matches only we find must each be `kind` directive at a line's start,
/// `#`, optional blanks, the word, a name and a value: the C standard
/// allows blanks after `#`, and the CLI misses some of those lines.
fn only_real_directives(
    ours: &BTreeMap<(String, u64, u64), String>,
    theirs: &BTreeSet<(String, u64, u64)>,
    word: &str,
) {
    assert!(theirs.iter().all(|m| ours.contains_key(m)), "the CLI finds no `#{word}` we miss");
    for ((file, start, _), text) in ours.iter().filter(|(m, _)| !theirs.contains(m)) {
        let rest = text.strip_prefix('#').map(|t| t.trim_start_matches([' ', '\t']));
        let real = rest.and_then(|r| r.strip_prefix(word)).is_some_and(|r| {
            let r = r.trim_start_matches([' ', '\t']);
            !r.is_empty() && !r.starts_with('\n')
        });
        assert!(real, "{file}@{start}: `{text}` is no #{word} line");
    }
}

#[tokio::test]
async fn glibc_headers_match_the_cli() {
    let h = Harness::new(&[]);
    assert!(
        copy_files(Path::new("/usr/include"), &h.path("include"), ".h") >= 100,
        "glibc's headers (libc6-dev, with gcc)"
    );
    same_as_cli(
        &h,
        "c",
        &[("extern $T $F($$$A);", 500), ("typedef $T $N;", 300), ("__THROW", 500), ("sizeof($X)", 1)],
    )
    .await;
    // Preprocessor directives only parse at a file's top level.
    for (pattern, word, at_least) in
        [("#define $NAME $VALUE", "define", 3000), ("#include $HEADER", "include", 300)]
    {
        let ours = our_matches(&h, pattern, "c").await;
        let theirs = cli_matches(&h.root(), pattern, "c");
        assert!(ours.len() >= at_least, "`{pattern}`: {}", ours.len());
        only_real_directives(&ours, &theirs, word);
    }
}

#[tokio::test]
async fn libstdcxx_sources_match_the_cli() {
    let h = Harness::new(&[]);
    let pb_ds = std::fs::read_dir("/usr/include/c++")
        .expect("libstdc++'s headers (g++; the README's test command installs it)")
        .flatten()
        .map(|e| e.path().join("ext/pb_ds"))
        .find(|p| p.is_dir())
        .expect("libstdc++'s ext/pb_ds (g++)");
    copy_dir(&pb_ds, &h.path("pb_ds"));
    same_as_cli(
        &h,
        "cpp",
        &[
            ("#define $NAME $VALUE", 50),
            ("#include $HEADER", 200),
            ("template <$$$P> class $C { $$$B };", 10),
            ("$A->$B($$$C)", 100),
            // No clean reading: the CLI's, an error node matching by its
            // children, finds every `for` loop.
            ("for ($$$I) $S", 30),
            ("return $X;", 300),
        ],
    )
    .await;
}

#[tokio::test]
async fn the_go_standard_library_matches_the_cli() {
    let goroot = PathBuf::from(output_of("go", &["env", "GOROOT"], "apt-get install golang-go"));
    let h = Harness::new(&[]);
    for package in ["fmt", "strings", "encoding/json", "net/url", "os/exec"] {
        copy_files(&goroot.join("src").join(package), &h.path(package), ".go");
    }
    same_as_cli(
        &h,
        "go",
        &[
            ("if err != nil { $$$B }", 100),
            ("defer $F($$$A)", 20),
            ("for $I := range $X { $$$B }", 100),
            ("func ($R $T) String() string { $$$B }", 10),
            ("$A := $B", 1000),
        ],
    )
    .await;
    // At a Go file's top level a call is no declaration: the CLI finds
    // none. Every call of these is one match of ours, each written out in
    // the source outside comments.
    for literal in ["fmt.Errorf(", "errors.New("] {
        let pattern = format!("{literal}$$$A)");
        assert!(cli_matches(&h.root(), &pattern, "go").is_empty(), "the CLI reads `{pattern}` at top level");
        let ours = our_matches(&h, &pattern, "go").await;
        let written: usize = walk(&h.root(), ".go")
            .iter()
            .flat_map(|f| std::fs::read_to_string(f).unwrap().lines().map(str::to_string).collect::<Vec<_>>())
            .map(|line| line.split("//").next().unwrap_or("").matches(literal).count())
            .sum();
        assert!(written >= 20, "{literal}: {written}");
        assert_eq!(ours.len(), written, "`{pattern}`: every call, once");
        assert!(ours.values().all(|t| t.starts_with(literal)), "`{pattern}`");
    }
}

/// Every file under `dir` whose name ends with `suffix`.
fn walk(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out
}

#[tokio::test]
async fn npm_modules_match_the_cli_in_javascript_and_typescript() {
    let h = Harness::new(&[]);
    let ajv = npm_global("ajv");
    copy_dir(&ajv.join("dist"), &h.path("js"));
    copy_dir(&ajv.join("lib"), &h.path("ts"));
    copy_files(&npm_global("typescript").join("lib"), &h.path("ts/typescript"), "lib.es5.d.ts");
    same_as_cli(
        &h,
        "javascript",
        &[
            ("require($M)", 100),
            ("const $A = $B", 500),
            ("function $F($$$A) { $$$B }", 100),
            ("exports.$N = $V", 100),
            ("new $C($$$A)", 50),
            ("throw $E", 30),
        ],
    )
    .await;
    same_as_cli(
        &h,
        "typescript",
        &[
            ("interface $I { $$$M }", 100),
            ("$A as $T", 20),
            ("export function $F($$$A): $R { $$$B }", 30),
            ("type $T = $V", 100),
            // `$M` stands where a string must: no clean reading, the CLI's.
            ("import $X from $M", 50),
        ],
    )
    .await;
}

#[tokio::test]
async fn the_ladder_goes_where_top_level_parsing_cannot() {
    let h = Harness::new(&[("a.rs", "fn f() -> Lang { Lang::Dart }\n")]);
    assert_eq!(
        cli_matches(&h.root(), "Lang::$X", "rust"),
        BTreeSet::new(),
        "the CLI parses the fragment at top level"
    );
    let ours = our_matches(&h, "Lang::$X", "rust").await;
    assert_eq!(ours.len(), 1, "{ours:?}");
}
