//! `ast_grep` over this machine's CPython standard library, side by side in
//! one run with the ast-grep CLI (PyPI `ast-grep-cli`), asserting tether
//! finds every match the CLI finds.
//!
//! Three contenders per pattern, interleaved run by run so machine noise
//! hits all alike: the CLI (`ast-grep run -p … -l python --json=stream .`),
//! the `tether call --json` binary (process to process, as fair as it gets),
//! and an in-process `Runtime::call` (what an embedding host pays). Every
//! match is produced (`max_results: 100000`). Medians and ratios are printed.
//!
//! Run: `cargo bench --bench ast_search` (needs `ast-grep` on PATH and
//! `python3`; set `AST_BENCH_RUNS` to change the run count, default 5).

#[path = "support/ast_cli.rs"]
mod ast_cli;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ast_cli::{MatchSet, median, run_cli};
use serde_json::{Value, json};
use tether::Runtime;

const PATTERNS: [&str; 2] = ["print($A)", "subprocess.check_output($$$A)"];
const DEFAULT_RUNS: usize = 5;

fn stdlib() -> PathBuf {
    let out = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn set_of(data: &Value) -> MatchSet {
    data["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().to_string(), m["start_byte"].as_u64().unwrap()))
        .collect()
}

fn run_binary(dir: &Path, pattern: &str) -> (Duration, MatchSet) {
    let args = json!({"pattern": pattern, "language": "python", "max_results": 100000}).to_string();
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["call", "--json", "--workdir"])
        .arg(dir)
        .args(["ast_grep", &args])
        .output()
        .expect("tether binary runs");
    let took = start.elapsed();
    let v: Value = serde_json::from_slice(&out.stdout).expect("tether --json output");
    (took, set_of(&v["data"]))
}

fn run_in_process(
    rt: &Runtime,
    tokio: &tokio::runtime::Runtime,
    pattern: &str,
) -> (Duration, MatchSet, Value) {
    let args = json!({"pattern": pattern, "language": "python", "max_results": 100000});
    let start = Instant::now();
    let r = tokio.block_on(rt.call("ast_grep", args));
    let took = start.elapsed();
    assert!(!r.is_error, "{}", r.text);
    let data = r.data.unwrap();
    (took, set_of(&data), data["coverage"].clone())
}

fn main() {
    // `cargo test --benches` runs bench targets once as tests; keep that cheap.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runs: usize =
        std::env::var("AST_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_RUNS);
    let dir = stdlib();
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rt = Runtime::builder().workdir(&dir).connect_all().start().unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("corpus: {} ({threads} threads each)", dir.display());
    for pattern in PATTERNS {
        let (mut cli, mut bin, mut inproc) = (Vec::new(), Vec::new(), Vec::new());
        let mut coverage = Value::Null;
        for run in 0..runs {
            let (t_cli, s_cli) = run_cli(&dir, pattern, Some("python"));
            let (t_bin, s_bin) = run_binary(&dir, pattern);
            let (t_in, s_in, cov) = run_in_process(&rt, &tokio, pattern);
            if run == 0 {
                // tether also searches dot-directories, which the CLI leaves out.
                assert!(s_cli.is_subset(&s_bin), "`{pattern}`: tether misses matches the CLI finds");
                assert_eq!(s_in, s_bin, "`{pattern}`: in-process tether and the binary disagree");
                println!(
                    "`{pattern}`: CLI {} matches, tether {} (every CLI match included)",
                    s_cli.len(),
                    s_bin.len()
                );
            }
            coverage = cov;
            cli.push(t_cli);
            bin.push(t_bin);
            inproc.push(t_in);
        }
        let (cli, bin, inproc) = (median(cli), median(bin), median(inproc));
        println!(
            "  ast-grep CLI  median {:>8.1} ms\n  tether call   median {:>8.1} ms  ratio {:.3}\n  in-process    median {:>8.1} ms  ratio {:.3}\n  files {} parsed {} prefiltered {}",
            cli.as_secs_f64() * 1e3,
            bin.as_secs_f64() * 1e3,
            bin.as_secs_f64() / cli.as_secs_f64(),
            inproc.as_secs_f64() * 1e3,
            inproc.as_secs_f64() / cli.as_secs_f64(),
            coverage["files"],
            coverage["parsed"],
            coverage["prefiltered"],
        );
    }
}
