//! Same matches as the ast-grep CLI (PyPI `ast-grep-cli`), the peer the
//! benchmarks compare against, on real code: parts of this machine's
//! Python standard library, and this repository's own Rust sources.
//!
//! The CLI is required: if it is missing the test fails with the install
//! command instead of skipping.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Harness, copy_dir};
use serde_json::{Value, json};

const INSTALL_HINT: &str =
    "install the peer with `python3 -m pip install ast-grep-cli` (the README's test command does)";

fn cli_matches(dir: &Path, pattern: &str, lang: &str) -> BTreeSet<(String, u64, u64)> {
    let out = Command::new("ast-grep")
        .args(["run", "-p", pattern, "-l", lang, "--json=stream", "."])
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("ast-grep did not run ({e}); {INSTALL_HINT}"));
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "ast-grep failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let file = v["file"].as_str().unwrap().trim_start_matches("./").to_string();
            let range = &v["range"]["byteOffset"];
            (file, range["start"].as_u64().unwrap(), range["end"].as_u64().unwrap())
        })
        .collect()
}

async fn our_matches(h: &Harness, pattern: &str, lang: &str) -> BTreeSet<(String, u64, u64)> {
    let r = h.ok("ast_grep", json!({"pattern": pattern, "language": lang, "max_results": 100000})).await;
    let data = r.data.unwrap();
    assert!(data["total"].as_u64().unwrap() <= 100_000);
    data["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["start_byte"].as_u64().unwrap(),
                m["end_byte"].as_u64().unwrap(),
            )
        })
        .collect()
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
    for pattern in [
        "print($A)",
        "subprocess.check_output($$$A)",
        "$X == $X",
        "isinstance($OBJ, $$$T)",
        "raise $E from $C",
        "def $F(self, $$$A):\n    $$$B",
    ] {
        let ours = our_matches(&h, pattern, "python").await;
        let theirs = cli_matches(&h.root(), pattern, "python");
        assert_eq!(ours, theirs, "`{pattern}` differs from the ast-grep CLI");
    }
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
    for pattern in ["Ok($X)", "$A.map_err($F)", "format!($$$A)", "if let Some($X) = $Y { $$$B }"] {
        let ours = our_matches(&h, pattern, "rust").await;
        let theirs = cli_matches(&h.root(), pattern, "rust");
        assert!(!ours.is_empty(), "`{pattern}` matches something");
        assert_eq!(ours, theirs, "`{pattern}` differs from the ast-grep CLI");
    }
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
