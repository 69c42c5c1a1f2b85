//! A raw LSP client for the benches: blocking framed JSON on a server's
//! pipes, no actors, no rendering — the floor tether is measured against.
//! It starts the server the way tether would (the binary tether resolves,
//! `{cache}` read as a directory of its own) with tether's client
//! capabilities, initialization options and settings, so both do the same
//! work.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// One server process and its pipes.
pub struct Raw {
    child: Child,
    out: BufReader<std::process::ChildStdout>,
    next: i64,
    /// Answers to `workspace/configuration`, as tether gives them.
    settings: Value,
    /// Kept alive for the process: jdtls's workspace.
    _cache: tempfile::TempDir,
}

impl Raw {
    pub fn start(cmd: &str, args: &[&str], root: &Path) -> Raw {
        let config = tether_actors::lsp::config::builtin().into_iter().find(|s| s.command == cmd);
        let binary =
            tether_actors::lsp::discovery::resolve_binary(cmd, root, root).expect("server installed");
        let cache = tempfile::tempdir().unwrap();
        let args: Vec<String> =
            args.iter().map(|a| a.replace("{cache}", &cache.path().display().to_string())).collect();
        let mut child = Command::new(binary)
            .args(&args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let out = BufReader::new(child.stdout.take().unwrap());
        let settings = config.as_ref().and_then(|c| c.settings.clone()).unwrap_or(Value::Null);
        let mut raw = Raw { child, out, next: 0, settings, _cache: cache };
        let uri = format!("file://{}", root.display());
        // The same capabilities and initialization options tether sends,
        // so the server does the same work.
        let caps = tether_actors::lsp::server::client_capabilities();
        let options = config.and_then(|s| s.initialization_options).unwrap_or(Value::Null);
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

    pub fn notify(&mut self, method: &str, params: Value) {
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

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.read();
            if msg["id"] == id && msg.get("method").is_none() {
                return msg["result"].clone();
            }
            if let (Some(req_id), Some(_)) = (msg.get("id"), msg.get("method")) {
                // Configuration from the same settings tether answers with;
                // anything else (progress, registrations) with null.
                let answer = if msg["method"] == "workspace/configuration" {
                    let items = msg["params"]["items"].as_array().cloned().unwrap_or_default();
                    let section = |item: &Value| {
                        let path = item["section"].as_str().unwrap_or("");
                        path.split('.')
                            .filter(|k| !k.is_empty())
                            .try_fold(&self.settings, |v, k| v.get(k))
                            .cloned()
                    };
                    Value::Array(items.iter().map(|i| section(i).unwrap_or(Value::Null)).collect())
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
