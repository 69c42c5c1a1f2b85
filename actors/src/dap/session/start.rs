//! Starting a session: the adapter launched (or the port of one that
//! already runs connected), then the handshake that configures it before
//! the program runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::Notify;

use dap_types::Capabilities;

use super::configure::{Target, configure};
use super::ops::settle;
use super::snapshot::snapshot;
use super::state::{AdapterState, Parent, State};
use super::targets;
use super::{
    ATTACH_CONNECT_WAIT, AttachSpec, Connection, DebugReply, DebugSessionActor, EXIT_REPORT_WAIT, Expire,
    Failure, INITIALIZED_WAIT, LaunchSpec, Lead, NODE_TEST, Note, RUN_WAIT, Settled,
};
use crate::dap::adapters::filters::{ASSERTIONS, choose_filters, offered_filters};
use crate::dap::adapters::{self, Adapter, AdapterConfig, Transport, Usable};
use crate::dap::client::{CONNECT_WAIT, Start, connect_tcp, connect_tcp_within};
use crate::process;
use crate::wire::dap::{DapClient, DapEvent, Ended};

use crate::dap::adapters::arguments::{attach_args, launch_args};
use crate::dap::adapters::js_debug;
use crate::dap::adapters::rdbg::{RDBG_SAYS, RDBG_WAITS, spawn_line};
use crate::dap::start_failure::{Handshake, StartFailure, Step, Stuck};

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// How a session reaches its adapter.
enum Reach {
    /// Start the adapter (stdio, or TCP on a port tether picks).
    Spawn(Box<Usable>),
    /// Connect to an adapter already listening on a loopback port.
    Connect(u16, Adapter),
}

/// A started adapter: its stdout and stdin when DAP goes over them, what
/// kills it, and its stderr tail.
struct Spawn {
    pipes: Option<(tokio::process::ChildStdout, tokio::process::ChildStdin)>,
    /// Set once the adapter waits for its client, for one that must not
    /// be connected before ([`RDBG_WAITS`]).
    waiting: Option<tokio::sync::watch::Receiver<bool>>,
    guard: process::KillGuard,
    stderr: process::StderrTail,
}

/// What the handshake settled: the answer, the adapter's capabilities and
/// the exception filters in force.
struct Handshaken {
    reply: DebugReply,
    caps: Capabilities,
    exceptions: Vec<String>,
}

impl DebugSessionActor {
    /// Starts the session's time-to-live, once its start has answered: the
    /// time an adapter takes to start on a busy machine is not the caller's
    /// to lose. Returns when it started, which the timer names so that a
    /// later session's is not ended by it.
    fn arm_ttl(&mut self, ctx: &mut Context<Self>) -> Instant {
        let started = Instant::now();
        let ttl = self.ttl;
        // Not `ctx.run_later`: a pending timer keeps an actor alive after
        // its conversation let go of it, and the adapter and debuggee with it.
        let me = ctx.address().downgrade();
        let timer = actix::spawn(async move {
            tokio::time::sleep(ttl).await;
            if let Some(me) = me.upgrade() {
                me.do_send(Expire { started });
            }
        });
        if let Some(earlier) = self.ttl_timer.replace(timer) {
            earlier.abort();
        }
        started
    }

    /// The adapter for a launch: by the program's extension, or debugpy
    /// for a module.
    fn launch_adapter(&self, spec: &LaunchSpec) -> Result<Usable, StartFailure> {
        let table = adapters::load(&self.workdir).map_err(StartFailure::Table)?;
        let here = spec.cwd.clone().unwrap_or_else(|| self.workdir.clone());
        let (config, probe): (Option<&AdapterConfig>, PathBuf) = match (&spec.program, &spec.module) {
            // A test directory, or an npm script: the project's package.json.
            (program, Some(_)) if spec.is_test_run() => {
                let probe = match program {
                    Some(p) if p.is_dir() => p.join("package.json"),
                    Some(p) => p.clone(),
                    None => here.join("package.json"),
                };
                (table.iter().find(|c| c.quirks.runs_test_scripts), probe)
            }
            (Some(program), _) => (adapters::for_program(&table, program), program.clone()),
            (None, Some(_)) => (table.iter().find(|c| c.quirks.runs_modules), here.join("__main__.py")),
            (None, None) => return Err(StartFailure::NothingToStart),
        };
        let config = config.ok_or_else(|| StartFailure::NoAdapterFor {
            file: self.rel(&probe),
            missing: adapters::missing_for(&probe),
        })?;
        adapters::choose(config, &probe, &self.workdir).map_err(StartFailure::Unavailable)
    }

