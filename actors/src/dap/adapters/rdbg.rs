//! rdbg, Ruby's `debug` gem, as tether runs it: the program is its own
//! adapter (`ruby -rdebug/open PROGRAM`, listening on the port in
//! `RUBY_DEBUG_PORT`), so its command line holds the program, its output
//! comes on its pipes, and it is connected only once it waits for the
//! debugger.

use std::path::{Path, PathBuf};

use super::AdapterConfig;
use super::filters::UNCAUGHT;
use crate::dap::asked::LaunchSpec;
use crate::dap::start_failure::StartFailure;

/// How an adapter's process is started.
pub(crate) struct SpawnLine {
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: PathBuf,
    /// Whether the process is the program (rdbg): its output and exit are
    /// the program's.
    pub(crate) is_debuggee: bool,
}

/// The command line of `config` on `port` (`{port}` in its arguments).
/// rdbg is the program itself, started with the `debug` gem listening
/// (`ruby -rdebug/open PROGRAM ARGS`, the port in `RUBY_DEBUG_PORT`), in
/// postmortem mode unless the exception filters leave `uncaught` out.
pub(crate) fn spawn_line(
    config: &AdapterConfig,
    port: u16,
    launch: Option<&LaunchSpec>,
    filters: Option<&[String]>,
    root: &Path,
    workdir: &Path,
) -> Result<SpawnLine, StartFailure> {
    let mut args: Vec<String> = config.args.iter().map(|a| a.replace("{port}", &port.to_string())).collect();
    if !config.quirks.program_is_adapter {
        return Ok(SpawnLine { args, env: Vec::new(), cwd: root.to_path_buf(), is_debuggee: false });
    }
    let Some(spec) = launch else { return Err(StartFailure::AttachesByPortOnly { adapter: config.id }) };
    let Some(program) = &spec.program else {
        return Err(StartFailure::LaunchesFileOnly { adapter: config.id, extension: "rb" });
    };
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
pub(crate) const RDBG_SAYS: &str = "DEBUGGER: ";

/// What the `debug` gem says once its program waits for the debugger.
/// debug 1.4 lets the program run on as soon as a connection is accepted,
/// before it has read the client's first message; a program not yet
/// waiting then talks its console protocol (`input 1234`, `out …`) on the
/// DAP connection. Connected after this line, the program is held until
/// the gem knows it speaks DAP.
pub(crate) const RDBG_WAITS: &str = "DEBUGGER: wait for debugger connection";
