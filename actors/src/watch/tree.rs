//! The files the watcher tracks: every file the project's walks would
//! visit (the `ignore` crate's rules — hidden files, `.gitignore`,
//! `.ignore` — plus the dependency and build trees no walk should enter),
//! with what was last seen of each, and the directories under watch.
//!
//! The tree turns "something happened at this path" into what changed:
//! [`Tree::settle`] looks at each path as it is now and compares it with
//! what it knew, so an event's kind never has to be trusted (an editor's
//! save by rename-over, a delete then a create, a directory moved away —
//! each ends as created, changed or deleted files). [`Tree::rescan`]
//! compares a fresh walk with it, for the stat-scan mode and for recovery
//! after the kernel's event queue overflowed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{Change, ChangeKind};

/// Directories never walked or watched: dependency and build trees, large
/// and changed only by installs and builds (the marker search skips the same).
pub const SKIPPED_DIRS: &[&str] = &["node_modules", "target", "__pycache__"];
/// Most files tracked; past it the tree says it is truncated.
pub const MAX_FILES: usize = 200_000;

/// What was last seen of a file: enough to tell a rewrite from a touch
/// in the stat-scan mode (a rename-over changes the inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

impl Meta {
    fn of(m: &std::fs::Metadata) -> Self {
        let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
        Self {
            len: m.len(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
            ino: m.ino(),
        }
    }
}

/// Adds or removes a directory watch; `add` fails with a reason when the
/// watch cannot be added (the inotify limit), which ends event mode.
pub trait Watches {
    /// Starts watching `dir` (not its subdirectories).
    fn add(&mut self, dir: &Path) -> Result<(), WatchFailed>;
    /// Stops watching `dir`.
    fn remove(&mut self, dir: &Path);
}

/// Why a watch could not be added.
#[derive(Debug, Clone)]
pub enum WatchFailed {
    /// The directory went away meanwhile: nothing to watch, not a failure of the mode.
    Gone,
    /// Event mode cannot go on (the watch limit): the reason, in words.
    Fatal(String),
}

/// No watches: the stat-scan mode.
pub struct NoWatches;

impl Watches for NoWatches {
    fn add(&mut self, _dir: &Path) -> Result<(), WatchFailed> {
        Ok(())
    }
    fn remove(&mut self, _dir: &Path) {}
}

/// The tracked files and directories.
pub struct Tree {
    root: PathBuf,
    files: BTreeMap<PathBuf, Meta>,
    dirs: BTreeSet<PathBuf>,
    truncated: bool,
}

/// A walker with the project's rules, rooted at `dir`.
fn walker(dir: &Path) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(dir);
    b.filter_entry(|e| {
        !(e.file_type().is_some_and(|t| t.is_dir())
            && e.file_name().to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n)))
    });
    b
}

impl Tree {
    /// An empty tree for `root` (canonical).
    pub fn new(root: PathBuf) -> Self {
        Self { root, files: BTreeMap::new(), dirs: BTreeSet::new(), truncated: false }
    }

    /// Files tracked.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// Directories tracked (watched, in event mode).
    pub fn dirs(&self) -> usize {
        self.dirs.len()
    }

    /// Whether the file cap was reached.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Walks the whole tree, watching every directory before its entries
    /// are read (so nothing created meanwhile is missed), and takes what
    /// it finds as the starting state: no changes are reported.
    pub fn load(&mut self, watches: &mut dyn Watches) -> Result<(), String> {
        let mut out = Vec::new();
        let root = self.root.clone();
        self.add_tree(&root, watches, &mut out)
    }

