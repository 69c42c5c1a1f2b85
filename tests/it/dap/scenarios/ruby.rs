//! The `debug` tool against Ruby's own debugger, the `debug` gem (rdbg)
//! that Ruby 3.1 bundles: the program itself opens the DAP port.

use super::*;

/// Ruby with its `debug` gem (Debian's `ruby` bundles it).
fn rdbg() {
    require("ruby", &["-e", "gem 'debug'"], "apt-get install ruby (Ruby 3.1 and later bundle the debug gem)");
}

const CRASH_RB: &str = r#"def lookup(table, key)
  table.fetch(key).upcase
end

def price(item)
  lookup({ "apple" => "1" }, item)
end

def total(items)
  items.map { |i| price(i) }
end

puts "starting"
total(["apple", "kiwi"])
"#;

#[test]
fn a_ruby_key_error_three_calls_deep_is_one_launch() {
    rdbg();
    let dir = project(&[("Gemfile", ""), ("crash.rb", CRASH_RB)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "crash.rb"}),
            json!({"op": "output"}),
            json!({"op": "continue"}),
            json!({"op": "output"}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with(
            "launched; stopped (uncaught exception KeyError: key not found: \"kiwi\") at crash.rb:2 in Object#lookup"
        ),
        "{stop}"
    );
    assert!(stop.contains(">   2 |   table.fetch(key).upcase"), "{stop}");
    assert!(
        stop.contains("  key = \"kiwi\" (String)") && stop.contains("  table = {\"apple\"=>\"1\"} (Hash)"),
        "{stop}"
    );
    // `Hash#fetch`, a C method, is folded; the three calls are the user's.
    assert!(
        stop.contains("the top frame ([C] Hash#fetch at crash.rb:2) is library code")
            && stop.contains("Object#lookup at crash.rb:2")
            && stop.contains("Object#price at crash.rb:6")
            && stop.contains("Object#total at crash.rb:10"),
        "{stop}"
    );
    assert_eq!(answers[0]["data"]["reason"], "exception", "{}", answers[0]);
    // Unbuffered: what it printed before the stop is there at the stop.
    assert_eq!(text(&answers[1]).trim(), "starting", "{}", answers[1]);
    assert_eq!(text(&answers[2]), "the program exited with code 1", "{}", answers[2]);
    let output = text(&answers[3]);
    assert!(
        output.contains("key not found: \"kiwi\" (KeyError)") && !output.contains("DEBUGGER:"),
        "{output}"
    );
}

const LOOP_RB: &str = r#"def running_totals(values)
  totals = []
  total = 0
  values.each_with_index do |v, i|
    total += v * i
    totals << total
  end
  totals
end

p running_totals([5, 7, 9, 11, 13])
"#;

