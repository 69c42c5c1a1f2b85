//! Child processes that belong to an actor: spawned in their own process
//! group so that everything they start (tsserver under
//! typescript-language-server, say) can be killed with them, and killed
//! when their handle is dropped. A process that exits on its own is
//! reported with its status and its last stderr lines.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

/// Stderr lines kept for crash reports.
pub const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line kept.
const STDERR_LINE_MAX: usize = 400;
/// How long the stderr reader may lag behind an exit before the report is made.
const STDERR_DRAIN: Duration = Duration::from_millis(100);
/// A stderr line is read in pieces of at most this many bytes (a child
/// that writes megabytes without a newline is not held whole).
const STDERR_READ_MAX: u64 = 64 * 1024;

/// Environment variables no child gets: the run's own secrets (the bearer
/// token of `tether serve --http`, when it came from the environment). A
/// child that should hold one is given it explicitly (a worker's own
/// token, through `spawn_with_env`).
static WITHHELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// From now on, children do not inherit `name`.
pub fn withhold_from_children(name: &str) {
    let mut withheld = WITHHELD.lock();
    if !withheld.iter().any(|n| n == name) {
        withheld.push(name.to_string());
    }
}

/// Removes the withheld variables from `command`'s environment.
pub fn without_withheld(command: &mut Command) -> &mut Command {
    for name in WITHHELD.lock().iter() {
        command.env_remove(name);
    }
    command
}

/// Where a process's stderr lines go besides its tail.
type LineSink = Box<dyn Fn(&str) + Send>;

/// The last lines a process wrote to stderr, and whoever asked to see
/// every line ([`StderrTail::forward`]).
#[derive(Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    sink: Arc<Mutex<Option<LineSink>>>,
}

impl StderrTail {
    fn push(&self, line: &str) {
        if let Some(sink) = self.sink.lock().as_ref() {
            sink(line);
        }
        let mut lines = self.lines.lock();
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        let line = line.trim_end();
        let kept = crate::text::byte_prefix(line, STDERR_LINE_MAX);
        lines.push_back(if kept.len() < line.len() { format!("{kept}…") } else { kept.to_string() });
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().iter().cloned().collect()
    }

    /// Gives every line read from now on, whole, to `sink` too, after the
    /// lines kept so far (read before it was given): where the process is
    /// the program being debugged, its stderr is the program's.
    pub fn forward(&self, sink: impl Fn(&str) + Send + 'static) {
        // Under the sink's lock, which a line read meanwhile waits for:
        // none is given twice or lost.
        let mut slot = self.sink.lock();
        for line in self.lines() {
            sink(&line);
        }
        *slot = Some(Box::new(sink));
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit status in words ("exit status 1", "killed by signal 9").
    pub status: String,
    /// The exit code, when it exited rather than being killed.
    pub code: Option<i32>,
    /// Its last stderr lines.
    pub stderr_tail: Vec<String>,
}

impl ExitInfo {
    /// One sentence for error messages: status, then the stderr tail.
    pub fn describe(&self, who: &str) -> String {
        let mut text = format!("{who} exited ({})", self.status);
        let tail: Vec<&String> = self.stderr_tail.iter().rev().take(5).collect();
        if !tail.is_empty() {
            let lines: Vec<&str> = tail.into_iter().rev().map(String::as_str).collect();
            text.push_str(&format!("; last stderr: {}", lines.join(" | ")));
        }
        text
    }
}

fn exit_code(status: &std::io::Result<std::process::ExitStatus>) -> Option<i32> {
    status.as_ref().ok().and_then(|s| s.code())
}

fn status_words(status: std::io::Result<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "exited".to_string(),
        },
        Err(e) => format!("status unknown: {e}"),
    }
}