    /// Starts a session: launches `launch` or attaches to `attach`;
    /// `kept` names the breakpoints it keeps from before.
    pub(super) fn start_session(
        &mut self,
        launch: Option<LaunchSpec>,
        attach: Option<AttachSpec>,
        kept: Option<Note>,
    ) -> AtomicResponse<Self, DebugReply> {
        let ready = |r: DebugReply| AtomicResponse::new(Box::pin(fut::ready(r)));
        // The connection to the adapter, once made: its process's exit
        // fails what waits on it with how the process ended.
        let adapter_client: Arc<std::sync::OnceLock<DapClient>> = Arc::default();
        let shared = Arc::new(AdapterState {
            state: Mutex::new(State::default()),
            targets: Mutex::new(Default::default()),
            changed: Notify::new(),
            op_cancel: Mutex::new(self.op_cancel.clone()),
        });
        // Attaching to a port connects straight to the adapter already
        // listening there (`debugpy --listen`, `dlv --headless`); attaching
        // to a pid, and launching, start an adapter of our own.
        let reach = match (&launch, &attach) {
            (
                _,
                Some(
                    spec @ (AttachSpec::DebugpyPort(port)
                    | AttachSpec::DelvePort(port)
                    | AttachSpec::RdbgPort(port)),
                ),
            ) => match adapters::attaching(spec.form()) {
                Some(adapter) => Reach::Connect(*port, adapter),
                None => return ready(start_failed(StartFailure::NoAdapterAttaches { form: spec.form() })),
            },
            (_, Some(spec)) => match adapters::for_attach(spec.form(), &self.workdir) {
                Ok(u) => Reach::Spawn(Box::new(u)),
                Err(why) => return ready(start_failed(why)),
            },
            (Some(spec), None) => match self.launch_adapter(spec) {
                Ok(u) => Reach::Spawn(Box::new(u)),
                Err(why) => return ready(start_failed(why)),
            },
            (None, None) => return ready(start_failed(StartFailure::NothingToStart)),
        };
        tracing::debug!(
            target: "tether_actors::dap",
            mode = if launch.is_some() { "launch" } else { "attach" },
            "session starting"
        );
        let (adapter, name, port, spawned) = match reach {
            Reach::Connect(port, adapter) => {
                (adapter, format!("{} at 127.0.0.1:{port}", adapter.id), Some(port), None)
            }
            Reach::Spawn(usable) => {
                let config = &usable.config;
                let port = match (config.transport, free_port()) {
                    (Transport::Tcp, Ok(p)) => Some(p),
                    (Transport::Tcp, Err(e)) => {
                        let error = e.to_string();
                        return ready(start_failed(StartFailure::NoPort { adapter: config.id, error }));
                    }
                    (Transport::Stdio, _) => None,
                };
                let filters = self.exception_filters.as_deref();
                let line = spawn_line(
                    config,
                    port.unwrap_or(0),
                    launch.as_ref(),
                    filters,
                    &usable.root,
                    &self.workdir,
                );
                let line = match line {
                    Ok(line) => line,
                    Err(why) => return ready(start_failed(why)),
                };
                let exit_shared = shared.clone();
                let exit_client = adapter_client.clone();
                let is_debuggee = line.is_debuggee;
                let spawned = match process::spawn_with_env(
                    &usable.binary,
                    &line.args,
                    &line.cwd,
                    &line.env,
                    move |info| {
                        // The adapter that is the program: its exit is the program's.
                        if let (true, Some(code)) = (is_debuggee, info.code) {
                            exit_shared.apply(DapEvent::new("exited", json!({"exitCode": code})));
                        }
                        let why = info.describe("the debug adapter");
                        // Requests in flight fail with how it ended, not
                        // with the closed pipe that came first.
                        let followed = exit_shared.targets.lock().all.clone();
                        for client in exit_client.get().into_iter().chain(followed.iter()) {
                            client.close(&why);
                        }
                        exit_shared.ended(Ended::Exited(why));
                    },
                ) {
                    Ok(s) => s,
                    Err(e) => {
                        return ready(start_failed(StartFailure::NotSpawned {
                            binary: usable.binary.display().to_string(),
                            error: e.to_string(),
                        }));
                    }
                };
                let spawned = if is_debuggee {
                    let waiting = pump_program_output(spawned.stdout, &spawned.stderr, &shared);
                    Spawn {
                        pipes: None,
                        waiting: Some(waiting),
                        guard: spawned.guard,
                        stderr: spawned.stderr,
                    }
                } else {
                    Spawn {
                        pipes: Some((spawned.stdout, spawned.stdin)),
                        waiting: None,
                        guard: spawned.guard,
                        stderr: spawned.stderr,
                    }
                };
                (
                    config.adapter(),
                    format!("{} ({})", config.id, usable.binary.display()),
                    port,
                    Some(spawned),
                )
            }
        };
        let attached = attach.is_some();
        let test_run = launch.as_ref().is_some_and(LaunchSpec::is_test_run);
        let breakpoints = self.breakpoints.clone();
        let functions = self.functions.clone();
        let filters = self.exception_filters.clone();
        let workdir = self.workdir.clone();
        let program_text = match (&launch, &attach) {
            (Some(LaunchSpec { module: Some(m), program, .. }), _) if m == NODE_TEST => match program {
                Some(p) => format!("node --test {}", self.rel(p)),
                None => "node --test".to_string(),
            },
            (Some(spec @ LaunchSpec { module: Some(_), .. }), _) if spec.npm_script().is_some() => {
                format!("npm run {}", spec.npm_script().unwrap_or_default())
            }
            (Some(LaunchSpec { program: Some(p), .. }), _) => self.rel(p),
            (Some(LaunchSpec { module: Some(m), .. }), _) => format!("-m {m}"),
            _ => String::new(),
        };
        let program_text = match &attach {
            Some(spec) => super::Debuggee::Attached(spec.clone()),
            None => super::Debuggee::Launched(program_text),
        };
        let (pipes, waiting, guard, stderr) = match spawned {
            Some(s) => (s.pipes, s.waiting, Some(s.guard), s.stderr),
            None => (None, None, None, Default::default()),
        };
        let work = async move {
            let (client, mut events) = match (port, pipes) {
                (None, Some((stdout, stdin))) => DapClient::connect(&name, stdout, stdin),
                // A reach is a port or a process's pipes, always.
                (None, None) => return (Err(StartFailure::NothingToStart), guard, shared),
                // The user's own server on a port: nobody of ours to wait for.
                (Some(port), _) if guard.is_none() => {
                    match connect_tcp_within(port, ATTACH_CONNECT_WAIT).await {
                        Ok(stream) => {
                            let (r, w) = stream.into_split();
                            DapClient::connect(&name, r, w)
                        }
                        Err(e) => {
                            let error = e.to_string();
                            let waited = ATTACH_CONNECT_WAIT;
                            let failure =
                                StartFailure::NoServerOnPort { adapter: adapter.id, port, waited, error };
                            return (Err(failure), guard, shared);
                        }
                    }
                }
                (Some(port), _) => match connect_when_waiting(port, waiting, &shared).await {
                    Ok(stream) => {
                        let (r, w) = stream.into_split();
                        DapClient::connect(&name, r, w)
                    }
                    Err(e) => {
                        let failure = StartFailure::NotConnected {
                            adapter: name.clone(),
                            port,
                            error: e.to_string(),
                            stderr: stderr.lines(),
                        };
                        return (Err(failure), guard, shared);
                    }
                },
            };
            let _ = adapter_client.set(client.clone());
            // js-debug runs each debuggee as a child session on a
            // connection of its own: the launch goes to this one, the rest
            // to the child it asks for.
            // A launch follows every node process js-debug reaches (each
            // test file of `node --test DIR`, the processes of an npm
            // script); an attach has the one.
            let children = adapter.quirks.child_sessions;
            let follow = match (children, port, launch.is_some()) {
                (true, Some(port), true) => Some(targets::Follow { port, name: name.clone(), adapter }),
                _ => None,
            };
            let (client, parent, child_launch) = match (children, port) {
                (true, Some(port)) => {
                    let first = (launch.as_ref(), attach.as_ref());
                    match js_debug::child(
                        &client,
                        &mut events,
                        port,
                        &name,
                        adapter,
                        first,
                        &workdir,
                        RUN_WAIT,
                    )
                    .await
                    {
                        Ok((child, child_events, configuration)) => {
                            // The program's output (and a logpoint's) comes
                            // on the parent connection, the rest on the child's.
                            let parent_events = std::mem::replace(&mut events, child_events);
                            shared.state.lock().parent = Parent::Open;
                            targets::pump_parent(shared.clone(), parent_events, follow.clone());
                            (child, Some(client), Some(configuration))
                        }
                        Err(stuck) => {
                            return (Err(stuck_in(adapter, stuck, Vec::new(), Vec::new())), guard, shared);
                        }
                    }
                }
                _ => (client, None, None),
            };
            {
                let mut t = shared.targets.lock();
                t.breakpoints = breakpoints.clone();
                t.functions = functions.clone();
                t.workdir = workdir.clone();
            }
            if follow.is_some() {
                shared.targets.lock().join(&client, false);
            }
            targets::pump(shared.clone(), client.clone(), events, follow);
            let config = Configuration { filters: filters.as_deref(), workdir: &workdir, child_launch };
            let result = handshake(&client, &shared, adapter, launch, attach, config).await;
            match result {
                Ok(started) => (Ok((client, parent, started)), guard, shared),
                Err(stuck) => {
                    // What the adapter said of it (delve's build errors,
                    // why an attach was refused), then its own stderr.
                    let said = shared.state.lock().said_at_start();
                    let tail = stderr.lines();
                    let tail = tail[tail.len().saturating_sub(STDERR_QUOTED)..].to_vec();
                    (Err(stuck_in(adapter, stuck, said, tail)), guard, shared)
                }
            }
        };
        AtomicResponse::new(Box::pin(work.into_actor(self).map(move |(result, guard, shared), act, ctx| {
            match result {
                Ok((client, parent, Handshaken { mut reply, caps, exceptions })) => {
                    let started = act.arm_ttl(ctx);
                    reply.notes.extend(kept);
                    act.ended = None;
                    act.unheard = false;
                    act.remember(&reply);
                    act.session = Some(Connection {
                        adapter,
                        caps,
                        exceptions,
                        program: program_text,
                        client,
                        parent,
                        shared,
                        guard,
                        attached,
                        test_run,
                        started,
                    });
                    reply
                }
                Err(e) => {
                    // A program tether attached to is the user's: never killed.
                    if let Some(debuggee) = shared.state.lock().debuggee().filter(|_| !attached) {
                        debuggee.kill();
                    }
                    drop(guard);
                    start_failed(e)
                }
            }
        })))
    }
}

