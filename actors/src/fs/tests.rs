//! Tests of confinement, atomic writes, checked replacement and commits.

use std::io;
use std::path::{Path, PathBuf};

use super::atomic::staged_beside;
use super::replace::{replace_if, swap_in};
use super::*;

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = canonical_root(dir.path()).unwrap();
    (dir, root)
}

#[test]
fn a_failed_commit_counts_only_what_it_restored_and_says_how_files_are_left() {
    let (_d, root) = root();
    let (a, b) = (root.join("a.txt"), root.join("b.txt"));
    std::fs::write(&a, "a0").unwrap();
    std::fs::write(&b, "b0").unwrap();
    let change = |p: &Path, before: &str, after: &str| FileChange {
        path: p.to_path_buf(),
        before: Some(before.into()),
        after: Some(after.into()),
        mode: None,
    };
    let changes = [change(&a, "a0", "a1"), change(&b, "b0", "b1")];
    // a is written, then someone writes on top of it; b's write fails.
    let step = |path: &Path, expected: Option<&[u8]>, state: Option<&[u8]>| {
        if path.ends_with("b.txt") {
            return Err(io::Error::other("disk full"));
        }
        let done = replace_if(path, expected, state, None);
        std::fs::write(path, "theirs").unwrap();
        done
    };
    match commit_with(&changes, &step) {
        Err(e @ CommitError::WriteFailed { restored: 0, .. }) => {
            assert!(e.nothing_changed(), "{e}");
            assert_eq!(e.left(), "nothing was changed");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "theirs", "a write on top is kept");
    let partly = CommitError::WriteFailed {
        path: b.clone(),
        source: io::Error::other("x"),
        restored: 0,
        unrestored: vec![a.clone()],
    };
    assert!(!partly.nothing_changed() && partly.left().contains("only partly undone"));
}

#[test]
fn a_rewritten_file_keeps_its_owner() {
    use std::os::unix::fs::MetadataExt;
    let (_d, root) = root();
    let path = root.join("theirs.txt");
    std::fs::write(&path, "v1").unwrap();
    // As root (the test command's CI), the file is handed to another
    // user first; elsewhere it is the caller's own and must stay so.
    let owner = match std::os::unix::fs::chown(&path, Some(4321), Some(4321)) {
        Ok(()) => (4321, 4321),
        Err(_) => {
            let meta = std::fs::metadata(&path).unwrap();
            (meta.uid(), meta.gid())
        }
    };
    atomic_write(&path, b"v2").unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), owner);
    let change = FileChange {
        path: path.clone(),
        before: Some(b"v2".to_vec()),
        after: Some(b"v3".to_vec()),
        mode: None,
    };
    commit(&[change]).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), owner);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "v3");
}

#[test]
fn a_rolled_back_change_removes_the_directories_it_made() {
    let (_d, root) = root();
    std::fs::write(root.join("b.txt"), "b0").unwrap();
    let changes = [
        FileChange {
            path: root.join("new/deep/f.txt"),
            before: None,
            after: Some(b"f".to_vec()),
            mode: None,
        },
        FileChange {
            path: root.join("b.txt"),
            before: Some(b"b0".to_vec()),
            after: Some(b"b1".to_vec()),
            mode: None,
        },
    ];
    let step = |path: &Path, expected: Option<&[u8]>, state: Option<&[u8]>| {
        if path.ends_with("b.txt") {
            return Err(io::Error::other("disk full"));
        }
        replace_if(path, expected, state, None)
    };
    assert!(matches!(commit_with(&changes, &step), Err(CommitError::WriteFailed { restored: 1, .. })));
    assert!(!root.join("new").exists(), "the directories the change made are gone");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b0");
}

#[test]
fn what_a_swap_displaces_is_put_back_never_deleted() {
    let (_d, root) = root();
    let path = root.join("b.txt");
    std::fs::write(&path, "old").unwrap();
    let tmp = staged_beside(&path, b"new", None).unwrap();
    // Between staging and the swap, the file became a directory with
    // the user's work in it.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("work.txt"), "mine").unwrap();
    assert!(
        swap_in(tmp, &path, b"old").is_err(),
        "a displaced directory cannot be read as the expected file"
    );
    assert_eq!(std::fs::read_to_string(path.join("work.txt")).unwrap(), "mine");
    let stray: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tether-"))
        .collect();
    assert!(stray.is_empty(), "nothing left at a temporary name");
}

#[test]
fn confine_accepts_paths_inside_and_new_files() {
    let (_d, root) = root();
    std::fs::create_dir(root.join("src")).unwrap();
    assert_eq!(confine(&root, "src").unwrap(), root.join("src"));
    assert_eq!(confine(&root, "src/new/x.py").unwrap(), root.join("src/new/x.py"));
    assert_eq!(confine(&root, "src/../a.py").unwrap(), root.join("a.py"));
    let abs = root.join("src").display().to_string();
    assert_eq!(confine(&root, &abs).unwrap(), root.join("src"));
    assert_eq!(confine(&root, ".").unwrap(), root);
}

