//! Fault injection against real programs: language servers SIGKILLed
//! mid-request, kernels killed three ways, runaway cells under a short
//! idle budget, `resolve` racing external writers, debug sessions losing
//! their adapter, their debuggee or their time-to-live, and a thousand
//! outside edits interleaved with queries.
//!
//! Every test prints one `fault:` line with its figure (for BENCHMARKS.md).
//! A missing program fails its test with the install command; none is
//! skipped. Orphans are counted by process identity (pid and start time,
//! so a recycled pid is never mistaken for a survivor) and by process
//! group; zombies count as gone — nothing reaps them in this sandbox.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::{Harness, Rng, real_python, require};
use serde_json::{Value, json};
use tether::{Resource, ToolResult};
use tether_actors::process;

mod debug;
mod kernels;
mod outside_edits;
mod resolve;
mod servers;

const D: &str = "a cell for the fault injection tests";

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

fn sigkill(pid: u32) {
    assert!(pid > 1, "refusing to signal pid {pid}");
    // SAFETY: kill(2) on a pid this test read from the supervision tree.
    unsafe { kill(pid as i32, 9) };
}

// ---------------------------------------------------------------------------
// Processes: identity, liveness, process groups.

/// A process as identified by its pid and its start time (clock ticks
/// since boot), so that a recycled pid is not the same process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Proc {
    pid: u32,
    start: u64,
}

/// The process now running as `pid`, if any (a zombie counts as gone).
fn track(pid: u32) -> Option<Proc> {
    process::stat(pid).filter(|s| s.is_live()).map(|s| Proc { pid, start: s.start })
}

/// Whether that very process still runs (not a zombie, not a recycled pid).
fn alive(p: Proc) -> bool {
    process::stat(p.pid).is_some_and(|s| s.start == p.start && s.is_live())
}

/// Live processes of the group `leader` led, started while it could have
/// started them (after the leader; before any new process took its pid).
fn group_survivors(leader: Proc) -> Vec<u32> {
    let reused_at = process::stat(leader.pid).map(|s| s.start).filter(|s| *s != leader.start);
    process::group_members(leader.pid)
        .into_iter()
        .filter(|(_, s)| s.start >= leader.start && reused_at.is_none_or(|r| s.start < r))
        .map(|(pid, _)| pid)
        .collect()
}

/// The live members of process group `pgid` now.
fn group_now(pgid: u32) -> Vec<Proc> {
    process::group_members(pgid).into_iter().map(|(pid, s)| Proc { pid, start: s.start }).collect()
}

/// Every process (and group) a test saw, to be checked gone at the end.
#[derive(Default)]
struct Ledger {
    procs: BTreeMap<Proc, String>,
    groups: BTreeMap<Proc, String>,
}

impl Ledger {
    /// Records `leader`, the group it leads and every process in that group now.
    fn add_group(&mut self, leader: u32, what: &str) {
        if let Some(p) = track(leader) {
            self.procs.insert(p, what.to_string());
            self.groups.insert(p, what.to_string());
        }
        for p in group_now(leader) {
            self.procs.entry(p).or_insert_with(|| format!("a process in the group of {what}"));
        }
    }

    /// Waits for every tracked process to go, prints the test's figure
    /// (`figure` gets "N orphans of M processes tracked") and fails if any
    /// is left.
    fn finish(&self, figure: impl FnOnce(&str) -> String) {
        let orphans = self.orphans(Duration::from_secs(3));
        println!("{}", figure(&format!("{} orphans of {} processes tracked", orphans.len(), self.len())));
        assert!(orphans.is_empty(), "left behind: {orphans:?}");
    }

    /// Survivors after waiting up to `grace` for them to go.
    fn orphans(&self, grace: Duration) -> Vec<String> {
        let deadline = Instant::now() + grace;
        loop {
            let mut left: Vec<String> = self
                .procs
                .iter()
                .filter(|(p, _)| alive(**p))
                .map(|(p, what)| format!("{what} (pid {})", p.pid))
                .collect();
            for (leader, what) in &self.groups {
                for pid in group_survivors(*leader) {
                    left.push(format!("pid {pid} in the process group of {what} ({})", leader.pid));
                }
            }
            left.sort();
            left.dedup();
            if left.is_empty() || Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Takes over everything `other` recorded, its descriptions prefixed.
    fn absorb(&mut self, other: Ledger, prefix: &str) {
        for (p, what) in other.procs {
            self.procs.insert(p, format!("{prefix}{what}"));
        }
        for (p, what) in other.groups {
            self.groups.insert(p, format!("{prefix}{what}"));
        }
    }

    fn len(&self) -> usize {
        self.procs.len()
    }
}

// ---------------------------------------------------------------------------
// The supervision tree.

fn collect<'a>(node: &'a Value, kind: &str, out: &mut Vec<&'a Value>) {
    if node["kind"] == kind {
        out.push(node);
    }
    for child in node["children"].as_array().into_iter().flatten() {
        collect(child, kind, out);
    }
}

/// Every node of `kind`, anywhere in the tree.
async fn nodes(h: &Harness, kind: &str) -> Vec<Value> {
    let tree = h.rt.tree().await.json();
    let mut out = Vec::new();
    collect(&tree, kind, &mut out);
    out.into_iter().cloned().collect()
}

/// The first node of `kind` satisfying `pick`.
async fn node(h: &Harness, kind: &str, pick: impl Fn(&Value) -> bool) -> Option<Value> {
    nodes(h, kind).await.into_iter().find(|n| pick(n))
}

fn pid(node: &Value) -> Option<u32> {
    node["pid"].as_u64().map(|p| p as u32)
}

// ---------------------------------------------------------------------------
// Figures.

fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    s.get(s.len() / 2).copied().unwrap_or_default()
}

fn max(v: &[Duration]) -> Duration {
    v.iter().copied().max().unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// A small deterministic PRNG (splitmix64).
/// The seed: `TETHER_FAULT_SEED` if set, else a fixed one.
fn seed() -> u64 {
    std::env::var("TETHER_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x7e7e_5eed)
}