#[test]
fn a_ruby_loop_stops_on_its_third_pass_in_one_call_and_steps() {
    rdbg();
    let dir = project(&[("Gemfile", ""), ("loop.rb", LOOP_RB)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "loop.rb", "file": "loop.rb", "breakpoints": [{"line": 6, "condition": "i == 2"}]}),
            json!({"op": "step_over"}),
            json!({"op": "evaluate", "expression": "totals.sum"}),
            json!({"op": "exceptions"}),
            json!({"op": "exceptions", "filters": ["RuntimeError"]}),
            json!({"op": "continue"}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    assert!(
        stop.starts_with("launched; stopped (breakpoint) at loop.rb:6 in block in running_totals"),
        "{stop}"
    );
    for local in
        ["  i = 2 (Integer)", "  v = 9 (Integer)", "  total = 25 (Integer)", "  totals = [0, 7] (Array)"]
    {
        assert!(stop.contains(local), "{local}: {stop}");
    }
    assert!(!stop.contains("%self"), "the top level's `main` is noise: {stop}");
    assert!(stop.ends_with("breakpoints: 1 bound where asked"), "{stop}");
    let step = text(&answers[1]);
    assert!(step.starts_with("stopped (step) at loop.rb:7"), "{step}");
    assert!(step.contains("  totals = [0, 7, 25] (Array)"), "{step}");
    assert_eq!(text(&answers[2]), "totals.sum = 32 (Integer)", "{}", answers[2]);
    let filters = text(&answers[3]);
    assert!(
        filters.contains("[on] `uncaught`")
            && filters.contains("[off] `any`")
            && filters.contains("[off] `RuntimeError`"),
        "{filters}"
    );
    let changed = text(&answers[4]);
    assert!(
        changed.starts_with("exceptions now stop the program for: [\"RuntimeError\"]")
            && changed.contains("rdbg's `uncaught` changes at the next launch"),
        "{changed}"
    );
    assert_eq!(text(&answers[5]), "the program exited with code 0", "{}", answers[5]);
}

const BLANK_RB: &str = "def work(n)\n  a = n + 1\n\n  # a comment\n  b = a * 2\n  b\nend\n\nputs work(3)\n";

#[test]
fn ruby_breakpoints_on_blank_comment_and_missing_lines_say_what_rdbg_did_not() {
    rdbg();
    let dir = project(&[("Gemfile", ""), ("blank.rb", BLANK_RB)]);
    let answers = batch(
        dir.path(),
        &[
            json!({"op": "launch", "program": "blank.rb", "file": "blank.rb", "lines": [3, 4, 30]}),
            json!({"op": "terminate"}),
        ],
    );
    let stop = text(&answers[0]);
    // rdbg binds a line without code at the next one that runs, and says
    // only "verified": the stop shows where, the note says what is known.
    assert!(stop.starts_with("launched; stopped (breakpoint) at blank.rb:5 in Object#work"), "{stop}");
    assert!(stop.contains("blank.rb: line 3 set, but line 3 is blank"), "{stop}");
    assert!(stop.contains("blank.rb: line 4 set, but line 4 is a comment"), "{stop}");
    assert!(
        stop.contains("blank.rb: line 30 not bound: line 30 is past the end of the file (9 lines)"),
        "{stop}"
    );
    assert!(!stop.contains("bound where asked"), "{stop}");
}

const SPIN_RB: &str =
    "def spin\n  ticks = 0\n  loop do\n    ticks += 1\n    sleep 0.05\n  end\nend\n\nspin\n";

#[tokio::test]
async fn a_ruby_program_opened_for_rdbg_is_attached_by_port_stopped_and_left_running() {
    rdbg();
    // It says when it runs: the gem's port opens before the gem has set
    // itself up, and debug 1.4 drops a client that connects in between.
    let spin = format!("$stdout.sync = true\nputs \"spinning\"\n{SPIN_RB}");
    let h = Harness::new(&[("Gemfile", ""), ("spin.rb", &spin)]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = {
        use std::os::unix::process::CommandExt;
        std::process::Command::new("ruby")
            .args(["-rdebug/open", "spin.rb"])
            .env("RUBY_DEBUG_PORT", port.to_string())
            .env("RUBY_DEBUG_HOST", "127.0.0.1")
            .env("RUBY_DEBUG_NONSTOP", "1")
            .process_group(0)
            .current_dir(h.root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("ruby starts")
    };
    // Waited for by its output (a connection made to find out would be
    // taken for the debugger's).
    let said = common::lines_of(child.stdout.take().unwrap());
    let outside = Outside(child);
    let line = said.recv_timeout(std::time::Duration::from_secs(20));
    assert_eq!(line.as_deref(), Ok("spinning"), "ruby -rdebug/open spin.rb did not start");
    let stop = h.ok("debug", json!({"op": "attach", "port": port, "adapter": "rdbg"})).await.text;
    assert!(
        stop.starts_with(&format!(
            "attached to the Ruby program listening for rdbg on port {port}; stopped (pause) at spin.rb:"
        )),
        "{stop}"
    );
    assert!(stop.contains("  ticks = "), "{stop}");
    let done = h.ok("debug", json!({"op": "terminate"})).await.text;
    assert!(done.starts_with("detached from the program, which keeps running"), "{done}");
    assert!(outside.runs_on(outside.0.id()).await, "the program runs on after the detach");
}

#[tokio::test]
async fn a_ruby_session_end_leaves_no_process_behind() {
    rdbg();
    let h = Harness::new(&[("Gemfile", ""), ("spin.rb", SPIN_RB)]);
    let stop = h
        .ok("debug", json!({"op": "launch", "program": "spin.rb", "file": "spin.rb", "lines": [4]}))
        .await
        .text;
    assert!(stop.starts_with("launched; stopped (breakpoint) at spin.rb:4 in "), "{stop}");
    assert!(!common::running_in(&h.root()).is_empty(), "the program runs under rdbg");
    h.ok("debug", json!({"op": "terminate"})).await;
    let left = common::left_running_in(&h.root());
    assert!(left.is_empty(), "terminate killed the program: {left:?}");
}
