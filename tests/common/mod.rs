//! The actor test harness: a runtime on a temporary working directory,
//! calls with bounded waits, and concurrent fan-out for invariant checks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tether::Trust;
use tether::{Runtime, RuntimeBuilder, Surface, ToolResult};

/// Longest a call of a tool outside the LSP family may take in a test
/// before it counts as a hang.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest a call of `tool` may take in a test before it counts as a
/// hang: the product's own bound for the LSP tools, whose waits for a cold
/// server (jdtls importing a build on a machine with no Maven cache) add
/// up past a minute on a busy machine; [`CALL_TIMEOUT`] for the rest.
pub fn call_bound(tool: &str) -> Duration {
    if tool.starts_with("lsp") { tether::tools::lsp::CALL_BOUND } else { CALL_TIMEOUT }
}
/// Longest a whole fan-out may take.
pub const FANOUT_TIMEOUT: Duration = Duration::from_secs(300);

/// A runtime over a temporary directory holding the given files.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub rt: Runtime,
}

impl Harness {
    /// Every resource connected, auto-approval, full surface.
    pub fn new(files: &[(&str, &str)]) -> Self {
        Self::with(files, |b| b.connect_all())
    }

    /// A runtime configured by `configure`.
    pub fn with(files: &[(&str, &str)], configure: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, content) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, content).unwrap();
        }
        // A test's fixture is its own: trusted, unless `configure` says.
        let trusted = Runtime::builder().workdir(dir.path()).conversation("test").trust(Trust::Trusted);
        let rt = configure(trusted).start().expect("runtime starts");
        Self { dir, rt }
    }

    pub fn root(&self) -> PathBuf {
        self.rt.workdir().to_path_buf()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    /// One call from the full surface, bounded by [`call_bound`].
    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.call_from(Surface::Full, tool, args).await
    }

    /// One call from `surface`, bounded by [`call_bound`].
    pub async fn call_from(&self, surface: Surface, tool: &str, args: Value) -> ToolResult {
        let bound = call_bound(tool);
        tokio::time::timeout(bound, self.rt.call_from(surface, tool, args))
            .await
            .unwrap_or_else(|_| panic!("`{tool}` did not answer within {bound:?}"))
    }

    /// A call that must succeed; returns its result. An `lsp` query (it
    /// writes nothing) is asked again while its server, busy beside the
    /// suite's others, said nothing within the request's bound
    /// ([`ok_once_answered`]).
    pub async fn ok(&self, tool: &str, args: Value) -> ToolResult {
        if tool == "lsp" {
            return ok_once_answered(self, tool, args).await;
        }
        let result = self.call(tool, args.clone()).await;
        assert!(!result.is_error, "{tool} {args} failed: {}", result.text);
        result
    }

    /// A call that must fail; returns its text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert!(result.is_error, "{tool} {args} should have failed, got: {}", result.text);
        result.text
    }

    /// A call from the full surface whose caller cancels it `after` this
    /// long; returns its result and how long after the cancel it came.
    pub async fn cancelled_after(&self, tool: &str, args: Value, after: Duration) -> (ToolResult, Duration) {
        let cancel = tokio_util::sync::CancellationToken::new();
        let call = self.rt.call_cancellable(Surface::Full, tool, args, cancel.clone());
        let canceller = async {
            tokio::time::sleep(after).await;
            cancel.cancel();
            std::time::Instant::now()
        };
        let bound = call_bound(tool);
        let (result, cancelled_at) = tokio::time::timeout(bound, async { tokio::join!(call, canceller) })
            .await
            .unwrap_or_else(|_| panic!("cancelled `{tool}` did not answer within {bound:?}"));
        (result, cancelled_at.elapsed())
    }

    /// Fires every call at once and waits for all, bounded by [`FANOUT_TIMEOUT`].
    pub async fn fan_out(&self, calls: Vec<(String, Value)>) -> Vec<ToolResult> {
        let futures = calls.iter().map(|(tool, args)| self.rt.call(tool, args.clone()));
        tokio::time::timeout(FANOUT_TIMEOUT, futures::future::join_all(futures))
            .await
            .expect("the fan-out finished (no deadlock)")
    }
}