/// What a new session is configured with before the program runs.
struct Configuration<'a> {
    /// The exception filters asked for (`None`: the default).
    filters: Option<&'a [String]>,
    workdir: &'a Path,
    /// The request of a child session the adapter asked for (js-debug's
    /// `startDebugging`: `launch` or `attach`, and its configuration),
    /// sent instead of the launch or attach spec's.
    child_launch: Option<(String, Value)>,
}

/// initialize → launch/attach (not awaited: debugpy answers it only after
/// configurationDone) → `initialized` → breakpoints, function breakpoints
/// and exception filters (DAP's order) → configurationDone → the launch answer → the first stop or exit, with
/// where every breakpoint bound.
async fn handshake(
    client: &DapClient,
    shared: &Arc<AdapterState>,
    adapter: Adapter,
    launch: Option<LaunchSpec>,
    attach: Option<AttachSpec>,
    config: Configuration<'_>,
) -> Result<Handshaken, Stuck> {
    let workdir = config.workdir;
    let test_run = launch.as_ref().is_some_and(LaunchSpec::is_test_run);
    let caps = client
        .initialize(adapter.id, false)
        .await
        .map_err(|e| Step::Request { request: "initialize", error: e.to_string() })?;
    shared.state.lock().exception_info = caps.supports_exception_info_request == Some(true);
    shared.targets.lock().caps = Some(caps.clone());
    let (how, args) = match (&launch, &attach, &config.child_launch) {
        (_, _, Some((request, child))) => {
            (if request == "attach" { Start::Attach } else { Start::Launch }, child.clone())
        }
        (Some(spec), _, None) => (Start::Launch, launch_args(adapter.quirks.launch, spec, workdir)),
        (None, Some(spec), None) => (Start::Attach, attach_args(spec, workdir)),
        // The session asks for one or the other, always.
        (None, None, None) => return Err(Step::Interrupted("nothing to launch or attach to".into()).into()),
    };
    let command = how.command();
    let answer = client.start_program(how, args, RUN_WAIT);
    let mut answer = tokio::spawn(answer);
    // Some adapters send `initialized` only once the launch worked (delve,
    // after building): a launch that fails is reported with the adapter's
    // own words at once, not after the wait for `initialized`.
    let mut answered = None;
    let initialized = shared.wait_for(INITIALIZED_WAIT, |s| s.initialized || s.closed.is_some());
    tokio::pin!(initialized);
    let initialized = tokio::select! {
        done = &mut initialized => done,
        joined = &mut answer => {
            match joined {
                Ok(Ok(body)) => answered = Some(body),
                Ok(Err(e)) => return Err(Step::Request { request: command, error: e.to_string() }.into()),
                Err(e) => return Err(Step::Interrupted(e.to_string()).into()),
            }
            initialized.await
        }
    };
    if !initialized {
        return Err(Step::NoEvent { event: "initialized", waited: INITIALIZED_WAIT }.into());
    }
    if shared.state.lock().closed.is_some() {
        // The pipe closes before the exit status is known: wait a moment
        // for it, so a crash at start says how the adapter ended.
        shared.wait_for(EXIT_REPORT_WAIT, |s| s.closed.as_ref().is_some_and(Ended::is_exit)).await;
        let how = shared.state.lock().closed.as_ref().map(|e| e.reason().to_string()).unwrap_or_default();
        return Err(Step::AdapterEnded(how).into());
    }
    // The exception filters chosen, sent with the rest.
    let mut chosen_notes = Vec::new();
    let offered = offered_filters(adapter.quirks, &caps, test_run);
    let exceptions = choose_filters(config.filters, &offered).unwrap_or_else(|why| {
        chosen_notes.push(Note::FiltersDefaulted(why.into()));
        choose_filters(None, &offered).unwrap_or_default()
    });
    shared.targets.lock().exceptions = exceptions.clone();
    if offered.iter().any(|(id, _)| id == ASSERTIONS) && !exceptions.iter().any(|f| f == ASSERTIONS) {
        chosen_notes.push(Note::AssertionsOff(exceptions.clone()));
    }
    let mut notes = configure(client, shared, adapter, &caps, Target::First).await;
    // What the filters fell back to reads before whether setting them failed.
    let at = notes.iter().position(|n| matches!(n, Note::FiltersNotSet(_))).unwrap_or(notes.len());
    notes.splice(at..at, chosen_notes);
    client
        .configuration_done()
        .await
        .map_err(|e| Step::Request { request: "configurationDone", error: e.to_string() })?;
    if answered.is_none() {
        match answer.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(Step::Request { request: command, error: e.to_string() }.into()),
            Err(e) => return Err(Step::Interrupted(e.to_string()).into()),
        }
    }
    let has_breakpoints = shared.state.lock().bindings.total() > 0;
    let mut reply = match &attach {
        // With breakpoints set, an attach waits for the first stop as a
        // launch does; without, the program runs on and the answer is at
        // once (stopped only if attaching stopped it).
        Some(spec) if has_breakpoints || matches!(spec, AttachSpec::RdbgPort(_)) => {
            settle(shared, client, 0, workdir, RUN_WAIT).await.led(Lead::Attached(spec.clone()))
        }
        Some(spec) => {
            let stop = shared.state.lock().stop.clone();
            match stop {
                Some(stop) => DebugReply::settled(snapshot(client, &stop, workdir).await),
                None => DebugReply::settled(Settled::Attached),
            }
            .led(Lead::Attached(spec.clone()))
        }
        None => settle(shared, client, 0, workdir, RUN_WAIT).await.led(Lead::Launched),
    };
    let view = shared.state.lock().bindings.view(workdir);
    // Where the breakpoints bound, unless the answer already said that
    // none did.
    if reply.as_settled().is_none_or(|s| s.none_bound().is_none()) && view.total() > 0 {
        reply.notes.push(Note::Bound(view.clone()));
    }
    reply.notes.extend(notes);
    reply.bound = Some(view);
    if reply.data.is_object() {
        reply.data["exception_filters"] = json!(exceptions);
    }
    Ok(Handshaken { reply, caps, exceptions })
}

