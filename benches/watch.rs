//! What watching the working directory costs, on a tree of 20,000 files
//! in 1,000 directories: the first walk (and the watches it adds), the
//! memory it holds, the CPU it burns while nothing changes, the cost of a
//! sync point (what every `lsp` call pays first), and how a 500-file burst
//! is delivered. The same tree is measured in the stat-scan mode, whose
//! sync point is a walk.
//!
//! Run: `cargo bench --bench watch`. Set `WATCH_BENCH_IDLE_SECS` (default
//! 30) for the idle window.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tether_actors::watch::{Deliver, Preference, Watcher};

const FILES: usize = 20_000;
const DIRS: usize = 1_000;

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// CPU time (user + system) this process has used.
fn cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv =
        |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn tree(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("pkg{}/mod{d}", d % 20));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES / DIRS {
            std::fs::write(dir.join(format!("f{f}.py")), format!("x = {f}\n")).unwrap();
        }
    }
}

fn percentile(mut v: Vec<Duration>, p: usize) -> Duration {
    v.sort();
    v[(v.len() * p / 100).min(v.len() - 1)]
}

fn measure(root: &Path, preference: Preference, idle: Duration, tokio: &tokio::runtime::Runtime) {
    let mode = match preference {
        Preference::Events => "events",
        Preference::Scan => "scan",
    };
    let changes = Arc::new(AtomicUsize::new(0));
    let batches = Arc::new(AtomicUsize::new(0));
    let (c, b) = (changes.clone(), batches.clone());
    let deliver: Deliver = Arc::new(move |batch| {
        c.fetch_add(batch.changes.len(), Ordering::SeqCst);
        b.fetch_add(1, Ordering::SeqCst);
    });
    let rss_before = rss_kib();
    let started = Instant::now();
    let watcher = Watcher::start(root.to_path_buf(), preference, deliver);
    let handle = watcher.handle();
    let first = tokio.block_on(handle.sync());
    assert_eq!(first.note, None);
    let walk = started.elapsed();
    let status = handle.status();
    let rss_after = rss_kib();
    println!(
        "watch ({mode}): first walk of {} files in {} directories {} ms; RSS +{:.1} MiB",
        status.files,
        status.directories,
        walk.as_millis(),
        rss_after.saturating_sub(rss_before) as f64 / 1024.0
    );

    let cpu_before = cpu();
    std::thread::sleep(idle);
    let idle_cpu = cpu() - cpu_before;
    println!(
        "watch ({mode}): idle {} s: CPU {:.1} ms ({:.3} % of one core)",
        idle.as_secs(),
        idle_cpu.as_secs_f64() * 1000.0,
        idle_cpu.as_secs_f64() / idle.as_secs_f64() * 100.0
    );

    let rounds = if preference == Preference::Events { 2_000 } else { 20 };
    let mut syncs = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let s = tokio.block_on(handle.sync());
        assert_eq!(s.note, None);
        syncs.push(t.elapsed());
    }
    println!(
        "watch ({mode}): sync point with nothing changed: p50 {:.0} µs, p90 {:.0} µs ({rounds} rounds)",
        percentile(syncs.clone(), 50).as_secs_f64() * 1e6,
        percentile(syncs, 90).as_secs_f64() * 1e6
    );

    let burst = root.join("burst");
    std::fs::create_dir_all(&burst).unwrap();
    let (c0, b0) = (changes.load(Ordering::SeqCst), batches.load(Ordering::SeqCst));
    let t = Instant::now();
    for i in 0..500 {
        std::fs::write(burst.join(format!("b{i}.py")), "y = 1\n").unwrap();
    }
    let written = t.elapsed();
    let s = tokio.block_on(handle.sync());
    assert_eq!(s.note, None);
    let delivered = t.elapsed();
    println!(
        "watch ({mode}): a 500-file burst written in {} ms, delivered by the next sync point {} ms after its first write: {} changes in {} batch(es)",
        written.as_millis(),
        delivered.as_millis(),
        changes.load(Ordering::SeqCst) - c0,
        batches.load(Ordering::SeqCst) - b0
    );
    drop(watcher);
    std::fs::remove_dir_all(&burst).unwrap();
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let idle = Duration::from_secs(
        std::env::var("WATCH_BENCH_IDLE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(30),
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let t = Instant::now();
    tree(&root);
    println!(
        "watch: a tree of {FILES} files in {DIRS} directories written in {} ms",
        t.elapsed().as_millis()
    );
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    measure(&root, Preference::Events, idle, &tokio);
    measure(&root, Preference::Scan, idle.min(Duration::from_secs(5)), &tokio);
}
