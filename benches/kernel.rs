//! `eval` against jupyter_client + ipykernel, side by side in one run:
//! `1+1` round trip (p50, p99) and start-to-first-result.
//!
//! tether's figure is a whole `eval` tool call through an in-process
//! runtime (router, kernel actor, the driver's pipe protocol); jupyter's is
//! `client.execute("1+1")` until the kernel reports idle, measured by
//! `benches/support/jupyter_rtt.py`. The two alternate, `KERNEL_BENCH_ROUNDS`
//! rounds (default 3) of `KERNEL_BENCH_RUNS` calls each (default 200);
//! medians of the rounds are reported.
//!
//! Run: `python3 -m pip install jupyter_client ipykernel` once, then
//! `cargo bench --bench kernel`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether::{Resource, Runtime};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn tether_round(tokio: &tokio::runtime::Runtime, runs: usize) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let cell = json!({"code": "1+1", "description": "add one and one for timing"});
    let start = Instant::now();
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(dir.path())
        .connect(Resource::Kernels)
        .start()
        .unwrap();
    let first = tokio.block_on(rt.call("eval", cell.clone()));
    let cold = start.elapsed();
    assert_eq!(first.text, "Out: 2");
    for _ in 0..10 {
        tokio.block_on(rt.call("eval", cell.clone()));
    }
    let mut rtts: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let r = tokio.block_on(rt.call("eval", cell.clone()));
            assert!(!r.is_error);
            t.elapsed()
        })
        .collect();
    rtts.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(cold), ms(rtts[runs / 2]), ms(rtts[runs * 99 / 100]))
}

fn jupyter_round(runs: usize) -> (f64, f64, f64) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/support/jupyter_rtt.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(runs.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "jupyter side failed (python3 -m pip install jupyter_client ipykernel): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["cold_ms"].as_f64().unwrap(), v["p50_ms"].as_f64().unwrap(), v["p99_ms"].as_f64().unwrap())
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let env = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (rounds, runs) = (env("KERNEL_BENCH_ROUNDS", 3), env("KERNEL_BENCH_RUNS", 200));
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (mut t, mut j) = (vec![], vec![]);
    for _ in 0..rounds {
        t.push(tether_round(&tokio, runs));
        j.push(jupyter_round(runs));
    }
    let pick = |v: &[(f64, f64, f64)], f: fn(&(f64, f64, f64)) -> f64| median(v.iter().map(f).collect());
    let (tc, tp50, tp99) = (pick(&t, |x| x.0), pick(&t, |x| x.1), pick(&t, |x| x.2));
    let (jc, jp50, jp99) = (pick(&j, |x| x.0), pick(&j, |x| x.1), pick(&j, |x| x.2));
    println!("eval `1+1`, {rounds} rounds of {runs} calls (medians of rounds)");
    println!("  round trip p50: tether {tp50:.3} ms, jupyter {jp50:.3} ms, ratio {:.3}", tp50 / jp50);
    println!("  round trip p99: tether {tp99:.3} ms, jupyter {jp99:.3} ms, ratio {:.3}", tp99 / jp99);
    println!("  start to first result: tether {tc:.1} ms, jupyter {jc:.1} ms, ratio {:.3}", tc / jc);
}
