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
//!
//! - `output` — every line printed, and a reader that goes away
//!   (`tether status | head -1` ends quietly).
//! - `batch` — one JSON request a line in, one answer a line out.

mod batch;
pub(crate) mod output;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use output::{errln, outln};
use serde_json::{Value, json};
use tether_actors::question::terminal::TerminalPort;
use tether_actors::trust::Trust;
use tether_actors::workers::command::CommandBackend;

use crate::approval::ApprovalPolicy;
use crate::runtime::{DEFAULT_CONVERSATION, Runtime};
use crate::serve::TetherServer;
use crate::serve::elicit::{McpPort, PeerSlot};
use crate::spec::{Resource, Surface};

/// Exit code for a call whose tool reported an error.
pub(crate) const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code for bad usage.
pub(crate) const EXIT_USAGE: u8 = 2;
/// At SIGTERM/SIGINT, how long `serve --http` waits for its listener to
/// close (and its socket file to go) before the run stops regardless.
const SERVE_STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, Parser)]
#[command(name = "tether", version, about = "Tools bound to live resources, for coding agents")]
struct Cli {
    /// Working directory every path is confined to (before or after the
    /// command: `tether --workdir D status` or `tether status --workdir D`).
    #[arg(long, global = true, default_value = ".")]
    workdir: PathBuf,
    #[command(subcommand)]
    command: Command,
}

/// Options every command shares.
#[derive(Debug, Args, Clone)]
struct RunOpts {
    /// Set from the global `--workdir`.
    #[arg(skip)]
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
    /// Trust the working directory for this run only (recorded nowhere),
    /// for a host with its own trust step: its tether.toml commands and
    /// its .venv/bin may run. Without it, `tether trust` decides.
    #[arg(long)]
    trusted: bool,
    /// Leave a resource unconnected (repeatable): parsers.
    #[arg(long = "without", value_name = "RESOURCE")]
    without: Vec<Resource>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// JSON answers (`batch`, `call --json`) without their `data`: the
    /// text and images only, for reading in a terminal.
    #[arg(long)]
    text: bool,
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
        /// Print what would be installed, and install nothing.
        #[arg(long)]
        dry_run: bool,
        /// Languages (`php`) or server ids (`basedpyright`).
        names: Vec<String>,
    },
    /// Trust the working directory to run programs of its own (its
    /// tether.toml's servers, adapters and workers, its .venv/bin): lists
    /// what that allows, then records it outside the checkout.
    Trust {
        /// Every trusted directory.
        #[arg(long, conflicts_with = "revoke")]
        list: bool,
        /// Take the working directory's trust back.
        #[arg(long)]
        revoke: bool,
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
            errln!("tether: cannot start: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let code = rt.block_on(run(cli));
    // A blocking stdin read (the MCP transport after a signal) must not
    // hold the exit: every child is already stopped by now.
    rt.shutdown_background();
    output::exit_code(code, EXIT_TOOL_ERROR)
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
    if opts.trusted {
        builder = builder.trust(Trust::Trusted);
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
        errln!("tether: {e}");
        ExitCode::from(EXIT_USAGE)
    })
}

