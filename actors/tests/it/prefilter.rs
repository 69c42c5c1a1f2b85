//! The prefilter skips parsing files that lack a token the pattern needs;
//! it must never change a result. Compared here over generated files and
//! over this crate's own sources, for many patterns.

use std::path::{Path, PathBuf};

use tether_actors::ast::lang::Lang;
use tether_actors::ast::scan::Scope;
use tether_actors::ast::search::{Match, search};

fn scope(root: &Path, lang: Option<Lang>, prefilter: bool) -> Scope {
    let root = root.canonicalize().unwrap();
    Scope { root: root.clone(), path: root, lang, prefilter }
}

fn both(root: &Path, lang: Option<Lang>, pattern: &str) -> (Vec<Match>, usize) {
    let with = search(&scope(root, lang, true), pattern, 100_000).unwrap();
    let without = search(&scope(root, lang, false), pattern, 100_000).unwrap();
    assert_eq!(with.matches, without.matches, "prefilter changed the result of `{pattern}`");
    assert_eq!(with.total, without.total);
    assert_eq!(without.coverage.prefiltered, 0);
    (with.matches, with.coverage.prefiltered)
}

#[test]
fn generated_python_gives_identical_results_with_and_without_the_prefilter() {
    let dir = tempfile::tempdir().unwrap();
    let snippets = [
        "print(x)\n",
        "subprocess.check_output(['ls'], shell=True)\n",
        "import subprocess\nsubprocess.run(cmd)\n",
        "def f(a, b):\n    return a + b\n",
        "s = 'print(x) in a string'\n# print(y) in a comment\n",
        "class C:\n    def m(self):\n        self.x = print(1, 2)\n",
        "x == x\nx == y\n",
        "µ = 'unicode µ and $ signs'\nprint(µ)\n",
    ];
    for i in 0..120 {
        let body: String = (0..4).map(|k| snippets[(i * 7 + k * 3) % snippets.len()]).collect();
        let sub = dir.path().join(format!("d{}", i % 5));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("f{i}.py")), body).unwrap();
    }
    let patterns = [
        "print($A)",
        "print($$$ARGS)",
        "subprocess.check_output($$$A)",
        "$X == $X",
        "def $F($$$P):\n    return $R",
        "self.$ATTR = $V",
        "$OBJ.run($C)",
        "return $A + $B",
    ];
    let mut skipped_some = false;
    for pattern in patterns {
        let (matches, prefiltered) = both(dir.path(), Some(Lang::PYTHON), pattern);
        assert!(!matches.is_empty(), "`{pattern}` should match something in the corpus");
        skipped_some |= prefiltered > 0;
    }
    assert!(skipped_some, "the prefilter skipped at least one file for some pattern");
}

#[test]
fn real_rust_sources_give_identical_results_with_and_without_the_prefilter() {
    let src: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for pattern in ["Lang::$X", "$A.map_err($F)", "format!($$$A)", "Ok($X)", "impl $T for $U { $$$B }"] {
        let (matches, _) = both(&src, None, pattern);
        assert!(!matches.is_empty(), "`{pattern}` should match in the sources");
    }
}

#[test]
fn the_python_standard_library_gives_identical_results_with_and_without_the_prefilter() {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3 runs (the README's test command installs it)");
    let stdlib = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    for package in ["json", "email", "asyncio", "logging", "unittest"] {
        let mut found = 0;
        for pattern in ["print($A)", "1 if $X else $Y", "self.$A = $A", "isinstance($O, $T)", "'utf-8'"] {
            found += both(&stdlib.join(package), Some(Lang::PYTHON), pattern).0.len();
        }
        assert!(found > 0, "{package}: the patterns match something");
    }
}

/// A registry corpus the test command fetches (`scripts/corpora.sh`).
pub(crate) fn corpus(lang: &str, inside: &str) -> PathBuf {
    let base = std::env::var_os("TETHER_CORPORA").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/tether-test/corpora")
    });
    let dir = base.join(lang).join(inside);
    assert!(
        dir.is_dir(),
        "{} is missing; run `scripts/corpora.sh {lang}` (the README's test command does)",
        dir.display()
    );
    dir
}

