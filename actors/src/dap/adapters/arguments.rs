//! The `launch` and `attach` requests' arguments, adapter by adapter.

use std::path::Path;

use serde_json::{Value, json};

use super::LaunchArgs;
use crate::dap::asked::{AttachSpec, LaunchSpec, NODE_TEST};

/// The `launch` request's arguments, written as `form` says.
pub(crate) fn launch_args(form: LaunchArgs, spec: &LaunchSpec, workdir: &Path) -> Value {
    let cwd = spec.cwd.clone().unwrap_or_else(|| workdir.to_path_buf());
    let program = spec.program.as_ref().map(|p| p.display().to_string());
    match form {
        LaunchArgs::Debugpy => {
            // `breakOnSystemExit: []`: `sys.exit(3)` is the program ending
            // as it meant to, reported as its exit code, not an uncaught
            // exception to stop at.
            let mut a = json!({"name": "tether", "type": "python", "request": "launch", "args": spec.args, "cwd": cwd, "env": spec.env, "console": "internalConsole", "justMyCode": true, "redirectOutput": true, "breakOnSystemExit": []});
            match (&program, &spec.module) {
                (Some(p), _) => a["program"] = json!(p),
                (None, Some(m)) => a["module"] = json!(m),
                (None, None) => {}
            }
            a
        }
        LaunchArgs::Delve => {
            // delve builds the package the file is in.
            let dir = spec.program.as_deref().and_then(Path::parent).unwrap_or(workdir);
            let cwd = spec.cwd.as_deref().unwrap_or(dir);
            json!({"name": "tether", "request": "launch", "mode": "debug", "program": dir, "args": spec.args, "cwd": cwd, "env": spec.env})
        }
        // dds reads `env` as a map (lldb-dap's `K=V` list would fail its
        // argument check); `toString()` in the variables view makes an
        // object's local read as its value rather than `Instance of 'Foo'`.
        LaunchArgs::Dart => {
            json!({"name": "tether", "type": "dart", "request": "launch", "program": program, "args": spec.args, "cwd": cwd, "env": spec.env, "evaluateToStringInDebugViews": true})
        }
        // Output through DAP, node's own frames skipped. A TypeScript
        // program runs from its compiled output, found through the source
        // maps of the project's `.js` files (`outFiles`).
        LaunchArgs::JsDebug => {
            let mut a = js_debug_common(workdir, spec.is_test_run());
            a["request"] = json!("launch");
            a["program"] = json!(program);
            match (spec.module.as_deref(), spec.npm_script()) {
                // The test file runs under node's runner; `args` are the
                // runner's flags. On Node 20 the runner starts each test
                // file as a process of its own, one at a time under the
                // inspector; js-debug's bootloader fails in the runner
                // itself (its V8 environment is not one it can attach), so
                // the targets it announces are the test files' (followed:
                // `targets`). A directory is the runner's argument.
                (Some(NODE_TEST), _) => {
                    let mut runtime = vec!["--test".to_string()];
                    runtime.extend(spec.args.iter().cloned());
                    match spec.program.as_ref() {
                        Some(dir) if dir.is_dir() => {
                            runtime.push(dir.display().to_string());
                            without_program(&mut a);
                        }
                        Some(_) => {}
                        None => without_program(&mut a),
                    }
                    a["runtimeArgs"] = json!(runtime);
                    a["args"] = json!([]);
                }
                // npm's own node process is the first target, the script's
                // processes follow it.
                (_, Some(script)) => {
                    let mut runtime = vec!["run".to_string(), script.to_string()];
                    if !spec.args.is_empty() {
                        runtime.push("--".into());
                        runtime.extend(spec.args.iter().cloned());
                    }
                    without_program(&mut a);
                    a["runtimeExecutable"] = json!("npm");
                    a["runtimeArgs"] = json!(runtime);
                    a["args"] = json!([]);
                }
                _ => a["args"] = json!(spec.args),
            }
            a["cwd"] = json!(cwd);
            a["env"] = json!(spec.env);
            a["console"] = json!("internalConsole");
            a["outputCapture"] = json!("std");
            a
        }
        // The program, its arguments and environment are on rdbg's command
        // line (`spawn_line`): the launch only says it is not an attach.
        LaunchArgs::OnCommandLine => json!({"name": "tether", "request": "launch"}),
        LaunchArgs::Native => {
            let env: Vec<String> = spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            json!({"name": "tether", "request": "launch", "program": program, "args": spec.args, "cwd": cwd, "env": env, "stopOnEntry": false})
        }
    }
}

