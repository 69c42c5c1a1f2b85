//! The `debug` tool against real js-debug on real Node: JavaScript,
//! TypeScript through its source maps, and a program started with
//! `--inspect` (test runs are `node_tests`).

use super::*;

/// js-debug's DAP server, as `tether install js-debug` puts it in the tools prefix.
pub(super) fn js_debug() {
    require("node", &["--version"], "apt-get install nodejs");
    let prefix = tether_actors::tools_prefix::bin().expect("a home directory for tether's tools prefix");
    assert!(
        prefix.join("js-debug-adapter").is_file(),
        "`js-debug-adapter` is not in {}; install it with `tether install js-debug` (the README's test command does)",
        prefix.display()
    );
}

const CRASH_JS: &str = r#"function inner(user) {
  const name = user.profile.name;
  return name.toUpperCase();
}
function middle(list) {
  const first = list[0];
  return inner(first);
}
function outer() {
  const users = [{ id: 1 }];
  return middle(users);
}
console.log("starting");
outer();
"#;

#[test]
fn a_javascript_type_error_three_calls_deep_is_one_launch() {
    js_debug();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("crash.js", CRASH_JS)]);
    let answers =
        batch(dir.path(), &[json!({"op": "launch", "program": "crash.js"}), json!({"op": "terminate"})]);
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with(
            "launched; stopped (exception TypeError: Cannot read properties of undefined (reading 'name')) at crash.js:2 in inner"
        ),
        "{stop}"
    );
    assert!(stop.contains(">   2 |   const name = user.profile.name;"), "{stop}");
    assert!(stop.contains("  user = {id: 1} (Object)"), "{stop}");
    assert!(!stop.contains("this = global"), "{stop}");
    assert!(
        stop.contains("inner at crash.js:2 [frame_id=0] ← middle at crash.js:7")
            && stop.contains("outer at crash.js:11")
            && stop.contains("library frames"),
        "node's own frames folded: {stop}"
    );
}

