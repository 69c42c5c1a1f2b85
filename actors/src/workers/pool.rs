//! `WorkerPoolActor`: the workers of one run. Each worker's current run is
//! a future the actor owns (`ctx.spawn`), so killing it, resending its
//! brief, or stopping the pool drops the run — and with it the process
//! group of a command worker. A run that fails is recorded on its worker;
//! the pool never goes down with it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde::Serialize;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{Job, RunOutput, Tier, WorkerBackend};
use crate::describe::{ActorNode, Describe};

/// The most workers a run may have at once (running or finished).
pub const MAX_WORKERS: usize = 64;
/// How much of a result `vibe_list` shows per worker.
pub const LIST_RESULT_CHARS: usize = 300;

/// A worker's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerState {
    /// Its brief is running.
    Running,
    /// The last run finished with a result.
    Done,
    /// The last run failed (the error says why).
    Failed,
    /// Stopped by `vibe_kill`.
    Killed,
}

impl WorkerState {
    /// The state's name.
    pub fn as_str(&self) -> &'static str {
        match self {
            WorkerState::Running => "running",
            WorkerState::Done => "done",
            WorkerState::Failed => "failed",
            WorkerState::Killed => "killed",
        }
    }
}

/// Why a worker op could not be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerError {
    /// No worker has this id in the run; the ids there are.
    NoSuch { id: String, known: Vec<String> },
    /// The worker went away while the call waited for it.
    Gone { id: String },
    /// Its brief could not start, in its command's words.
    NotStarted(String),
    /// The run keeps [`MAX_WORKERS`] already; how many of them run.
    Full { running: usize },
}

/// What a caller sees of a worker.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerView {
    /// Its id (`w1`, …).
    pub id: String,
    /// The label it was spawned with.
    pub label: String,
    /// Its tier.
    pub tier: Tier,
    /// Its state.
    pub state: WorkerState,
    /// Milliseconds its current (or last) run has taken so far.
    pub elapsed_ms: u64,
    /// How many times its brief has run (1 + one per `vibe_send`).
    pub runs: u32,
    /// The OS process of the current run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The last result (its start, when `result_chars` says it was cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// How many characters the whole result has, when `result` is only
    /// its start (`vibe_list`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_chars: Option<usize>,
    /// Why the last run failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The last run's last stderr lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stderr_tail: Vec<String>,
}

/// Start a worker on a brief.
pub struct Spawn {
    /// What to do.
    pub brief: String,
    /// A short name for lists.
    pub label: String,
    /// How capable.
    pub tier: Tier,
    /// The conversation that spawned it.
    pub owner: String,
}

impl Message for Spawn {
    type Result = Result<WorkerView, WorkerError>;
}

/// Append to a worker's brief and run it again.
pub struct SendTo {
    /// The worker.
    pub id: String,
    /// What to append.
    pub message: String,
}

impl Message for SendTo {
    type Result = Result<WorkerView, WorkerError>;
}

/// Wait for a worker's run to end, at most `timeout`.
pub struct Wait {
    /// The worker.
    pub id: String,
    /// How long to wait.
    pub timeout: Duration,
    /// Cancelled when the caller stops waiting.
    pub cancel: CancellationToken,
}

/// How a wait ended.
#[derive(Debug, Clone)]
pub struct Waited {
    /// The worker as it is now.
    pub worker: WorkerView,
    /// Whether the wait ran out while the worker still runs.
    pub timed_out: bool,
}

impl Message for Wait {
    type Result = Result<Waited, WorkerError>;
}

/// Stop a worker and everything it started.
pub struct Kill {
    /// The worker.
    pub id: String,
}

impl Message for Kill {
    /// The worker, and whether it was running (so this kill stopped it).
    type Result = Result<(WorkerView, bool), WorkerError>;
}

/// Every worker, oldest first.
pub struct List;

impl Message for List {
    type Result = Vec<WorkerView>;
}

/// A run ended (sent by the run's own future).
struct Ended {
    id: String,
    generation: u64,
    outcome: Result<RunOutput, String>,
}

impl Message for Ended {
    type Result = ();
}

struct Worker {
    label: String,
    owner: String,
    tier: Tier,
    brief: String,
    state: WorkerState,
    run_started: Instant,
    run_ended: Option<Instant>,
    runs: u32,
    generation: u64,
    pid: Option<u32>,
    handle: Option<SpawnHandle>,
    last: Option<Result<RunOutput, String>>,
    waiters: Vec<oneshot::Sender<()>>,
}

