//! rdbg, Ruby's `debug` gem, as tether runs it: the program is its own
//! adapter (`ruby -rdebug/open PROGRAM`, listening on the port in
//! `RUBY_DEBUG_PORT`), so its command line holds the program, its output
//! comes on its pipes, and it is connected only once it waits for the
//! debugger.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::super::configure::UNCAUGHT;
use super::super::state::AdapterState;
use super::super::{CONNECT_WAIT, LaunchSpec};
use crate::dap::adapters::AdapterConfig;
use crate::dap::client::connect_tcp;
use crate::process;
use crate::wire::dap::DapEvent;

/// How an adapter's process is started.
pub(super) struct SpawnLine {
    pub(super) args: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) cwd: PathBuf,
    /// Whether the process is the program (rdbg): its output and exit are
    /// the program's.
    pub(super) is_debuggee: bool,
}

/// The command line of `config` on `port` (`{port}` in its arguments).
/// rdbg is the program itself, started with the `debug` gem listening
/// (`ruby -rdebug/open PROGRAM ARGS`, the port in `RUBY_DEBUG_PORT`), in
/// postmortem mode unless the exception filters leave `uncaught` out.
pub(super) fn spawn_line(
    config: &AdapterConfig,
    port: u16,
    launch: Option<&LaunchSpec>,
    filters: Option<&[String]>,
    root: &Path,
    workdir: &Path,
) -> Result<SpawnLine, String> {
    let mut args: Vec<String> = config.args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
    if !config.quirks.program_is_adapter {
        return Ok(SpawnLine { args, env: Vec::new(), cwd: root.to_path_buf(), is_debuggee: false });
    }
    let Some(spec) = launch else { return Err("rdbg attaches by `port` only".into()) };
    let Some(program) = &spec.program else { return Err("rdbg launches a `program` (a .rb file)".into()) };
    if let Some(prelude) = unbuffered_prelude(config.id, root) {
        args.insert(0, format!("-r{}", prelude.display()));
    }
    args.push(program.display().to_string());
    args.extend(spec.args.iter().cloned());
    // The handshake sets the default for filters rdbg does not offer
    // (left from another adapter's session): the default has `uncaught`.
    let uncaught =
        filters.is_none_or(|f| f.iter().any(|f| f == UNCAUGHT || !RDBG_FILTERS.contains(&f.as_str())));
    let mut env: Vec<(String, String)> = vec![
        ("RUBY_DEBUG_PORT".into(), port.to_string()),
        ("RUBY_DEBUG_HOST".into(), "127.0.0.1".into()),
        ("RUBY_DEBUG_NO_COLOR".into(), "1".into()),
        ("RUBY_DEBUG_NO_RC".into(), "1".into()),
        // The gem prints the source and frames at its first stop to its
        // console protocol; debug 1.4 can do so on the new connection
        // before it has read that the client speaks DAP (a race in its
        // greeting), which breaks the framing. Nothing printed, no race.
        ("RUBY_DEBUG_SHOW_SRC_LINES".into(), "0".into()),
        ("RUBY_DEBUG_SHOW_FRAMES".into(), "0".into()),
        ("RUBY_DEBUG_POSTMORTEM".into(), if uncaught { "1" } else { "0" }.into()),
    ];
    env.extend(spec.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let cwd = spec.cwd.clone().unwrap_or_else(|| workdir.to_path_buf());
    Ok(SpawnLine { args, env, cwd, is_debuggee: true })
}

/// The exception filters of a rdbg session: tether's `uncaught`, the
/// `debug` gem's own.
const RDBG_FILTERS: [&str; 3] = [UNCAUGHT, "any", "RuntimeError"];

/// What rdbg's program requires first: Ruby buffers a pipe's output
/// until exit, so a stop would show none of what the program printed.
const RDBG_PRELUDE: &str = "# tether: the program's output unbuffered, so a stop shows what it printed\n$stdout.sync = true\n$stderr.sync = true\n";

/// The prelude's file, in tether's cache of adapter `id` for `root`; `None` (the output
/// stays buffered) when it cannot be written.
fn unbuffered_prelude(id: &str, root: &Path) -> Option<PathBuf> {
    let dir = crate::tools_prefix::cache_for(id, root);
    let path = dir.join("unbuffered.rb");
    if std::fs::read_to_string(&path).is_ok_and(|t| t == RDBG_PRELUDE) {
        return Some(path);
    }
    std::fs::create_dir_all(&dir).ok()?;
    crate::fs::atomic_write(&path, RDBG_PRELUDE.as_bytes()).ok()?;
    Some(path)
}

/// The `debug` gem's own lines on the program's stderr (`DEBUGGER:
/// wait for debugger connection...`), which are not the program's.
const RDBG_SAYS: &str = "DEBUGGER: ";

/// What the `debug` gem says once its program waits for the debugger.
/// debug 1.4 lets the program run on as soon as a connection is accepted,
/// before it has read the client's first message; a program not yet
/// waiting then talks its console protocol (`input 1234`, `out …`) on the
/// DAP connection. Connected after this line, the program is held until
/// the gem knows it speaks DAP.
const RDBG_WAITS: &str = "DEBUGGER: wait for debugger connection";

/// Connects to `port`; with `waiting`, once it says the adapter waits
/// (within [`CONNECT_WAIT`], then regardless: the connection says what
/// went wrong).
pub(super) async fn connect_when_waiting(
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
pub(super) fn pump_program_output(
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