/// A running child: its pipes, and a handle that kills its whole process
/// group when dropped.
pub struct Spawned {
    /// Its stdin.
    pub stdin: ChildStdin,
    /// Its stdout.
    pub stdout: ChildStdout,
    /// Its pid.
    pub pid: u32,
    /// Kills it (and its group) on drop.
    pub guard: KillGuard,
    /// Its stderr tail.
    pub stderr: StderrTail,
}

/// Kills a process group when dropped.
pub struct KillGuard {
    pgid: u32,
    /// The child's [`CHILD_TAG_VAR`]: descendants that left its process
    /// group (a new session, a daemon) still carry it.
    tag: String,
    stop: Option<oneshot::Sender<()>>,
}

impl KillGuard {
    /// The process (group) id.
    pub fn pid(&self) -> u32 {
        self.pgid
    }
}

impl Drop for KillGuard {
    fn drop(&mut self) {
        kill_group(self.pgid);
        kill_tagged(&self.tag);
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The environment variable naming one spawned child (`<run id>:<n>`),
/// inherited by everything it starts: when the child is killed, so is
/// every descendant that left its process group.
pub const CHILD_TAG_VAR: &str = "TETHER_CHILD";

/// A fresh tag for a child of this run.
fn child_tag() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!("{}:{}", run_id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// SIGKILLs every process whose environment carries `CHILD_TAG_VAR=tag`.
fn kill_tagged(tag: &str) {
    for pid in pids() {
        if env_var(pid, CHILD_TAG_VAR).as_deref() == Some(tag) {
            // SAFETY: kill(2) on a pid just read from /proc; no memory is involved.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// Sends SIGKILL to a whole process group.
pub fn kill_group(pgid: u32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals the group; no memory is involved.
        unsafe {
            libc::kill(-(pgid as i32), libc::SIGKILL);
        }
    }
}

/// The environment variable every child carries: the id of the run (the
/// tether process) that started it, `<pid>-<start time in clock ticks>`,
/// so a later run can find the children of one that died without
/// stopping them.
pub const RUN_ID_VAR: &str = "TETHER_RUN";
/// The environment variable naming the directory a child was started in,
/// so a later run only reaps the orphans of its own working directory.
pub const RUN_ROOT_VAR: &str = "TETHER_RUN_ROOT";

/// This process's run id (see [`RUN_ID_VAR`]).
pub fn run_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        format!("{pid}-{}", start_ticks(pid as i32).unwrap_or(0))
    })
}

/// What `/proc/<pid>/stat` says of a process: the one reader of that file,
/// for the runtime's orphan reaping and the tests' checks that nothing
/// outlives its run alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The state letter (`R`, `S`, `Z` …).
    pub state: char,
    pub parent: u32,
    pub group: u32,
    /// Clock ticks since boot: with the pid, it names one process for good
    /// (a recycled pid starts later).
    pub start: u64,
}

impl ProcStat {
    /// Running or able to: not a zombie awaiting its reaper, not dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// The stat line of `pid`, read after the parenthesised command name
/// (which may itself hold spaces and parentheses); fields as proc(5)
/// numbers them: state 3, parent 4, group 5, start time 22.
pub fn stat(pid: u32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        state: fields.first()?.chars().next()?,
        parent: fields.get(1)?.parse().ok()?,
        group: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// The live members of process group `pgid` now, with what their stat says.
pub fn group_members(pgid: u32) -> Vec<(u32, ProcStat)> {
    pids()
        .filter_map(|pid| Some((pid as u32, stat(pid as u32)?)))
        .filter(|(_, s)| s.group == pgid && s.is_live())
        .collect()
}

fn start_ticks(pid: i32) -> Option<u64> {
    stat(pid as u32).map(|s| s.start)
}

fn process_group(pid: i32) -> Option<i32> {
    stat(pid as u32).map(|s| s.group as i32)
}

/// The resident memory, in bytes, of the live members of process group
/// `pgid` together (a server and the processes it started: jdtls's JVM,
/// tsserver, gopls's workers), from each one's `/proc/<pid>/statm`.
pub fn group_rss(pgid: u32) -> u64 {
    groups_rss(&[pgid])[0]
}

/// [`group_rss`] of each of `pgids`, in one walk of `/proc`.
pub fn groups_rss(pgids: &[u32]) -> Vec<u64> {
    // SAFETY: sysconf(3) reads a constant of the system; no memory is involved.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    let mut held = vec![0; pgids.len()];
    for pid in pids() {
        let Some(stat) = stat(pid as u32).filter(|s| s.is_live()) else { continue };
        let Some(i) = pgids.iter().position(|g| *g == stat.group) else { continue };
        let resident = std::fs::read_to_string(format!("/proc/{pid}/statm"))
            .ok()
            .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok());
        held[i] += resident.unwrap_or(0) * page;
    }
    held
}

/// The parent of `pid`.
pub fn parent_of(pid: u32) -> Option<u32> {
    stat(pid).map(|s| s.parent)
}

/// The live children of `parent` now.
pub fn children_of(parent: u32) -> Vec<u32> {
    pids()
        .filter_map(|pid| Some((pid as u32, stat(pid as u32)?)))
        .filter(|(_, s)| s.parent == parent && s.is_live())
        .map(|(pid, _)| pid)
        .collect()
}

/// The command line of `pid`, its arguments joined by spaces.
pub fn command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(String::from_utf8_lossy(&raw).replace('\0', " ").trim().to_string())
}

/// A child of a dead run, found and killed by [`reap_orphans`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// Its pid.
    pub pid: u32,
    /// The run that started it.
    pub run: String,
    /// Its command line, shortened.
    pub command: String,
}