impl Worker {
    fn view(&self, id: &str, result_chars: Option<usize>) -> WorkerView {
        let end = self.run_ended.unwrap_or_else(Instant::now);
        let (result, error, stderr_tail) = match &self.last {
            Some(Ok(out)) => (Some(out.result.clone()), None, out.stderr_tail.clone()),
            Some(Err(why)) => (None, Some(why.clone()), Vec::new()),
            None => (None, None, Vec::new()),
        };
        let (result, result_chars) = match result {
            Some(text) => {
                let (text, all) = bounded(text, result_chars);
                (Some(text), all)
            }
            None => (None, None),
        };
        WorkerView {
            id: id.to_string(),
            label: self.label.clone(),
            tier: self.tier,
            state: self.state.clone(),
            elapsed_ms: end.duration_since(self.run_started).as_millis() as u64,
            runs: self.runs,
            pid: self.pid.filter(|_| self.state == WorkerState::Running),
            result,
            result_chars,
            error,
            stderr_tail,
        }
    }

    fn wake(&mut self) {
        for w in self.waiters.drain(..) {
            let _ = w.send(());
        }
    }
}

/// `text`'s first `chars` characters, and its length when that cut it.
fn bounded(text: String, chars: Option<usize>) -> (String, Option<usize>) {
    let all = text.chars().count();
    match chars {
        Some(n) if all > n => (text.chars().take(n).collect(), Some(all)),
        _ => (text, None),
    }
}

/// The pool actor.
pub struct WorkerPoolActor {
    backend: Arc<dyn WorkerBackend>,
    workers: BTreeMap<u64, (String, Worker)>,
    next_id: u64,
    started: Instant,
    failed_runs: u64,
}

impl WorkerPoolActor {
    /// A pool running briefs through `backend`.
    pub fn new(backend: Arc<dyn WorkerBackend>) -> Self {
        Self { backend, workers: BTreeMap::new(), next_id: 1, started: Instant::now(), failed_runs: 0 }
    }

    fn find(&mut self, id: &str) -> Result<&mut Worker, WorkerError> {
        let known: Vec<String> = self.workers.values().map(|(id, _)| id.clone()).collect();
        let key = id.strip_prefix('w').and_then(|n| n.parse::<u64>().ok());
        match key.and_then(|k| self.workers.get_mut(&k)) {
            Some((_, w)) => Ok(w),
            None => Err(WorkerError::NoSuch { id: id.to_string(), known }),
        }
    }

    /// Starts the worker's brief; on failure the worker records why.
    fn run(&mut self, key: u64, ctx: &mut Context<Self>) -> Result<(), WorkerError> {
        let Some((id, w)) = self.workers.get_mut(&key) else { return Ok(()) };
        w.generation += 1;
        w.runs += 1;
        w.run_started = Instant::now();
        w.run_ended = None;
        let job = Job { worker_id: id.clone(), tier: w.tier, brief: w.brief.clone() };
        match self.backend.start(&job) {
            Ok(run) => {
                w.state = WorkerState::Running;
                w.pid = run.pid;
                let (id, generation) = (id.clone(), w.generation);
                let me = ctx.address();
                let handle = ctx.spawn(
                    async move {
                        let outcome = run.done.await;
                        me.do_send(Ended { id, generation, outcome });
                    }
                    .into_actor(self),
                );
                if let Some((_, w)) = self.workers.get_mut(&key) {
                    w.handle = Some(handle);
                }
                Ok(())
            }
            Err(why) => {
                w.state = WorkerState::Failed;
                w.run_ended = Some(Instant::now());
                w.last = Some(Err(why.clone()));
                w.pid = None;
                w.wake();
                self.failed_runs += 1;
                Err(WorkerError::NotStarted(why))
            }
        }
    }

    fn stop_run(w: &mut Worker, ctx: &mut Context<Self>) {
        if let Some(handle) = w.handle.take() {
            // Drops the run's future: its process group is killed.
            ctx.cancel_future(handle);
        }
        w.generation += 1;
    }

    fn key_of(id: &str) -> Option<u64> {
        id.strip_prefix('w').and_then(|n| n.parse().ok())
    }
}

impl Actor for WorkerPoolActor {
    type Context = Context<Self>;
}

impl Handler<Spawn> for WorkerPoolActor {
    type Result = Result<WorkerView, WorkerError>;

    fn handle(&mut self, msg: Spawn, ctx: &mut Self::Context) -> Self::Result {
        let running = self.workers.values().filter(|(_, w)| w.state == WorkerState::Running).count();
        if self.workers.len() >= MAX_WORKERS {
            return Err(WorkerError::Full { running });
        }
        let key = self.next_id;
        self.next_id += 1;
        let id = format!("w{key}");
        let worker = Worker {
            label: msg.label,
            owner: msg.owner,
            tier: msg.tier,
            brief: msg.brief,
            state: WorkerState::Running,
            run_started: Instant::now(),
            run_ended: None,
            runs: 0,
            generation: 0,
            pid: None,
            handle: None,
            last: None,
            waiters: Vec::new(),
        };
        self.workers.insert(key, (id.clone(), worker));
        if let Err(why) = self.run(key, ctx) {
            // A worker that could not start is not kept: nothing runs.
            self.workers.remove(&key);
            tracing::debug!(target: "tether_actors::workers", worker = %id, "worker did not start: {why:?}");
            return Err(why);
        }
        tracing::debug!(target: "tether_actors::workers", worker = %id, pid = ?self.workers[&key].1.pid, "worker started");
        Ok(self.workers[&key].1.view(&id, None))
    }
}

