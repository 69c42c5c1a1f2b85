//! The command line: `tether tools | call | batch | tree | status | install | serve`.
//!
//! The contract other tools build on: `call` prints the result text (or,
//! with `--json`, the result object) and exits 0, 1 when the tool reported
//! an error, 2 for bad usage. `batch` reads one JSON request a line and
//! writes one JSON answer a line, in order, flushed as each call finishes,
//! all in one run (staged edits live for the whole batch). Logs go to
//! stderr (`RUST_LOG=tether=debug`); stdout carries only results.
//!
//! The human is reached through the controlling terminal (`/dev/tty`, never
//! stdin or stdout) in `call` and `batch`, and through MCP elicitation in
//! `serve`.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use tether_actors::question::terminal::TerminalPort;
use tether_actors::workers::command::CommandBackend;

use crate::approval::ApprovalPolicy;
use crate::result::ToolResult;
use crate::runtime::{DEFAULT_CONVERSATION, Runtime};
use crate::serve::TetherServer;
use crate::serve::elicit::{McpPort, PeerSlot};
use crate::spec::{Resource, Surface};

/// Exit code for a call whose tool reported an error.
const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code for bad usage.
const EXIT_USAGE: u8 = 2;
/// At SIGTERM/SIGINT, how long `serve --http` waits for its listener to
/// close (and its socket file to go) before the run stops regardless.
const SERVE_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, Parser)]
#[command(name = "tether", version, about = "Tools bound to live resources, for coding agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options every command shares.
#[derive(Debug, Args, Clone)]
struct RunOpts {
    /// Working directory every path is confined to.
    #[arg(long, default_value = ".")]
    workdir: PathBuf,
    /// Surface the calls come from: full or read-only.
    #[arg(long, default_value = "full")]
    surface: Surface,
    /// Conversation id.
    #[arg(long, default_value = DEFAULT_CONVERSATION)]
    conversation: String,
    /// Approval policy for write/exec tools: auto, ask (a permission card
    /// first; refused when nobody can answer) or deny.
    #[arg(long, default_value = "auto")]
    approval: ApprovalPolicy,
    /// Where questions and permission cards go: `terminal` (the
    /// controlling terminal, when there is one) or `none`. `serve` always
    /// asks its MCP client.
    #[arg(long, default_value = "terminal", value_parser = ["terminal", "none"])]
    questions: String,
    /// Seconds the human has to answer a card.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    question_timeout: u64,
    /// Vibe mode: register the vibe_* tools, running workers with the
    /// commands `[vibe] fast/good` in tether.toml.
    #[arg(long)]
    vibe: bool,
    /// Leave a resource unconnected (repeatable): parsers.
    #[arg(long = "without", value_name = "RESOURCE")]
    without: Vec<Resource>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tools a surface sees, with their schemas.
    Tools(RunOpts),
    /// Make one call: tether call TOOL 'ARGS_JSON'.
    Call {
        #[command(flatten)]
        opts: RunOpts,
        /// The tool's name.
        tool: String,
        /// Its arguments as a JSON object (default `{}`).
        args: Option<String>,
    },
    /// Make many calls in one run: one JSON request a line on stdin.
    Batch(RunOpts),
    /// Print the supervision tree.
    Tree(RunOpts),
    /// What is connected and usable here, and why not.
    Status(RunOpts),
    /// Install language servers for the named languages or servers (or
    /// every language found here) into tether's tools prefix.
    Install {
        /// Working directory whose languages (and tether.toml) count.
        #[arg(long, default_value = ".")]
        workdir: PathBuf,
        /// Print what would be installed, and install nothing.
        #[arg(long)]
        dry_run: bool,
        /// Languages (`php`) or server ids (`basedpyright`).
        names: Vec<String>,
    },
    /// Serve one run over MCP: stdio until stdin closes, or with --http
    /// many sessions over streamable HTTP until SIGTERM/SIGINT.
    Serve {
        #[command(flatten)]
        opts: RunOpts,
        /// Serve MCP's streamable HTTP transport at IP:PORT (loopback unless
        /// --allow-remote) or unix:PATH, each session its own conversation.
        /// Every request needs the bearer token: TETHER_TOKEN, or one
        /// generated and written (mode 0600) to the file printed at start.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// With --http: allow an address other machines can reach.
        #[arg(long, requires = "http")]
        allow_remote: bool,
        /// With --http: seconds a session may stay idle before it ends
        /// (its conversation closed, its kernels killed).
        #[arg(long, requires = "http", default_value_t = crate::serve::http::SESSION_IDLE.as_secs(), value_parser = clap::value_parser!(u64).range(1..=604_800))]
        session_idle: u64,
    },
}

/// Where a run's cards go.
enum Human {
    /// The controlling terminal, if there is one and `--questions` allows it.
    Terminal,
    /// The MCP client, through elicitation.
    Mcp(PeerSlot),
    /// Each HTTP session's own client, through elicitation.
    Sessions(Arc<crate::serve::elicit::SessionsPort>),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tether: cannot start: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let code = rt.block_on(run(cli));
    // A blocking stdin read (the MCP transport after a signal) must not
    // hold the exit: every child is already stopped by now.
    rt.shutdown_background();
    code
}