#[test]
fn the_languages_ast_grep_adds_give_identical_results_with_and_without_the_prefilter() {
    // Selective patterns, whose literal tokens most files lack, in
    // grammars whose names are not all called `identifier`.
    let cases: &[(Lang, &str, &str, &[&str])] = &[
        (
            Lang::JAVA,
            "java",
            "out/package/capacitor/src/main/java",
            &["Logger.debug($$$A)", "$A.getString($K)", "new JSObject()"],
        ),
        (
            Lang::KOTLIN,
            "kotlin",
            "out/package/android/src",
            &["Log.e($$$A)", "$A.toString()", "listOf($$$A)"],
        ),
        (
            Lang::SWIFT,
            "swift",
            "out/package/ios",
            &["DispatchQueue.main.async { $$$B }", "$A.append($B)", "guard $C else { $$$B }"],
        ),
        (
            Lang::CSHARP,
            "csharp",
            "out/pythonnet-3.0.5/src",
            &["Console.WriteLine($$$A)", "throw new ArgumentException($$$A);", "$A.Dispose()"],
        ),
        (
            Lang::RUBY,
            "ruby",
            "out/usr/lib/ruby/3.1.0",
            &["raise ArgumentError, $M", "require_relative $P", "$A.freeze"],
        ),
        (
            Lang::PHP,
            "php",
            "out/usr/share/php",
            &["PEAR::raiseError($$$A)", "$O->_close()", "array_key_exists($K, $A)"],
        ),
        (
            Lang::LUA,
            "lua",
            "out/usr/share/lua/5.1/pl",
            &["error($$$A)", "utils.assert_arg($$$A)", "local $A = require($M)"],
        ),
        (Lang::BASH, "bash", "out/usr/lib/dracut", &["inst_multiple $$$A", "dinfo $$$A", "local $A"]),
        (Lang::SCALA, "scala", "src/lessons", &["println($A)", "forward($N)", "$A.length"]),
        (Lang::SOLIDITY, "solidity", "out/package", &["emit $E($$$A);", "revert $E($$$A);", "_msgSender()"]),
        (
            Lang::HASKELL,
            "haskell",
            "out/usr/lib/hugs/packages/base",
            &["error $M", "fromIntegral $X", "unsafePerformIO $A"],
        ),
        (Lang::ZIG, "zig", "out/pydust", &["@import($M)", "py.object($$$A)", "return $A;"]),
        (Lang::YAML, "yaml", "out/ansible_core-2.16.14", &["version_added: $V", "when: $C", "type: bool"]),
        (
            Lang::HCL,
            "hcl",
            "out/usr/share/gocode/src/github.com/hashicorp/terraform-json/testdata",
            &["source = $S", "$K = $V"],
        ),
        (
            Lang::ELIXIR,
            "elixir",
            "out/package/elixirsrc",
            &["Jason.encode!($$$A)", "defp $F($$$A) do $$$B end"],
        ),
        (Lang::NIX, "nix", "out/nixpkgs-fmt-1.3.0/test_data", &["import $P", "inherit $$$A;"]),
        (Lang::CSS, "css", "out/package/src", &["color: $V;", "@media $Q { $$$B }"]),
        (
            Lang::DART,
            "dart",
            "out/flutter_rust_bridge_codegen-2.13.0/assets/integration_template",
            &["print($A)", "await $A"],
        ),
    ];
    for &(lang, name, inside, patterns) in cases {
        let dir = corpus(name, inside);
        let mut skipped = 0;
        let mut found = 0;
        for pattern in patterns {
            let (matches, prefiltered) = both(&dir, Some(lang), pattern);
            found += matches.len();
            skipped += prefiltered;
        }
        assert!(found > 0, "{lang}: the patterns match something in the corpus");
        assert!(skipped > 0, "{lang}: the prefilter skipped no file for any of {patterns:?}");
    }
}