#[test]
fn confine_refuses_escapes() {
    let (_d, root) = root();
    let outside = tempfile::tempdir().unwrap();
    for bad in ["..", "../x", "a/../../x", "/etc/passwd"] {
        assert!(matches!(confine(&root, bad), Err(PathError::Outside { .. })), "{bad} should be refused");
    }
    std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
    assert!(matches!(confine(&root, "link"), Err(PathError::Outside { .. })));
    assert!(matches!(confine(&root, "link/new.txt"), Err(PathError::Outside { .. })));
    assert_eq!(confine(&root, " "), Err(PathError::Empty));
}

#[test]
fn dangling_links_are_refused_as_dangling_wherever_they_point() {
    let (_d, root) = root();
    std::os::unix::fs::symlink(root.join("missing.txt"), root.join("inside")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/tether-target", root.join("outside")).unwrap();
    for (given, link) in [("inside", "inside"), ("outside", "outside"), ("outside/new.txt", "outside")] {
        let e = confine(&root, given).unwrap_err();
        assert_eq!(e, PathError::Dangling { path: given.into(), link: link.into() });
        assert!(e.to_string().contains("whose target does not exist"), "{e}");
    }
}

#[test]
fn atomic_write_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, root) = root();
    let path = root.join("run.sh");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    atomic_write(&path, b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
}

fn change(path: &Path, before: &str, after: &str) -> FileChange {
    FileChange {
        path: path.to_path_buf(),
        before: Some(before.as_bytes().to_vec()),
        after: Some(after.as_bytes().to_vec()),
        mode: None,
    }
}

/// `a`, `b` and `c` under `root`, each holding "old".
fn three_old_files(root: &Path) -> [PathBuf; 3] {
    let names = ["a", "b", "c"].map(|n| root.join(n));
    for p in &names {
        std::fs::write(p, "old").unwrap();
    }
    names
}

#[test]
fn commit_refuses_the_whole_change_on_drift() {
    let (_d, root) = root();
    let names = three_old_files(&root);
    let changes: Vec<_> = names.iter().map(|p| change(p, "old", "new")).collect();
    std::fs::write(&names[1], "moved").unwrap();
    match commit(&changes) {
        Err(CommitError::Drift { moved }) => assert_eq!(moved, vec![names[1].clone()]),
        other => panic!("expected drift, got {other:?}"),
    }
    for (p, want) in names.iter().zip(["old", "moved", "old"]) {
        assert_eq!(std::fs::read_to_string(p).unwrap(), want);
    }
}

#[test]
fn a_failed_write_restores_the_files_already_written() {
    let (_d, root) = root();
    let names = three_old_files(&root);
    let mut changes: Vec<_> = names.iter().map(|p| change(p, "old", "new")).collect();
    changes.push(FileChange {
        path: root.join("created"),
        before: None,
        after: Some(b"fresh".to_vec()),
        mode: None,
    });
    let fail_on = names[2].clone();
    let result = commit_with(&changes, &|path, expected, state| {
        if path == fail_on {
            Err(io::Error::other("disk full"))
        } else {
            replace_if(path, expected, state, None)
        }
    });
    match result {
        Err(CommitError::WriteFailed { path, restored, unrestored, .. }) => {
            assert_eq!(path, names[2]);
            assert_eq!(restored, 2);
            assert!(unrestored.is_empty());
        }
        other => panic!("expected a write failure, got {other:?}"),
    }
    for p in &names {
        assert_eq!(std::fs::read_to_string(p).unwrap(), "old");
    }
    assert!(!root.join("created").exists());
}

#[test]
fn a_write_landing_during_the_commit_is_kept_and_refuses_the_change() {
    let (_d, root) = root();
    let names = three_old_files(&root);
    let changes: Vec<_> = names.iter().map(|p| change(p, "old", "new")).collect();
    // Someone writes `a` (already committed) and `c` (not yet) just
    // before `c` is written: both their writes stay, `b` goes back.
    let result = commit_with(&changes, &|path, expected, state| {
        if path == names[2] {
            std::fs::write(&names[0], "theirs a").unwrap();
            std::fs::write(&names[2], "theirs c").unwrap();
        }
        replace_if(path, expected, state, None)
    });
    match result {
        Err(CommitError::Drift { moved }) => assert_eq!(moved, vec![names[2].clone(), names[0].clone()]),
        other => panic!("expected drift, got {other:?}"),
    }
    for (p, want) in names.iter().zip(["theirs a", "old", "theirs c"]) {
        assert_eq!(std::fs::read_to_string(p).unwrap(), want);
    }
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 3, "no temporary file is left behind: {left:?}");
}

#[test]
fn commit_creates_and_deletes() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, root) = root();
    std::fs::write(root.join("gone"), "x").unwrap();
    let gone = FileChange { path: root.join("gone"), before: Some(b"x".to_vec()), after: None, mode: None };
    let new = FileChange { path: root.join("d/new"), before: None, after: Some(b"y".to_vec()), mode: None };
    let run =
        FileChange { path: root.join("d/run"), before: None, after: Some(b"z".to_vec()), mode: Some(0o755) };
    commit(&[gone, new, run]).unwrap();
    assert!(!root.join("gone").exists());
    assert_eq!(std::fs::read_to_string(root.join("d/new")).unwrap(), "y");
    let mode = |p: &str| std::fs::metadata(root.join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("d/new"), NEW_FILE_MODE, "not the temporary file's 0600");
    assert_eq!(mode("d/run"), 0o755);
}