fn start_runtime(opts: &RunOpts) -> Result<Runtime, ExitCode> {
    start_with(opts, Human::Terminal)
}

fn start_with(opts: &RunOpts, human: Human) -> Result<Runtime, ExitCode> {
    start_with_workers(opts, human, None)
}

/// As [`start_with`]; vibe workers' commands also get `worker_env`.
fn start_with_workers(
    opts: &RunOpts,
    human: Human,
    worker_env: Option<tether_actors::workers::command::WorkerEnv>,
) -> Result<Runtime, ExitCode> {
    let mut builder = Runtime::builder()
        .workdir(&opts.workdir)
        .conversation(&opts.conversation)
        .surface(opts.surface)
        .approval(opts.approval)
        .question_timeout(std::time::Duration::from_secs(opts.question_timeout));
    match human {
        Human::Mcp(peer) => builder = builder.questions(Arc::new(McpPort::new(peer)), "mcp client"),
        Human::Terminal if opts.questions == "terminal" => {
            if let Some(tty) = TerminalPort::open() {
                builder = builder.questions(Arc::new(tty), "terminal");
            }
        }
        Human::Sessions(port) => builder = builder.questions(port, "mcp sessions"),
        Human::Terminal => {}
    }
    if opts.vibe {
        let mut backend = CommandBackend::load(&opts.workdir);
        if let Some(env) = worker_env {
            backend = backend.with_env(env);
        }
        builder = builder.vibe(Arc::new(backend));
    }
    for resource in Resource::ALL {
        if !opts.without.contains(&resource) {
            builder = builder.connect(resource);
        }
    }
    builder.start().map_err(|e| {
        eprintln!("tether: {e}");
        ExitCode::from(EXIT_USAGE)
    })
}

