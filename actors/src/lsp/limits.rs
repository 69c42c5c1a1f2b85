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
//!
//! A server idle longer than the limit is shut down cleanly (`shutdown`,
//! `exit`, then killed after a bounded wait). When the servers together
//! hold more than the budget — checked every [`BUDGET_CHECK_EVERY`], and
//! before a server starts, against what it holds once started — the least
//! recently used idle one is stopped first. The next call for its root
//! starts it again, and that answer says it was stopped and why. A
//! server that holds more once started than the whole budget is refused,
//! with both sizes.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::config::LspSection;
use super::entry::ServerConfig;
use super::key::ServerKey;

/// What a running server holds and when it was last used.
#[derive(Debug, Clone)]
pub struct UsageReport {
    pub key: ServerKey,
    /// The resident memory of its process group, in bytes.
    pub memory: u64,
    pub last_used: Instant,
    /// Requests it has not answered yet.
    pub pending: u64,
}

/// The share of the machine's memory the servers may hold when
/// `tether.toml` names no budget: a quarter, so a run beside the user's
/// own editor, build and browser leaves them room.
pub const DEFAULT_BUDGET_SHARE: u64 = 4;
/// How long a server may sit idle when `tether.toml` names no limit.
pub const DEFAULT_IDLE_LIMIT: Duration = Duration::from_secs(30 * 60);
/// The budget assumed when the machine's memory cannot be read.
const FALLBACK_MACHINE_MEMORY: u64 = 8 << 30;
/// What a server without a `start_memory_mb` figure is taken to hold once
/// started, in MiB.
pub const DEFAULT_START_MEMORY_MB: u64 = 256;
/// How recently a server must not have been used to be stopped for the
/// budget: one used this recently is likely serving a call now.
pub const IN_USE: Duration = Duration::from_secs(5);

/// About what `server` holds once started, in bytes.
pub fn start_memory(server: &ServerConfig) -> u64 {
    server.start_memory_mb.unwrap_or(DEFAULT_START_MEMORY_MB) << 20
}

/// How often the supervisor compares what the servers hold with the budget.
pub const BUDGET_CHECK_EVERY: Duration = Duration::from_secs(1);
/// The longest a server's idle check waits between two looks.
const IDLE_CHECK_MAX: Duration = Duration::from_secs(30);
/// The shortest (a limit of seconds, as a test sets).
const IDLE_CHECK_MIN: Duration = Duration::from_millis(200);

/// How often a server looks whether it has been idle past `limit`: a
/// quarter of it, within bounds, so it stops at most a quarter late.
pub fn idle_check_every(limit: Duration) -> Duration {
    (limit / 4).clamp(IDLE_CHECK_MIN, IDLE_CHECK_MAX)
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
            Some(minutes) if minutes.is_finite() && minutes > 0.0 => {
                Some(Duration::from_secs_f64(minutes * 60.0))
            }
            Some(_) => None,
            None => Some(DEFAULT_IDLE_LIMIT),
        };
        Limits { memory_budget, budget_from, idle_limit }
    }

    /// Why a server that holds about `start` once started cannot run under
    /// this budget, if it cannot.
    pub fn refuses(&self, server: &str, start: u64) -> Option<String> {
        (start > self.memory_budget).then(|| {
            format!(
                "{server} holds about {} once started, more than the run's whole budget for language servers, {} ({}); raise [lsp] memory_budget_mb in tether.toml",
                size(start),
                size(self.memory_budget),
                self.budget_from
            )
        })
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

/// Which idle servers to stop, least recently used first, so that the
/// servers hold no more than `budget` with `need` more bytes to come (a
/// server about to start, `except`): each chosen one was not used within
/// [`IN_USE`] and owes no answer. Fewer than enough when the rest are in
/// use.
pub fn to_stop<'a>(
    usage: &'a [UsageReport],
    need: u64,
    budget: u64,
    except: Option<&ServerKey>,
) -> Vec<&'a UsageReport> {
    let mut held: u64 = usage.iter().map(|u| u.memory).sum();
    let mut idle: Vec<&UsageReport> = usage
        .iter()
        .filter(|u| Some(&u.key) != except && u.pending == 0 && u.last_used.elapsed() >= IN_USE)
        .collect();
    idle.sort_by_key(|u| u.last_used);
    let mut chosen = Vec::new();
    for u in idle {
        if held.saturating_add(need) <= budget {
            break;
        }
        held -= u.memory;
        chosen.push(u);
    }
    chosen
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
    fn the_least_recently_used_idle_servers_are_stopped_until_the_rest_fit() {
        use super::super::server::{ServerKey, UsageReport};
        let now = std::time::Instant::now();
        let report = |server: &str, mib: u64, ago: u64, pending: u64| UsageReport {
            key: ServerKey { server: server.into(), root: "/r".into() },
            memory: mib << 20,
            last_used: now - Duration::from_secs(ago),
            pending,
        };
        let usage = [
            report("pyright", 200, 60, 0),
            report("gopls", 100, 600, 0),
            report("jdtls", 500, 30, 0),
            report("clangd", 150, 900, 3),
            report("tsserver", 250, 1, 0),
        ];
        let names = |v: Vec<&UsageReport>| v.into_iter().map(|u| u.key.server.clone()).collect::<Vec<_>>();
        // 1,200 MiB held, 1,000 allowed: gopls (the oldest idle), then pyright.
        assert_eq!(names(to_stop(&usage, 0, 1000 << 20, None)), ["gopls", "pyright"]);
        // clangd owes answers and tsserver was just used: never chosen.
        assert_eq!(names(to_stop(&usage, 0, 100 << 20, None)), ["gopls", "pyright", "jdtls"]);
        // Room for a start, never the one starting.
        let jdtls = &usage[2].key;
        assert_eq!(names(to_stop(&usage, 300 << 20, 1200 << 20, Some(jdtls))), ["gopls", "pyright"]);
        assert!(to_stop(&usage, 0, 2000 << 20, None).is_empty());
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
        let half: LspSection = toml::from_str("idle_limit_minutes = 0.05\n").unwrap();
        assert_eq!(Limits::from_section(&half).idle_limit, Some(Duration::from_secs(3)));
        assert_eq!(idle_check_every(Duration::from_secs(3)), Duration::from_millis(750));
        assert_eq!(idle_check_every(Duration::from_secs(3600)), Duration::from_secs(30));
        let negative: LspSection = toml::from_str("idle_limit_minutes = -1\n").unwrap();
        assert!(negative.problem().unwrap().contains("give 0 (never stop an idle server) or more"));
        let nothing: LspSection = toml::from_str("memory_budget_mb = 0\n").unwrap();
        assert!(nothing.problem().unwrap().starts_with("[lsp] memory_budget_mb is 0"));
        let small = Limits::from_section(&toml::from_str("memory_budget_mb = 100\n").unwrap());
        let refusal = small.refuses("jdtls", 600 << 20).unwrap();
        assert!(refusal.starts_with("jdtls holds about 600 MiB once started, more than the run's whole budget for language servers, 100 MiB"), "{refusal}");
        assert_eq!(small.refuses("pyright", 90 << 20), None);
    }
}