/// Kills every process left behind by a tether run that is gone (its
/// process died without stopping its children: SIGKILL, a crash) and that
/// was started in `root` or below it. Processes of live runs — this one
/// or another — are never touched. Returns what was killed.
pub fn reap_orphans(root: &Path) -> Vec<Orphan> {
    let own = run_id();
    let mut reaped = Vec::new();
    for pid in pids() {
        let Some((run, started_in)) = run_tag(pid) else { continue };
        if run == own || !is_running(pid) || !Path::new(&started_in).starts_with(root) || run_is_alive(&run) {
            continue;
        }
        let command = command_line(pid as u32).map(|c| c.chars().take(120).collect()).unwrap_or_default();
        reaped.push((Orphan { pid: pid as u32, run, command }, process_group(pid)));
    }
    // Found first, killed after: a group kill would otherwise take members
    // out of the list before the scan reached them.
    for (orphan, group) in &reaped {
        if let Some(group) = group.filter(|g| *g > 1) {
            kill_group(group as u32);
        }
        // SAFETY: kill(2) on a pid just read from /proc; no memory is involved.
        unsafe {
            libc::kill(orphan.pid as i32, libc::SIGKILL);
        }
        tracing::info!(pid = orphan.pid, run = %orphan.run, command = %orphan.command, "killed an orphan of a dead run");
    }
    reaped.into_iter().map(|(orphan, _)| orphan).collect()
}

/// The run id and start directory `pid` was tagged with ([`RUN_ID_VAR`],
/// [`RUN_ROOT_VAR`]), if it is a tether child. Another user's processes
/// are unreadable, and not ours anyway.
pub fn run_tag(pid: i32) -> Option<(String, String)> {
    Some((env_var(pid, RUN_ID_VAR)?, env_var(pid, RUN_ROOT_VAR)?))
}

/// The value of `name` in `pid`'s environment, if readable (another user's
/// processes are not).
fn env_var(pid: i32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ.split(|b| *b == 0).find_map(|kv| {
        std::str::from_utf8(kv).ok()?.strip_prefix(name)?.strip_prefix('=').map(str::to_string)
    })
}

/// Every process id in `/proc` now.
fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
}