/// The lines `reader` yields, on a channel fed by a thread of its own (so
/// a test can wait for one with a bound).
pub fn lines_of(reader: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(reader).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// One `tether batch` process, answering line by line; killed when dropped.
pub struct Batch {
    stdin: Option<std::process::ChildStdin>,
    answers: std::sync::mpsc::Receiver<String>,
    child: std::process::Child,
}

impl Batch {
    /// `tether batch --workdir DIR` with `flags` before the working directory.
    pub fn start(dir: &Path, flags: &[&str]) -> Self {
        // A test's fixture is its own: trusted.
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tether"))
            .args(["batch", "--trusted"])
            .args(flags)
            .arg("--workdir")
            .arg(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("tether starts");
        let answers = lines_of(child.stdout.take().unwrap());
        Self { stdin: child.stdin.take(), answers, child }
    }

    /// The process's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one request and waits (at most [`CALL_TIMEOUT`]) for its
    /// answer — before sending more, so this also checks that each answer
    /// is flushed as soon as it is ready.
    pub fn ask(&mut self, request: Value) -> Value {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let line = self.answers.recv_timeout(CALL_TIMEOUT).expect("an answer per line");
        serde_json::from_str(&line).unwrap()
    }

    /// Closes stdin and waits for the process to exit on its own.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }

    /// SIGKILLs the process: nothing of it runs to stop its children.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `requests` through one `tether batch` on `dir`, one at a time;
/// returns the answers and the exit status after stdin closed.
pub fn batch(dir: &Path, flags: &[&str], requests: &[Value]) -> (Vec<Value>, std::process::ExitStatus) {
    let mut batch = Batch::start(dir, flags);
    let answers = requests.iter().map(|r| batch.ask(r.clone())).collect();
    (answers, batch.close())
}

/// Runs the MCP client scenario `name` of `tests/mcp/client.py` (the
/// Python SDK against `tether serve`) on `workdir`; fails with its output
/// unless it ends in `ok`. Returns its stdout.
pub fn mcp_scenario(name: &str, workdir: &Path) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(name)
        .arg(env!("CARGO_BIN_EXE_tether"))
        .arg(workdir)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("ok"),
        "scenario {name} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// Fails (never skips) when `program args…` does not run, naming how to
/// install it.
pub fn require(program: &str, args: &[&str], install: &str) {
    let out = std::process::Command::new(program).args(args).output();
    let why = match &out {
        Ok(o) if o.status.success() => return,
        Ok(o) => format!("{} {}", o.status, String::from_utf8_lossy(&o.stderr).trim()),
        Err(e) => e.to_string(),
    };
    panic!(
        "`{program} {}` failed ({why}); install with `{install}` (the README's test command does)",
        args.join(" ")
    );
}

/// Fails with the install hint unless `binary` is a file on `PATH` (for a
/// program that has no quick flag to run, such as a language server).
pub fn require_on_path(binary: &str, install: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| Path::new(&d).join(binary).is_file()))
        .unwrap_or(false);
    assert!(found, "`{binary}` is not on PATH; install it with `{install}` (the README's test command does)");
}

/// Fails with the install hint unless python3 imports debugpy.
pub fn debugpy() {
    require("python3", &["-c", "import debugpy"], "python3 -m pip install debugpy");
}

/// Fails with the install hint unless python3 has the MCP SDK (and the
/// packages the scenarios' kernels use) the test command installs.
pub fn mcp_sdk() {
    require(
        "python3",
        &["-c", "import mcp.client, mcp.client.streamable_http, httpx2, pandas, matplotlib"],
        "python3 -m pip install 'mcp==2.3.0' pandas matplotlib",
    );
}

/// At most the first `n` characters of `text`, for a failure message
/// (a byte slice could cut a character in two and panic instead).
pub fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// At most the last `n` characters of `text`, for a failure message.
pub fn tail(text: &str, n: usize) -> String {
    let skip = text.chars().count().saturating_sub(n);
    text.chars().skip(skip).collect()
}

/// A seeded generator (splitmix64) for randomised tests: the seed is
/// printed with every failure, so a run can be replayed.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True once in `n` draws, on average.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// True `percent` times in a hundred, on average.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The match list of an `ast_grep` result as `path:line:col` strings.
pub fn positions(result: &ToolResult) -> Vec<String> {
    result.data.as_ref().expect("ast_grep returns data")["matches"]
        .as_array()
        .expect("matches is an array")
        .iter()
        .map(|m| format!("{}:{}:{}", m["path"].as_str().unwrap(), m["line"], m["column"]))
        .collect()
}

/// Whether `path` exists under `root`.
pub fn exists(root: &Path, rel: &str) -> bool {
    root.join(rel).exists()
}

/// Copies the directory `src` into `dst`, recursively; symbolic links
/// are left out (a package's links can dangle).
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let target = dst.join(entry.file_name());
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The first node of `kind` in the supervision tree, as JSON.
pub async fn node_of(h: &Harness, kind: &str) -> serde_json::Value {
    let tree = h.rt.tree().await;
    let node = tree.root.walk().into_iter().find(|n| n.kind == kind).cloned();
    serde_json::to_value(node.unwrap_or_else(|| panic!("no `{kind}` in the tree:\n{}", tree.text()))).unwrap()
}

/// How long a killed process may take to disappear: SIGKILL is delivered
/// asynchronously, so a process killed with its group (a worker's child, a
/// debuggee) can still be listed for a moment on a loaded machine.
pub const GONE_WITHIN: Duration = Duration::from_secs(5);

/// Whether `pid` stops running within [`GONE_WITHIN`].
pub async fn gone(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + GONE_WITHIN;
    while tether_actors::process::is_running(pid) {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// Whether every member of process group `pgid` is gone within
/// [`GONE_WITHIN`] (SIGKILL is delivered asynchronously).
pub async fn group_gone(pgid: u32) -> bool {
    let deadline = std::time::Instant::now() + GONE_WITHIN;
    while !tether_actors::process::group_members(pgid).is_empty() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The pid of the run's first language server.
pub async fn server_pid(h: &Harness) -> u32 {
    pid_of(h, "lsp-server").await.expect("a running server with a pid")
}

/// The pid the supervision tree shows for the first actor of `kind` that
/// has one, anywhere in the tree.
pub async fn pid_of(h: &Harness, kind: &str) -> Option<u32> {
    h.rt.tree().await.root.walk().into_iter().filter(|n| n.kind == kind).find_map(|n| n.pid)
}

/// The real interpreter behind `python3` (a pyenv shim costs ~0.1 s a
/// start), for fake servers and adapters run by tether.
pub fn real_python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed; install it with `apt-get install python3`");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `tether serve --workdir DIR --http ADDR EXTRA…` with `token`, once it
/// has said it listens (within `listen_within`); its stderr lines.
pub fn serve_http(
    dir: &Path,
    addr: &str,
    extra: &[&str],
    token: &str,
    listen_within: Duration,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--trusted", "--workdir"])
        .arg(dir)
        .args(["--http", addr])
        .args(extra)
        .env("TETHER_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tether serve starts");
    let rx = lines_of(child.stderr.take().unwrap());
    let deadline = std::time::Instant::now() + listen_within;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(line) if line.contains("MCP over HTTP") => return (child, rx),
            Ok(_) => {}
            Err(_) => panic!("tether serve --http did not say it listens within {listen_within:?}"),
        }
    }
}

/// A registry package's unpacked sources for `lang` (`scripts/corpora.sh`
/// puts them under `$TETHER_CORPORA`, default
/// `~/.cache/tether-test/corpora`), failing with the command that fetches
/// them when they are not there.
pub fn corpus(lang: &str, inside: &str) -> PathBuf {
    let base = std::env::var_os("TETHER_CORPORA").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/tether-test/corpora")
    });
    let dir = base.join(lang).join(inside);
    assert!(
        dir.is_dir(),
        "{} is missing; fetch it with `scripts/corpora.sh {lang}` (the README's test command runs it)",
        dir.display()
    );
    dir
}

