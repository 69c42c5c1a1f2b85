//! The README's quickstart for one's own project, checked as written: the
//! section is read from README.md, its shell commands run in a fresh
//! project against the built binary, each host's configuration is parsed
//! in that host's format (the keys Codex's `[mcp_servers.NAME]` takes,
//! VS Code's `servers`, Cursor's `mcpServers`, what `claude mcp add` is
//! given), and every configuration that starts `tether serve` is connected
//! through by the official MCP Python SDK (`tools/list`, then an `ast_grep`
//! that must search the project) — launched as its host launches it, and
//! `serve --http` with the token the README exports.
//!
//! On `PATH`, in front of the real one: `tether` records its pid and runs
//! the built binary; `claude` and `cargo` record their arguments and do
//! nothing else (neither is run for real).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;

/// The quickstart's heading in README.md.
const SECTION: &str = "## On your own project";
/// The placeholder the README's commands give for the project.
const PROJECT: &str = "/path/to/your/project";
/// The address the README serves HTTP at; replaced by a free port.
const README_ADDR: &str = "127.0.0.1:8765";
/// How long one of the README's shell blocks may take.
const SHELL_WITHIN: Duration = Duration::from_secs(60);
/// How long the MCP clients may take, all of them together.
const CLIENTS_WITHIN: Duration = Duration::from_secs(120);
/// How long `serve --http` may take to say it listens.
const LISTEN_WITHIN: Duration = Duration::from_secs(20);
/// How long `serve --http` may take to stop after SIGTERM.
const STOP_WITHIN: Duration = Duration::from_secs(20);

/// The file of the fresh project, and where `print($A)` matches in it.
const HELLO: &str = "def greet(name):\n    print(f\"hello {name}\")\n";
const HELLO_MATCH: &str = "hello.py:2:5";

/// Every key Codex's `[mcp_servers.NAME]` table takes (codex-rs
/// `RawMcpServerConfig`, which denies unknown fields): stdio, streamable
/// HTTP, shared.
const CODEX_STDIO_KEYS: &[&str] = &["command", "args", "env", "env_vars", "cwd"];
const CODEX_HTTP_KEYS: &[&str] = &["url", "bearer_token_env_var", "http_headers", "env_http_headers"];
const CODEX_SHARED_KEYS: &[&str] = &[
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled",
    "required",
    "enabled_tools",
    "disabled_tools",
    "scopes",
    "oauth_resource",
];
/// What Codex passes on to a stdio server of its environment (codex-rs
/// `DEFAULT_ENV_VARS`, Unix); it clears the rest.
const CODEX_ENV: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
];
/// The keys of a server in VS Code's `mcp.json`, stdio and HTTP.
const VSCODE_STDIO_KEYS: &[&str] =
    &["type", "command", "args", "env", "envFile", "sandboxEnabled", "sandbox", "dev"];
/// The keys of a server in Cursor's `mcp.json`.
const CURSOR_KEYS: &[&str] = &["command", "args", "env", "url", "headers"];

/// The MCP client: connects to every server the JSON list names at once
/// (`{"host", "command", "args", "env", "cwd"}` for stdio, `{"host", "url",
/// "headers"}` for streamable HTTP), lists the tools, searches with
/// `ast_grep`, and prints one JSON list of what each saw.
const CLIENT: &str = r#"
import json, sys
import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

SPECS = json.loads(sys.argv[1])


async def agent(i, spec, results):
    if "url" in spec:
        server = streamable_http_client(spec["url"], http_client=create_mcp_http_client(headers=spec["headers"]))
    else:
        server = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec["env"], cwd=spec["cwd"])
    with anyio.fail_after(90):
        async with Client(server, client_info=types.Implementation(name=spec["host"], version="0")) as c:
            tools = sorted(t.name for t in (await c.list_tools()).tools)
            found = await c.call_tool("ast_grep", {"pattern": "print($A)"})
            text = "\n".join(x.text for x in found.content if isinstance(x, types.TextContent))
            info = c.server_info
            results[i] = {"host": spec["host"], "server": info.name if info else None, "tools": tools,
                          "is_error": found.is_error, "text": text}


