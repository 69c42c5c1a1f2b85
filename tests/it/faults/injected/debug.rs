//! Debug sessions losing their adapter, their program or their TTL.

use super::*;
use crate::common::debugpy;

/// A program that sleeps 30 s on line 4, so a step over it stays in flight.
const SLOW_PROG: &str = "import os, time\n\ndef slow():\n    time.sleep(30)\n    return 1\n\nwith open('pid.txt', 'w') as f:\n    f.write(str(os.getpid()))\nx = slow()\nprint('after', x)\n";

/// The parent pid of `pid`.
fn ppid(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// Every live descendant of `root`.
fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        let children: Vec<u32> =
            all.iter().copied().filter(|p| ppid(*p) == Some(parent) && !found.contains(p)).collect();
        found.extend(children);
        i += 1;
    }
    found.remove(0);
    found
}

/// Launches `program` stopped at `line`; records the adapter, the debuggee
/// and everything they started. Returns (adapter, debuggee).
async fn launch_stopped(h: &Harness, program: &str, line: u32, ledger: &mut Ledger) -> (u32, u32) {
    h.ok("debug", json!({"op": "breakpoints", "file": program, "lines": [line]})).await;
    let launched = h.ok("debug", json!({"op": "launch", "program": program})).await.text;
    assert!(
        launched.starts_with(&format!("launched; stopped (breakpoint) at {program}:{line}")),
        "{launched}"
    );
    let Some(session) = node(h, "debug-session", |n| pid(n).is_some()).await else {
        let seen = nodes(h, "debug-session").await;
        panic!(
            "a session with an adapter pid, after the launch answered {launched:?}; the tree shows {seen:?}"
        );
    };
    let adapter = pid(&session).unwrap();
    let mut debuggees = Vec::new();
    collect(&session, "debuggee", &mut debuggees);
    let debuggee = pid(debuggees.first().expect("the tree shows the debuggee")).unwrap();
    ledger.add_group(adapter, "the debug adapter");
    for p in descendants(adapter) {
        ledger.add_group(p, &format!("a process under the adapter ({p})"));
    }
    ledger.add_group(debuggee, "the debuggee");
    (adapter, debuggee)
}

/// The tree's debug-session node, which must show no running session.
async fn no_session_in_tree(h: &Harness) -> Value {
    let session = node(h, "debug-session", |_| true).await.expect("the debug-session node");
    assert!(pid(&session).is_none(), "the tree still shows a session pid: {session}");
    let mut debuggees = Vec::new();
    collect(&session, "debuggee", &mut debuggees);
    assert!(debuggees.is_empty(), "the tree still shows a debuggee: {session}");
    session
}

