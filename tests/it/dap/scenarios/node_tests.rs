//! The `debug` tool on Node's test runs through real js-debug: a failing
//! `node --test` file, a directory of test files followed one process
//! after another, an `npm test` script followed into the processes it
//! starts, and what the runners cannot run.

use super::javascript::js_debug;
use super::*;

const SUM_TEST_JS: &str = r#"const test = require('node:test');
const assert = require('node:assert');

function sum(xs) {
  let total = 0;
  for (const x of xs) total += x;
  return total + 1;
}

test('sums', () => {
  const got = sum([1, 2, 3]);
  assert.strictEqual(got, 6);
});
"#;

#[test]
fn a_failing_node_test_stops_at_the_assertion_with_its_locals_in_one_call() {
    js_debug();
    let dir = project(&[("package.json", "{\"name\": \"p\"}"), ("test/sum.test.js", SUM_TEST_JS)]);
    let answers = batch(
        dir.path(),
        &[
            // The runner catches the AssertionError, so no uncaught
            // exception stops it: tether's `assertions` filter, on by
            // default under js-debug, does.
            json!({"op": "launch", "module": "node:test", "program": "test/sum.test.js"}),
            json!({"op": "continue"}),
            json!({"op": "output"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with("launched; stopped (exception AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 7 !== 6) at test/sum.test.js:12"),
        "{stop}"
    );
    assert!(stop.contains(">  12 |   assert.strictEqual(got, 6);"), "{stop}");
    assert!(stop.contains("  got = 7 (number)"), "{stop}");
    assert!(
        answers[0]["data"]["exception_filters"] == json!(["uncaught", "assertions"]),
        "{}",
        answers[0]["data"]
    );
    // The run goes on to the runner's verdict: the test failed. (js-debug
    // reports no exit code.)
    let done = text(&answers[1]);
    assert!(done.contains("ended"), "{done}");
    let output = text(&answers[2]);
    assert!(output.contains("not ok 1 - sums"), "{output}");
}

#[test]
fn node_test_and_npm_scripts_are_refused_what_they_cannot_run() {
    js_debug();
    let dir = project(&[
        ("package.json", "{\"name\": \"p\", \"scripts\": {\"test\": \"node --test\", \"lint\": \"true\"}}"),
        ("test/sum.test.js", SUM_TEST_JS),
    ]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "module": "npm:tests"}),
            json!({"op": "launch", "module": "pytest", "program": "test/sum.test.js"}),
            json!({"op": "launch", "module": "node:test", "program": "package.json"}),
            // A runner flag node does not know: node's own words, not a bare "ended".
            json!({"op": "launch", "module": "node:test", "program": "test/sum.test.js", "args": ["--test-name-patern=x"]}),
        ],
    );
    assert!(
        text(&answers[0]).contains("`package.json` has no script `tests`; it has lint, test"),
        "{}",
        text(&answers[0])
    );
    assert!(text(&answers[1]).contains("not both"), "{}", text(&answers[1]));
    assert!(text(&answers[2]).contains("is neither (.js, .mjs, .cjs, .ts"), "{}", text(&answers[2]));
    let bad = text(&answers[3]);
    assert!(bad.contains("node said:") && bad.contains("bad option: --test-name-patern=x"), "{bad}");
}

const PASSING_TEST_JS: &str = r#"const test = require('node:test');
const assert = require('node:assert');

test('adds', () => {
  const total = 1 + 1;
  assert.strictEqual(total, 2);
});
"#;

const FAILING_TEST_JS: &str = r#"const test = require('node:test');
const assert = require('node:assert');

test('counts', () => {
  const got = [1, 2].length;
  assert.strictEqual(got, 3);
});
"#;

/// A project whose tests are two files, the second failing, run by
/// `npm test` as `node --test test/`.
fn two_test_files() -> tempfile::TempDir {
    project(&[
        ("package.json", "{\"name\": \"p\", \"scripts\": {\"test\": \"node --test test/\"}}"),
        ("test/a.test.js", PASSING_TEST_JS),
        ("test/b.test.js", FAILING_TEST_JS),
    ])
}

#[test]
fn node_test_of_a_directory_follows_each_test_file_to_the_failing_one() {
    js_debug();
    let dir = two_test_files();
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "module": "node:test", "program": "test", "file": "test/a.test.js", "lines": [5]}),
            json!({"op": "step_over"}),
            json!({"op": "continue"}),
            json!({"op": "continue"}),
            json!({"op": "output"}),
        ],
    );
    // A step says it was one (js-debug describes a step and a pause alike).
    let step = text(&answers[1]);
    assert!(step.starts_with("stopped (step) at test/a.test.js:6"), "{step}");
    let answers: Vec<Value> =
        answers.into_iter().enumerate().filter(|(i, _)| *i != 1).map(|(_, a)| a).collect();
    // Each test file is a process of its own: the first stops at its
    // breakpoint, the second at its failed assertion.
    let first = text(&answers[0]);
    assert!(first.starts_with("launched; stopped (breakpoint) at test/a.test.js:5"), "{first}");
    let second = text(&answers[1]);
    assert!(
        second.starts_with("stopped (exception AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 2 !== 3) at test/b.test.js:6"),
        "{second}"
    );
    assert!(second.contains("  got = 2 (number)"), "{second}");
    let done = text(&answers[2]);
    assert!(
        done.contains("ended") && !done.contains("none of your"),
        "the breakpoint bound in a.test.js: {done}"
    );
    let output = text(&answers[3]);
    assert!(output.contains("ok 1 - adds") && output.contains("not ok 2 - counts"), "{output}");
    assert!(!output.contains("Debugger attached.") && !output.contains("js-debug bootloader"), "{output}");
}

#[test]
fn an_npm_test_script_is_followed_into_the_processes_it_starts() {
    js_debug();
    let dir = two_test_files();
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "module": "npm:test"}),
            json!({"op": "status"}),
            json!({"op": "continue"}),
            json!({"op": "output"}),
        ],
    );
    // npm, then the shell, then node's runner, then each test file: the
    // failed assertion stops the run where it failed.
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with("launched; stopped (exception AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 2 !== 3) at test/b.test.js:6"),
        "{stop}"
    );
    assert!(stop.contains("  got = 2 (number)"), "{stop}");
    assert!(text(&answers[1]).starts_with("js-debug session on npm run test"), "{}", text(&answers[1]));
    assert!(text(&answers[2]).contains("ended"), "{}", text(&answers[2]));
    let output = text(&answers[3]);
    assert!(output.contains("> node --test test/") && output.contains("not ok 2 - counts"), "{output}");
}

#[test]
fn a_followed_run_ended_mid_way_leaves_no_process_behind() {
    js_debug();
    let dir = two_test_files();
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "module": "npm:test", "file": "test/a.test.js", "lines": [6]}),
            json!({"op": "terminate"}),
        ],
    );
    assert!(text(&answers[0]).contains("stopped (breakpoint) at test/a.test.js:6"), "{}", text(&answers[0]));
    // npm, its shell and node's runner are gone with the test file's process.
    let still = common::left_running_in(dir.path());
    assert!(still.is_empty(), "still running in the project: {still:?}");
}
