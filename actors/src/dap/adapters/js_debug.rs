//! js-debug's parent session. Its DAP server (`vsDebugServer.js`, the
//! adapter VS Code uses) takes the `launch` (or `attach`) on the first
//! connection, starts (or reaches)
//! the program, then asks for a child session (`startDebugging`, with the
//! `configuration` naming the target) on a connection of its own: the
//! breakpoints, stops and variables are all the child's.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Adapter;
use super::arguments::{attach_args, launch_args};
use crate::dap::asked::{AttachSpec, LaunchSpec};
use crate::dap::client::{INITIALIZED_WAIT, Start, connect_tcp};
use crate::dap::start_failure::{Said, Step, Stuck};
use crate::project_walk::{self, Entry, Rules};
use crate::wire::dap::{DapClient, Delivery};

/// Launches `spec` on `parent` and connects the child session js-debug
/// asks for: its client, its events, and the `launch` arguments it is to
/// be sent. A TypeScript program runs through the loader the project has
/// ([`ts_loader`]: tsx, ts-node), else from its compiled output
/// ([`compiled_output`]); its breakpoints and stops stay in `.ts` lines
/// through the source maps. The launch, and the wait for the child
/// session, are bounded by `run_wait` (the session's wait for a run).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn child(
    parent: &DapClient,
    events: &mut UnboundedReceiver<Delivery>,
    port: u16,
    name: &str,
    adapter: Adapter,
    first: (Option<&LaunchSpec>, Option<&AttachSpec>),
    workdir: &Path,
    run_wait: std::time::Duration,
) -> Result<(DapClient, UnboundedReceiver<Delivery>, (String, Value)), Stuck> {
    // As js-debug's VS Code client does: tether takes `startDebugging`.
    let id = adapter.quirks.child_adapter_id.unwrap_or(adapter.id);
    parent
        .initialize(id, true)
        .await
        .map_err(|e| Step::Request { request: "initialize", error: e.to_string() })?;
    let (how, args) = match first {
        (Some(spec), _) => {
            let mut spec = spec.clone();
            let typescript = spec.program.clone().filter(|p| p.is_file() && is_typescript(p));
            let loader = typescript.as_deref().and_then(|p| ts_loader(p, workdir));
            if let (Some(program), None) = (typescript, &loader) {
                let root = workdir.to_path_buf();
                let found = tokio::task::spawn_blocking(move || compiled_output(&program, &root))
                    .await
                    .map_err(|e| Step::Interrupted(e.to_string()))??;
                spec.program = Some(found);
            }
            let mut args = launch_args(adapter.quirks.launch, &spec, workdir);
            // The project's loader runs the `.ts` itself (its source maps
            // inline): node takes it before anything else.
            if let Some(mut runtime) = loader {
                runtime.extend(
                    args["runtimeArgs"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(String::from),
                );
                args["runtimeArgs"] = json!(runtime);
            }
            (Start::Launch, args)
        }
        (None, Some(spec)) => (Start::Attach, attach_args(spec, workdir)),
        // The session asks for one or the other, always.
        (None, None) => return Err(Step::Interrupted("nothing to launch or attach to".into()).into()),
    };
    let command = how.command();
    let launch = tokio::spawn(parent.start_program(how, args, run_wait));
    wait_for(events, Awaited::Initialized, INITIALIZED_WAIT, &mut None, command).await?;
    parent
        .configuration_done()
        .await
        .map_err(|e| Step::Request { request: "configurationDone", error: e.to_string() })?;
    // One wait, watching the launch too: a refused launch says why at
    // once, and no event the wait took is lost with a dropped future.
    let mut launch = Some(launch);
    let asked = wait_for(events, Awaited::ChildSession, run_wait, &mut launch, command).await?;
    let configuration = asked["configuration"].clone();
    if !configuration.is_object() {
        return Err(Step::ChildWithoutConfiguration { asked: asked.to_string() }.into());
    }
    let request = asked["request"].as_str().unwrap_or("launch").to_string();
    let stream =
        connect_tcp(port).await.map_err(|e| Step::ChildNotConnected { port, error: e.to_string() })?;
    let (r, w) = stream.into_split();
    let (child, child_events) = DapClient::connect(&format!("{name} (child)"), r, w);
    Ok((child, child_events, (request, configuration)))
}

/// Lines of what node printed before the child session that a failed
/// start quotes, at most.
const SAID_LINES: usize = 3;

/// How long a start that ended waits for node's last output, which
/// js-debug may send after saying the run ended.
const LAST_WORDS_WAIT: std::time::Duration = std::time::Duration::from_millis(300);

/// What the start of a js-debug session waits for on the parent connection.
#[derive(Clone, Copy)]
enum Awaited {
    /// The `initialized` event (its body is empty).
    Initialized,
    /// The `startDebugging` that asks for the child session: its arguments.
    ChildSession,
}

impl Awaited {
    /// Its name in the messages of a failed start.
    fn name(self) -> &'static str {
        match self {
            Awaited::Initialized => "initialized",
            Awaited::ChildSession => "startDebugging",
        }
    }
}

