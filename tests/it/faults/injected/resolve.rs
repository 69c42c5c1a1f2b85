//! `resolve` racing external writers.

use super::*;

/// What a file held after a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// The content staged as "before".
    Old,
    /// The staged rewrite.
    New,
    /// What the external writer wrote.
    External,
    /// The file is gone.
    Missing,
    /// Anything else: a partial or mixed write.
    Other,
}

/// One file's old content for a trial: some `old(…)` calls among other lines.
fn old_content(rng: &mut Rng, trial: usize, file: usize) -> String {
    let mut text = format!("# trial {trial} file {file}\n");
    for line in 0..2 + rng.below(40) {
        if rng.chance(40) {
            text.push_str(&format!("old({})\n", rng.below(1_000_000)));
        } else {
            text.push_str(&format!("y{line} = {}\n", rng.below(1_000_000)));
        }
    }
    text.push_str(&format!("old({file})\n"));
    text
}

/// What the external writer puts in a file: random length, up to 64 KiB.
fn external_content(rng: &mut Rng, trial: usize, file: usize) -> Vec<u8> {
    let mut text = format!("# written by someone else, trial {trial} file {file}\n");
    let len = rng.below(64 * 1024);
    while text.len() < len {
        text.push_str(&format!("z = {}\n", rng.next()));
    }
    text.into_bytes()
}

/// How the external writer writes one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteKind {
    /// open(O_TRUNC) + write, like `echo > file` or most scripts.
    InPlace,
    /// A temporary file renamed over it, like most editors.
    Rename,
}

pub(super) fn external_write(path: &Path, bytes: &[u8], kind: WriteKind, tag: usize) {
    match kind {
        WriteKind::InPlace => std::fs::write(path, bytes).unwrap(),
        WriteKind::Rename => {
            let tmp = path.with_file_name(format!(".external-{tag}.tmp"));
            std::fs::write(&tmp, bytes).unwrap();
            std::fs::rename(&tmp, path).unwrap();
        }
    }
}

