//! Property and fuzz tests over the router's argument handling — steps 1–4
//! of every call (registered, on the surface, approved, arguments parse),
//! through [`Runtime::check`], which drops the work unpolled — for every
//! registered tool, and path confinement for every path argument.
//!
//! Deterministic: a hand-written splitmix64 seeded from [`DEFAULT_SEED`]
//! (`TETHER_FUZZ_SEED=N` picks another); every failure names the seed and
//! the case. Run with `--nocapture` for the figures BENCHMARKS.md quotes.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::common::{Harness, Rng};
use serde_json::{Map, Value, json};
use tether::{Level, Runtime, Surface, ToolResult};
use tether_actors::question::port::ChannelPort;
use tether_actors::workers::Tier;
use tether_actors::workers::command::CommandBackend;

mod arguments;
mod deep;
mod paths;
mod schema;
mod values;

use arguments::*;
use schema::*;
use values::*;

pub(super) const DEFAULT_SEED: u64 = 0x7e7e_f022_5eed_0001;
/// Random cases of the main loop; the deep, huge and path passes add theirs.
pub(super) const RANDOM_CASES: usize = 100_000;
/// Checks in flight at once.
pub(super) const CHUNK: usize = 256;
/// Nesting of the deep cases.
pub(super) const DEEP: usize = 10_000;
/// Length of the huge strings.
pub(super) const HUGE: usize = 1 << 20;
/// What a refused path says.
pub(super) const OUTSIDE: &str = "outside the working directory";
/// How a path through a dangling symlink is refused (its target, inside
/// or out, cannot be checked).
pub(super) const DANGLING: &str = "whose target does not exist";
/// How a path holding a NUL byte is refused (before it can be resolved).
pub(super) const NUL: &str = "the path holds a NUL byte";

/// Whether `text` is a confinement refusal: outside, through a dangling
/// link, or a path no file can have.
pub(super) fn confinement_refusal(text: &str) -> bool {
    text.contains(OUTSIDE) || text.contains(DANGLING) || text.contains(NUL)
}

pub(super) fn seed() -> u64 {
    std::env::var("TETHER_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEED)
}
