//! Warm `references` and `hover` through tether against a raw client in
//! this file speaking to the same server program in the same run, and cold
//! start to first answer per server.
//!
//! The raw client is the floor: blocking writes of framed JSON and reads
//! until the matching response, no actors, no rendering. tether's figure
//! is a whole tool call (router, supervisor, file sync check, request,
//! rendering with source lines). Calls alternate between the two so noise
//! hits both; medians are reported.
//!
//! Run: `cargo bench --bench lsp` (needs pyright, clangd and
//! typescript-language-server; `./scripts/test` installs them). Set
//! `LSP_BENCH_RUNS` (default 200).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether::{Resource, Runtime};

struct Raw {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    next: i64,
}

impl Raw {
    fn start(cmd: &str, args: &[&str], root: &Path) -> Raw {
        let mut child = Command::new(cmd)
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut raw = Raw { child, out, next: 0 };
        let uri = format!("file://{}", root.display());
        // The same capabilities and initialization options tether sends,
        // so the server does the same work.
        let caps = tether_actors::lsp::server::client_capabilities();
        let options = tether_actors::lsp::config::builtin()
            .into_iter()
            .find(|s| s.command == cmd)
            .and_then(|s| s.initialization_options)
            .unwrap_or(Value::Null);
        raw.request("initialize", json!({"processId": null, "rootUri": uri, "capabilities": caps, "initializationOptions": options, "workspaceFolders": [{"uri": uri, "name": "bench"}]}));
        raw.notify("initialized", json!({}));
        raw
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        let stdin = self.child.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn read(&mut self) -> Value {
        let mut len = 0usize;
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

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.read();
            if msg["id"] == id && msg.get("method").is_none() {
                return msg["result"].clone();
            }
            if let (Some(req_id), Some(_)) = (msg.get("id"), msg.get("method")) {
                // Answer server requests (configuration, progress) with null.
                let answer = if msg["method"] == "workspace/configuration" {
                    json!(vec![Value::Null; msg["params"]["items"].as_array().map_or(0, |a| a.len())])
                } else {
                    Value::Null
                };
                self.send(&json!({"jsonrpc": "2.0", "id": req_id, "result": answer}));
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp").join(name);
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

struct Case {
    fixture: &'static str,
    server: (&'static str, &'static [&'static str]),
    language_id: &'static str,
    file: &'static str,
    line: u32,
    symbol: &'static str,
}

const CASES: &[Case] = &[
    Case {
        fixture: "python",
        server: ("pyright-langserver", &["--stdio"]),
        language_id: "python",
        file: "app.py",
        line: 4,
        symbol: "total_area",
    },
    Case {
        fixture: "c",
        server: ("clangd", &["--log=error"]),
        language_id: "c",
        file: "main.c",
        line: 5,
        symbol: "manhattan",
    },
    Case {
        fixture: "ts",
        server: ("typescript-language-server", &["--stdio"]),
        language_id: "typescript",
        file: "app.ts",
        line: 4,
        symbol: "total",
    },
];

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runs: usize = std::env::var("LSP_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for case in CASES {
        let (_dir, root) = fixture(case.fixture);
        let file = root.join(case.file);
        let text = std::fs::read_to_string(&file).unwrap();
        let line_text = text.lines().nth(case.line as usize - 1).unwrap();
        let character = line_text.find(case.symbol).unwrap() as u32;

        // Cold start to first answer, through tether.
        let cold = Instant::now();
        let rt = Runtime::builder().workdir(&root).connect(Resource::LanguageServers).start().unwrap();
        let hover_args =
            json!({"action": "hover", "file": case.file, "line": case.line, "symbol": case.symbol});
        let first = tokio.block_on(rt.call("lsp", hover_args.clone()));
        let cold = cold.elapsed();
        assert!(!first.is_error, "{}", first.text);

        // Cold start to first answer, raw (spawn, initialize, open, hover).
        let raw_cold = Instant::now();
        let mut raw = Raw::start(case.server.0, case.server.1, &root);
        let uri = format!("file://{}", file.display());
        raw.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": case.language_id, "version": 1, "text": text}}),
        );
        let pos = json!({"textDocument": {"uri": uri}, "position": {"line": case.line - 1, "character": character}});
        let _ = raw.request("textDocument/hover", pos.clone());
        let raw_cold = raw_cold.elapsed();

        let refs_args =
            json!({"action": "references", "file": case.file, "line": case.line, "symbol": case.symbol});
        let mut refs_params = pos.clone();
        refs_params["context"] = json!({"includeDeclaration": true});
        // Warm both up.
        for _ in 0..10 {
            tokio.block_on(rt.call("lsp", refs_args.clone()));
            raw.request("textDocument/references", refs_params.clone());
        }
        let (mut t_hover, mut r_hover, mut t_refs, mut r_refs) = (vec![], vec![], vec![], vec![]);
        for _ in 0..runs {
            let s = Instant::now();
            let r = tokio.block_on(rt.call("lsp", hover_args.clone()));
            t_hover.push(s.elapsed());
            assert!(!r.is_error);
            let s = Instant::now();
            raw.request("textDocument/hover", pos.clone());
            r_hover.push(s.elapsed());
            let s = Instant::now();
            let r = tokio.block_on(rt.call("lsp", refs_args.clone()));
            t_refs.push(s.elapsed());
            assert!(!r.is_error);
            let s = Instant::now();
            raw.request("textDocument/references", refs_params.clone());
            r_refs.push(s.elapsed());
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let (th, rh, tr, rr) = (median(t_hover), median(r_hover), median(t_refs), median(r_refs));
        println!(
            "{}: cold start to first hover: tether {:.0} ms, raw {:.0} ms\n  hover      tether {:.3} ms  raw {:.3} ms  overhead {:.3} ms\n  references tether {:.3} ms  raw {:.3} ms  overhead {:.3} ms",
            case.server.0,
            ms(cold),
            ms(raw_cold),
            ms(th),
            ms(rh),
            ms(th) - ms(rh),
            ms(tr),
            ms(rr),
            ms(tr) - ms(rr)
        );
    }
}
