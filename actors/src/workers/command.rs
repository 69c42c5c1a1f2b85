//! The built-in worker backend: one command per tier, from `tether.toml`:
//!
//! ```toml
//! [vibe]
//! fast = ["./agents/fast.sh", "--quiet"]   # argv, run as is
//! good = "my-agent --model big"            # a string runs through `sh -c`
//! ```
//!
//! The brief goes to the command's stdin; its stdout is the result; its
//! stderr is kept (the last lines) for the report. Each run is its own
//! process group, killed with everything it started when the run is
//! dropped (kill, resend, end of the run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

use super::{Job, Run, RunOutput, Tier, WorkerBackend};
use crate::locate::resolve_binary;
use crate::lsp::config::CONFIG_FILE;
use crate::process;

/// The most of a worker's stdout kept as its result; the rest is counted.
pub const MAX_RESULT_BYTES: usize = 256 * 1024;

/// Extra environment for one worker's command, from the host: `tether
/// serve --http` hands each worker the run's URL and a token of its own,
/// so a worker that is itself an agent connects to the same warm run.
pub type WorkerEnv = std::sync::Arc<dyn Fn(&Job) -> WorkerGrant + Send + Sync>;

/// What a host grants one worker: environment for its command, and what to
/// undo when the worker's run ends (however it ends: exit, kill, or a
/// command that never started), such as revoking the token it was given.
#[derive(Default)]
pub struct WorkerGrant {
    /// Added to the command's environment.
    pub env: Vec<(String, String)>,
    /// Called once when the run ends.
    pub on_end: Option<Box<dyn FnOnce() + Send>>,
}

/// Runs a grant's `on_end` when dropped: with the run's future, whichever
/// way it ends.
struct OnEnd(Option<Box<dyn FnOnce() + Send>>);

impl Drop for OnEnd {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// Runs a configured command per tier.
#[derive(Clone)]
pub struct CommandBackend {
    workdir: PathBuf,
    /// Argv per tier, or why the configuration could not be read.
    commands: Result<BTreeMap<Tier, Vec<String>>, String>,
    /// The host's extra environment per worker.
    env: Option<WorkerEnv>,
    /// Whether the commands are the checkout's own (`tether.toml`), run
    /// only in a trusted checkout ([`crate::trust`]), asked at each spawn.
    from_checkout: bool,
}

impl std::fmt::Debug for CommandBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandBackend")
            .field("workdir", &self.workdir)
            .field("commands", &self.commands)
            .field("env", &self.env.is_some())
            .finish()
    }
}

impl CommandBackend {
    /// The commands `workdir/tether.toml` configures under `[vibe]`. A
    /// broken file is not an error here: every spawn then says what is wrong.
    pub fn load(workdir: &Path) -> Self {
        Self {
            workdir: workdir.to_path_buf(),
            commands: read_config(workdir),
            env: None,
            from_checkout: true,
        }
    }

    /// Each worker's command also gets what `env` returns for its job.
    pub fn with_env(mut self, env: WorkerEnv) -> Self {
        self.env = Some(env);
        self
    }

    /// Commands given directly (hosts, tests).
    pub fn with_commands(workdir: &Path, commands: BTreeMap<Tier, Vec<String>>) -> Self {
        Self { workdir: workdir.to_path_buf(), commands: Ok(commands), env: None, from_checkout: false }
    }

    /// The tiers with a command.
    pub fn tiers(&self) -> Vec<Tier> {
        self.commands.as_ref().map(|c| c.keys().copied().collect()).unwrap_or_default()
    }
}

fn read_config(workdir: &Path) -> Result<BTreeMap<Tier, Vec<String>>, String> {
    let text = match std::fs::read_to_string(workdir.join(CONFIG_FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {CONFIG_FILE}: {e}")),
    };
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        vibe: BTreeMap<String, toml::Value>,
    }
    let file: File = toml::from_str(&text).map_err(|e| format!("{CONFIG_FILE} is not valid: {e}"))?;
    let mut commands = BTreeMap::new();
    for (name, value) in file.vibe {
        let tier: Tier = name.parse().map_err(|e| format!("{CONFIG_FILE} [vibe]: {e}"))?;
        let argv = match value {
            toml::Value::String(line) => vec!["sh".to_string(), "-c".to_string(), line],
            toml::Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    other => Err(format!("{CONFIG_FILE} [vibe] {name}: `{other}` is not a string")),
                })
                .collect::<Result<Vec<_>, _>>()?,
            other => {
                return Err(format!(
                    "{CONFIG_FILE} [vibe] {name}: expected a command line or an argv array, got `{other}`"
                ));
            }
        };
        if argv.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(format!("{CONFIG_FILE} [vibe] {name}: the command is empty"));
        }
        commands.insert(tier, argv);
    }
    Ok(commands)
}

