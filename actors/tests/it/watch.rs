//! The file watcher on a real directory: sync points deliver every change
//! made before them, bursts are one batch, the walks' rules (hidden files,
//! `.gitignore` in a git checkout, dependency trees) are honoured, new
//! directories are watched, and the stat-scan mode sees the same changes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tether_actors::watch::{Batch, ChangeKind, DEBOUNCE, Deliver, Preference, Watcher};

/// Everything delivered, in order.
#[derive(Default, Clone)]
struct Log(Arc<Mutex<Vec<Arc<Batch>>>>);

impl Log {
    fn deliver(&self) -> Deliver {
        let log = self.0.clone();
        Arc::new(move |batch| log.lock().push(batch))
    }

    /// Every change delivered so far, relative to `root`, with its kind.
    fn changes(&self, root: &Path) -> Vec<(String, ChangeKind)> {
        self.0
            .lock()
            .iter()
            .flat_map(|b| b.changes.iter())
            .map(|c| (c.path.strip_prefix(root).unwrap().display().to_string(), c.kind))
            .collect()
    }

    fn batches(&self) -> usize {
        self.0.lock().len()
    }

    fn clear(&self) {
        self.0.lock().clear();
    }
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.py"), "a\n").unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/b.py"), "b\n").unwrap();
    (dir, root)
}

fn start(root: &Path, preference: Preference) -> (Watcher, Log) {
    let log = Log::default();
    let watcher = Watcher::start(root.to_path_buf(), preference, log.deliver());
    (watcher, log)
}

async fn sync(w: &Watcher) -> u64 {
    let synced =
        tokio::time::timeout(Duration::from_secs(15), w.handle().sync()).await.expect("sync answers");
    assert_eq!(synced.note, None, "the sync point is confirmed");
    synced.seq
}

#[tokio::test]
async fn a_sync_point_delivers_every_change_made_before_it() {
    let (_dir, root) = project();
    let (w, log) = start(&root, Preference::Events);
    sync(&w).await;
    assert_eq!(w.handle().status().mode, "events");
    assert_eq!(log.batches(), 0, "the first walk is the starting state, not a change");
    // 200 rounds of write-then-sync: never a change missing from its sync point.
    for i in 0..200 {
        log.clear();
        std::fs::write(root.join("a.py"), format!("a{i}\n")).unwrap();
        sync(&w).await;
        assert_eq!(log.changes(&root), vec![("a.py".to_string(), ChangeKind::Changed)], "round {i}");
    }
}

#[tokio::test]
async fn creations_in_new_directories_deletes_and_renames_are_files_created_and_deleted() {
    let (_dir, root) = project();
    let (w, log) = start(&root, Preference::Events);
    sync(&w).await;
    std::fs::create_dir_all(root.join("new/deep")).unwrap();
    std::fs::write(root.join("new/deep/c.py"), "c\n").unwrap();
    std::fs::remove_file(root.join("a.py")).unwrap();
    sync(&w).await;
    let mut got = log.changes(&root);
    got.sort();
    assert_eq!(
        got,
        vec![("a.py".into(), ChangeKind::Deleted), ("new/deep/c.py".into(), ChangeKind::Created)]
    );
    // The new directory is watched: a change inside it arrives too.
    log.clear();
    std::fs::write(root.join("new/deep/c.py"), "c2\n").unwrap();
    sync(&w).await;
    assert_eq!(log.changes(&root), vec![("new/deep/c.py".into(), ChangeKind::Changed)]);
    // A directory renamed: its files are deleted under the old name and created under the new.
    log.clear();
    std::fs::rename(root.join("pkg"), root.join("pkg2")).unwrap();
    sync(&w).await;
    let mut got = log.changes(&root);
    got.sort();
    assert_eq!(
        got,
        vec![("pkg/b.py".into(), ChangeKind::Deleted), ("pkg2/b.py".into(), ChangeKind::Created)]
    );
    // An editor's save: a temporary file renamed over the original is a change.
    log.clear();
    std::fs::write(root.join("pkg2/.b.py.swp"), "b3\n").unwrap();
    std::fs::rename(root.join("pkg2/.b.py.swp"), root.join("pkg2/b.py")).unwrap();
    sync(&w).await;
    assert_eq!(log.changes(&root), vec![("pkg2/b.py".into(), ChangeKind::Changed)]);
}