async def main():
    results = [None] * len(SPECS)
    async with anyio.create_task_group() as tg:
        for i, spec in enumerate(SPECS):
            tg.start_soon(agent, i, spec, results)
    print(json.dumps(results))


anyio.run(main)
"#;

/// A fenced block of the quickstart, with the paragraph that introduces it.
#[derive(Debug)]
struct Block {
    lang: String,
    intro: String,
    text: String,
}

/// The quickstart's fenced blocks, in order.
fn quickstart() -> Vec<Block> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find(&format!("\n{SECTION}\n"))
        .unwrap_or_else(|| panic!("README.md has no `{SECTION}` section"));
    let body = &readme[start + SECTION.len() + 2..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let (mut blocks, mut para, mut last_para) = (Vec::new(), String::new(), String::new());
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            let mut text = String::new();
            for line in lines.by_ref() {
                if line.trim_start().starts_with("```") {
                    break;
                }
                text.push_str(line);
                text.push('\n');
            }
            let intro =
                if para.is_empty() { std::mem::take(&mut last_para) } else { std::mem::take(&mut para) };
            blocks.push(Block { lang: lang.trim().to_string(), intro, text });
            last_para.clear();
        } else if line.trim().is_empty() {
            if !para.is_empty() {
                last_para = std::mem::take(&mut para);
            }
        } else {
            para.push_str(line);
            para.push(' ');
        }
    }
    blocks
}

/// The one block in `lang` that `pick` accepts, introduced by a paragraph
/// naming `names` (the host, its file).
fn one<'a>(
    blocks: &'a [Block],
    lang: &str,
    what: &str,
    names: &[&str],
    pick: impl Fn(&str) -> bool,
) -> &'a Block {
    let found: Vec<&Block> = blocks.iter().filter(|b| b.lang == lang && pick(&b.text)).collect();
    assert_eq!(found.len(), 1, "the quickstart should have one ```{lang} block for {what}: {blocks:#?}");
    for name in names {
        assert!(
            found[0].intro.contains(name),
            "the paragraph before {what} should name `{name}`: {}",
            found[0].intro
        );
    }
    found[0]
}

/// The blocks by what they are for; fails unless every block of the
/// section is one of them (a snippet added to the README is a snippet
/// checked here).
struct Snippets {
    install: String,
    claude: String,
    codex: String,
    vscode: String,
    cursor: String,
    http: String,
    codex_http: String,
}

fn snippets() -> Snippets {
    let blocks = quickstart();
    assert_eq!(blocks.len(), 7, "every snippet of the quickstart is checked here; found {blocks:#?}");
    let serves_http = |t: &str| t.contains("serve --http");
    Snippets {
        install: one(&blocks, "sh", "the install", &[], |t| t.contains("cargo install")).text.clone(),
        claude: one(&blocks, "sh", "Claude Code over stdio", &["Claude Code"], |t| {
            t.contains("claude mcp add") && !serves_http(t)
        })
        .text
        .clone(),
        codex: one(&blocks, "toml", "Codex over stdio", &["Codex", "~/.codex/config.toml"], |t| {
            t.contains("command")
        })
        .text
        .clone(),
        vscode: one(&blocks, "json", "VS Code", &["VS Code", ".vscode/mcp.json"], |t| {
            t.contains("\"servers\"")
        })
        .text
        .clone(),
        cursor: one(&blocks, "json", "Cursor", &["Cursor", ".cursor/mcp.json"], |t| {
            t.contains("\"mcpServers\"")
        })
        .text
        .clone(),
        http: one(&blocks, "sh", "serve --http", &[], serves_http).text.clone(),
        codex_http: one(&blocks, "toml", "Codex over HTTP", &["Codex", "~/.codex/config.toml"], |t| {
            t.contains("url")
        })
        .text
        .clone(),
    }
}