/// External writes a commit may lose in the whole race test. A writer
/// whose `open` looked the path up just before the commit swapped the file
/// out, and truncates and writes just after the commit compared what it
/// displaced, writes into an inode that is no longer at the path: no
/// check in user space closes that in-kernel window (seen once in 1,000
/// trials on a loaded CI machine, never on a quiet one). Partial, mixed
/// and missing files stay at zero.
const MAX_LOST_WRITES: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_races_external_writers_1000_trials() {
    let t_all = Instant::now();
    const TRIALS: usize = 1000;
    const FILES: usize = 5;
    const CALIBRATION: usize = 30;
    let seed = seed();
    let mut rng = Rng(seed);
    let h = Harness::with(&[], |b| b.connect(Resource::Parsers));
    let paths: Vec<String> = (0..FILES).map(|i| format!("src/f{i}.py")).collect();
    let stage = json!({"pattern": "old($A)", "rewrite": "new($A)", "path": "src", "language": "python"});

    // Lays out a trial's files and stages the rewrite; returns old forms, new forms and the id.
    let setup = |rng: &mut Rng, trial: usize| {
        let old: Vec<String> = (0..FILES).map(|i| old_content(rng, trial, i)).collect();
        for (p, c) in paths.iter().zip(&old) {
            h.write(p, c);
        }
        let new: Vec<String> = old.iter().map(|c| c.replace("old(", "new(")).collect();
        (old, new)
    };

    // Calibration: how long an uncontested resolve takes, to spread the writes over it.
    let mut uncontested = Vec::new();
    for trial in 0..CALIBRATION {
        let (_, new) = setup(&mut rng, trial);
        let staged = h.ok("ast_edit", stage.clone()).await;
        let id = staged.data.as_ref().unwrap()["staged"]["edit_id"].as_str().unwrap().to_string();
        let t = Instant::now();
        h.ok("resolve", json!({"edit_id": id, "action": "accept"})).await;
        uncontested.push(t.elapsed());
        for (p, c) in paths.iter().zip(&new) {
            assert_eq!(&h.read(p), c, "an uncontested resolve writes every file");
        }
    }
    let window = median(&uncontested) * 2;

    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut partial, mut lost, mut mixed, mut missing, mut spurious) = (0, 0, 0, 0, 0);
    let mut raced = 0;
    let mut problems = Vec::new();
    let mut losses = Vec::new();
    let started = Instant::now();
    for trial in CALIBRATION..CALIBRATION + TRIALS {
        let (old, new) = setup(&mut rng, trial);
        let staged = h.ok("ast_edit", stage.clone()).await;
        let data = &staged.data.as_ref().unwrap()["staged"];
        assert_eq!(data["files"].as_object().unwrap().len(), FILES, "{}", staged.text);
        let id = data["edit_id"].as_str().unwrap().to_string();

        // A random subset (sometimes empty), random contents and kinds, at a random moment.
        let mut plan = Vec::new();
        let count = rng.below(FILES + 1);
        let mut order: Vec<usize> = (0..FILES).collect();
        for i in (1..FILES).rev() {
            order.swap(i, rng.below(i + 1));
        }
        for &i in &order[..count] {
            let kind = if rng.chance(50) { WriteKind::InPlace } else { WriteKind::Rename };
            plan.push((i, h.path(&paths[i]), external_content(&mut rng, trial, i), kind));
        }
        let delay = Duration::from_nanos(rng.below(window.as_nanos() as usize + 1) as u64);
        let written: BTreeMap<usize, Vec<u8>> = plan.iter().map(|(i, _, c, _)| (*i, c.clone())).collect();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            wait.recv().unwrap();
            let at = Instant::now() + delay;
            while Instant::now() < at {
                std::hint::spin_loop();
            }
            for (i, path, bytes, kind) in &plan {
                external_write(path, bytes, *kind, *i);
            }
        });
        go.send(()).unwrap();
        let r = h.call("resolve", json!({"edit_id": id, "action": "accept"})).await;
        writer.join().unwrap();

        let outcome = r.data.as_ref().and_then(|d| d["outcome"].as_str()).unwrap_or("no outcome").to_string();
        let held: Vec<Held> = (0..FILES)
            .map(|i| match std::fs::read(h.path(&paths[i])) {
                Err(_) => Held::Missing,
                Ok(b) if b == old[i].as_bytes() => Held::Old,
                Ok(b) if b == new[i].as_bytes() => Held::New,
                Ok(b) if written.get(&i) == Some(&b) => Held::External,
                Ok(_) => Held::Other,
            })
            .collect();
        let mut bad = Vec::new();
        for (i, held) in held.iter().enumerate() {
            let theirs = written.contains_key(&i);
            match (held, theirs, outcome.as_str()) {
                (Held::Missing, ..) => {
                    missing += 1;
                    bad.push(format!("{} is gone", paths[i]));
                }
                (Held::Other, ..) => {
                    partial += 1;
                    bad.push(format!("{} holds a partial or mixed write", paths[i]));
                }
                // Nothing the user wrote is lost — but see MAX_LOST_WRITES.
                (Held::External, true, _) => {}
                (_, true, _) => {
                    lost += 1;
                    losses.push(format!(
                        "trial {trial}: {}: the external write was lost (the file holds {held:?})",
                        paths[i]
                    ));
                }
                // The change is all or nothing.
                (Held::New, false, "accepted") | (Held::Old, false, "refused") => {}
                (_, false, _) => {
                    mixed += 1;
                    bad.push(format!("{} holds {held:?} after `{outcome}`", paths[i]));
                }
            }
        }
        if outcome == "refused" {
            let moved: Vec<&str> = r.data.as_ref().unwrap()["moved"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let named_ok = !moved.is_empty()
                && moved
                    .iter()
                    .all(|m| paths.iter().position(|p| p == m).is_some_and(|i| written.contains_key(&i)));
            if !named_ok {
                spurious += 1;
                bad.push(format!(
                    "refused naming {moved:?}, but the writer wrote {:?}",
                    written.keys().collect::<Vec<_>>()
                ));
            }
            assert!(r.text.contains("nothing was written"), "{}", r.text);
        }
        if outcome == "accepted" && held.contains(&Held::External) {
            raced += 1;
        }
        *outcomes
            .entry(match outcome.as_str() {
                "accepted" => "accepted",
                "refused" => "refused",
                _ => "other",
            })
            .or_default() += 1;
        if !bad.is_empty() {
            problems.push(format!(
                "trial {trial} (delay {delay:?}, outcome {outcome}: {}): {}",
                r.text.lines().next().unwrap_or(""),
                bad.join("; ")
            ));
        }
    }
    println!(
        "fault: resolve racing external writers x{TRIALS} (seed {seed}, {FILES} files, writes spread over {} = 2x the median uncontested resolve): {} accepted ({raced} of them with external writes kept on top of the new form), {} refused for drift, {} other; {partial} partial writes, {lost} external writes lost, {mixed} files left in the wrong form, {missing} files missing, {spurious} refusals naming a file nobody touched; {} per trial; {} in all",
        ms(window),
        outcomes.get("accepted").copied().unwrap_or(0),
        outcomes.get("refused").copied().unwrap_or(0),
        outcomes.get("other").copied().unwrap_or(0),
        ms(started.elapsed() / TRIALS as u32),
        secs(t_all.elapsed()),
    );
    for p in problems.iter().take(10) {
        println!("  {p}");
    }
    for l in &losses {
        println!("  {l}");
    }
    assert!(
        problems.is_empty(),
        "{} of {TRIALS} trials broke the contract (first ones above)",
        problems.len()
    );
    assert!(
        lost <= MAX_LOST_WRITES,
        "{lost} external writes lost in {TRIALS} trials (at most {MAX_LOST_WRITES})"
    );
    assert_eq!(outcomes.get("other"), None, "every resolve was accepted or refused");
}