/// Where the README's test command puts the tools only tests need (Node
/// 22, tsx, the MCP conformance suite): `$TETHER_TEST_TOOLS`, else
/// `~/.cache/tether-test`.
#[allow(dead_code)]
pub fn test_tools() -> PathBuf {
    std::env::var_os("TETHER_TEST_TOOLS").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("a HOME for the test tools")).join(".cache/tether-test")
    })
}

/// The command lines of the processes whose working directory is under
/// `root`.
#[allow(dead_code)]
pub fn running_in(root: &Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let cwd = std::fs::read_link(e.path().join("cwd")).ok()?;
                    let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
                    cwd.starts_with(root).then(|| String::from_utf8_lossy(&cmd).replace('\0', " "))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Waits up to 5 s for no process to run under `root`; what still does.
#[allow(dead_code)]
pub fn left_running_in(root: &Path) -> Vec<String> {
    let mut still = running_in(root);
    for _ in 0..50 {
        if still.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        still = running_in(root);
    }
    still
}

/// Set in the process [`alone`] starts: the test it names runs its body there.
const ALONE: &str = "TETHER_TEST_ALONE";

/// Whether the calling test `name` (its full path, `module::test`) should
/// run its body here: yes inside the process [`alone`] started for it;
/// otherwise that process is started — this test binary, running `name`
/// and nothing else — and waited for, its output passed through, and
/// `false` returned. For a figure of the whole process (its RSS) that
/// other tests of the same binary, running beside it, would add to.
pub fn alone(name: &str) -> bool {
    if std::env::var(ALONE).is_ok_and(|n| n == name) {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(ALONE, name)
        .output()
        .expect("the test binary starts again");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 passed"),
        "{name} did not run in its own process (or failed there): {}",
        out.status
    );
    assert!(out.status.success(), "{name} failed in its own process: {}", out.status);
    false
}

/// An answer's text without the note that ends it when files changed
/// since its conversation's previous call (a test's own writes from
/// outside are named there): for comparing the answer itself.
#[allow(dead_code)]
pub fn answer_only(text: &str) -> &str {
    match text.rfind("\nnote: changed since your previous call: ") {
        Some(at) if !text[at + 1..].contains('\n') => &text[..at],
        _ => text,
    }
}

/// Child processes killed (and reaped) when this is dropped, however the
/// test ends: the CPU-bound processes a test runs beside its work.
pub struct KillOnDrop(pub Vec<std::process::Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Checks that the unified diff an answer shows applies, with `git apply
/// --check`, to the files as they were (`before`: relative path, text): a
/// diff an agent hands to `git apply` or `apply_patch` must be whole, each
/// hunk holding the lines its header counts.
pub fn diff_applies(before: &[(&str, &str)], answer: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (rel, text) in before {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let diff: String = answer
        .lines()
        .skip_while(|l| !l.starts_with("--- "))
        .take_while(|l| ["--- ", "+++ ", "@@ ", " ", "+", "-", "\\"].iter().any(|p| l.starts_with(p)))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!diff.is_empty(), "the answer shows no diff: {answer}");
    std::fs::write(dir.path().join("answer.diff"), &diff).unwrap();
    let out = std::process::Command::new("git")
        .args(["apply", "--check", "answer.diff"])
        .current_dir(dir.path())
        .output()
        .expect("git runs (the README's test command installs it)");
    assert!(
        out.status.success(),
        "the diff does not apply: {}\n{diff}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A call that must succeed, asked again while it fails only because its
/// server said nothing within the request's bound ("no answer within"):
/// the product's own report of a wait a cold or busy machine ran out of,
/// the one failure a test accepts, and only until [`call_bound`]. Any
/// other failure fails the test at once.
pub async fn ok_once_answered(h: &Harness, tool: &str, args: Value) -> ToolResult {
    let deadline = std::time::Instant::now() + call_bound(tool);
    loop {
        let r = h.call(tool, args.clone()).await;
        if !r.is_error {
            return r;
        }
        assert!(
            r.text.contains("no answer within") && std::time::Instant::now() < deadline,
            "{tool} {args} failed: {}",
            r.text
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Calls `tool` with `args` until its answer satisfies `wanted`, and
/// returns that answer: a test that starts from a state a cold server
/// reaches in its own time on a busy machine (its first check done, its
/// index built) waits for that state, bounded by the product's own bound,
/// never for a fixed time. The answers in between may say "pending".
pub async fn until_answer(h: &Harness, tool: &str, args: Value, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + call_bound(tool);
    loop {
        let r = h.call(tool, args.clone()).await;
        if !r.is_error && wanted(&r.text) {
            return r.text;
        }
        assert!(std::time::Instant::now() < deadline, "{tool} {args} never answered as wanted: {}", r.text);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
