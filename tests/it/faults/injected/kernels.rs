//! Kernels killed three ways, 50 times each, and runaway cells under a
//! short idle budget.

use super::*;

async fn py(h: &Harness, code: &str) -> ToolResult {
    h.call("eval", json!({"code": code, "description": D})).await
}

/// The Python kernel's node.
async fn python_kernel(h: &Harness) -> Option<Value> {
    node(h, "kernel", |n| n["id"] == "python").await
}

/// How the kernel is made to die in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Death {
    /// SIGKILL from outside while a cell runs.
    KilledMidCell,
    /// SIGKILL from outside between cells.
    KilledIdle,
    /// `os._exit(3)` inside a cell.
    Exit3,
    /// A segmentation fault inside a cell.
    Segfault,
}

#[tokio::test]
async fn kernel_killed_50_times_three_causes() {
    let t_all = Instant::now();
    const ROUNDS: usize = 50;
    let h = Harness::new(&[]);
    let mut ledger = Ledger::default();
    let mut seen: BTreeMap<Death, usize> = BTreeMap::new();
    let (mut kill_waits, mut fresh_cells) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for round in 0..ROUNDS {
        // State to lose, on the kernel the tree shows.
        let r = py(&h, &format!("v{round} = {round}\nimport os\nos.getpid()")).await;
        assert!(!r.is_error, "round {round}: {}", r.text);
        let cell_pid: u32 = r.text.lines().next().unwrap().trim_start_matches("Out: ").parse().unwrap();
        let kernel = pid(&python_kernel(&h).await.expect("the python kernel")).expect("its pid");
        assert_eq!(kernel, cell_pid, "round {round}: the tree shows the interpreter's own pid");
        ledger.add_group(kernel, &format!("round {round}: the python kernel"));
        let old = track(kernel).unwrap();

        // SIGKILL from outside alternates between a running cell and an idle kernel.
        let death = match (round % 3, (round / 3) % 2) {
            (0, 0) => Death::KilledMidCell,
            (0, _) => Death::KilledIdle,
            (1, _) => Death::Exit3,
            _ => Death::Segfault,
        };
        *seen.entry(death).or_default() += 1;
        let (text, expect) = match death {
            Death::KilledMidCell => {
                let marker = format!("sleeping-{round}");
                let code = format!("import time\nopen({marker:?}, 'w').close()\ntime.sleep(60)");
                let cell = py(&h, &code);
                let killer = async {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    while !h.path(&marker).exists() {
                        assert!(Instant::now() < deadline, "round {round}: the cell never started");
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    sigkill(kernel);
                    Instant::now()
                };
                let timed = async {
                    let r = cell.await;
                    (r, Instant::now())
                };
                let ((r, returned_at), killed_at) = tokio::join!(timed, killer);
                kill_waits.push(returned_at.saturating_duration_since(killed_at));
                assert!(r.is_error, "round {round}: {}", r.text);
                assert_eq!(r.data.as_ref().unwrap()["status"], "died", "round {round}: {}", r.text);
                assert!(
                    r.text.contains("state is lost"),
                    "round {round}: says the state is lost: {}",
                    r.text
                );
                (r.text, "killed by signal 9")
            }
            Death::KilledIdle => {
                sigkill(kernel);
                let deadline = Instant::now() + Duration::from_secs(10);
                while alive(old) {
                    assert!(Instant::now() < deadline, "round {round}: the killed kernel is still running");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                // Time for the exit report (status and stderr) to arrive.
                tokio::time::sleep(Duration::from_millis(300)).await;
                (String::new(), "killed by signal 9")
            }
            Death::Exit3 | Death::Segfault => {
                let (code, expect) = if death == Death::Exit3 {
                    ("import os\nos._exit(3)", "exit status 3")
                } else {
                    ("import ctypes\nctypes.string_at(0)", "killed by signal 11")
                };
                let r = py(&h, code).await;
                assert!(r.is_error, "round {round}: {}", r.text);
                assert_eq!(r.data.as_ref().unwrap()["status"], "died", "round {round}: {}", r.text);
                assert!(
                    r.text.contains("state is lost"),
                    "round {round}: says the state is lost: {}",
                    r.text
                );
                (r.text, expect)
            }
        };

        // The next cell works, on a fresh kernel, and says the state went.
        let t = Instant::now();
        let next = py(&h, &format!("'v{round}' in globals()")).await;
        fresh_cells.push(t.elapsed());
        assert!(!next.is_error, "round {round} ({death:?}): the next cell failed: {}", next.text);
        assert!(
            next.text.starts_with("Out: False"),
            "round {round}: earlier variables are gone: {}",
            next.text
        );
        assert!(next.text.contains("earlier state was reset"), "round {round}: says so: {}", next.text);
        let report = if death == Death::KilledIdle { &next.text } else { &text };
        assert!(report.contains(expect), "round {round} ({death:?}): names the cause `{expect}`: {report}");
        assert!(!alive(old), "round {round}: the dead kernel {kernel} still runs");
    }
    let tree_kernel = python_kernel(&h).await.unwrap();
    assert_eq!(tree_kernel["restarts"], ROUNDS, "{tree_kernel}");
    drop(h);
    ledger.finish(|tracked| {
        format!(
            "fault: kernel killed x{ROUNDS} ({}): {ROUNDS}/{ROUNDS} deaths reported with their cause (signal 9 / exit status 3 / signal 11), {ROUNDS}/{ROUNDS} next cells ran on a fresh kernel saying earlier state was reset (median {}, max {}); SIGKILL mid-cell errored median {}, max {} after the kill; {tracked}; {} per round; {} in all",
            seen.iter().map(|(d, n)| format!("{d:?} {n}")).collect::<Vec<_>>().join(", "),
            ms(median(&fresh_cells)),
            ms(max(&fresh_cells)),
            ms(median(&kill_waits)),
            ms(max(&kill_waits)),
            ms(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn runaway_cells_are_interrupted_and_keep_state_100_trials() {
    let t_all = Instant::now();
    const TRIALS: usize = 100;
    const BUDGET: Duration = Duration::from_millis(500);
    let h = Harness::with(&[], |b| b.connect_all().idle_budget(BUDGET));
    let (mut kept, mut busy_ok, mut sleep_ok) = (0, 0, 0);
    let mut took = Vec::new();
    let mut failures = Vec::new();
    let started = Instant::now();
    for k in 0..TRIALS {
        let set = py(&h, &format!("x = {k}")).await;
        assert!(!set.is_error, "trial {k}: {}", set.text);
        let busy = k % 2 == 0;
        let code = if busy { "while True:\n    pass" } else { "import time\ntime.sleep(1000)" };
        let t = Instant::now();
        let r = py(&h, code).await;
        took.push(t.elapsed());
        let interrupted = r.is_error
            && r.data.as_ref().is_some_and(|d| d["status"] == "interrupted")
            && r.text.contains("KeyboardInterrupt: interrupted")
            && r.text.contains("the kernel and its state are kept");
        let check = py(&h, "x").await;
        let state_kept = !check.is_error && check.text == format!("Out: {k}");
        if interrupted && state_kept {
            kept += 1;
            if busy { busy_ok += 1 } else { sleep_ok += 1 }
        } else {
            failures.push(format!("trial {k}: {} | then x: {}", r.text, check.text));
        }
    }
    println!(
        "fault: runaway cell under a {} ms idle budget x{TRIALS}: {kept}/{TRIALS} interrupted with state kept (busy loop {busy_ok}/{}, time.sleep {sleep_ok}/{}); the runaway cell returned after median {}, max {}; {} per trial; {} in all",
        BUDGET.as_millis(),
        TRIALS.div_ceil(2),
        TRIALS / 2,
        ms(median(&took)),
        ms(max(&took)),
        ms(started.elapsed() / TRIALS as u32),
        secs(t_all.elapsed()),
    );
    assert!(kept >= 95, "{kept}/{TRIALS} kept; failures: {failures:#?}");
    for f in &failures {
        println!("  {f}");
    }
}
