//! The walk under a scan: every entry below a directory, in parallel.
//!
//! It honours what the ast-grep CLI honours — `.gitignore` inside a git
//! repository, `.ignore` anywhere, git's `info/exclude` and global
//! excludes, each also from parent directories — but searches dotfiles and
//! dot-directories like any other (`.eslintrc.js`, `.storybook/main.js`,
//! `.github/workflows/ci.yml`), which the CLI leaves out without a word.
//! Only version-control stores (`.git`, `.hg`, `.svn`, `.jj`) are never
//! entered, and not counted: they hold no source.
//!
//! What the ignore files leave out is counted. The `ignore` crate prunes
//! silently, so every directory the walk enters is also listed, and each
//! listed child that the walk never yielded was ignored: a directory counts
//! once, however much it holds. Symbolic links are yielded, not followed;
//! the visitor decides what to make of them.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

/// Directory names that hold a version-control store, never walked.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj"];

/// One entry the walk yields.
pub(crate) enum Found<'p> {
    /// A regular file.
    File(&'p Path),
    /// A symbolic link (to a file, a directory, or nothing), not followed.
    Symlink(&'p Path),
}

/// What the walk itself counted, beside what its visitors did.
#[derive(Debug, Default)]
pub(crate) struct WalkTally {
    /// Entries left out by an ignore file.
    pub ignored: Vec<PathBuf>,
    /// Entries the walk could not read (permission denied, vanished).
    pub errors: usize,
}

/// Per-thread record of what was listed and what was yielded.
#[derive(Default)]
struct Seen {
    listed: Vec<(PathBuf, Vec<OsString>)>,
    yielded: HashSet<PathBuf>,
    errors: usize,
}

/// Walks `start` on `threads` threads, handing each file and symlink to a
/// visitor made per thread by `visitor`; returns what the walk counted.
pub(crate) fn walk<V, M>(start: &Path, threads: usize, visitor: M) -> WalkTally
where
    M: Fn() -> V + Sync,
    V: FnMut(Found<'_>) + Send,
{
    let seen_all: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
    let walker = ignore::WalkBuilder::new(start)
        .hidden(false)
        .filter_entry(|entry| !is_vcs_store(entry.file_name()))
        .threads(threads)
        .build_parallel();
    walker.run(|| {
        let mut visit = visitor();
        let mut seen = SeenGuard { seen: Seen::default(), into: &seen_all };
        Box::new(move |entry| {
            let entry = match entry {
                Ok(entry) => entry,
                Err(_) => {
                    seen.seen.errors += 1;
                    return ignore::WalkState::Continue;
                }
            };
            seen.seen.yielded.insert(entry.path().to_path_buf());
            match entry.file_type() {
                // A directory that cannot be listed is reported by the walk itself.
                Some(t) if t.is_dir() => {
                    if let Ok(children) = std::fs::read_dir(entry.path()) {
                        let names = children
                            .flatten()
                            .map(|child| child.file_name())
                            .filter(|name| !is_vcs_store(name))
                            .collect();
                        seen.seen.listed.push((entry.path().to_path_buf(), names));
                    }
                }
                Some(t) if t.is_file() => visit(Found::File(entry.path())),
                Some(t) if t.is_symlink() => visit(Found::Symlink(entry.path())),
                _ => {}
            }
            ignore::WalkState::Continue
        })
    });
    let seen_all = seen_all.into_inner();
    let mut tally = WalkTally { errors: seen_all.iter().map(|s| s.errors).sum(), ..Default::default() };
    let yielded: HashSet<&PathBuf> = seen_all.iter().flat_map(|s| &s.yielded).collect();
    for (dir, names) in seen_all.iter().flat_map(|s| &s.listed) {
        for name in names {
            let child = dir.join(name);
            if !yielded.contains(&child) {
                tally.ignored.push(child);
            }
        }
    }
    tally.ignored.sort();
    tally
}

fn is_vcs_store(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| VCS_DIRS.contains(&n))
}

/// Hands a thread's record over when the walk drops its closure.
struct SeenGuard<'a> {
    seen: Seen,
    into: &'a Mutex<Vec<Seen>>,
}

impl Drop for SeenGuard<'_> {
    fn drop(&mut self) {
        self.into.lock().push(std::mem::take(&mut self.seen));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotfiles_are_walked_ignored_entries_counted_and_vcs_stores_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            (".git/HEAD", "ref: refs/heads/main\n"),
            (".gitignore", "node_modules/\n*.log\n"),
            (".eslintrc.js", "module.exports = {};\n"),
            (".storybook/main.js", "export default {};\n"),
            ("src/a.js", "a();\n"),
            ("src/debug.log", "x\n"),
            ("node_modules/x/index.js", "x();\n"),
        ] {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::os::unix::fs::symlink(root.join("src/a.js"), root.join("link.js")).unwrap();
        let files = Mutex::new(Vec::new());
        let links = Mutex::new(Vec::new());
        let tally = walk(root, 2, || {
            |found: Found<'_>| match found {
                Found::File(p) => files.lock().push(p.strip_prefix(root).unwrap().to_path_buf()),
                Found::Symlink(p) => links.lock().push(p.strip_prefix(root).unwrap().to_path_buf()),
            }
        });
        let mut files = files.into_inner();
        files.sort();
        let want: Vec<PathBuf> = [".eslintrc.js", ".gitignore", ".storybook/main.js", "src/a.js"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(files, want);
        assert_eq!(links.into_inner(), [PathBuf::from("link.js")]);
        let ignored: Vec<&Path> = tally.ignored.iter().map(|p| p.strip_prefix(root).unwrap()).collect();
        assert_eq!(ignored, [Path::new("node_modules"), Path::new("src/debug.log")]);
        assert_eq!(tally.errors, 0);
    }
}