async fn run(cli: Cli) -> ExitCode {
    let workdir = cli.workdir;
    let mut command = cli.command;
    if let Command::Tools(opts)
    | Command::Call { opts, .. }
    | Command::Batch(opts)
    | Command::Tree(opts)
    | Command::Status(opts)
    | Command::Serve { opts, .. } = &mut command
    {
        opts.workdir = workdir.clone();
    }
    match command {
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
                    outln!("{:<12} {:<5} {lane:<8} {}", spec.name, spec.level.as_str(), spec.description);
                }
            }
            ExitCode::SUCCESS
        }
        Command::Call { opts, tool, args } => {
            let args: Value = match args.as_deref().map(serde_json::from_str).transpose() {
                Ok(v) => v.unwrap_or_else(|| json!({})),
                Err(e) => {
                    errln!(
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
                print_json(&batch::result_json(&tool, &result, !opts.text));
            } else {
                outln!("{}", result.text);
            }
            if result.is_error { ExitCode::from(EXIT_TOOL_ERROR) } else { ExitCode::SUCCESS }
        }
        Command::Batch(opts) => {
            let runtime = match start_runtime(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            batch::run(&runtime, opts.surface, !opts.text).await
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
                output::out(&tree.text());
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
                output::out(&report.text());
                let names: Vec<String> = runtime.tools(opts.surface).into_iter().map(|s| s.name).collect();
                outln!("tools on the {} surface: {}", opts.surface.as_str(), names.join(", "));
            }
            ExitCode::SUCCESS
        }
        Command::Install { dry_run, names } => {
            let workdir = match workdir.canonicalize() {
                Ok(w) => w,
                Err(e) => {
                    errln!("tether install: --workdir {}: {e}", workdir.display());
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            tokio::task::spawn_blocking(move || crate::install::run(&workdir, &names, dry_run))
                .await
                .unwrap_or(ExitCode::from(EXIT_TOOL_ERROR))
        }
        Command::Trust { list, revoke } => trust(&workdir, list, revoke),
        Command::Serve { opts, http: Some(addr), allow_remote, session_idle } => {
            let listen = match crate::serve::http::Listen::parse(&addr, allow_remote) {
                Ok(l) => l,
                Err(e) => {
                    errln!("tether serve: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let (token, file) = match crate::serve::http::token() {
                Ok(t) => t,
                Err(e) => {
                    errln!("tether serve: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            if let Some(file) = &file {
                errln!("tether serve: bearer token {token} (also in {}, mode 0600)", file.display());
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
                    errln!("tether serve: {e}");
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
                    errln!("tether serve: {e}");
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

/// `value` as one line of JSON on stdout.
fn print_json(value: &Value) {
    outln!("{}", serde_json::to_string(value).unwrap_or_default());
}

/// `tether trust`: what trusting the working directory allows, then the
/// record; `--list` every trusted directory; `--revoke` takes it back.
fn trust(workdir: &std::path::Path, list: bool, revoke: bool) -> ExitCode {
    let Some(config) = crate::trust::config_dir() else {
        errln!("tether trust: neither XDG_CONFIG_HOME nor HOME is set: there is nowhere to record trust");
        return ExitCode::from(EXIT_USAGE);
    };
    if list {
        return match crate::trust::list_in(&config) {
            Ok(entries) if entries.is_empty() => {
                outln!("no directory is trusted ({})", config.join(crate::trust::RECORD_FILE).display());
                ExitCode::SUCCESS
            }
            Ok(entries) => {
                for e in entries {
                    let toml =
                        if e.config.is_some() { "with its tether.toml as it was" } else { "no tether.toml" };
                    outln!("{} ({toml})", e.path.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("tether trust: {e}");
                ExitCode::from(EXIT_TOOL_ERROR)
            }
        };
    }
    let dir = match workdir.canonicalize() {
        Ok(dir) => dir,
        Err(e) => {
            errln!("tether trust: --workdir {}: {e}", workdir.display());
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if revoke {
        return match crate::trust::revoke_in(&config, &dir) {
            Ok(true) => {
                outln!("{} is no longer trusted: its own programs will not run", dir.display());
                ExitCode::SUCCESS
            }
            Ok(false) => {
                outln!("{} was not trusted", dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("tether trust: {e}");
                ExitCode::from(EXIT_TOOL_ERROR)
            }
        };
    }
    let allows = crate::trust::would_allow(&dir);
    if allows.is_empty() {
        outln!(
            "trusting {} allows: nothing of its own found now (a tether.toml or .venv added later is held back until trusted again)",
            dir.display()
        );
    } else {
        outln!("trusting {} allows:", dir.display());
        for line in &allows {
            outln!("  {line}");
        }
    }
    match crate::trust::trust_in(&config, &dir) {
        Ok(_) => {
            outln!(
                "trusted; recorded in {} (`tether trust --revoke` takes it back)",
                config.join(crate::trust::RECORD_FILE).display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("tether trust: {e}");
            ExitCode::from(EXIT_TOOL_ERROR)
        }
    }
}