const LOOP_JS: &str = r#"function total(items) {
  let sum = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    sum += item * 2;
  }
  return sum;
}
console.log(total([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
"#;

#[test]
fn a_javascript_loop_stops_on_a_condition_with_its_block_locals_in_one_call() {
    js_debug();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("loop.js", LOOP_JS)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "loop.js", "file": "loop.js", "breakpoints": [{"line": 5, "condition": "i === 6"}]}),
            json!({"op": "continue"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(stop.starts_with("launched; stopped (breakpoint"), "{stop}");
    assert!(stop.contains(" at loop.js:5 in total"), "{stop}");
    // The loop's block scopes and the function's: i = 6, item = 7, sum = 2 * (1 + … + 6).
    for local in ["  i = 6 (number)", "  item = 7 (number)", "  sum = 42 (number)"] {
        assert!(stop.contains(local), "`{local}` in the snapshot:\n{stop}");
    }
    assert!(stop.contains("breakpoints: 1 bound where asked"), "{stop}");
    let done = text(&answers[1]);
    // js-debug ends a node child session with `terminated`, no exit code.
    assert!(done.starts_with("the debug session ended (the program terminated)"), "{done}");
}

#[test]
fn a_javascript_session_leaves_no_adapter_or_program_behind() {
    js_debug();
    let forever = "let n = 0;\nsetInterval(() => {\n  n += 1;\n}, 50);\n";
    let dir = tempfile::tempdir().unwrap();
    // A name no other test's program has: js-debug starts it as
    // `node ./NAME` in the project, so that is what is looked for.
    let unique: String = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let name = format!("forever_{unique}.js");
    std::fs::write(dir.path().join("package.json"), "{\"name\": \"p\"}").unwrap();
    std::fs::write(dir.path().join(&name), forever).unwrap();
    let answers = batch(
        dir.path(),
        &[json!({"op": "launch", "program": name, "file": name, "breakpoints": [{"line": 3}]})],
    );
    assert!(text(&answers[0]).contains(&format!("at {name}:3")), "{}", text(&answers[0]));
    // The batch has ended: nothing of its session may still run.
    let program = name.clone();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let out = std::process::Command::new("pgrep").args(["-f", &program]).output().unwrap();
        if out.stdout.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

const SHAPES_TS: &str = r#"interface Shape {
  kind: string;
  size: number;
}

function area(shape: Shape): number {
  const factor: number = shape.kind === "square" ? 1 : 0.5;
  const result = shape.size * shape.size * factor;
  return result;
}

const shapes: Shape[] = [
  { kind: "square", size: 3 },
  { kind: "triangle", size: 4 },
];
for (const s of shapes) {
  console.log(area(s));
}
"#;

#[test]
fn a_typescript_breakpoint_is_set_and_shown_in_ts_lines_through_the_source_maps() {
    js_debug();
    require("tsc", &["--version"], "npm install -g typescript@5");
    let tsconfig = r#"{"compilerOptions": {"target": "es2020", "module": "commonjs", "outDir": "out", "sourceMap": true, "strict": true}, "include": ["src"]}"#;
    let dir = project(&[
        ("package.json", "{\"name\": \"t\"}"),
        ("tsconfig.json", tsconfig),
        ("src/shapes.ts", SHAPES_TS),
    ]);
    let tsc = std::process::Command::new("tsc").args(["-p", "."]).current_dir(dir.path()).output().unwrap();
    assert!(tsc.status.success(), "tsc: {}", String::from_utf8_lossy(&tsc.stdout));
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "src/shapes.ts", "file": "src/shapes.ts", "breakpoints": [{"line": 8, "condition": "shape.kind === \"triangle\""}]}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(stop.contains(" at src/shapes.ts:8 in area"), "{stop}");
    assert!(stop.contains(">   8 |   const result = shape.size * shape.size * factor;"), "{stop}");
    assert!(
        stop.contains("  shape = {kind: 'triangle', size: 4} (Object)")
            && stop.contains("  factor = 0.5 (number)"),
        "{stop}"
    );
    assert!(
        stop.contains("area at src/shapes.ts:8 [frame_id=0] ← <anonymous> at src/shapes.ts:17"),
        "{stop}"
    );
    assert!(stop.contains("breakpoints: 1 bound where asked"), "{stop}");

    // Not compiled: said so, with what to do.
    std::fs::write(dir.path().join("src/new.ts"), "console.log(1);\n").unwrap();
    let answers = batch(dir.path(), &[json!({"op": "launch", "program": "src/new.ts"})]);
    let refused = text(&answers[0]);
    assert!(
        refused.contains("no compiled output of `src/new.ts` was found")
            && refused.contains("tsc --sourceMap")
            && refused.contains("npm install -D tsx"),
        "{refused}"
    );
}

/// tsx, the TypeScript loader, as the README's test command installs it
/// under `$TETHER_TEST_TOOLS/tsx` (a project would have it in its own
/// `node_modules`).
fn tsx_modules() -> std::path::PathBuf {
    let tools = common::test_tools();
    let modules = tools.join("tsx/node_modules");
    assert!(
        modules.join("tsx/package.json").is_file(),
        "tsx is needed under {}; install it with `npm install --prefix {} tsx@4.23.15` (the README's test command does)",
        modules.display(),
        tools.join("tsx").display()
    );
    modules
}

const CRASH_TS: &str = r#"interface User {
  id: number;
  profile?: { name: string };
}

function inner(user: User): string {
  const name: string = user.profile!.name;
  return name.toUpperCase();
}

const users: User[] = [{ id: 1 }];
console.log("starting");
inner(users[0]);
"#;

#[test]
fn a_typescript_file_runs_through_the_projects_loader_with_stops_in_ts_lines() {
    js_debug();
    let modules = tsx_modules();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("src/app.ts", CRASH_TS)]);
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).unwrap();
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "src/app.ts"}),
            json!({"op": "terminate"}),
            json!({"op": "launch", "program": "src/app.ts", "file": "src/app.ts", "lines": [12]}),
            json!({"op": "terminate"}),
        ],
    );
    // Not compiled: tsx runs the source, and the stop is in its lines.
    let crash = text(&answers[0]);
    assert!(
        crash.starts_with("launched; stopped (exception TypeError: Cannot read properties of undefined (reading 'name')) at src/app.ts:7 in inner"),
        "{crash}"
    );
    assert!(crash.contains(">   7 |   const name: string = user.profile!.name;"), "{crash}");
    assert!(crash.contains("  user = {id: 1} (Object)"), "{crash}");
    let stop = text(&answers[2]);
    assert!(stop.starts_with("launched; stopped (breakpoint) at src/app.ts:12"), "{stop}");
    assert!(stop.contains("breakpoints: 1 bound where asked"), "{stop}");
}

