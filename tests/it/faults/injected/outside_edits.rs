//! Outside edits interleaved with queries: never a stale answer labelled fresh.

use super::resolve::{WriteKind, external_write};
use super::*;

/// One caller file of the trial project, as the model knows it.
#[derive(Debug, Clone, Copy, Default)]
struct Caller {
    exists: bool,
    calls: usize,
    errors: usize,
}

impl Caller {
    fn text(&self, k: usize) -> String {
        let mut text = format!("from a import f\n\n\ndef use_{k}():\n    return 0\n");
        for _ in 0..self.calls {
            text.push_str("f()\n");
        }
        for e in 0..self.errors {
            text.push_str(&format!("bad_{e}: int = \"s\"\n"));
        }
        text
    }

    /// References to `f` in the file: the import and each call.
    fn references(&self) -> usize {
        if self.exists { self.calls + 1 } else { 0 }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_edits_interleaved_with_queries_are_never_stale_and_labelled_fresh() {
    require("pyright", &["--version"], "npm install -g pyright");
    const EDITS: usize = 1000;
    const FILES: usize = 8;
    let t_all = Instant::now();
    let seed = seed();
    let mut rng = Rng(seed);
    let h = Harness::new(&[("pyproject.toml", ""), ("a.py", "def f():\n    return 1\n")]);
    let mut model = [Caller::default(); FILES];
    let path = |k: usize| format!("m{k}.py");
    let refs = json!({"action": "references", "file": "a.py", "line": 1, "symbol": "f"});

    let (mut ref_answers, mut diag_answers, mut stale, mut pending, mut noted) = (0, 0, 0, 0, 0);
    let mut stale_labelled_fresh: Vec<String> = Vec::new();
    let mut latencies = Vec::new();
    for edit in 0..EDITS {
        // One outside edit: a rewrite (in place or by rename-over), a delete or a creation.
        let k = rng.below(FILES);
        let file = h.path(&path(k));
        if model[k].exists && rng.one_in(6) {
            std::fs::remove_file(&file).unwrap();
            model[k] = Caller::default();
        } else {
            model[k] = Caller { exists: true, calls: rng.below(4), errors: rng.below(3) };
            let kind = if rng.chance(50) { WriteKind::InPlace } else { WriteKind::Rename };
            external_write(&file, model[k].text(k).as_bytes(), kind, edit);
        }
        // A query after about half the edits, so bursts of edits happen too.
        if !rng.chance(50) {
            continue;
        }
        let t = Instant::now();
        let existing: Vec<usize> = (0..FILES).filter(|i| model[*i].exists).collect();
        if existing.is_empty() || rng.chance(65) {
            let r = h.ok("lsp", refs.clone()).await;
            latencies.push(t.elapsed());
            ref_answers += 1;
            let expected = 1 + model.iter().map(Caller::references).sum::<usize>();
            let total = r.data.as_ref().unwrap()["total"].as_u64().unwrap() as usize;
            let labelled = r.text.contains("\nnote: ");
            if labelled {
                noted += 1;
            }
            if total != expected {
                stale += 1;
                if !labelled {
                    stale_labelled_fresh
                        .push(format!("edit {edit}: references {total}, expected {expected}"));
                }
            }
        } else {
            let k = *rng.pick(&existing);
            let r = h.ok("lsp", json!({"action": "diagnostics", "file": path(k)})).await;
            latencies.push(t.elapsed());
            diag_answers += 1;
            let data = r.data.unwrap();
            let errors: Vec<u64> = data["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["severity"] == 1)
                .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
                .collect();
            let first_error_line = 5 + model[k].calls as u64;
            let expected: Vec<u64> = (0..model[k].errors as u64).map(|e| first_error_line + e).collect();
            match data["freshness"].as_str() {
                Some("fresh") if errors != expected => {
                    stale += 1;
                    stale_labelled_fresh.push(format!(
                        "edit {edit}: {} errors at {errors:?}, expected {expected:?}",
                        path(k)
                    ));
                }
                Some("fresh") => {}
                Some("pending") => pending += 1,
                _ => stale += 1,
            }
        }
    }
    println!(
        "fault: outside edits x{EDITS} (in place, rename-over, delete, create; {FILES} files, pyright) interleaved with {} queries ({ref_answers} references, {diag_answers} diagnostics): {stale} stale, {pending} pending, {noted} with a note (still indexing, or re-reading), {} stale labelled fresh; query after an edit median {}, max {}; {} in all (seed {seed:#x})",
        ref_answers + diag_answers,
        stale_labelled_fresh.len(),
        ms(median(&latencies)),
        ms(max(&latencies)),
        secs(t_all.elapsed()),
    );
    assert!(stale_labelled_fresh.is_empty(), "stale answers labelled fresh: {stale_labelled_fresh:#?}");
}