impl WorkerBackend for CommandBackend {
    fn start(&self, job: &Job) -> Result<Run, String> {
        let tier = job.tier.as_str();
        if self.from_checkout && !crate::trust::of(&self.workdir).is_trusted() {
            return Err(format!(
                "the `{tier}` worker's command is {CONFIG_FILE}'s `[vibe]`, a program of this checkout's own, and the checkout is not trusted: nothing was started. `tether trust` (or `--trusted` for one run) lets it run"
            ));
        }
        let commands = self.commands.as_ref().map_err(Clone::clone)?;
        let argv = commands.get(&job.tier).ok_or_else(|| {
            format!(
                "the `{tier}` tier has no worker command; add `[vibe] {tier} = [\"your-agent\", \"--flag\"]` to {CONFIG_FILE}"
            )
        })?;
        let program = resolve_binary(&argv[0], &self.workdir, &self.workdir).map_err(|tried| {
            let shown: Vec<String> = tried.iter().take(3).map(|p| p.display().to_string()).collect();
            format!(
                "the `{tier}` tier's command `{}` was not found (tried {}{}); fix `[vibe] {tier}` in {CONFIG_FILE}",
                argv[0],
                shown.join(", "),
                if tried.len() > 3 { ", …" } else { "" }
            )
        })?;
        let mut env = vec![
            ("TETHER_WORKER_ID".to_string(), job.worker_id.clone()),
            ("TETHER_WORKER_TIER".to_string(), tier.to_string()),
        ];
        let grant = self.env.as_ref().map(|grant| grant(job)).unwrap_or_default();
        env.extend(grant.env);
        let on_end = OnEnd(grant.on_end);
        let (exit_tx, exit_rx) = oneshot::channel();
        let spawned = process::spawn_with_env(&program, &argv[1..], &self.workdir, &env, move |info| {
            let _ = exit_tx.send(info);
        })
        .map_err(|e| format!("the `{tier}` tier's command `{}` did not start: {e}", argv[0]))?;
        let process::Spawned { mut stdin, mut stdout, pid, guard, stderr: _ } = spawned;
        let brief = job.brief.clone();
        let who = format!("the `{tier}` worker command `{}`", argv[0]);
        let done = async move {
            // Dropped with the run: the whole group goes, and what the host
            // granted the worker is undone.
            let _guard = guard;
            let _on_end = on_end;
            // Writing and reading at once: a worker that answers before
            // reading all of a long brief must not deadlock on full pipes.
            let write = async move {
                let _ = stdin.write_all(brief.as_bytes()).await;
                drop(stdin);
            };
            let read = async move {
                let mut kept = Vec::new();
                let mut dropped = 0usize;
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    match stdout.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let room = MAX_RESULT_BYTES.saturating_sub(kept.len());
                            kept.extend_from_slice(&buf[..n.min(room)]);
                            dropped += n.saturating_sub(room);
                        }
                    }
                }
                (kept, dropped)
            };
            let ((), (kept, dropped)) = tokio::join!(write, read);
            let exit = exit_rx.await.map_err(|_| format!("{who} vanished without an exit status"))?;
            if exit.code != Some(0) {
                return Err(exit.describe(&who));
            }
            let mut result = String::from_utf8_lossy(&kept).into_owned();
            if dropped > 0 {
                result.push_str(&format!("\n… {dropped} more bytes of output were dropped"));
            }
            Ok(RunOutput { result, stderr_tail: exit.stderr_tail })
        };
        Ok(Run { pid: Some(pid), done: Box::pin(done) })
    }

    fn name(&self) -> String {
        let tiers: Vec<&str> = self.tiers().iter().map(|t| t.as_str()).collect();
        format!("commands ({})", if tiers.is_empty() { "none configured".into() } else { tiers.join(", ") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_argv_and_shell_lines_and_names_bad_entries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[vibe]\nfast = [\"./w.sh\", \"-q\"]\ngood = \"agent --big\"\n",
        )
        .unwrap();
        let c = read_config(dir.path()).unwrap();
        assert_eq!(c[&Tier::Fast], vec!["./w.sh", "-q"]);
        assert_eq!(c[&Tier::Good], vec!["sh", "-c", "agent --big"]);
        std::fs::write(dir.path().join(CONFIG_FILE), "[vibe]\nturbo = \"x\"\n").unwrap();
        assert!(read_config(dir.path()).unwrap_err().contains("`turbo` is not a tier"));
        std::fs::write(dir.path().join(CONFIG_FILE), "[vibe]\nfast = []\n").unwrap();
        assert!(read_config(dir.path()).unwrap_err().contains("empty"));
    }
}
