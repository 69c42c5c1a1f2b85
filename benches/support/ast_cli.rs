//! What the two `ast_grep` benches share: running the ast-grep CLI, the
//! match set both sides are compared on, and the median.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Matches by file (relative, `/`-separated) and start byte.
pub type MatchSet = BTreeSet<(String, u64)>;

/// One run of `ast-grep run -p PATTERN [-l LANG] --json=stream .` in `dir`:
/// its wall time and its matches.
pub fn run_cli(dir: &Path, pattern: &str, lang: Option<&str>) -> (Duration, MatchSet) {
    let mut args = vec!["run".to_string(), format!("--pattern={pattern}")];
    if let Some(lang) = lang {
        args.extend(["-l".to_string(), lang.to_string()]);
    }
    args.extend(["--json=stream".to_string(), ".".to_string()]);
    let start = Instant::now();
    let out = Command::new("ast-grep")
        .args(&args)
        .current_dir(dir)
        .output()
        .expect("ast-grep on PATH: python3 -m pip install ast-grep-cli");
    let took = start.elapsed();
    let set = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            let file = v["file"].as_str().unwrap_or_default().trim_start_matches("./").to_string();
            (file, v["range"]["byteOffset"]["start"].as_u64().unwrap_or_default())
        })
        .collect();
    (took, set)
}

/// The middle of `v` once sorted.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
