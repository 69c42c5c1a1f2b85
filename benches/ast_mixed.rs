//! `ast_grep` over a mixed-language tree of more than 20,000 files, side
//! by side in one run with the ast-grep CLI (PyPI `ast-grep-cli`), with no
//! `language`: both search every language they know in every file.
//!
//! The tree is put together once under `target/bench-corpora/mixed` from
//! code already on the machine: CPython's standard library, Go's, glibc's
//! and libstdc++'s headers, TypeScript's and Ajv's npm packages, and the
//! registry corpora the test command fetches (`scripts/corpora.sh`: Java,
//! Kotlin, Swift, C#, Ruby, PHP, Lua, Bash, Scala, Solidity, Elixir,
//! Haskell, HCL, Nix, Zig, Dart, YAML, JSON, HTML, CSS, Markdown).
//!
//! Per pattern the contenders run interleaved, run by run: the CLI
//! (`ast-grep run -p … --json=stream .`) and `tether call --json` (process
//! to process). tether's matches must include every one of the CLI's (it
//! also searches dot-directories the CLI leaves out). Medians and ratios
//! are printed, with what tether's prefilter skipped per language.
//!
//! Run: `cargo bench --bench ast_mixed` (`AST_BENCH_RUNS` to change the run
//! count, default 5).

#[path = "support/ast_cli.rs"]
mod ast_cli;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ast_cli::{MatchSet, median, run_cli};
use serde_json::{Value, json};

/// A call in many languages, a selective call, and a broad shape.
const PATTERNS: [&str; 3] = ["print($A)", "JSON.parse($A)", "$A.close()"];
const DEFAULT_RUNS: usize = 5;
const MIN_FILES: usize = 20_000;

fn output_of(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Copies `src` into `dst` (files only, no links), skipping what exists.
fn copy_tree(src: &Path, dst: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(src) else { return 0 };
    std::fs::create_dir_all(dst).unwrap();
    let mut n = 0;
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let target = dst.join(entry.file_name());
        if kind.is_dir() {
            n += copy_tree(&entry.path(), &target);
        } else if kind.is_file() {
            if !target.exists() {
                let _ = std::fs::copy(entry.path(), &target);
            }
            n += 1;
        }
    }
    n
}

fn corpus() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-corpora/mixed");
    let stdlib = output_of("python3", &["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"]);
    let goroot = output_of("go", &["env", "GOROOT"]);
    let npm = PathBuf::from(output_of("npm", &["root", "-g"]));
    let corpora = std::env::var_os("TETHER_CORPORA").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/tether-test/corpora")
    });
    let mut sources: Vec<(PathBuf, String)> = vec![
        (PathBuf::from(&stdlib), "python".into()),
        (PathBuf::from(&goroot).join("src"), "go".into()),
        (PathBuf::from("/usr/include"), "include".into()),
        (npm.join("typescript/lib"), "typescript".into()),
        (npm.join("ajv"), "ajv".into()),
    ];
    if let Ok(langs) = std::fs::read_dir(&corpora) {
        for lang in langs.flatten() {
            sources.push((lang.path(), format!("corpora/{}", lang.file_name().to_string_lossy())));
        }
    }
    let mut files = 0;
    for (src, name) in sources {
        files += copy_tree(&src, &root.join(name));
    }
    assert!(
        files >= MIN_FILES,
        "the mixed tree holds {files} files, fewer than {MIN_FILES}; run ./scripts/test first"
    );
    println!("corpus: {} ({files} files)", root.display());
    root
}

fn run_tether(dir: &Path, pattern: &str) -> (Duration, MatchSet, Value) {
    let args = json!({"pattern": pattern, "max_results": 100000}).to_string();
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["call", "--json", "--workdir"])
        .arg(dir)
        .args(["ast_grep", &args])
        .output()
        .expect("tether binary runs");
    let took = start.elapsed();
    let v: Value = serde_json::from_slice(&out.stdout).expect("tether --json output");
    let set = v["data"]["matches"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| (m["path"].as_str().unwrap().to_string(), m["start_byte"].as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    (took, set, v["data"]["coverage"].clone())
}

fn main() {
    // `cargo test --benches` runs bench targets once as tests; keep that cheap.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runs: usize =
        std::env::var("AST_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_RUNS);
    let dir = corpus();
    for pattern in PATTERNS {
        let (mut cli, mut ours) = (Vec::new(), Vec::new());
        let mut coverage = Value::Null;
        for run in 0..runs {
            let (t_cli, s_cli) = run_cli(&dir, pattern, None);
            let (t_ours, s_ours, cov) = run_tether(&dir, pattern);
            if run == 0 {
                let missing: Vec<_> = s_cli.difference(&s_ours).take(5).collect();
                assert!(missing.is_empty(), "`{pattern}`: tether misses CLI matches, e.g. {missing:?}");
                println!(
                    "`{pattern}`: CLI {} matches, tether {} (every CLI match included; {} more)",
                    s_cli.len(),
                    s_ours.len(),
                    s_ours.len() - s_cli.len()
                );
            }
            coverage = cov;
            cli.push(t_cli);
            ours.push(t_ours);
        }
        let (cli, ours) = (median(cli), median(ours));
        let per_language: BTreeMap<String, u64> = coverage["per_language"]
            .as_object()
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))).collect())
            .unwrap_or_default();
        println!(
            "  ast-grep CLI  median {:>8.1} ms\n  tether call   median {:>8.1} ms  ratio {:.3}\n  files {} parsed {} prefiltered {} in {} languages",
            cli.as_secs_f64() * 1e3,
            ours.as_secs_f64() * 1e3,
            ours.as_secs_f64() / cli.as_secs_f64(),
            coverage["files"],
            coverage["parsed"],
            coverage["prefiltered"],
            per_language.len(),
        );
    }
}
