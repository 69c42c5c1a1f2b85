//! How much of the machine the run's language servers may hold, and for
//! how long one may sit idle: the budget a shared run keeps for days.
//!
//! ```toml
//! [lsp]
//! memory_budget_mb = 6144    # the servers together; default: a quarter of the machine's memory
//! idle_limit_minutes = 30    # a server idle this long is shut down; 0: never
//! ```
//!
//! A server's memory is the resident memory of its whole process group
//! (jdtls's JVM, typescript-language-server's tsserver, gopls's workers),
//! read from `/proc`.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The share of the machine's memory the servers may hold when
/// `tether.toml` names no budget: a quarter, so a run beside the user's
/// own editor, build and browser leaves them room.
pub const DEFAULT_BUDGET_SHARE: u64 = 4;
/// How long a server may sit idle when `tether.toml` names no limit.
pub const DEFAULT_IDLE_LIMIT: Duration = Duration::from_secs(30 * 60);
/// The budget assumed when the machine's memory cannot be read.
const FALLBACK_MACHINE_MEMORY: u64 = 8 << 30;

/// The `[lsp]` section of `tether.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspSection {
    memory_budget_mb: Option<u64>,
    idle_limit_minutes: Option<u64>,
}

/// The run's limits for its language servers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limits {
    /// What the servers together may hold, in bytes.
    pub memory_budget: u64,
    /// Where the budget comes from, in words ("tether.toml", "a quarter of
    /// this machine's 24.0 GiB").
    pub budget_from: String,
    /// How long a server may sit idle before it is shut down; `None`:
    /// never.
    #[serde(serialize_with = "seconds")]
    pub idle_limit: Option<Duration>,
}

fn seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs()),
        None => s.serialize_none(),
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_section(&LspSection::default())
    }
}

impl Limits {
    /// The limits `[lsp]` asks for, with the defaults where it is silent.
    pub fn from_section(section: &LspSection) -> Self {
        let (memory_budget, budget_from) = match section.memory_budget_mb {
            Some(mb) => (mb << 20, format!("tether.toml's [lsp] memory_budget_mb = {mb}")),
            None => {
                let (machine, known) = match machine_memory() {
                    Some(total) => (total, true),
                    None => (FALLBACK_MACHINE_MEMORY, false),
                };
                let from = if known {
                    format!("the default, a quarter of this machine's {}", size(machine))
                } else {
                    format!(
                        "the default, a quarter of {} (this machine's memory could not be read)",
                        size(machine)
                    )
                };
                (machine / DEFAULT_BUDGET_SHARE, from)
            }
        };
        let idle_limit = match section.idle_limit_minutes {
            Some(0) => None,
            Some(minutes) => Some(Duration::from_secs(minutes * 60)),
            None => Some(DEFAULT_IDLE_LIMIT),
        };
        Limits { memory_budget, budget_from, idle_limit }
    }

    /// One line for `lsp status`, `resources` and `tether status`: the
    /// budget, what the servers hold now (when given), and the idle limit.
    pub fn describe(&self, held: Option<u64>) -> String {
        let held = held.map(|h| format!("{} held of ", size(h))).unwrap_or_default();
        let idle = match self.idle_limit {
            Some(limit) => format!("a server idle for {} is shut down", minutes(limit)),
            None => "idle servers are kept (idle_limit_minutes = 0)".to_string(),
        };
        format!(
            "language servers: {held}a {} budget ({}); {idle}",
            size(self.memory_budget),
            self.budget_from
        )
    }
}

/// The `[lsp]` section of `workdir`'s `tether.toml`, or its problem.
pub fn load(workdir: &Path) -> Result<Limits, String> {
    super::config::lsp_section(workdir).map(|section| Limits::from_section(&section))
}

/// The machine's memory, from `/proc/meminfo`.
pub fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

pub use crate::describe::format_size as size;

/// A duration in whole minutes, or seconds when under one.
pub fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) { format!("{} min", s / 60) } else { format!("{s} s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_a_quarter_of_the_machine_and_half_an_hour() {
        let limits = Limits::default();
        let machine = machine_memory().expect("/proc/meminfo is readable here");
        assert_eq!(limits.memory_budget, machine / 4);
        assert!(limits.budget_from.contains("a quarter of this machine's"), "{}", limits.budget_from);
        assert_eq!(limits.idle_limit, Some(Duration::from_secs(1800)));
        let line = limits.describe(Some(300 << 20));
        assert!(line.starts_with("language servers: 300 MiB held of a "), "{line}");
        assert!(line.ends_with("a server idle for 30 min is shut down"), "{line}");
    }

    #[test]
    fn tether_toml_sets_both_and_zero_keeps_idle_servers() {
        let section: LspSection =
            toml::from_str("memory_budget_mb = 2048\nidle_limit_minutes = 0\n").unwrap();
        let limits = Limits::from_section(&section);
        assert_eq!(limits.memory_budget, 2 << 30);
        assert_eq!(limits.idle_limit, None);
        assert!(
            limits.describe(None).contains("a 2.0 GiB budget (tether.toml's [lsp] memory_budget_mb = 2048)")
        );
        assert!(toml::from_str::<LspSection>("memory_budget = 1\n").is_err());
    }
}