    /// Walks `dir` (already admitted), watching its directories and
    /// reporting its files as created (or changed, when known and
    /// different: a directory moved back in).
    fn add_tree(
        &mut self,
        dir: &Path,
        watches: &mut dyn Watches,
        out: &mut Vec<Change>,
    ) -> Result<(), String> {
        let quiet = dir == self.root && self.files.is_empty();
        for entry in walker(dir).build().flatten() {
            let Some(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if self.dirs.contains(entry.path()) {
                    continue;
                }
                match watches.add(entry.path()) {
                    Ok(()) => {
                        self.dirs.insert(entry.path().to_path_buf());
                    }
                    Err(WatchFailed::Gone) => {}
                    Err(WatchFailed::Fatal(why)) => return Err(why),
                }
            } else if kind.is_file() {
                if self.files.len() >= MAX_FILES && !self.files.contains_key(entry.path()) {
                    self.truncated = true;
                    continue;
                }
                let Ok(meta) = entry.metadata() else { continue };
                let meta = Meta::of(&meta);
                let path = entry.into_path();
                match self.files.insert(path.clone(), meta) {
                    None if !quiet => out.push(Change { path, kind: ChangeKind::Created }),
                    Some(old) if old != meta => out.push(Change { path, kind: ChangeKind::Changed }),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Forgets `dir` and everything under it: its files are deleted, its
    /// directories unwatched.
    fn remove_tree(&mut self, dir: &Path, watches: &mut dyn Watches, out: &mut Vec<Change>) {
        let under: Vec<PathBuf> = self
            .files
            .range(dir.to_path_buf()..)
            .map(|(p, _)| p)
            .take_while(|p| p.starts_with(dir))
            .cloned()
            .collect();
        for path in under {
            self.files.remove(&path);
            out.push(Change { path, kind: ChangeKind::Deleted });
        }
        let dirs: Vec<PathBuf> =
            self.dirs.range(dir.to_path_buf()..).take_while(|p| p.starts_with(dir)).cloned().collect();
        for d in dirs {
            watches.remove(&d);
            self.dirs.remove(&d);
        }
    }

    /// The names the project's walk admits in `dir`, cached per settle.
    fn admitted(&self, path: &Path, cache: &mut HashMap<PathBuf, HashSet<OsString>>) -> bool {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else { return false };
        if !self.dirs.contains(parent) {
            return false;
        }
        let names = cache.entry(parent.to_path_buf()).or_insert_with(|| {
            walker(parent)
                .max_depth(Some(1))
                .build()
                .flatten()
                .filter(|e| e.depth() == 1)
                .map(|e| e.file_name().to_os_string())
                .collect()
        });
        names.contains(name)
    }

    /// What happened at each of `dirty` (path → whether its event was
    /// about content, not only metadata), judged by how the path is now.
    pub fn settle(
        &mut self,
        dirty: BTreeMap<PathBuf, bool>,
        watches: &mut dyn Watches,
    ) -> Result<Vec<Change>, String> {
        let mut out = Vec::new();
        let mut cache = HashMap::new();
        for (path, content) in dirty {
            if path == self.root || !path.starts_with(&self.root) {
                continue;
            }
            let now = std::fs::symlink_metadata(&path).ok();
            let is_dir = now.as_ref().is_some_and(|m| m.is_dir());
            let is_file = now.as_ref().is_some_and(|m| m.is_file());
            if !is_dir && self.dirs.contains(&path) {
                self.remove_tree(&path, watches, &mut out);
            }
            if !is_file && self.files.remove(&path).is_some() {
                out.push(Change { path: path.clone(), kind: ChangeKind::Deleted });
            }
            if is_dir && !self.dirs.contains(&path) && self.admitted(&path, &mut cache) {
                self.add_tree(&path, watches, &mut out)?;
            }
            if is_file {
                let known = self.files.get(&path).copied();
                if known.is_none() && !self.admitted(&path, &mut cache) {
                    continue;
                }
                if known.is_none() && self.files.len() >= MAX_FILES {
                    self.truncated = true;
                    continue;
                }
                let meta = Meta::of(now.as_ref().expect("a file has metadata"));
                self.files.insert(path.clone(), meta);
                match known {
                    None => out.push(Change { path, kind: ChangeKind::Created }),
                    Some(old) if content || old != meta => {
                        out.push(Change { path, kind: ChangeKind::Changed })
                    }
                    Some(_) => {}
                }
            }
        }
        // A file found by walking a new directory also has its own events
        // in the batch: it was created, not created and then changed.
        let mut reported = HashSet::new();
        out.retain(|c| reported.insert(c.path.clone()));
        Ok(out)
    }

    /// Compares a fresh walk of the whole tree with what is known: the
    /// stat scan, and the recovery after lost events. New directories are
    /// watched, vanished ones unwatched.
    pub fn rescan(&mut self, watches: &mut dyn Watches) -> Result<Vec<Change>, String> {
        let mut seen_files = BTreeMap::new();
        let mut seen_dirs = BTreeSet::new();
        let mut truncated = false;
        for entry in walker(&self.root).build().flatten() {
            let Some(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                seen_dirs.insert(entry.into_path());
            } else if kind.is_file() {
                if seen_files.len() >= MAX_FILES {
                    truncated = true;
                    continue;
                }
                if let Ok(meta) = entry.metadata() {
                    seen_files.insert(entry.into_path(), Meta::of(&meta));
                }
            }
        }
        let mut out = Vec::new();
        for (path, meta) in &seen_files {
            match self.files.get(path) {
                None => out.push(Change { path: path.clone(), kind: ChangeKind::Created }),
                Some(old) if old != meta => {
                    out.push(Change { path: path.clone(), kind: ChangeKind::Changed })
                }
                Some(_) => {}
            }
        }
        for path in self.files.keys() {
            if !seen_files.contains_key(path) {
                out.push(Change { path: path.clone(), kind: ChangeKind::Deleted });
            }
        }
        for dir in self.dirs.difference(&seen_dirs) {
            watches.remove(dir);
        }
        for dir in seen_dirs.difference(&self.dirs) {
            match watches.add(dir) {
                Ok(()) | Err(WatchFailed::Gone) => {}
                Err(WatchFailed::Fatal(why)) => return Err(why),
            }
        }
        self.files = seen_files;
        self.dirs = seen_dirs;
        self.truncated = truncated;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(mut changes: Vec<Change>, root: &Path) -> Vec<(String, ChangeKind)> {
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        changes.into_iter().map(|c| (crate::fs::relative(root, &c.path), c.kind)).collect()
    }

    fn dirty(paths: &[&Path]) -> BTreeMap<PathBuf, bool> {
        paths.iter().map(|p| (p.to_path_buf(), true)).collect()
    }

    #[test]
    fn settle_judges_paths_by_how_they_are_now() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join("pkg/a.py"), "a").unwrap();
        std::fs::write(root.join("b.py"), "b").unwrap();
        std::fs::write(root.join("node_modules/x/i.js"), "").unwrap();
        let mut tree = Tree::new(root.clone());
        tree.load(&mut NoWatches).unwrap();
        assert_eq!((tree.files(), tree.dirs()), (2, 2), "root and pkg; node_modules skipped");

        // A rename-over of a known file is a change; the temp file vanished.
        std::fs::write(root.join(".b.py.tmp"), "b2").unwrap();
        std::fs::rename(root.join(".b.py.tmp"), root.join("b.py")).unwrap();
        // A directory moved away: its files are deleted; a new one with a file is created.
        std::fs::rename(root.join("pkg"), root.join("pkg2")).unwrap();
        let changes = tree
            .settle(
                dirty(&[&root.join(".b.py.tmp"), &root.join("b.py"), &root.join("pkg"), &root.join("pkg2")]),
                &mut NoWatches,
            )
            .unwrap();
        assert_eq!(
            kinds(changes, &root),
            vec![
                ("b.py".into(), ChangeKind::Changed),
                ("pkg/a.py".into(), ChangeKind::Deleted),
                ("pkg2/a.py".into(), ChangeKind::Created),
            ]
        );
        // A metadata-only event on an unchanged file is nothing.
        let touched: BTreeMap<PathBuf, bool> = [(root.join("b.py"), false)].into();
        assert!(tree.settle(touched, &mut NoWatches).unwrap().is_empty());
    }

    #[test]
    fn rescan_finds_what_events_would_have_said() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "a").unwrap();
        std::fs::write(root.join("gone.py"), "g").unwrap();
        let mut tree = Tree::new(root.clone());
        tree.load(&mut NoWatches).unwrap();
        std::fs::write(root.join("a.py"), "a, longer").unwrap();
        std::fs::remove_file(root.join("gone.py")).unwrap();
        std::fs::create_dir(root.join("new")).unwrap();
        std::fs::write(root.join("new/n.py"), "n").unwrap();
        std::fs::write(root.join(".hidden.py"), "h").unwrap();
        let changes = tree.rescan(&mut NoWatches).unwrap();
        assert_eq!(
            kinds(changes, &root),
            vec![
                ("a.py".into(), ChangeKind::Changed),
                ("gone.py".into(), ChangeKind::Deleted),
                ("new/n.py".into(), ChangeKind::Created),
            ]
        );
        assert!(tree.rescan(&mut NoWatches).unwrap().is_empty(), "a second scan finds nothing new");
    }
}