#[tokio::test]
async fn a_burst_of_500_writes_is_one_batch() {
    let (_dir, root) = project();
    let (w, log) = start(&root, Preference::Events);
    sync(&w).await;
    std::fs::create_dir_all(root.join("many")).unwrap();
    for i in 0..500 {
        std::fs::write(root.join(format!("many/m{i}.py")), "x\n").unwrap();
    }
    // No sync point: the debounce alone must gather the burst.
    let created = || log.changes(&root).iter().filter(|(_, k)| *k == ChangeKind::Created).count();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while created() < 500 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(DEBOUNCE * 4).await;
    let sizes: Vec<usize> = log.0.lock().iter().map(|b| b.changes.len()).collect();
    assert_eq!(created(), 500, "batches: {sizes:?}");
    // A writer stalled past the debounce by a loaded machine may split the
    // burst; a file then created empty in one batch is changed in the next.
    assert!(sizes.len() <= 2, "500 writes in a burst came as {} batches: {sizes:?}", sizes.len());
    assert!(log.changes(&root).iter().all(|(_, k)| *k != ChangeKind::Deleted));
    assert_eq!(w.handle().status().files, 502);
}

#[tokio::test]
async fn the_walks_rules_are_honoured() {
    let (_dir, root) = project();
    // .gitignore applies in a git checkout, as it does for the walks.
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    let (w, log) = start(&root, Preference::Events);
    sync(&w).await;
    std::fs::write(root.join("build/out.py"), "x\n").unwrap();
    std::fs::write(root.join("run.log"), "x\n").unwrap();
    std::fs::write(root.join("node_modules/dep/i.js"), "x\n").unwrap();
    std::fs::write(root.join(".hidden.py"), "x\n").unwrap();
    std::fs::write(root.join("kept.py"), "x\n").unwrap();
    sync(&w).await;
    assert_eq!(log.changes(&root), vec![("kept.py".into(), ChangeKind::Created)]);
}

#[tokio::test]
async fn the_scan_mode_sees_the_same_changes_and_says_why_it_scans() {
    let (_dir, root) = project();
    let (w, log) = start(&root, Preference::Scan);
    sync(&w).await;
    let status = w.handle().status();
    assert_eq!(status.mode, "scan");
    assert!(
        status
            .describe()
            .contains("a stat scan of 2 file(s) before every query, because tether.toml asks for it"),
        "{}",
        status.describe()
    );
    std::fs::write(root.join("a.py"), "a, longer\n").unwrap();
    std::fs::create_dir_all(root.join("new")).unwrap();
    std::fs::write(root.join("new/c.py"), "c\n").unwrap();
    std::fs::remove_file(root.join("pkg/b.py")).unwrap();
    sync(&w).await;
    let mut got = log.changes(&root);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("a.py".into(), ChangeKind::Changed),
            ("new/c.py".into(), ChangeKind::Created),
            ("pkg/b.py".into(), ChangeKind::Deleted),
        ]
    );
}

#[tokio::test]
async fn the_changes_between_two_sync_points_are_known() {
    let (_dir, root) = project();
    let (w, _log) = start(&root, Preference::Events);
    let first = sync(&w).await;
    std::fs::write(root.join("a.py"), "a2\n").unwrap();
    let second = sync(&w).await;
    std::fs::write(root.join("pkg/b.py"), "b2\n").unwrap();
    let third = sync(&w).await;
    let between = |a, b| {
        let mut v: Vec<String> = w
            .handle()
            .changed_between(a, b)
            .unwrap()
            .into_iter()
            .map(|c| c.path.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(between(first, second), ["a.py"]);
    assert_eq!(between(second, third), ["pkg/b.py"]);
    assert_eq!(between(first, third), ["a.py", "pkg/b.py"]);
    assert!(between(third, third).is_empty());
}

#[tokio::test]
async fn a_stopped_watcher_answers_at_once_that_it_stopped() {
    let (_dir, root) = project();
    let (w, _log) = start(&root, Preference::Events);
    sync(&w).await;
    let handle = w.handle();
    drop(w);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let started = std::time::Instant::now();
        let synced = handle.sync().await;
        if let Some(note) = synced.note {
            assert!(note.contains("stopped"), "{note}");
            assert!(started.elapsed() < Duration::from_secs(1), "answered at once");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the watcher still answers 5 s after it was dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
