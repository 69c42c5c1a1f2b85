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
        for pattern in ["print($A)", "1 if $X else $Y", "self.$A = $A", "isinstance($O, $T)", "'utf-8'"] {
            both(&stdlib.join(package), Some(Lang::PYTHON), pattern);
        }
    }
}