/// A session that could not start.
fn start_failed(why: StartFailure) -> DebugReply {
    DebugReply::failed(Failure::Start(why))
}

/// The adapter's last stderr lines a failed handshake quotes, at most.
const STDERR_QUOTED: usize = 3;

/// A handshake of `adapter` that failed at `stuck`, with what the adapter
/// said meanwhile and its last stderr lines.
fn stuck_in(adapter: Adapter, stuck: Stuck, adapter_said: Vec<String>, stderr: Vec<String>) -> StartFailure {
    let (adapter, step, program_said) = (adapter.id, stuck.step, stuck.said);
    StartFailure::Handshake(Box::new(Handshake { adapter, step, program_said, adapter_said, stderr }))
}

/// Connects to `port`; with `waiting`, once it says the adapter waits
/// (within [`CONNECT_WAIT`], then regardless: the connection says what
/// went wrong).
async fn connect_when_waiting(
    port: u16,
    waiting: Option<tokio::sync::watch::Receiver<bool>>,
    shared: &AdapterState,
) -> std::io::Result<tokio::net::TcpStream> {
    if let Some(mut waiting) = waiting {
        // A program that ended (no `debug` gem, a syntax error) says why
        // in its exit: no wait for a line that never comes.
        let ended = shared.wait_for(CONNECT_WAIT, |s| s.closed.is_some());
        tokio::select! {
            _ = tokio::time::timeout(CONNECT_WAIT, waiting.wait_for(|w| *w)) => {}
            _ = ended => {
                let why = shared.state.lock().closed.as_ref().map(|e| e.reason().to_string()).unwrap_or_default();
                if !why.is_empty() {
                    return Err(std::io::Error::other(why));
                }
            }
        }
    }
    connect_tcp(port).await
}