/// What `wanted` brings, first on `events`, within `bound`. A start that
/// fails quotes the last lines node printed meanwhile (`bad option:
/// --test-name-patern=x` is said there, and nowhere else).
async fn wait_for(
    events: &mut UnboundedReceiver<Delivery>,
    wanted: Awaited,
    bound: std::time::Duration,
    launch: &mut Option<tokio::task::JoinHandle<Result<Value, crate::wire::pending::RequestError>>>,
    command: &'static str,
) -> Result<Value, Stuck> {
    let deadline = Instant::now() + bound;
    let mut said: Vec<String> = Vec::new();
    let fail = |step: Step, said: &[String]| {
        let lines = said.iter().rev().take(SAID_LINES).rev().cloned().collect::<Vec<_>>();
        Stuck { step, said: (!lines.is_empty()).then_some(Said { by: "node", lines }) }
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let received = match launch.as_mut() {
            Some(handle) => tokio::select! {
                received = tokio::time::timeout(left, events.recv()) => received,
                launched = handle => {
                    *launch = None;
                    match launched {
                        Ok(Err(e)) => {
                            return Err(fail(Step::Request { request: command, error: e.to_string() }, &said));
                        }
                        Err(e) => return Err(Step::Interrupted(e.to_string()).into()),
                        Ok(Ok(_)) => continue,
                    }
                }
            },
            None => tokio::time::timeout(left, events.recv()).await,
        };
        let event = wanted.name();
        let ended = match received {
            Ok(Some(Delivery::Event(ev)))
                if matches!(wanted, Awaited::Initialized) && ev.event == "initialized" =>
            {
                return Ok(ev.body);
            }
            Ok(Some(Delivery::StartDebugging(asked))) if matches!(wanted, Awaited::ChildSession) => {
                return Ok(asked);
            }
            Ok(Some(Delivery::Event(ev))) if ev.event == "terminated" => true,
            Ok(Some(Delivery::Ended(_))) => true,
            Ok(Some(delivery)) => {
                heard(&delivery, &mut said);
                false
            }
            Ok(None) => return Err(fail(Step::ClosedBefore { event }, &said)),
            Err(_) => return Err(fail(Step::NoEvent { event, waited: bound }, &said)),
        };
        if ended {
            // node's last words (`bad option: …`) may come just after.
            let grace = tokio::time::Instant::now() + LAST_WORDS_WAIT;
            while let Ok(Some(delivery)) = tokio::time::timeout_at(grace, events.recv()).await {
                heard(&delivery, &mut said);
            }
            return Err(fail(Step::EndedBefore { event }, &said));
        }
    }
}

/// Keeps the lines of what node printed (`output` events but telemetry).
fn heard(delivery: &Delivery, said: &mut Vec<String>) {
    if let Delivery::Event(ev) = delivery
        && ev.event == "output"
        && ev.body["category"] != "telemetry"
    {
        let text = ev.body["output"].as_str().unwrap_or_default();
        said.extend(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from));
    }
}

/// The node flags that load the TypeScript loader the project has
/// installed — tsx, else ts-node (`-r ts-node/register`, or its
/// `--loader ts-node/esm` for an ES module) — from the
/// program's folder up to the working directory; absolute, so that they
/// load whatever the program's `cwd`. A CommonJS program gets tsx's
/// require hook (`-r`, its `./cjs` export), an ES module its loader
/// (`--import`, its `.` export): under `--import` node evaluates even a
/// CommonJS main module inside a promise, and an exception its top level
/// throws is no uncaught exception to stop at.
fn ts_loader(program: &Path, workdir: &Path) -> Option<Vec<String>> {
    let esm = is_es_module(program, workdir);
    let mut dir = program.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(workdir)) {
        let tsx = d.join("node_modules/tsx");
        if let Ok(text) = std::fs::read_to_string(tsx.join("package.json")) {
            let manifest: Value = serde_json::from_str(&text).unwrap_or_default();
            let exports = &manifest["exports"];
            if let (false, Some(cjs)) = (esm, exports["./cjs"].as_str()) {
                return Some(vec!["-r".into(), normalize(&tsx.join(cjs)).display().to_string()]);
            }
            let entry = exports["."].as_str().unwrap_or("./dist/loader.mjs");
            let url = url::Url::from_file_path(normalize(&tsx.join(entry))).ok()?;
            return Some(vec!["--import".into(), url.to_string()]);
        }
        let ts_node = d.join("node_modules/ts-node");
        if esm {
            // Its ES-module loader, with node's `--loader` (a warning).
            let entry = ts_node.join("esm.mjs");
            if entry.is_file() {
                let url = url::Url::from_file_path(&entry).ok()?;
                return Some(vec!["--loader".into(), url.to_string()]);
            }
        } else if ts_node.join("register").is_dir() {
            return Some(vec!["-r".into(), ts_node.join("register").display().to_string()]);
        }
        dir = d.parent();
    }
    None
}