/// Whether the run `id` (`<pid>-<start ticks>`) is still a live process.
fn run_is_alive(id: &str) -> bool {
    let Some((pid, ticks)) = id.split_once('-') else { return false };
    let (Ok(pid), Ok(ticks)) = (pid.parse::<i32>(), ticks.parse::<u64>()) else { return false };
    is_running(pid) && start_ticks(pid) == Some(ticks)
}

/// Starts `program` in `cwd` with piped stdio, in a new process group.
/// `on_exit` runs once the process has exited (not when the guard killed it
/// on purpose: then the report is still made, and the owner ignores it).
pub fn spawn(
    program: &Path,
    args: &[String],
    cwd: &Path,
    on_exit: impl FnOnce(ExitInfo) + Send + 'static,
) -> std::io::Result<Spawned> {
    spawn_with_env(program, args, cwd, &[], on_exit)
}

/// How long a one-shot probe (`python3 -c "import debugpy"`, `node
/// --version`) may take before it is killed and counted as failed.
pub const PROBE_WAIT: Duration = Duration::from_secs(10);

/// Runs a short probe command to its end within `limit` (killed past it):
/// no stdin, its output captured — never on the run's own stdout, which is
/// the MCP stream under `tether serve`. `None` if it did not start or
/// finish in time.
pub fn probe(command: &mut std::process::Command, limit: Duration) -> Option<std::process::Output> {
    let mut child =
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().ok()?;
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().ok(),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// [`spawn`], with extra environment variables.
pub fn spawn_with_env(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
    on_exit: impl FnOnce(ExitInfo) + Send + 'static,
) -> std::io::Result<Spawned> {
    let tag = child_tag();
    let mut command = Command::new(program);
    // SAFETY: between fork and exec only signal(2) runs, which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            // A run started with SIGINT ignored (under `nohup`, or as a
            // background job of a shell without job control) would hand
            // that on, and an ignored SIGINT stays ignored across exec: a
            // Python kernel then installs no KeyboardInterrupt handler and
            // can never be interrupted, only killed with its state.
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child: Child = without_withheld(&mut command)
        .args(args)
        .env(RUN_ID_VAR, run_id())
        .env(RUN_ROOT_VAR, cwd)
        .env(CHILD_TAG_VAR, &tag)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().unwrap_or(0);
    // The one place every child of the run starts: its start and its exit
    // are logged here, whatever resource it serves.
    tracing::debug!(target: "tether_actors::process", pid, program = %program.display(), "child started");
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr_pipe = child.stderr.take().expect("stderr is piped");
    let stderr = StderrTail::default();
    let tail = stderr.clone();
    let (stderr_done_tx, stderr_done) = oneshot::channel::<()>();
    tokio::spawn(async move {
        // Read to the end whatever the bytes: a line that is not UTF-8 must
        // not stop the reading, or the child dies of SIGPIPE at its next
        // write to stderr.
        let mut reader = BufReader::new(stderr_pipe);
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match (&mut reader).take(STDERR_READ_MAX).read_until(b'\n', &mut raw).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&raw);
                    let line = line.trim_end_matches(['\n', '\r']);
                    tracing::trace!(target: "tether_actors::process", pid, "stderr: {line}");
                    tail.push(line);
                }
            }
        }
        let _ = stderr_done_tx.send(());
    });
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let tail = stderr.clone();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = stop_rx => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        // Whatever the group leader left behind goes with it.
        kill_group(pid);
        let _ = tokio::time::timeout(STDERR_DRAIN, stderr_done).await;
        let code = exit_code(&status);
        let words = status_words(status);
        tracing::debug!(target: "tether_actors::process", pid, status = %words, "child exited");
        on_exit(ExitInfo { status: words, code, stderr_tail: tail.lines() });
    });
    Ok(Spawned { stdin, stdout, pid, guard: KillGuard { pgid: pid, tag, stop: Some(stop_tx) }, stderr })
}