#[tokio::test]
async fn debug_adapter_killed_mid_step() {
    let t_all = Instant::now();
    debugpy();
    const ROUNDS: usize = 5;
    let mut ledger = Ledger::default();
    let mut waits = Vec::new();
    let started = Instant::now();
    for round in 0..ROUNDS {
        let h = Harness::new(&[("requirements.txt", ""), ("prog.py", SLOW_PROG)]);
        let (adapter, debuggee) = launch_stopped(&h, "prog.py", 4, &mut ledger).await;
        assert_eq!(h.read("pid.txt"), debuggee.to_string(), "the tree shows the debuggee's own pid");
        // The step runs into a 30 s sleep: it is in flight when the adapter dies.
        let step = async {
            let r = h.call("debug", json!({"op": "step_over"})).await;
            (r, Instant::now())
        };
        let killer = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            sigkill(adapter);
            Instant::now()
        };
        let ((r, returned_at), killed_at) = tokio::join!(step, killer);
        waits.push(returned_at.saturating_duration_since(killed_at));
        assert!(r.is_error, "round {round}: {}", r.text);
        assert!(
            r.text.contains("the debug adapter went away") && r.text.contains("killed by signal 9"),
            "round {round}: the in-flight step names the cause: {}",
            r.text
        );
        // Cleaned up: no session in the tree, nothing left running.
        let session = no_session_in_tree(&h).await;
        let orphans = ledger.orphans(Duration::from_secs(3));
        assert!(orphans.is_empty(), "round {round}: left behind: {orphans:?}\n{session}");
        // The next op explains.
        let next = h.call("debug", json!({"op": "stack"})).await;
        assert!(
            next.is_error
                && next.text.contains("no debug session is running")
                && next.text.contains("killed by signal 9")
                && next.text.contains("launch"),
            "round {round}: {}",
            next.text
        );
        // And a new session starts.
        launch_stopped(&h, "prog.py", 4, &mut ledger).await;
        h.ok("debug", json!({"op": "terminate"})).await;
        drop(h);
    }
    ledger.finish(|tracked| {
        format!(
            "fault: debug adapter (debugpy) SIGKILL mid-step x{ROUNDS}: {ROUNDS}/{ROUNDS} in-flight steps errored naming signal 9 (median {}, max {} after the kill), {ROUNDS}/{ROUNDS} sessions cleaned up (no session pid in the tree), {ROUNDS}/{ROUNDS} next ops explained there is no session and how to start one, {ROUNDS}/{ROUNDS} relaunches ok; {tracked}; {} per round; {} in all",
            ms(median(&waits)),
            ms(max(&waits)),
            secs(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn debug_debuggee_exits_during_continue() {
    let t_all = Instant::now();
    debugpy();
    const ROUNDS: usize = 5;
    let prog = "import sys\nx = 1\nprint('bye')\nsys.exit(3)\n";
    let mut ledger = Ledger::default();
    let started = Instant::now();
    for round in 0..ROUNDS {
        let h = Harness::new(&[("requirements.txt", ""), ("prog.py", prog)]);
        launch_stopped(&h, "prog.py", 2, &mut ledger).await;
        let r = h.call("debug", json!({"op": "continue"})).await;
        assert!(!r.is_error && r.text == "the program exited with code 3", "round {round}: {}", r.text);
        assert_eq!(r.data.as_ref().unwrap()["exit_code"], 3);
        // What it printed can still be read.
        let output = h.ok("debug", json!({"op": "output"})).await.text;
        assert!(output.contains("bye"), "round {round}: {output}");
        // The next op that needs the program explains.
        let next = h.call("debug", json!({"op": "stack"})).await;
        assert!(
            next.is_error
                && next.text.contains("no debug session is running")
                && next.text.contains("the program exited with code 3")
                && next.text.contains("launch"),
            "round {round}: {}",
            next.text
        );
        no_session_in_tree(&h).await;
        let orphans = ledger.orphans(Duration::from_secs(3));
        assert!(orphans.is_empty(), "round {round}: left behind: {orphans:?}");
        // A new launch needs no terminate first.
        launch_stopped(&h, "prog.py", 2, &mut ledger).await;
        h.ok("debug", json!({"op": "terminate"})).await;
        drop(h);
    }
    ledger.finish(|tracked| {
        format!(
            "fault: debuggee exits during continue x{ROUNDS}: {ROUNDS}/{ROUNDS} continues said `the program exited with code 3`, {ROUNDS}/{ROUNDS} next ops explained (no session; the program exited with code 3; launch), {ROUNDS}/{ROUNDS} relaunches ok; {tracked}; {} per round; {} in all",
            secs(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn debug_session_ends_at_its_ttl() {
    let t_all = Instant::now();
    debugpy();
    // The TTL runs from when the launch answered, however long the adapter
    // took to start: long enough for the test to read the session's pids
    // after that on a loaded machine.
    const TTL: Duration = Duration::from_secs(10);
    let h = Harness::with(&[("requirements.txt", ""), ("prog.py", SLOW_PROG)], |b| {
        b.connect_all().debug_ttl(TTL)
    });
    let mut ledger = Ledger::default();
    let asked_at = Instant::now();
    launch_stopped(&h, "prog.py", 4, &mut ledger).await;
    // At the latest, the launch answered now.
    let launched_at = Instant::now();
    let ttl_left = node(&h, "debug-session", |_| true).await.unwrap()["ttl_left_ms"].as_u64().unwrap();
    assert!(ttl_left <= TTL.as_millis() as u64, "{ttl_left}");
    // Nothing touches the session: the TTL alone must end it.
    let deadline = launched_at + TTL + Duration::from_secs(15);
    let (ended_after, ended_after_asked) = loop {
        let session = node(&h, "debug-session", |_| true).await.unwrap();
        if pid(&session).is_none() {
            break (launched_at.elapsed(), asked_at.elapsed());
        }
        assert!(Instant::now() < deadline, "the session outlived its TTL: {session}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let session = no_session_in_tree(&h).await;
    assert!(session["last_error"].as_str().is_some_and(|e| e.contains("time-to-live")), "{session}");
    let orphans = ledger.orphans(Duration::from_secs(3));
    assert!(orphans.is_empty(), "left behind at expiry: {orphans:?}");
    let next = h.call("debug", json!({"op": "stack"})).await;
    assert!(
        next.is_error && next.text.contains("time-to-live") && next.text.contains("Launch again"),
        "{}",
        next.text
    );
    println!(
        "fault: debug session TTL {} s: ended {} after the launch answered ({} after it was asked) with nothing touching it (no session pid in the tree), {} orphans of {} processes tracked (the adapter, everything under it, the debuggee), next op explained the TTL ended it; {} in all",
        TTL.as_secs(),
        secs(ended_after),
        secs(ended_after_asked),
        orphans.len(),
        ledger.len(),
        secs(t_all.elapsed()),
    );
}