async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Tools(opts) => {
            let runtime = match start_runtime(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            // As a model's tool list carries them; `help` and the MCP
            // resources hold the rest.
            let specs: Vec<_> = runtime.tools(opts.surface).iter().map(|s| s.for_model()).collect();
            if opts.json {
                print_json(&serde_json::to_value(&specs).unwrap_or_default());
            } else {
                for spec in specs {
                    let lane = if spec.parallel_safe { "parallel" } else { "serial" };
                    println!("{:<12} {:<5} {lane:<8} {}", spec.name, spec.level.as_str(), spec.description);
                }
            }
            ExitCode::SUCCESS
        }
        Command::Call { opts, tool, args } => {
            let args: Value = match args.as_deref().map(serde_json::from_str).transpose() {
                Ok(v) => v.unwrap_or_else(|| json!({})),
                Err(e) => {
                    eprintln!(
                        "tether call: ARGS_JSON is not valid JSON ({e}); pass one object, e.g. '{{\"pattern\": \"print($A)\"}}'"
                    );
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let runtime = match start_runtime(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let result = runtime.call(&tool, args).await;
            if opts.json {
                print_json(&result_json(&tool, &result));
            } else {
                println!("{}", result.text);
            }
            if result.is_error { ExitCode::from(EXIT_TOOL_ERROR) } else { ExitCode::SUCCESS }
        }
        Command::Batch(opts) => {
            let runtime = match start_runtime(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            batch(&runtime, opts.surface).await
        }
        Command::Tree(opts) => {
            let runtime = match start_runtime(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let tree = runtime.tree().await;
            if opts.json {
                print_json(&tree.json());
            } else {
                print!("{}", tree.text());
            }
            ExitCode::SUCCESS
        }
        Command::Status(opts) => {
            let runtime = match start_runtime(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let connected: Vec<Resource> = runtime.resources().iter().copied().collect();
            let lsp = if connected.contains(&Resource::LanguageServers) {
                runtime.call("lsp", json!({"action": "status"})).await.data
            } else {
                None
            };
            let report =
                crate::status::report(runtime.workdir(), runtime.conversation(), &connected, lsp.as_ref());
            if opts.json {
                print_json(&serde_json::to_value(&report).unwrap_or_default());
            } else {
                print!("{}", report.text());
                let names: Vec<String> = runtime.tools(opts.surface).into_iter().map(|s| s.name).collect();
                println!("tools on the {} surface: {}", opts.surface.as_str(), names.join(", "));
            }
            ExitCode::SUCCESS
        }
        Command::Install { workdir, dry_run, names } => {
            let workdir = match workdir.canonicalize() {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("tether install: --workdir {}: {e}", workdir.display());
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            tokio::task::spawn_blocking(move || crate::install::run(&workdir, &names, dry_run))
                .await
                .unwrap_or(ExitCode::from(EXIT_TOOL_ERROR))
        }
        Command::Serve { opts, http: Some(addr), allow_remote, session_idle } => {
            let listen = match crate::serve::http::Listen::parse(&addr, allow_remote) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("tether serve: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let (token, file) = match crate::serve::http::token() {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("tether serve: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            if let Some(file) = &file {
                eprintln!("tether serve: bearer token {token} (also in {}, mode 0600)", file.display());
            }
            let port = Arc::new(crate::serve::elicit::SessionsPort::default());
            let tokens = Arc::new(crate::serve::http::Tokens::new(token));
            let url = Arc::new(std::sync::OnceLock::new());
            let workers = crate::serve::http::worker_env(url.clone(), tokens.clone());
            let runtime = match start_with_workers(&opts, Human::Sessions(port.clone()), Some(workers)) {
                Ok(r) => Arc::new(r),
                Err(code) => {
                    if let Some(file) = file {
                        let _ = std::fs::remove_file(file);
                    }
                    return code;
                }
            };
            let stop = tokio_util::sync::CancellationToken::new();
            let serving = crate::serve::http::serve(
                runtime.clone(),
                crate::serve::http::Options {
                    surface: opts.surface,
                    listen,
                    session_idle: std::time::Duration::from_secs(session_idle),
                },
                tokens,
                port,
                url,
                stop.clone(),
            );
            tokio::pin!(serving);
            let served = tokio::select! {
                served = &mut serving => served,
                () = terminated() => {
                    // Let the listener close and remove its socket file.
                    stop.cancel();
                    tokio::time::timeout(SERVE_STOP_WAIT, &mut serving).await.unwrap_or(Ok(()))
                }
            };
            runtime.shutdown();
            if let Some(file) = file {
                let _ = std::fs::remove_file(file);
            }
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tether serve: {e}");
                    ExitCode::from(EXIT_TOOL_ERROR)
                }
            }
        }
        Command::Serve { opts, http: None, .. } => {
            let peer = PeerSlot::default();
            let runtime = match start_with(&opts, Human::Mcp(peer.clone())) {
                Ok(r) => Arc::new(r),
                Err(code) => return code,
            };
            // SIGTERM or SIGINT ends the run as closing stdin does: children first.
            let served = tokio::select! {
                served = TetherServer::new(runtime.clone(), opts.surface, peer).serve_stdio() => served,
                () = terminated() => Ok(()),
            };
            // Whatever still holds the runtime, its children go now.
            runtime.shutdown();
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tether serve: {e}");
                    ExitCode::from(EXIT_TOOL_ERROR)
                }
            }
        }
    }
}

/// Resolves on SIGTERM or SIGINT (never, if they cannot be watched).
fn terminated() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    // Listening starts here, not at the first poll: a select creates this
    // before it first polls the server, so a SIGTERM sent as soon as the
    // server says it listens is not lost (once tokio handles the signal,
    // one that arrives before a listener exists is dropped, not fatal).
    let listeners = (signal(SignalKind::terminate()), signal(SignalKind::interrupt()));
    async move {
        match listeners {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending().await,
        }
    }
}

/// The result object of the CLI contract.
fn result_json(tool: &str, result: &ToolResult) -> Value {
    json!({
        "tool": tool,
        "is_error": result.is_error,
        "text": result.text,
        "data": result.data,
        "images": result.images,
    })
}

fn print_json(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, value);
    let _ = writeln!(out);
    let _ = out.flush();
}

async fn batch(runtime: &Runtime, surface: Surface) -> ExitCode {
    let stdin = std::io::stdin();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("tether batch: cannot read stdin: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer_line(runtime, surface, n + 1, &line).await;
        print_json(&answer);
    }
    ExitCode::SUCCESS
}

async fn answer_line(runtime: &Runtime, surface: Surface, n: usize, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return bad_line(n, &format!("not JSON ({e})")),
    };
    if let Some(op) = request.get("op").and_then(Value::as_str) {
        return match op {
            "tree" => {
                let tree = runtime.tree().await;
                json!({"op": "tree", "text": tree.text(), "data": tree.json()})
            }
            "tools" => {
                let specs = runtime.tools(surface);
                let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                json!({"op": "tools", "text": names.join(", "), "data": specs})
            }
            other => bad_line(n, &format!("unknown op `{other}`; use \"tree\" or \"tools\"")),
        };
    }
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return bad_line(n, "expected {\"tool\": NAME, \"args\": {...}} or {\"op\": \"tree\"|\"tools\"}");
    };
    let args = request.get("args").cloned().unwrap_or_else(|| json!({}));
    let result = match request.get("conversation") {
        None | Some(Value::Null) => runtime.call(tool, args).await,
        Some(Value::String(conversation)) => runtime.call_in(conversation, tool, args).await,
        Some(other) => {
            return bad_line(n, &format!("`conversation` must be a string (a conversation id), got {other}"));
        }
    };
    result_json(tool, &result)
}

fn bad_line(n: usize, why: &str) -> Value {
    json!({
        "tool": null,
        "is_error": true,
        "text": format!("batch line {n}: {why}"),
        "data": null,
        "images": [],
    })
}
