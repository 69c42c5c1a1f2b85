//! Language servers SIGKILLed mid-request (a fake for the 100-kill loop, real pyright), and capped answers.

use super::*;

/// tether.toml serving Python with the fake server.
fn fake_toml() -> String {
    format!(
        "[[server]]\nid = \"fake\"\ncommand = {:?}\nargs = [\"fake_lsp.py\"]\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\n",
        real_python()
    )
}

/// The Python fixture project, plus the fake server if `fake`.
fn lsp_project(fake: bool) -> Harness {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp");
    let read = |p: &str| std::fs::read_to_string(fixtures.join(p)).unwrap();
    let mut files = vec![
        ("pyproject.toml", read("python/pyproject.toml")),
        ("app.py", read("python/app.py")),
        ("shapes.py", read("python/shapes.py")),
    ];
    if fake {
        files.push(("fake_lsp.py", read("fake_lsp.py")));
        files.push(("tether.toml", fake_toml()));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    Harness::with(&refs, |b| b.connect_all())
}

/// The running language server's node.
async fn lsp_server(h: &Harness) -> Option<Value> {
    node(h, "lsp-server", |n| pid(n).is_some()).await
}

/// What one kill mid-request measured.
struct KillRound {
    /// The server killed, as the tree showed it.
    server: u32,
    /// The server's process group just before the kill.
    ledger: Ledger,
    /// From the kill to the waiting call's error.
    errored_after: Duration,
    /// The call's error text.
    text: String,
}

/// Issues `request`, waits until the tree shows it in flight (sent to a
/// running server and unanswered), SIGKILLs that server and times the
/// call's error. `None` if the request was answered before the kill.
async fn kill_mid_request(h: &Harness, request: Value) -> Option<KillRound> {
    let answered = AtomicBool::new(false);
    let call = async {
        let r = h.call("lsp", request).await;
        answered.store(true, Ordering::SeqCst);
        (r, Instant::now())
    };
    let killer = async {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if answered.load(Ordering::SeqCst) {
                return None;
            }
            let busy = lsp_server(h).await.filter(|n| n["pending"].as_u64() >= Some(1));
            if let Some(server) = busy.as_ref().and_then(pid)
                && !answered.load(Ordering::SeqCst)
            {
                let mut ledger = Ledger::default();
                ledger.add_group(server, "the server killed mid-request");
                sigkill(server);
                return Some((server, ledger, Instant::now()));
            }
            assert!(Instant::now() < deadline, "the request never showed in flight");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let ((result, returned_at), killed) = tokio::join!(call, killer);
    let (server, ledger, killed_at) = killed?;
    if !result.is_error {
        // Answered between the tree's look and the kill.
        return None;
    }
    Some(KillRound {
        server,
        ledger,
        errored_after: returned_at.saturating_duration_since(killed_at),
        text: result.text,
    })
}

/// One round on the fake server: a fresh run, its first request killed
/// in flight, then the next call. Returns what it tracked and measured.
async fn fake_server_round(round: usize) -> (Ledger, Duration, Duration) {
    let definition = json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "unit"});
    let hover = json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit"});
    let h = tokio::task::spawn_blocking(|| lsp_project(true)).await.unwrap();
    let mut ledger = Ledger::default();
    // The first call starts the server; the fake never answers it.
    let k = kill_mid_request(&h, definition)
        .await
        .expect("the fake server never answers definition, so the request is in flight");
    ledger.absorb(k.ledger, &format!("round {round}: "));
    let grandchild: u32 = h.read("fake_child.pid").trim().parse().unwrap();
    assert!(
        ledger.procs.keys().any(|p| p.pid == grandchild),
        "round {round}: the fake server's `sleep` was in its group when it was killed"
    );
    assert!(k.text.contains("killed by signal 9"), "round {round}: names the cause: {}", k.text);
    assert!(
        k.errored_after < Duration::from_secs(1),
        "round {round}: errored {:?} after the kill",
        k.errored_after
    );

    let t = Instant::now();
    let next = h.call("lsp", hover).await;
    let next_took = t.elapsed();
    let answer = crate::common::answer_only(&next.text);
    assert!(!next.is_error && answer == "fake hover", "round {round}: the next call: {}", next.text);
    let restarted = lsp_server(&h).await.expect("the restarted server");
    assert_eq!(restarted["restarts"], 1, "round {round}: {restarted}");
    let again = pid(&restarted).unwrap();
    assert_ne!(again, k.server);
    ledger.add_group(again, &format!("round {round}: the restarted fake server"));
    tokio::task::spawn_blocking(move || drop(h)).await.unwrap();
    (ledger, k.errored_after, next_took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lsp_server_sigkilled_mid_request_100_times() {
    let t_all = Instant::now();
    const ROUNDS: usize = 100;
    /// Rounds run in this many lanes at once (each round has its own run
    /// and server; most of a round is waiting).
    const LANES: usize = 2;
    let started = Instant::now();
    // A fresh run each round: a server killed again and again in one run is
    // restarted with a growing backoff (0.2 s doubling to 8 s), by design.
    let lanes = (0..LANES).map(|lane| {
        tokio::spawn(async move {
            let mut out = Vec::new();
            for round in (lane..ROUNDS).step_by(LANES) {
                out.push(fake_server_round(round).await);
            }
            out
        })
    });
    let mut ledger = Ledger::default();
    let (mut waits, mut nexts) = (Vec::new(), Vec::new());
    for lane in futures::future::join_all(lanes).await {
        for (l, wait, next) in lane.expect("a lane of rounds panicked") {
            ledger.absorb(l, "");
            waits.push(wait);
            nexts.push(next);
        }
    }
    assert_eq!(waits.len(), ROUNDS);
    ledger.finish(|tracked| {
        format!(
            "fault: lsp (fake server) SIGKILL mid-request x{ROUNDS}: {ROUNDS}/{ROUNDS} in-flight calls errored naming signal 9 (median {}, max {} after the kill), {ROUNDS}/{ROUNDS} next calls ok (median {}, max {}, incl. the 0.2 s restart backoff), {tracked}; {} per round ({LANES} lanes); {} in all",
            ms(median(&waits)),
            ms(max(&waits)),
            ms(median(&nexts)),
            ms(max(&nexts)),
            ms(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}

#[tokio::test]
async fn answers_from_a_server_are_capped_and_say_so() {
    let h = lsp_project(true);
    let imps =
        h.ok("lsp", json!({"action": "implementation", "file": "app.py", "line": 3, "symbol": "unit"})).await;
    assert!(
        imps.text.starts_with("implementation of `unit` (5000):"),
        "{}",
        crate::common::head(&imps.text, 80)
    );
    assert!(
        imps.text.ends_with("… 4800 more not listed (at most 200)"),
        "{}",
        imps.text.lines().last().unwrap()
    );
    assert_eq!(imps.data.unwrap()["locations"].as_array().unwrap().len(), 200);
    let hover =
        h.ok("lsp", json!({"action": "hover", "file": "app.py", "line": 4, "symbol": "total_area"})).await;
    assert!(hover.text.len() < 9_000, "{} characters", hover.text.len());
    assert!(
        hover.text.ends_with("12000 more characters of hover not shown"),
        "{}",
        crate::common::tail(&hover.text, 80)
    );
}

#[tokio::test]
async fn pyright_sigkilled_mid_request() {
    let t_all = Instant::now();
    require("pyright", &["--version"], "npm install -g pyright");
    const ROUNDS: usize = 10;
    const PYRIGHT_FILES: usize = 300;
    // A warm pyright answers a definition in well under a millisecond, too
    // fast to catch; `references` over a few hundred files keeps it busy
    // long enough. A round where it answered first is retried and counted.
    let references = json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square"});
    let mut ledger = Ledger::default();
    let (mut waits, mut nexts, mut missed) = (Vec::new(), Vec::new(), 0);
    let started = Instant::now();
    let mut round = 0;
    while round < ROUNDS {
        let h = lsp_project(false);
        for i in 0..PYRIGHT_FILES {
            let module = format!(
                "from shapes import Square\n\n\ndef f{i}(n: float) -> float:\n    return Square(n).area()\n"
            );
            h.write(&format!("pkg{}/m{i}.py", i % 10), &module);
        }
        let Some(k) = kill_mid_request(&h, references.clone()).await else {
            missed += 1;
            assert!(missed < 3 * ROUNDS, "pyright answered before it could be killed {missed} times");
            if let Some(server) = lsp_server(&h).await.and_then(|n| pid(&n)) {
                ledger.add_group(server, &format!("pyright of a missed round {missed}"));
            }
            continue;
        };
        ledger.absorb(k.ledger, &format!("round {round}: "));
        assert!(k.text.contains("killed by signal 9"), "names the cause: {}", k.text);
        assert!(k.errored_after < Duration::from_secs(1), "errored {:?} after the kill", k.errored_after);
        waits.push(k.errored_after);
        let t = Instant::now();
        let refs = h.call("lsp", references.clone()).await;
        nexts.push(t.elapsed());
        let want = format!("{} references to `Square`", 2 * PYRIGHT_FILES + 4);
        assert!(!refs.is_error && refs.text.starts_with(&want), "the next call: {}", refs.text);
        let again = lsp_server(&h).await.and_then(|n| pid(&n)).expect("the restarted pyright");
        ledger.add_group(again, &format!("round {round}: the restarted pyright"));
        drop(h);
        round += 1;
    }
    ledger.finish(|tracked| {
        format!(
            "fault: lsp (pyright) SIGKILL mid-request x{ROUNDS}: {ROUNDS}/{ROUNDS} in-flight calls errored naming signal 9 (median {}, max {} after the kill; {missed} rounds answered before the kill and were retried), {ROUNDS}/{ROUNDS} next calls ok (median {}, max {}), {tracked}; {} per round; {} in all",
            ms(median(&waits)),
            ms(max(&waits)),
            secs(median(&nexts)),
            secs(max(&nexts)),
            secs(started.elapsed() / ROUNDS as u32),
            secs(t_all.elapsed()),
        )
    });
}