/// Whether `pid` names a live process (not gone, not a zombie awaiting its reaper).
pub fn is_running(pid: i32) -> bool {
    pid > 0 && stat(pid as u32).is_some_and(|s| s.is_live())
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_groups_memory_is_its_members_together() {
        use std::os::unix::process::CommandExt;
        // A shell and the sleep it starts, in a group of their own.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30; wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let own = |pid: u32| -> u64 {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() << 10
        };
        let members = super::group_members(pgid);
        assert_eq!(members.len(), 3, "{members:?}");
        let held = super::group_rss(pgid);
        let sum: u64 = members.iter().map(|(pid, _)| own(*pid)).sum();
        assert!(held > 0 && held.abs_diff(sum) <= sum / 10, "{held} against {sum}");
        assert_eq!(super::groups_rss(&[pgid, u32::MAX])[1], 0);
        super::kill_group(pgid);
        let _ = child.wait();
    }

    #[test]
    fn a_probe_keeps_its_output_and_is_killed_past_its_limit() {
        let mut echo = std::process::Command::new("sh");
        echo.args(["-c", "echo seen; read x; echo \"read:$x\""]);
        let out = probe(&mut echo, PROBE_WAIT).unwrap();
        // Its stdin is empty, not the run's; its stdout is captured.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "seen\nread:\n");
        let mut slow = std::process::Command::new("sleep");
        slow.arg("30");
        let started = std::time::Instant::now();
        assert!(probe(&mut slow, Duration::from_millis(200)).is_none());
        assert!(started.elapsed() < Duration::from_secs(10), "the probe was killed at its limit");
    }
    use super::*;

    #[tokio::test]
    async fn exit_is_reported_with_status_and_stderr() {
        let (tx, rx) = oneshot::channel();
        let args = vec!["-c".to_string(), "echo doomed >&2; exit 3".to_string()];
        let spawned = spawn(Path::new("/bin/sh"), &args, Path::new("/"), move |info| {
            let _ = tx.send(info);
        })
        .unwrap();
        let info = tokio::time::timeout(Duration::from_secs(5), rx).await.unwrap().unwrap();
        assert_eq!(info.status, "exit status 3");
        assert_eq!(info.stderr_tail, vec!["doomed".to_string()]);
        assert_eq!(info.describe("sh"), "sh exited (exit status 3); last stderr: doomed");
        drop(spawned);
    }

    #[tokio::test]
    async fn a_stderr_line_that_is_not_utf8_does_not_stop_the_reading() {
        let (tx, rx) = oneshot::channel();
        let script = "printf 'bad \\377\\376 bytes\\n' >&2; sleep 0.3; echo after >&2; echo more >&2; exit 0";
        let args = vec!["-c".to_string(), script.to_string()];
        let spawned = spawn(Path::new("/bin/sh"), &args, Path::new("/"), move |info| {
            let _ = tx.send(info);
        })
        .unwrap();
        let info = tokio::time::timeout(Duration::from_secs(5), rx).await.unwrap().unwrap();
        assert_eq!(info.status, "exit status 0", "not killed by SIGPIPE");
        assert_eq!(info.stderr_tail, vec!["bad \u{fffd}\u{fffd} bytes", "after", "more"]);
        drop(spawned);
    }

    #[tokio::test]
    async fn dropping_the_guard_kills_the_whole_group() {
        let (tx, rx) = oneshot::channel();
        // The child starts a grandchild that would outlive it.
        let args = vec!["-c".to_string(), "sleep 300 & echo $!; wait".to_string()];
        let spawned = spawn(Path::new("/bin/sh"), &args, Path::new("/"), move |info| {
            let _ = tx.send(info);
        })
        .unwrap();
        let mut out = BufReader::new(spawned.stdout).lines();
        let grandchild: i32 = out.next_line().await.unwrap().unwrap().trim().parse().unwrap();
        drop(spawned.guard);
        let info = tokio::time::timeout(Duration::from_secs(5), rx).await.unwrap().unwrap();
        assert_eq!(info.status, "killed by signal 9");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!is_running(grandchild), "the grandchild {grandchild} was left behind");
    }
}
