//! The `debug` tool against lldb-dap (a C program built here with gcc -g)
//! and delve (a Go program): stops, steps in and out with all three real
//! adapters, and function breakpoints.

use serde_json::json;

use super::sessions::{dbg, ok, python_project};
use crate::common::debugpy;
use crate::common::{Harness, require};

/// `demo.c`, built here with `gcc -g -O0`: `main` calls `square(7)` on line 9.
fn c_program() -> Harness {
    require("gcc", &["--version"], "apt-get install gcc");
    let h = Harness::new(&[
        ("CMakeLists.txt", "project(demo C)\n"),
        (
            "demo.c",
            "#include <stdio.h>\n\nint square(int n) {\n    int result = n * n;\n    return result;\n}\n\nint main(void) {\n    printf(\"%d\\n\", square(7));\n    return 0;\n}\n",
        ),
    ]);
    let built = std::process::Command::new("gcc")
        .args(["-g", "-O0", "-o", "demo", "demo.c"])
        .current_dir(h.root())
        .status()
        .unwrap();
    assert!(built.success());
    h
}

/// `main.go`: `main` calls `double(21)` on line 11.
fn go_program() -> Harness {
    require("go", &["version"], "apt-get install golang-go");
    require("dlv", &["version"], "apt-get install delve");
    Harness::new(&[
        ("go.mod", "module demo\n\ngo 1.19\n"),
        (
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc double(n int) int {\n\tresult := n * 2\n\treturn result\n}\n\nfunc main() {\n\tfmt.Println(double(21))\n}\n",
        ),
    ])
}