#[test]
fn javascript_breakpoints_on_a_comment_a_blank_line_and_past_the_end_say_where_they_bound() {
    js_debug();
    let blank = "function f(x) {\n  // a comment\n\n  const y = x + 1;\n  return y;\n}\nf(1);\n";
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("blank.js", blank)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "blank.js", "file": "blank.js", "lines": [2, 3, 40]}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(stop.contains("stopped (breakpoint") && stop.contains(" at blank.js:4 in f"), "{stop}");
    assert!(
        stop.contains("blank.js: line 2 bound at line 4, not at the line asked for")
            && stop.contains("blank.js: line 3 bound at line 4, not at the line asked for")
            && stop.contains("blank.js: line 40 not bound: no code loaded at that line"),
        "{stop}"
    );
}

#[test]
fn the_mcp_server_answers_a_javascript_crash_with_one_call() {
    js_debug();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("crash.js", CRASH_JS)]);
    let out = common::mcp_scenario("debug_crash_js", dir.path());
    assert!(out.contains("TypeError: Cannot read properties of undefined"), "{out}");
}

const ASYNC_JS: &str = r#"function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
async function load(id) {
  await delay(10);
  const record = { id, owner: null };
  return record.owner.name;
}
async function main() {
  const ids = [7];
  return await load(ids[0]);
}
main();
"#;

#[test]
fn a_javascript_crash_after_an_await_shows_the_async_caller_chain() {
    js_debug();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("async.js", ASYNC_JS)]);
    let answers =
        batch(dir.path(), &[json!({"op": "launch", "program": "async.js"}), json!({"op": "terminate"})]);
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with(
            "launched; stopped (exception TypeError: Cannot read properties of null (reading 'name')) at async.js:7 in load"
        ),
        "{stop}"
    );
    assert!(stop.contains("  record = {id: 7, owner: null} (Object)"), "{stop}");
    assert!(
        stop.contains("load at async.js:7 [frame_id=0] ← [await] ← main at async.js:11"),
        "the caller across the await: {stop}"
    );
}

#[test]
fn a_debugger_statement_stops_the_program_and_says_so() {
    js_debug();
    let program = "function check(order) {\n  const total = order.items.length;\n  debugger;\n  return total;\n}\ncheck({ items: [1, 2, 3] });\n";
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("check.js", program)]);
    let answers =
        batch(dir.path(), &[json!({"op": "launch", "program": "check.js"}), json!({"op": "terminate"})]);
    let stop = text(&answers[0]);
    assert!(stop.starts_with("launched; stopped (debugger statement) at check.js:3 in check"), "{stop}");
    assert!(stop.contains("  total = 3 (number)"), "{stop}");
}