/// One recorded run of a stand-in: its working directory and arguments.
#[derive(Debug)]
struct Call {
    cwd: PathBuf,
    args: Vec<String>,
}

/// A fresh project, the stand-ins on `PATH`, and where they record. Every
/// `tether` it started and that still runs is killed when it is dropped.
struct Stage {
    dir: tempfile::TempDir,
    runs: std::cell::Cell<u32>,
}

impl Stage {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for sub in ["bin", "records", "project", "elsewhere"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let records = dir.path().join("records");
        let real = Path::new(env!("CARGO_BIN_EXE_tether"));
        let scripts = [
            (
                "tether",
                format!("echo $$ >> '{}/tether.pids'\nexec '{}' \"$@\"\n", records.display(), real.display()),
            ),
            ("claude", recorder(&records, "claude")),
            ("cargo", recorder(&records, "cargo")),
        ];
        for (name, body) in scripts {
            let path = dir.path().join("bin").join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::write(dir.path().join("project/hello.py"), HELLO).unwrap();
        // Where a server that ignored its configured project would search.
        std::fs::write(dir.path().join("elsewhere/decoy.py"), "print(1)\n").unwrap();
        Self { dir, runs: std::cell::Cell::new(0) }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    /// A directory that is not the project, for hosts whose configuration
    /// names the project itself.
    fn elsewhere(&self) -> PathBuf {
        self.dir.path().join("elsewhere").canonicalize().unwrap()
    }

    fn records(&self) -> PathBuf {
        self.dir.path().join("records")
    }

    /// `PATH` with the stand-ins first.
    fn path(&self) -> String {
        format!("{}:{}", self.dir.path().join("bin").display(), std::env::var("PATH").unwrap_or_default())
    }

    /// Runs `script` with `sh -e` in `cwd`, the project placeholder
    /// replaced; its exit status, stdout and stderr (files, so that a
    /// process it leaves in the background holds no pipe of ours).
    fn sh(&self, script: &str, cwd: &Path) -> (ExitStatus, String, String) {
        let script = script.replace(PROJECT, &self.project().display().to_string());
        let mut sh = Command::new("sh");
        sh.args(["-e", "-c", &script]).current_dir(cwd).env("PATH", self.path());
        self.run(sh, SHELL_WITHIN, &script)
    }

    /// Runs `command` with stdin closed and its output in files, for at
    /// most `within` (killed past it, and the test fails).
    fn run(&self, mut command: Command, within: Duration, what: &str) -> (ExitStatus, String, String) {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let (out, err) =
            (self.records().join(format!("run{n}.out")), self.records().join(format!("run{n}.err")));
        let mut child = command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("the command starts");
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "`{what}` did not finish within {within:?}:\n{}",
                    std::fs::read_to_string(&err).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (status, std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&err).unwrap())
    }

    /// The runs of stand-in `name` recorded since last asked.
    fn calls(&self, name: &str) -> Vec<Call> {
        let mut calls = Vec::new();
        for entry in std::fs::read_dir(self.records()).unwrap().flatten() {
            let file = entry.file_name().to_string_lossy().to_string();
            if file.starts_with(&format!("{name}.")) && file.ends_with(".call") {
                let bytes = std::fs::read(entry.path()).unwrap();
                let mut fields: Vec<String> =
                    bytes.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).to_string()).collect();
                fields.pop(); // after the last NUL
                let cwd = PathBuf::from(fields.remove(0));
                calls.push(Call { cwd, args: fields });
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        calls
    }

    /// The one run of stand-in `name` since last asked.
    fn call(&self, name: &str) -> Call {
        let mut calls = self.calls(name);
        assert_eq!(calls.len(), 1, "one `{name}` run: {calls:?}");
        calls.remove(0)
    }

    /// The pids of the `tether` processes started so far.
    fn tether_pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.records().join("tether.pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Connects an MCP client through each spec at once; what each saw.
    fn connect(&self, specs: &[Value]) -> Vec<Value> {
        common::require(
            "python3",
            &["-c", "import mcp.client.streamable_http, httpx2"],
            "python3 -m pip install 'mcp==2.3.0'",
        );
        let mut python = Command::new("python3");
        python.args(["-c", CLIENT, &Value::from(specs.to_vec()).to_string()]).env("PATH", self.path());
        let (status, out, err) = self.run(python, CLIENTS_WITHIN, "the MCP clients");
        assert!(status.success(), "the MCP clients failed ({status}):\n{out}\n{err}");
        let seen: Vec<Value> = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
        for one in &seen {
            assert_eq!(one["server"], "tether", "{one}");
            let tools: Vec<&str> =
                one["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            for tool in ["ast_grep", "lsp", "eval", "debug"] {
                assert!(tools.contains(&tool), "{}: `{tool}` is listed: {tools:?}", one["host"]);
            }
            let text = one["text"].as_str().unwrap();
            assert_eq!(one["is_error"], false, "{}: {text}", one["host"]);
            assert!(
                text.contains(HELLO_MATCH) && !text.contains("decoy.py"),
                "{}: ast_grep searches the project: {text}",
                one["host"]
            );
        }
        seen
    }
}

impl Drop for Stage {
    /// Every `tether` this stage started that still runs (its pid recorded
    /// by the stand-in, its executable the built binary) gets SIGTERM, so
    /// that it stops its children and removes its token file, then SIGKILL
    /// past [`STOP_WITHIN`].
    fn drop(&mut self) {
        let real = Path::new(env!("CARGO_BIN_EXE_tether")).canonicalize().ok();
        let ours = |pid: i32| {
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
            exe.is_some_and(|e| Some(e) == real) && tether_actors::process::is_running(pid)
        };
        let left: Vec<i32> = self.tether_pids().into_iter().filter(|pid| ours(*pid)).collect();
        for pid in &left {
            // SAFETY: a `tether` this test started.
            unsafe { libc::kill(*pid, libc::SIGTERM) };
        }
        let deadline = Instant::now() + STOP_WITHIN;
        while left.iter().any(|pid| ours(*pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for pid in left.into_iter().filter(|pid| ours(*pid)) {
            // SAFETY: as above; it did not stop on SIGTERM.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// A stand-in that writes its working directory and arguments,
/// NUL-separated, to `records/NAME.PID.call`.
fn recorder(records: &Path, name: &str) -> String {
    let file = format!("'{}/{name}.'$$", records.display());
    format!("printf '%s\\0' \"$PWD\" \"$@\" > {file}.tmp && mv {file}.tmp {file}.call\n")
}

/// `claude mcp add [options] NAME COMMAND_OR_URL [ARGS...]`, as Claude
/// Code's command line reads it: `-s/--scope`, `-t/--transport`,
/// `-e/--env` and `-H/--header` each take a value; after `--`, nothing is
/// an option.
#[derive(Debug, Default)]
struct ClaudeAdd {
    scope: Option<String>,
    transport: Option<String>,
    env: Vec<String>,
    headers: Vec<String>,
    name: String,
    command_or_url: String,
    args: Vec<String>,
}

fn claude_add(args: &[String]) -> ClaudeAdd {
    assert!(args.len() > 2 && args[..2] == ["mcp", "add"], "not `claude mcp add`: {args:?}");
    let (mut add, mut positional, mut rest) = (ClaudeAdd::default(), Vec::new(), args[2..].iter());
    while let Some(arg) = rest.next() {
        if arg == "--" {
            positional.extend(rest.by_ref().cloned());
            break;
        }
        let mut value = || rest.next().unwrap_or_else(|| panic!("`{arg}` needs a value: {args:?}")).clone();
        match arg.as_str() {
            "-s" | "--scope" => add.scope = Some(value()),
            "-t" | "--transport" => add.transport = Some(value()),
            "-e" | "--env" => add.env.push(value()),
            "-H" | "--header" => add.headers.push(value()),
            other if other.starts_with('-') => panic!("`claude mcp add` takes no `{other}`: {args:?}"),
            _ => positional.push(arg.clone()),
        }
    }
    assert!(positional.len() >= 2, "`claude mcp add` needs a name and a command or URL: {args:?}");
    add.name = positional.remove(0);
    add.command_or_url = positional.remove(0);
    add.args = positional;
    if let Some(scope) = &add.scope {
        assert!(["local", "user", "project"].contains(&scope.as_str()), "{scope}");
    }
    add
}

/// `[mcp_servers.NAME]` of a Codex `config.toml`, checked as Codex reads
/// it: known keys only, one transport, each key of its type.
fn codex_server(text: &str) -> (String, toml::Table) {
    let config: toml::Table = text.parse().unwrap_or_else(|e| panic!("not TOML: {e}\n{text}"));
    assert_eq!(config.keys().collect::<Vec<_>>(), ["mcp_servers"], "{text}");
    let servers = config["mcp_servers"].as_table().expect("`mcp_servers` is a table");
    assert_eq!(servers.len(), 1, "{text}");
    let (name, server) = servers.iter().next().unwrap();
    let server = server.as_table().expect("a server is a table").clone();
    let (stdio, http) = (server.contains_key("command"), server.contains_key("url"));
    assert!(stdio != http, "Codex takes `command` (stdio) or `url` (streamable HTTP): {text}");
    let own = if stdio { CODEX_STDIO_KEYS } else { CODEX_HTTP_KEYS };
    for (key, value) in &server {
        assert!(
            own.contains(&key.as_str()) || CODEX_SHARED_KEYS.contains(&key.as_str()),
            "Codex takes no `{key}` here: {text}"
        );
        let ok = match key.as_str() {
            "args" | "env_vars" => value.as_array().is_some_and(|a| a.iter().all(toml::Value::is_str)),
            "env" | "http_headers" | "env_http_headers" => {
                value.as_table().is_some_and(|t| t.values().all(toml::Value::is_str))
            }
            "command" | "cwd" | "url" | "bearer_token_env_var" => value.is_str(),
            _ => true,
        };
        assert!(ok, "`{key}` has the wrong type: {text}");
    }
    (name.clone(), server)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_string())
        .collect()
}

/// `${workspaceFolder}` as VS Code and Cursor fill it in; no other
/// variable may be left.
fn workspace_folder(args: Vec<String>, project: &Path) -> Vec<String> {
    let args: Vec<String> =
        args.into_iter().map(|a| a.replace("${workspaceFolder}", &project.display().to_string())).collect();
    assert!(args.iter().all(|a| !a.contains("${")), "a variable neither host fills in: {args:?}");
    args
}

#[test]
fn install_and_status_in_a_fresh_project() {
    let snippets = snippets();
    let stage = Stage::new();
    let clone = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The Set up section runs from a clone; so does the install.
    let (status, out, err) = stage.sh(&snippets.install, clone);
    assert!(status.success(), "{status}\n{out}\n{err}");
    let install = stage.call("cargo");
    assert_eq!(install.args, ["install", "--path", "."]);
    assert_eq!(install.cwd, clone.canonicalize().unwrap());
    let manifest: toml::Table =
        std::fs::read_to_string(install.cwd.join("Cargo.toml")).unwrap().parse().unwrap();
    let bins = manifest["bin"].as_array().expect("[[bin]] targets");
    assert!(
        bins.iter().any(|b| b.get("name").and_then(toml::Value::as_str) == Some("tether")),
        "`cargo install --path .` installs `tether`"
    );
    // `tether status` ran in the project, through the built binary.
    assert_eq!(stage.tether_pids().len(), 1, "{err}");
    let project = stage.project();
    assert!(out.contains(&format!("working directory: {}", project.display())), "{out}");
    assert!(out.lines().any(|l| l.trim_start().starts_with("python") && l.contains("1 file here")), "{out}");
    let tools =
        out.lines().find(|l| l.starts_with("tools on the full surface: ")).unwrap_or_else(|| panic!("{out}"));
    assert!(tools.contains("ast_grep"), "{tools}");
}

#[test]
fn each_host_configuration_starts_a_server_on_the_project() {
    let snippets = snippets();
    let stage = Stage::new();
    let project = stage.project();
    let mut specs = Vec::new();

    // Claude Code: the command it is given, run from the project.
    let (status, out, err) = stage.sh(&snippets.claude, &project);
    assert!(status.success(), "{status}\n{out}\n{err}");
    let call = stage.call("claude");
    assert_eq!(call.cwd, project, "run in the project: a local entry is the project's");
    let add = claude_add(&call.args);
    assert!(add.transport.as_deref().is_none_or(|t| t == "stdio"), "{add:?}");
    assert_eq!((add.name.as_str(), add.command_or_url.as_str()), ("tether", "tether"), "{add:?}");
    assert_eq!(add.args[0], "serve", "{add:?}");
    // It names the project, so it works from wherever the host starts it.
    specs.push(json!({"host": "claude-code", "command": add.command_or_url, "args": add.args,
        "env": null, "cwd": stage.elsewhere()}));

    // Codex: the server runs where `codex` runs (the project), with only
    // the variables Codex passes on.
    let (name, server) = codex_server(&snippets.codex);
    assert_eq!(name, "tether");
    let args: Vec<String> = server
        .get("args")
        .and_then(toml::Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    assert_eq!(args.first().map(String::as_str), Some("serve"), "{args:?}");
    let mut env = serde_json::Map::new();
    for var in CODEX_ENV {
        if let Ok(value) = std::env::var(var) {
            env.insert(var.to_string(), json!(value));
        }
    }
    env.insert("PATH".into(), json!(stage.path()));
    if let Some(extra) = server.get("env").and_then(toml::Value::as_table) {
        for (k, v) in extra {
            env.insert(k.clone(), json!(v.as_str().unwrap()));
        }
    }
    let cwd = server.get("cwd").and_then(toml::Value::as_str).map(PathBuf::from).unwrap_or(project.clone());
    specs.push(json!({"host": "codex", "command": server["command"].as_str().unwrap(), "args": args,
        "env": env, "cwd": cwd}));

    // VS Code: `servers`, a stdio server with `type`.
    let vscode: Value = serde_json::from_str(&snippets.vscode).expect(".vscode/mcp.json is JSON");
    for key in vscode.as_object().unwrap().keys() {
        assert!(["servers", "inputs"].contains(&key.as_str()), "VS Code's mcp.json takes no `{key}`");
    }
    let server = &vscode["servers"]["tether"];
    for key in server.as_object().expect("servers.tether").keys() {
        assert!(VSCODE_STDIO_KEYS.contains(&key.as_str()), "VS Code takes no `{key}` for a stdio server");
    }
    assert_eq!(server["type"], "stdio");
    let args = workspace_folder(strings(&server["args"]), &project);
    specs.push(json!({"host": "vscode", "command": server["command"], "args": args, "env": null,
        "cwd": stage.elsewhere()}));

    // Cursor: `mcpServers`, a server with `command`.
    let cursor: Value = serde_json::from_str(&snippets.cursor).expect(".cursor/mcp.json is JSON");
    assert_eq!(cursor.as_object().unwrap().keys().collect::<Vec<_>>(), ["mcpServers"]);
    let server = &cursor["mcpServers"]["tether"];
    for key in server.as_object().expect("mcpServers.tether").keys() {
        assert!(CURSOR_KEYS.contains(&key.as_str()), "Cursor takes no `{key}` for a server");
    }
    let args = workspace_folder(strings(&server["args"]), &project);
    specs.push(json!({"host": "cursor", "command": server["command"], "args": args, "env": null,
        "cwd": stage.elsewhere()}));

    for spec in &specs {
        assert_eq!(spec["command"], "tether", "{spec}");
    }
    let seen = stage.connect(&specs);
    assert_eq!(seen.len(), 4);
    assert_eq!(stage.tether_pids().len(), 4, "each host started its own `tether serve`");
}

#[test]
fn serve_http_gives_several_agents_one_run() {
    let snippets = snippets();
    let stage = Stage::new();
    let project = stage.project();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    assert!(snippets.http.contains(README_ADDR) && snippets.codex_http.contains(README_ADDR));
    let (status, out, err) = stage.sh(&snippets.http.replace(README_ADDR, &addr), Path::new("/"));
    assert!(status.success(), "{status}\n{out}\n{err}");
    // The snippet puts the server in the background and returns: on a
    // loaded machine the shim records its pid a moment later.
    let deadline = Instant::now() + LISTEN_WITHIN;
    while stage.tether_pids().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let pids = stage.tether_pids();
    assert_eq!(pids.len(), 1, "one `tether serve --http`: {err}");
    let url = format!("http://{addr}/mcp");
    // The server's stderr went on into the shell's (a file): it says where it listens.
    let deadline = Instant::now() + LISTEN_WITHIN;
    let stderr = stage.records().join(format!("run{}.err", stage.runs.get()));
    while !std::fs::read_to_string(&stderr).unwrap_or_default().contains(&format!("MCP over HTTP at {url}")) {
        assert!(
            Instant::now() < deadline,
            "tether serve --http did not say it listens within {LISTEN_WITHIN:?}:\n{}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // It serves the project the block moved to, not where the shell started.
    let cwd = std::fs::read_link(format!("/proc/{}/cwd", pids[0])).unwrap();
    assert_eq!(cwd, project);

    // Claude Code: the URL and the header it was given, the token expanded.
    let add = claude_add(&stage.call("claude").args);
    assert_eq!(add.transport.as_deref(), Some("http"), "{add:?}");
    assert_eq!((add.name.as_str(), add.command_or_url.as_str()), ("tether", url.as_str()), "{add:?}");
    assert!(add.args.is_empty(), "{add:?}");
    assert_eq!(add.headers.len(), 1, "{add:?}");
    let (header, value) = add.headers[0].split_once(':').expect("`Name: value`");
    let token = value.trim().strip_prefix("Bearer ").expect("a bearer token").to_string();
    assert_eq!(header, "Authorization");
    assert!(token.len() >= 16 && !token.contains('$'), "the exported token, expanded: {token:?}");

    // Codex: the URL, and the token from the variable the README exports.
    let (name, server) = codex_server(&snippets.codex_http.replace(README_ADDR, &addr));
    assert_eq!(name, "tether");
    assert_eq!(server["url"].as_str(), Some(url.as_str()));
    assert_eq!(server["bearer_token_env_var"].as_str(), Some("TETHER_TOKEN"), "the variable tether reads");
    assert!(snippets.http.contains("export TETHER_TOKEN="), "{}", snippets.http);

    let specs = [
        json!({"host": "claude-code", "url": url, "headers": {header: value.trim()}}),
        json!({"host": "codex", "url": url, "headers": {"Authorization": format!("Bearer {token}")}}),
    ];
    stage.connect(&specs);
    assert_eq!(stage.tether_pids().len(), 1, "both agents used the one run");

    // SIGTERM stops it (it is the shell's orphan: watched, not waited for).
    // SAFETY: the `tether serve` this test started.
    unsafe { libc::kill(pids[0], libc::SIGTERM) };
    let deadline = Instant::now() + STOP_WITHIN;
    while tether_actors::process::is_running(pids[0]) {
        assert!(
            Instant::now() < deadline,
            "tether serve --http did not stop on SIGTERM within {STOP_WITHIN:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