impl Handler<SendTo> for WorkerPoolActor {
    type Result = Result<WorkerView, WorkerError>;

    fn handle(&mut self, msg: SendTo, ctx: &mut Self::Context) -> Self::Result {
        let w = self.find(&msg.id)?;
        Self::stop_run(w, ctx);
        w.brief.push_str("\n\n");
        w.brief.push_str(&msg.message);
        let key = Self::key_of(&msg.id).unwrap_or_default();
        self.run(key, ctx)?;
        Ok(self.workers[&key].1.view(&msg.id, None))
    }
}

impl Handler<Wait> for WorkerPoolActor {
    type Result = ResponseActFuture<Self, Result<Waited, WorkerError>>;

    fn handle(&mut self, msg: Wait, _ctx: &mut Self::Context) -> Self::Result {
        let w = match self.find(&msg.id) {
            Ok(w) => w,
            Err(e) => return Box::pin(fut::ready(Err(e))),
        };
        if w.state != WorkerState::Running {
            return Box::pin(fut::ready(Ok(Waited { worker: w.view(&msg.id, None), timed_out: false })));
        }
        let (tx, rx) = oneshot::channel();
        w.waiters.push(tx);
        let (timeout, cancel, id) = (msg.timeout, msg.cancel, msg.id);
        Box::pin(
            async move {
                tokio::select! {
                    _ = rx => true,
                    () = tokio::time::sleep(timeout) => false,
                    () = cancel.cancelled() => false,
                }
            }
            .into_actor(self)
            .map(move |ended, act, _| {
                let key = Self::key_of(&id).unwrap_or_default();
                let (_, w) = act.workers.get(&key).ok_or_else(|| WorkerError::Gone { id: id.clone() })?;
                Ok(Waited { worker: w.view(&id, None), timed_out: !ended && w.state == WorkerState::Running })
            }),
        )
    }
}

impl Handler<Kill> for WorkerPoolActor {
    type Result = Result<(WorkerView, bool), WorkerError>;

    fn handle(&mut self, msg: Kill, ctx: &mut Self::Context) -> Self::Result {
        let w = self.find(&msg.id)?;
        let running = w.state == WorkerState::Running;
        if running {
            Self::stop_run(w, ctx);
            w.state = WorkerState::Killed;
            w.run_ended = Some(Instant::now());
            w.wake();
        }
        Ok((w.view(&msg.id, None), running))
    }
}

impl Handler<List> for WorkerPoolActor {
    type Result = MessageResult<List>;

    fn handle(&mut self, _msg: List, _ctx: &mut Self::Context) -> Self::Result {
        MessageResult(self.workers.values().map(|(id, w)| w.view(id, Some(LIST_RESULT_CHARS))).collect())
    }
}

impl Handler<Ended> for WorkerPoolActor {
    type Result = ();

    fn handle(&mut self, msg: Ended, _ctx: &mut Self::Context) {
        let key = Self::key_of(&msg.id).unwrap_or_default();
        let Some((_, w)) = self.workers.get_mut(&key) else { return };
        if w.generation != msg.generation {
            // A run that was stopped for a resend or a kill.
            return;
        }
        w.handle = None;
        w.run_ended = Some(Instant::now());
        w.state = if msg.outcome.is_ok() { WorkerState::Done } else { WorkerState::Failed };
        tracing::debug!(target: "tether_actors::workers", worker = %msg.id, ok = msg.outcome.is_ok(), "worker ended");
        if msg.outcome.is_err() {
            self.failed_runs += 1;
        }
        w.last = Some(msg.outcome);
        w.wake();
    }
}

impl Handler<Describe> for WorkerPoolActor {
    type Result = MessageResult<Describe>;

    fn handle(&mut self, _msg: Describe, _ctx: &mut Self::Context) -> Self::Result {
        let running = self.workers.values().filter(|(_, w)| w.state == WorkerState::Running).count();
        let mut node = ActorNode::new(
            "worker-pool",
            &self.backend.name(),
            "ready",
            self.started.elapsed().as_millis() as u64,
            running as u64,
        )
        .with_detail("workers", self.workers.len())
        .with_detail("failed_runs", self.failed_runs);
        for (id, w) in self.workers.values() {
            let view = w.view(id, Some(0));
            let mut child = ActorNode::new("worker", id, w.state.as_str(), view.elapsed_ms, 0)
                .with_detail("label", w.label.clone())
                .with_detail("tier", w.tier.as_str())
                .with_detail("runs", w.runs);
            child.pid = view.pid;
            if let Some(Err(why)) = &w.last {
                child.last_error = Some(why.clone());
            }
            node.children.push(child.owned_by(&w.owner));
        }
        MessageResult(node)
    }
}