#[test]
fn a_javascript_program_that_runs_for_ever_is_stopped_by_pause() {
    js_debug();
    let forever = "let n = 0;\nfunction tick() {\n  n += 1;\n}\nsetInterval(tick, 10);\n";
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("forever.js", forever)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "forever.js"}),
            json!({"op": "pause"}),
            json!({"op": "terminate"}),
        ],
    );
    assert!(text(&answers[0]).contains("keeps running — use pause"), "{}", text(&answers[0]));
    let stop = text(&answers[1]);
    assert!(stop.starts_with("stopped (pause) at forever.js:"), "{stop}");
    assert!(text(&answers[2]).starts_with("terminated the session"), "{}", text(&answers[2]));
}

#[test]
fn a_node_program_started_with_inspect_is_attached_to_and_left_running() {
    js_debug();
    let forever = "let n = 0;\nfunction tick() {\n  n += 1;\n}\nsetInterval(tick, 10);\n";
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("forever.js", forever)]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    /// Killed however the test ends.
    struct Node(std::process::Child);
    impl Drop for Node {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut node = Node(
        std::process::Command::new("node")
            .arg(format!("--inspect=127.0.0.1:{port}"))
            .arg("forever.js")
            .current_dir(dir.path())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // It says where the inspector listens once it does.
    let lines = common::lines_of(node.0.stderr.take().unwrap());
    let line = lines.recv_timeout(std::time::Duration::from_secs(15)).expect("node says it listens");
    assert!(line.contains("Debugger listening"), "{line}");
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "breakpoints", "file": "forever.js", "lines": [3]}),
            json!({"op": "attach", "port": port, "adapter": "js-debug"}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[1]);
    assert!(
        stop.starts_with(&format!(
            "attached to the node program inspected on port {port}; stopped (breakpoint) at forever.js:3"
        )),
        "{stop}"
    );
    assert!(stop.contains("breakpoints: 1 bound where asked"), "the stop there says it bound: {stop}");
    assert!(text(&answers[2]).starts_with("detached"), "{}", text(&answers[2]));
    assert!(node.0.try_wait().unwrap().is_none(), "the program keeps running after the detach");
}

#[test]
fn a_stop_in_a_javascript_catch_block_shows_the_error_and_the_functions_locals() {
    js_debug();
    let code = "function parse(text) {\n  const size = text.length;\n  try {\n    return JSON.parse(text);\n  } catch (err) {\n    const fallback = { size };\n    return fallback;\n  }\n}\nparse(\"{bad\");\n";
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("parse.js", code)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "parse.js", "file": "parse.js", "lines": [7]}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(stop.contains(" at parse.js:7 in parse"), "{stop}");
    for local in [
        "  fallback = {size: 4} (Object)",
        "  err = SyntaxError:",
        "  size = 4 (number)",
        "  text = '{bad' (string)",
    ] {
        assert!(stop.contains(local), "`{local}` in the snapshot:\n{stop}");
    }
}

#[test]
fn javascript_hit_counts_logpoints_and_run_to() {
    js_debug();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("loop.js", LOOP_JS)]);
    let answers = batch(
        dir.path(),
        &[
            // The fourth pass of line 4, and a log of every pass of line 5.
            json!({"op": "breakpoints", "file": "loop.js", "breakpoints": [{"line": 4, "hit_condition": "4"}, {"line": 5, "log_message": "sum is {sum}"}]}),
            json!({"op": "launch", "program": "loop.js"}),
            json!({"op": "run_to", "file": "loop.js", "line": 7}),
            json!({"op": "continue"}),
            json!({"op": "output"}),
        ],
    );
    let stop = text(&answers[1]);
    assert!(stop.contains(" at loop.js:4 in total"), "{stop}");
    assert!(stop.contains("  i = 3 (number)"), "the fourth pass: {stop}");
    let there = text(&answers[2]);
    assert!(there.contains("at loop.js:7 in total"), "{there}");
    assert!(there.contains("  sum = 110 (number)"), "{there}");
    // The logs come on js-debug's parent connection, the program's own
    // output too.
    let output = text(&answers[4]);
    for logged in ["sum is 0\nsum is 2\n", "sum is 90\n110\n"] {
        assert!(output.contains(logged), "`{logged}` logged: {output}");
    }
}