/// Node's own code, which js-debug steps over and never stops in (V8
/// pauses past it, so a `pause` lands in the program's code).
const SKIPPED: [&str; 1] = ["<node_internals>/**"];

/// The same in a `node:test` run, but for `assert`, where a failed
/// assertion is thrown: js-debug never stops in a file it skips, and
/// [`super::filters::ASSERTIONS`] must stop there. Its frames are
/// folded in the snapshot all the same.
const SKIPPED_IN_TESTS: [&str; 3] =
    ["<node_internals>/internal/**", "<node_internals>/!(assert)", "<node_internals>/!(assert)/**"];

/// What every js-debug launch or attach is given: node's own frames
/// skipped, and the folders its source-map defaults would take from
/// `${workspaceFolder}`, which only VS Code fills in.
fn js_debug_common(folder: &Path, test_run: bool) -> Value {
    let out_files = [
        format!("{}/**/*.js", folder.display()),
        format!("{}/**/*.mjs", folder.display()),
        format!("{}/**/*.cjs", folder.display()),
        "!**/node_modules/**".to_string(),
    ];
    let maps = [format!("{}/**", folder.display()), "!**/node_modules/**".to_string()];
    let skipped: &[&str] = if test_run { &SKIPPED_IN_TESTS } else { &SKIPPED };
    // A test run's processes are followed (`targets`); a program's child
    // processes are not attached.
    json!({
        "name": "tether", "type": "pwa-node", "skipFiles": skipped,
        "autoAttachChildProcesses": test_run,
        "outFiles": out_files, "resolveSourceMapLocations": maps, "sourceMaps": true,
        "__workspaceFolder": folder,
    })
}

/// A js-debug launch whose runtime's arguments say what runs.
fn without_program(args: &mut Value) {
    if let Some(o) = args.as_object_mut() {
        o.remove("program");
    }
}

/// The `attach` request's arguments.
pub(crate) fn attach_args(spec: &AttachSpec, workdir: &Path) -> Value {
    match spec {
        AttachSpec::DebugpyPort(port) => {
            json!({"name": "tether", "type": "python", "request": "attach", "connect": {"host": "127.0.0.1", "port": port}, "justMyCode": true})
        }
        AttachSpec::DelvePort(_) => json!({"name": "tether", "request": "attach", "mode": "remote"}),
        AttachSpec::DelvePid(pid) => {
            json!({"name": "tether", "request": "attach", "mode": "local", "processId": pid})
        }
        AttachSpec::LldbPid(pid) => json!({"name": "tether", "request": "attach", "pid": pid}),
        // `cwd` is what dds counts as the user's own code (the rest is
        // library code it steps over).
        AttachSpec::NodeInspectPort(port) => {
            let mut a = js_debug_common(workdir, false);
            a["request"] = json!("attach");
            a["port"] = json!(port);
            a["address"] = json!("127.0.0.1");
            a["continueOnAttach"] = json!(true);
            a
        }
        // The `debug` gem stops the program when attached (and says so
        // after configurationDone).
        AttachSpec::RdbgPort(_) => json!({"name": "tether", "request": "attach"}),
        AttachSpec::DartVmService(uri) => {
            json!({"name": "tether", "type": "dart", "request": "attach", "vmServiceUri": uri, "cwd": workdir, "evaluateToStringInDebugViews": true})
        }
    }
}