/// Whether node runs `program` as an ES module: `.mts`, or `.ts` under a
/// `package.json` of `"type": "module"` (the nearest one, up to the
/// working directory).
fn is_es_module(program: &Path, workdir: &Path) -> bool {
    match program.extension().and_then(|e| e.to_str()) {
        Some("mts" | "mjs") => return true,
        Some("cts" | "cjs") => return false,
        _ => {}
    }
    let mut dir = program.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(workdir)) {
        if let Ok(text) = std::fs::read_to_string(d.join("package.json")) {
            let manifest: Value = serde_json::from_str(&text).unwrap_or_default();
            return manifest["type"] == "module";
        }
        dir = d.parent();
    }
    false
}

/// Files looked at for the compiled output of a TypeScript program, at most.
const MAX_SCANNED: usize = 20_000;

fn is_typescript(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ts" || e == "mts" || e == "cts")
}

/// The `.js` file whose source map names `program` among its sources,
/// under `root` (outside `node_modules`): what `tsc --sourceMap` wrote;
/// the newest, when several builds do.
fn compiled_output(program: &Path, root: &Path) -> Result<PathBuf, Step> {
    let mut seen = 0;
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    // A build's output is usually gitignored: the ignore files are not read.
    let rules = Rules { ignore_files: false, skip: &["node_modules"], max_depth: None };
    project_walk::walk(root, rules, |entry| {
        seen += 1;
        if seen > MAX_SCANNED {
            return ControlFlow::Break(());
        }
        let Entry::File(path) = entry else { return ControlFlow::Continue(()) };
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        if [".js.map", ".mjs.map", ".cjs.map"].iter().any(|e| name.ends_with(e))
            && let Some(js) = maps_to(path, program).filter(|js| js.starts_with(root))
        {
            let modified = std::fs::metadata(&js).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
            found.push((modified, js));
        }
        ControlFlow::Continue(())
    });
    if let Some((_, js)) = found.into_iter().max_by_key(|(t, _)| *t) {
        return Ok(js);
    }
    Err(Step::NoCompiledOutput { program: crate::fs::relative(root, program) })
}

/// The `.js` file of the source map `map` when its sources hold `program`.
fn maps_to(map: &Path, program: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(map).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let dir = map.parent()?;
    let source_root = v["sourceRoot"].as_str().unwrap_or("");
    let names = v["sources"].as_array()?.iter().filter_map(Value::as_str).any(|s| {
        let joined = dir.join(source_root).join(s);
        normalize(&joined) == normalize(program)
    });
    // The map's own name, less `.map`: its `file` field may point anywhere.
    let own = map.file_name()?.to_string_lossy().trim_end_matches(".map").to_string();
    let js = normalize(&dir.join(own));
    (names && js.is_file()).then_some(js)
}

/// `path` with `.` and `..` taken out (source maps name `../src/a.ts`).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projects_tsx_is_its_require_hook_for_commonjs_and_its_loader_for_es_modules() {
        let root = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("package.json", r#"{"name": "p"}"#);
        write(
            "node_modules/tsx/package.json",
            r#"{"exports": {".": "./dist/loader.mjs", "./cjs": "./dist/cjs/index.cjs"}}"#,
        );
        write("src/app.ts", "");
        write("src/esm.mts", "");
        let tsx = root.path().join("node_modules/tsx");
        let cjs = ts_loader(&root.path().join("src/app.ts"), root.path()).unwrap();
        assert_eq!(cjs, ["-r".to_string(), tsx.join("dist/cjs/index.cjs").display().to_string()]);
        let esm = ts_loader(&root.path().join("src/esm.mts"), root.path()).unwrap();
        assert_eq!(esm[0], "--import");
        assert!(
            esm[1].starts_with("file://") && esm[1].ends_with("/node_modules/tsx/dist/loader.mjs"),
            "{esm:?}"
        );
        write("package.json", r#"{"name": "p", "type": "module"}"#);
        assert_eq!(ts_loader(&root.path().join("src/app.ts"), root.path()).unwrap()[0], "--import");
        // None in the project: the compiled output is looked for instead.
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("a.ts"), "").unwrap();
        assert_eq!(ts_loader(&other.path().join("a.ts"), other.path()), None);
    }

    #[test]
    fn the_compiled_output_is_the_js_whose_map_names_the_program() {
        let root = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = root.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("src/app.ts", "let x = 1;\n");
        write("out/app.js", "let x = 1;\n//# sourceMappingURL=app.js.map\n");
        write(
            "out/app.js.map",
            r#"{"version":3,"file":"app.js","sourceRoot":"","sources":["../src/app.ts"],"mappings":""}"#,
        );
        write("node_modules/x/app.js.map", r#"{"version":3,"file":"app.js","sources":["../../src/app.ts"]}"#);
        let program = root.path().join("src/app.ts");
        assert_eq!(compiled_output(&program, root.path()).unwrap(), root.path().join("out/app.js"));
        let other = root.path().join("src/other.ts");
        let err = compiled_output(&other, root.path()).unwrap_err();
        assert_eq!(err, Step::NoCompiledOutput { program: "src/other.ts".into() });
    }
}
