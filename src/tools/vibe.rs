//! `vibe_spawn`, `vibe_send`, `vibe_wait`, `vibe_kill`, `vibe_list`: drive
//! background workers (S10). All read level — the gate belongs to the
//! workers' own tools, where editing happens — and registered only in
//! vibe mode. They talk to the run's worker pool.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_actors::workers::Tier;
use tether_actors::workers::pool::{
    Kill, List, MAX_WORKERS, SendTo, Spawn, Wait, WorkerError, WorkerPoolActor, WorkerState, WorkerView,
};

use crate::args::{in_range, parse};
use crate::handler::{CallContext, ToolError, ToolFuture, ToolHandler, schema_of};
use crate::result::ToolResult;
use crate::spec::{Level, ToolSpec};

/// How long `vibe_wait` waits when the call does not say.
pub const DEFAULT_WAIT_SECONDS: usize = 120;
/// The longest `vibe_wait` may wait.
pub const MAX_WAIT_SECONDS: usize = 1800;
/// The longest brief, label or message, in bytes.
pub const MAX_BRIEF_BYTES: usize = 256 * 1024;

/// The five tools over one pool.
/// The names of the vibe tools, as [`tools`] wires them.
pub const NAMES: [&str; 5] = ["vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"];

pub fn tools(pool: Addr<WorkerPoolActor>) -> Vec<Arc<dyn ToolHandler>> {
    vec![
        Arc::new(VibeSpawn { pool: pool.clone() }),
        Arc::new(VibeSend { pool: pool.clone() }),
        Arc::new(VibeWait { pool: pool.clone() }),
        Arc::new(VibeKill { pool: pool.clone() }),
        Arc::new(VibeList { pool }),
    ]
}

fn spec<T: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        level: Level::Read,
        parallel_safe: true,
        description: description.into(),
        input_schema: schema_of::<T>(),
        ..ToolSpec::default()
    }
}

fn not_empty(tool: &str, field: &str, text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::new(format!(
            "{tool}: argument `{field}` is empty; write what the worker should do"
        )));
    }
    if text.len() > MAX_BRIEF_BYTES {
        return Err(ToolError::new(format!(
            "{tool}: argument `{field}` is {} bytes; keep it under {MAX_BRIEF_BYTES} (point to files instead of pasting them)",
            text.len()
        )));
    }
    Ok(())
}

/// Why `tool` could not do what it was asked, and what to do next.
fn worker_error(tool: &str, e: &WorkerError) -> String {
    match e {
        WorkerError::NoSuch { id, known } => {
            let listing = if known.is_empty() { "there are none yet".to_string() } else { known.join(", ") };
            format!("{tool}: no worker `{id}` in this run (workers: {listing}); vibe_list shows them")
        }
        WorkerError::Gone { id } => format!("{tool}: worker `{id}` is gone"),
        WorkerError::NotStarted(why) => format!("{tool}: the worker did not start: {why}"),
        WorkerError::Full { running } => format!(
            "{tool}: this run already has {MAX_WORKERS} workers ({running} running), the most it keeps; kill or wait for some"
        ),
    }
}

fn pool_down(tool: &str, e: impl std::fmt::Display) -> ToolResult {
    ToolResult::error(format!("{tool}: the worker pool is not running ({e}); start a new run"))
}

/// One line about a worker.
fn line(w: &WorkerView) -> String {
    let mut s = format!(
        "{} [{}] {} — {} for {}",
        w.id,
        w.tier.as_str(),
        w.label,
        w.state.as_str(),
        seconds(w.elapsed_ms)
    );
    if w.runs > 1 {
        let _ = write!(s, " (run {})", w.runs);
    }
    s
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// A worker's full report: its line, then its result or error.
fn report(w: &WorkerView) -> String {
    let mut s = line(w);
    match (&w.state, &w.result, &w.error) {
        (_, _, Some(e)) => {
            let _ = write!(s, "\nerror: {e}");
        }
        (WorkerState::Done, Some(r), _) => {
            let _ = write!(s, "\nresult:\n{}", if r.is_empty() { "(empty)" } else { r });
            if let Some(all) = w.result_chars {
                let _ = write!(s, "… ({all} chars in all; vibe_wait shows it whole)");
            }
        }
        _ => {}
    }
    s
}

/// Arguments of `vibe_spawn`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    pub brief: String,
    pub label: String,
    pub tier: Option<String>,
}