#[tokio::test]
async fn lldb_dap_debugs_a_c_program_built_here() {
    let h = c_program();
    let adapters = ok(&h, json!({"op": "adapters"})).await;
    assert!(adapters.contains("lldb: usable"), "lldb-dap is needed (apt-get install lldb-19): {adapters}");
    ok(&h, json!({"op": "breakpoints", "file": "demo.c", "lines": [4]})).await;
    let launched = ok(&h, json!({"op": "launch", "program": "demo"})).await;
    assert!(
        launched.contains("stopped (breakpoint") && launched.contains("demo.c:4 in square"),
        "{launched}"
    );
    let v = ok(&h, json!({"op": "evaluate", "expression": "n"})).await;
    assert!(v.starts_with("n = 7"), "{v}");
    let stack = ok(&h, json!({"op": "stack"})).await;
    assert!(stack.contains("square") && stack.contains("main"), "{stack}");
    let done = ok(&h, json!({"op": "continue"})).await;
    assert!(done.contains("exited with code 0"), "{done}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn a_go_program_that_does_not_build_says_why_in_the_compilers_words() {
    let h = go_program();
    h.write("main.go", "package main\n\nfunc main() {\n\tundefinedThing()\n}\n");
    let r = dbg(&h, json!({"op": "launch", "program": "main.go"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("launch failed") && r.text.contains("undefinedThing"), "{}", r.text);
}

#[tokio::test]
async fn delve_debugs_a_go_program() {
    let h = go_program();
    ok(&h, json!({"op": "breakpoints", "file": "main.go", "lines": [7]})).await;
    let launched = ok(&h, json!({"op": "launch", "program": "main.go"})).await;
    assert!(
        launched.contains("stopped (breakpoint") && launched.contains("main.go:7 in main.double"),
        "{launched}"
    );
    let v = ok(&h, json!({"op": "evaluate", "expression": "result"})).await;
    assert!(v.starts_with("result = 42"), "{v}");
    let done = ok(&h, json!({"op": "continue"})).await;
    // delve sends no `exited` event, only `terminated`: no exit code is known.
    assert!(done.starts_with("the debug session ended (the program terminated)"), "{done}");
    ok(&h, json!({"op": "terminate"})).await;
}

/// Stops at `file:line` (`at`), then steps into the function called there
/// (`into`) and back out to the caller (`back`), the line checked each time.
async fn step_in_and_out(h: &Harness, (file, line): (&str, u32), program: &str, [at, into, back]: [&str; 3]) {
    ok(h, json!({"op": "breakpoints", "file": file, "lines": [line]})).await;
    let launched = ok(h, json!({"op": "launch", "program": program})).await;
    assert!(launched.contains(at), "stopped at {at}: {launched}");
    let step = ok(h, json!({"op": "step_in"})).await;
    assert!(
        step.contains("stopped (step") && step.contains(into),
        "step_in lands in the callee, {into}: {step}"
    );
    let step = ok(h, json!({"op": "step_out"})).await;
    assert!(
        step.contains("stopped (step") && step.contains(back),
        "step_out returns to the caller, {back}: {step}"
    );
}

#[tokio::test]
async fn step_in_and_out_with_debugpy() {
    debugpy();
    let h = python_project();
    let lines = ["prog.py:9 in <module>", "prog.py:4 in add", "prog.py:9 in <module>"];
    step_in_and_out(&h, ("prog.py", 9), "prog.py", lines).await;
    // Back in the caller with the call finished: the next line runs next.
    let step = ok(&h, json!({"op": "step_over"})).await;
    assert!(step.contains("prog.py:10 in <module>"), "{step}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn step_in_and_out_with_lldb_dap() {
    let h = c_program();
    step_in_and_out(
        &h,
        ("demo.c", 9),
        "demo",
        ["demo.c:9 in main", "demo.c:4 in square", "demo.c:9 in main"],
    )
    .await;
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn step_in_and_out_with_delve() {
    let h = go_program();
    let lines = ["main.go:11 in main.main", "main.go:5 in main.double", "main.go:11 in main.main"];
    step_in_and_out(&h, ("main.go", 11), "main.go", lines).await;
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn function_breakpoints_with_lldb_dap_stop_in_the_function_and_say_where_each_bound() {
    // Set with the launch, one name that is no function: the stop is in
    // the function with its locals, and each name says where it bound or
    // why not, in the order asked (lldb-dap 19 answers in an order of its own).
    let h = c_program();
    let r = h.ok("debug", json!({"op": "launch", "program": "demo", "functions": ["square", "nope"]})).await;
    assert!(r.text.contains("stopped (breakpoint) at demo.c:4 in square"), "{}", r.text);
    assert!(r.text.contains("  n = 7 (int)"), "the stop has its locals: {}", r.text);
    assert!(
        r.text.ends_with("breakpoints: function `square` bound at demo.c:4; function `nope` not bound: the adapter gave no reason"),
        "{}",
        r.text
    );
    let bound = &r.data.as_ref().unwrap()["functions"];
    assert_eq!(bound[0]["function"], "square", "{bound}");
    assert_eq!((bound[0]["file"].as_str(), bound[0]["line"].as_u64()), (Some("demo.c"), Some(4)), "{bound}");
    assert_eq!((bound[1]["function"].as_str(), bound[1]["verified"].as_bool()), (Some("nope"), Some(false)));
    // During the session: a line and a function in one call, then cleared.
    let both =
        ok(&h, json!({"op": "breakpoints", "file": "demo.c", "lines": [10], "functions": ["main"]})).await;
    assert_eq!(both, "demo.c: line 10 bound\nfunction `main` bound at demo.c:9");
    let cleared = ok(&h, json!({"op": "breakpoints", "functions": []})).await;
    assert_eq!(cleared, "cleared the function breakpoints");
    ok(&h, json!({"op": "breakpoints", "file": "demo.c", "lines": []})).await;
    let done = ok(&h, json!({"op": "continue"})).await;
    assert!(done.contains("exited with code 0"), "cleared means no stop in main: {done}");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn function_breakpoints_with_delve_are_held_before_the_launch() {
    let h = go_program();
    let held = ok(&h, json!({"op": "breakpoints", "functions": ["main.double", "nope"]})).await;
    assert!(held.contains("will be set when the session starts: `main.double`, `nope`"), "{held}");
    let r = ok(&h, json!({"op": "launch", "program": "main.go"})).await;
    assert!(r.contains("stopped (function breakpoint) at main.go:5 in main.double"), "{r}");
    assert!(r.contains("  n = 21 (int)"), "{r}");
    assert!(r.contains("function `main.double` bound at main.go:5"), "{r}");
    assert!(r.contains("function `nope` not bound: location \"nope\" not found"), "{r}");
    let cleared = ok(&h, json!({"op": "breakpoints", "functions": []})).await;
    assert_eq!(cleared, "cleared the function breakpoints");
    ok(&h, json!({"op": "terminate"})).await;
}

#[tokio::test]
async fn function_breakpoints_with_debugpy_are_placed_by_their_def() {
    debugpy();
    let h = python_project();
    // debugpy takes any name without saying where: tether finds the `def`,
    // and says a name defined nowhere here, or dotted, does not bind.
    let r = ok(&h, json!({"op": "launch", "program": "prog.py", "functions": ["add", "nope", "os.getpid"]}))
        .await;
    assert!(r.starts_with("launched; stopped (function breakpoint) at prog.py:3 in add"), "{r}");
    assert!(r.contains("  a = 2 (int)\n  b = 3 (int)"), "{r}");
    assert!(r.contains("function `add` bound at prog.py:3 (its `def`; debugpy does not say where)"), "{r}");
    assert!(
        r.contains("function `nope` not bound: no `def nope` in the working directory's Python files"),
        "{r}"
    );
    assert!(
        r.contains("function `os.getpid` not bound: debugpy matches a function by its bare name, never a dotted one; give `getpid`"),
        "{r}"
    );
    let cleared = ok(&h, json!({"op": "breakpoints", "functions": []})).await;
    assert_eq!(cleared, "cleared the function breakpoints");
    let done = ok(&h, json!({"op": "continue"})).await;
    assert_eq!(done, "the program exited with code 0");
    ok(&h, json!({"op": "terminate"})).await;

    // Bad names are refused before anything starts.
    let err = h.err("debug", json!({"op": "breakpoints", "functions": ["add", " "]})).await;
    assert!(err.contains("argument `functions[1]` is empty"), "{err}");
    let err = h.err("debug", json!({"op": "breakpoints"})).await;
    assert!(err.contains("or `functions`, is required"), "{err}");
    let err = h.err("debug", json!({"op": "breakpoints", "file": "prog.py", "functions": ["add"]})).await;
    assert!(err.contains("give `lines` or `breakpoints` with it"), "{err}");
}