/// The output of a program that is its own adapter (rdbg), read from its
/// pipes as the others' comes in `output` events; and when the gem says
/// it waits for the debugger ([`RDBG_WAITS`]).
fn pump_program_output(
    stdout: tokio::process::ChildStdout,
    stderr: &process::StderrTail,
    shared: &Arc<AdapterState>,
) -> tokio::sync::watch::Receiver<bool> {
    use tokio::io::AsyncBufReadExt;
    let output = |shared: &Arc<AdapterState>, category: &str, line: &str| {
        shared.apply(DapEvent {
            event: "output".into(),
            body: json!({"category": category, "output": format!("{line}\n")}),
        });
    };
    let err = shared.clone();
    let (waits, waiting) = tokio::sync::watch::channel(false);
    stderr.forward(move |line| {
        if line.starts_with(RDBG_WAITS) {
            waits.send_replace(true);
        } else if !line.starts_with(RDBG_SAYS) {
            output(&err, "stderr", line);
        }
    });
    let out = shared.clone();
    // The adapter talks on its port: stdout is the program's alone. Read
    // to the end, or the program dies of a closed pipe at its next write.
    tokio::spawn(async move {
        // Whatever the bytes: a line that is not UTF-8 must not end the
        // reading, or the program dies of a closed pipe at its next write.
        let mut reader = tokio::io::BufReader::new(stdout);
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match reader.read_until(b'\n', &mut raw).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&raw);
                    output(&out, "stdout", line.trim_end_matches(['\n', '\r']));
                }
            }
        }
    });
    waiting
}