struct VibeSpawn {
    pool: Addr<WorkerPoolActor>,
}

impl ToolHandler for VibeSpawn {
    fn spec(&self) -> ToolSpec {
        spec::<SpawnArgs>(
            "vibe_spawn",
            "Start a background worker on `brief`; answers its id. tier: fast (default) or good.\n\nStart a background worker on `brief` (goal, files, constraints, what done means); answers its id at once. `tier`: fast (default; mechanical work) or good (design, judgement, review).\n\n`label` is a short name for lists, 1 to 200 characters. The worker keeps running; follow with vibe_wait.",
        )
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let a: SpawnArgs = parse("vibe_spawn", args)?;
        not_empty("vibe_spawn", "brief", &a.brief)?;
        let label = a.label.trim().to_string();
        if label.is_empty() || label.len() > 200 {
            return Err(ToolError::new(
                "vibe_spawn: argument `label` must be 1 to 200 characters: a short name for lists",
            ));
        }
        let tier: Tier = match a.tier.as_deref() {
            None => Tier::Fast,
            Some(t) => t.parse().map_err(|e| ToolError::new(format!("vibe_spawn: argument `tier`: {e}")))?,
        };
        let pool = self.pool.clone();
        let owner = ctx.conversation.to_string();
        Ok(Box::pin(async move {
            match pool.send(Spawn { brief: a.brief, label, tier, owner }).await {
                Ok(Ok(w)) => ToolResult::text(format!(
                    "started worker {} [{}] {}; it runs in the background — vibe_wait {{\"worker_id\": \"{}\"}} for its result",
                    w.id,
                    w.tier.as_str(),
                    w.label,
                    w.id
                ))
                .with_data(&w),
                Ok(Err(why)) => ToolResult::error(worker_error("vibe_spawn", &why)),
                Err(e) => pool_down("vibe_spawn", e),
            }
        }))
    }
}

/// Arguments of `vibe_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    pub worker_id: String,
    pub message: String,
}

struct VibeSend {
    pool: Addr<WorkerPoolActor>,
}

impl ToolHandler for VibeSend {
    fn spec(&self) -> ToolSpec {
        spec::<SendArgs>(
            "vibe_send",
            "Add `message` to a worker's brief and rerun it.\n\nAdd `message` to a worker's brief and run it again (a run still going is stopped first); answers at once.",
        )
    }

    fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let a: SendArgs = parse("vibe_send", args)?;
        not_empty("vibe_send", "message", &a.message)?;
        let pool = self.pool.clone();
        Ok(Box::pin(async move {
            match pool.send(SendTo { id: a.worker_id, message: a.message }).await {
                Ok(Ok(w)) => ToolResult::text(format!(
                    "{} runs again with the message appended (run {}); vibe_wait for its result",
                    w.id, w.runs
                ))
                .with_data(&w),
                Ok(Err(why)) => ToolResult::error(worker_error("vibe_send", &why)),
                Err(e) => pool_down("vibe_send", e),
            }
        }))
    }
}

/// Arguments of `vibe_wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    pub worker_id: String,
    pub timeout_seconds: Option<usize>,
}

struct VibeWait {
    pool: Addr<WorkerPoolActor>,
}

impl ToolHandler for VibeWait {
    fn spec(&self) -> ToolSpec {
        spec::<WaitArgs>(
            "vibe_wait",
            "Wait for a worker's result.\n\nWait for a worker's result or error (`timeout_seconds` 1 to 1800, default 120); on timeout it keeps running.",
        )
    }

    fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let a: WaitArgs = parse("vibe_wait", args)?;
        let secs = match a.timeout_seconds {
            Some(s) => in_range("timeout_seconds", s, 1, MAX_WAIT_SECONDS)
                .map_err(|e| ToolError::new(format!("vibe_wait: {e}")))?,
            None => DEFAULT_WAIT_SECONDS,
        };
        let pool = self.pool.clone();
        let cancel = ctx.cancel.clone();
        Ok(Box::pin(async move {
            let wait = Wait { id: a.worker_id, timeout: Duration::from_secs(secs as u64), cancel };
            match pool.send(wait).await {
                Ok(Ok(w)) if w.timed_out => ToolResult::text(format!(
                    "{} is still running after {secs} s of waiting; it keeps running — vibe_wait again, vibe_send to redirect it, or vibe_kill to stop it",
                    line(&w.worker)
                ))
                .with_data(json!({"timed_out": true, "worker": w.worker})),
                Ok(Ok(w)) => {
                    let text = report(&w.worker);
                    let data = json!({"timed_out": false, "worker": w.worker});
                    match w.worker.state {
                        WorkerState::Failed => ToolResult::error(text).with_data(data),
                        _ => ToolResult::text(text).with_data(data),
                    }
                }
                Ok(Err(why)) => ToolResult::error(worker_error("vibe_wait", &why)),
                Err(e) => pool_down("vibe_wait", e),
            }
        }))
    }
}

/// Arguments of `vibe_kill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    pub worker_id: String,
}

struct VibeKill {
    pool: Addr<WorkerPoolActor>,
}

impl ToolHandler for VibeKill {
    fn spec(&self) -> ToolSpec {
        spec::<KillArgs>("vibe_kill", "Stop a worker and every process it started.")
    }

    fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let a: KillArgs = parse("vibe_kill", args)?;
        let pool = self.pool.clone();
        Ok(Box::pin(async move {
            match pool.send(Kill { id: a.worker_id }).await {
                Ok(Ok((w, true))) => {
                    ToolResult::text(format!("killed {} and every process it started; {}", w.id, line(&w)))
                        .with_data(&w)
                }
                Ok(Ok((w, false))) => {
                    ToolResult::text(format!("{} had already finished; nothing to stop", line(&w)))
                        .with_data(&w)
                }
                Ok(Err(why)) => ToolResult::error(worker_error("vibe_kill", &why)),
                Err(e) => pool_down("vibe_kill", e),
            }
        }))
    }
}

/// Arguments of `vibe_list` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {}

struct VibeList {
    pool: Addr<WorkerPoolActor>,
}

impl ToolHandler for VibeList {
    fn spec(&self) -> ToolSpec {
        spec::<ListArgs>(
            "vibe_list",
            "List workers and their state.\n\nThis run's workers: id, label, tier, state, elapsed time, the start of the last result.",
        )
    }

    fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolFuture, ToolError> {
        let _: ListArgs = parse("vibe_list", args)?;
        let pool = self.pool.clone();
        Ok(Box::pin(async move {
            match pool.send(List).await {
                Ok(workers) if workers.is_empty() => {
                    ToolResult::text("no workers in this run yet; vibe_spawn starts one").with_data(json!([]))
                }
                Ok(workers) => {
                    let text: Vec<String> = workers.iter().map(report).collect();
                    ToolResult::text(text.join("\n")).with_data(&workers)
                }
                Err(e) => pool_down("vibe_list", e),
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_error_names_the_ids_there_and_what_to_call() {
        let none = WorkerError::NoSuch { id: "w9".into(), known: Vec::new() };
        assert_eq!(
            worker_error("vibe_wait", &none),
            "vibe_wait: no worker `w9` in this run (workers: there are none yet); vibe_list shows them"
        );
        let full = WorkerError::Full { running: 3 };
        assert!(worker_error("vibe_spawn", &full).contains("already has 64 workers (3 running)"));
    }

    #[test]
    fn a_cut_result_says_how_long_it_is_and_where_it_is_whole() {
        let w = WorkerView {
            id: "w1".into(),
            label: "l".into(),
            tier: Tier::Fast,
            state: WorkerState::Done,
            elapsed_ms: 10,
            runs: 1,
            pid: None,
            result: Some("abc".into()),
            result_chars: Some(900),
            error: None,
            stderr_tail: Vec::new(),
        };
        assert!(
            report(&w).ends_with("result:\nabc… (900 chars in all; vibe_wait shows it whole)"),
            "{}",
            report(&w)
        );
    }
}
