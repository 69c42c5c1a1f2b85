//! Per-op overhead of the `debug` tool against a raw DAP client in this
//! file, both driving debugpy on the same program in the same run.
//!
//! Both sessions stop at the same breakpoint; then `threads`, `stackTrace`
//! and `evaluate` run back to back on the raw client (blocking framed JSON
//! on the adapter's pipes) and as tether tool calls (`threads`, `stack`,
//! `evaluate`, which also render text), in two rounds swapping who goes
//! first. Medians of `DAP_BENCH_RUNS` (default 50) each.
//! Run: `cargo bench --bench dap` (needs debugpy).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether::{Resource, Runtime};

struct Raw {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    seq: i64,
}

impl Raw {
    fn send(&mut self, command: &str, args: Value) -> i64 {
        self.seq += 1;
        let body =
            json!({"seq": self.seq, "type": "request", "command": command, "arguments": args}).to_string();
        let stdin = self.child.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
        self.seq
    }

    fn read(&mut self) -> Value {
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.out.read_line(&mut line).unwrap();
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        self.out.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// Reads until the response to `seq` (or the event `event`) arrives.
    fn until(&mut self, seq: Option<i64>, event: Option<&str>) -> Value {
        loop {
            let m = self.read();
            if seq.is_some_and(|s| m["type"] == "response" && m["request_seq"] == s) {
                return m;
            }
            if event.is_some_and(|e| m["type"] == "event" && m["event"] == e) {
                return m;
            }
        }
    }

    fn request(&mut self, command: &str, args: Value) -> Value {
        let seq = self.send(command, args);
        self.until(Some(seq), None)
    }
}

/// How long `f` takes.
fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runs: usize = std::env::var("DAP_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("requirements.txt"), "").unwrap();
    let prog = "def work(n):\n    total = n * 2\n    return total\n\nprint(work(21))\n";
    std::fs::write(root.join("prog.py"), prog).unwrap();
    let program = root.join("prog.py");

    // Raw client: the handshake in debugpy's order.
    let mut child = Command::new("python3")
        .args(["-m", "debugpy.adapter"])
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 -m debugpy.adapter (pip install debugpy)");
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut raw = Raw { child, out, seq: 0 };
    raw.request("initialize", json!({"clientID": "raw", "adapterID": "debugpy", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}));
    let launch = raw.send("launch", json!({"type": "python", "request": "launch", "program": program, "cwd": root, "console": "internalConsole", "justMyCode": true}));
    raw.until(None, Some("initialized"));
    raw.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 2}]}));
    raw.request("configurationDone", json!({}));
    raw.until(Some(launch), None);
    let stopped = raw.until(None, Some("stopped"));
    let thread = stopped["body"]["threadId"].as_i64().unwrap();
    let frame = raw.request("stackTrace", json!({"threadId": thread, "levels": 1}))["body"]["stackFrames"][0]
        ["id"]
        .as_i64()
        .unwrap();

    // tether: the same program, stopped at the same line.
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(&root)
        .connect(Resource::Debuggers)
        .start()
        .unwrap();
    let call = |args: Value| {
        let r = tokio.block_on(rt.call("debug", args));
        assert!(!r.is_error, "{}", r.text);
        r
    };
    call(json!({"op": "breakpoints", "file": "prog.py", "lines": [2]}));
    call(json!({"op": "launch", "program": "prog.py"}));
    let tframe = call(json!({"op": "stack"})).data.unwrap()["frames"][0]["id"].as_i64().unwrap();

    // Each side runs its calls back to back (in two rounds, swapping who
    // goes first). Alternating single calls would mislead: debugpy's
    // adapter-to-program socket has no TCP_NODELAY, so a request that
    // follows another exchange closely dodges the ~40 ms delayed ACK that
    // every request otherwise pays — whichever client sends it.
    let mut rows = Vec::new();
    for (name, raw_cmd, raw_args, tether_args) in [
        ("threads", "threads", json!({}), json!({"op": "threads"})),
        ("stack", "stackTrace", json!({"threadId": thread, "levels": 31}), json!({"op": "stack"})),
        (
            "evaluate",
            "evaluate",
            json!({"expression": "n + 1", "frameId": frame, "context": "repl"}),
            json!({"op": "evaluate", "expression": "n + 1", "frame_id": tframe}),
        ),
    ] {
        let (mut r, mut t) = (Vec::new(), Vec::new());
        for raw_first in [true, false] {
            let mut raw_batch = || {
                (0..runs / 2)
                    .map(|_| timed(|| drop(raw.request(raw_cmd, raw_args.clone()))))
                    .collect::<Vec<_>>()
            };
            if raw_first {
                r.extend(raw_batch());
            }
            t.extend((0..runs / 2).map(|_| timed(|| drop(call(tether_args.clone())))));
            if !raw_first {
                r.extend(raw_batch());
            }
        }
        rows.push((name, median(t), median(r)));
    }
    println!("debugpy, {runs} back-to-back calls per op and side (medians)");
    for (name, t, r) in rows {
        println!("  {name:<9} tether {t:.3} ms  raw {r:.3} ms  overhead {:.3} ms", t - r);
    }
    call(json!({"op": "terminate"}));
    let _ = raw.child.kill();
}
