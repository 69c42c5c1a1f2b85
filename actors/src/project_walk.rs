//! The walk over a project's own files, which every bounded look at a
//! tree shares: the language census (`lsp::census`), the source roots of
//! an unmanaged Java tree (`lsp::unmanaged`), the debug adapters' marker
//! walk and js-debug's search for a program's compiled output.
//!
//! One set of skip rules: version-control stores, hidden directories and
//! the directories a caller names (dependencies, build output) are never
//! entered; hidden files are seen. Siblings come in name order, so a walk
//! cut short is cut the same way each time. The caller counts what it
//! wants and stops the walk when its bound is reached.
//!
//! The structural search walks differently (`ast::walk`): in parallel,
//! into hidden directories, counting what ignore files left out, as the
//! ast-grep CLI it is measured against does.

use std::ops::ControlFlow;
use std::path::Path;

/// Directories that hold dependencies or tools' own state, not the
/// project's sources.
pub const DEPENDENCIES: &[&str] = &["node_modules", "target"];

/// Those, and the usual names of build output.
pub const DEPENDENCIES_AND_BUILDS: &[&str] = &["node_modules", "target", "build", "out", "bin"];

/// How a walk goes.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// Whether `.gitignore` and `.ignore` files leave entries out. A
    /// build's output is usually ignored, so a search for it walks
    /// without them.
    pub ignore_files: bool,
    /// Directory names never entered, besides hidden ones.
    pub skip: &'a [&'a str],
    /// How deep below the root it goes (`None`: all the way).
    pub max_depth: Option<usize>,
}

/// One entry the walk yields (never the root itself).
#[derive(Debug, Clone, Copy)]
pub enum Entry<'p> {
    /// A directory it is about to enter.
    Dir(&'p Path),
    /// A regular file.
    File(&'p Path),
}

/// Walks `root` by `rules`, handing each directory and regular file to
/// `visit` until it breaks. Entries that cannot be read are passed over.
pub fn walk(root: &Path, rules: Rules<'_>, mut visit: impl FnMut(Entry<'_>) -> ControlFlow<()>) {
    // The filter outlives this call in the walker's type: it owns its names.
    let skip: Vec<String> = rules.skip.iter().map(|s| s.to_string()).collect();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .git_ignore(rules.ignore_files)
        .git_exclude(rules.ignore_files)
        .git_global(rules.ignore_files)
        .ignore(rules.ignore_files)
        .parents(rules.ignore_files)
        .max_depth(rules.max_depth)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            let name = e.file_name().to_str().unwrap_or("");
            !(is_dir && e.depth() > 0 && (name.starts_with('.') || skip.iter().any(|s| s == name)))
        })
        .build();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let found = match entry.file_type() {
            Some(t) if t.is_dir() => Entry::Dir(entry.path()),
            Some(t) if t.is_file() => Entry::File(entry.path()),
            _ => continue,
        };
        if visit(found).is_break() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        }
        dir
    }

    fn files(root: &Path, rules: Rules<'_>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        walk(root, rules, |e| {
            if let Entry::File(p) = e {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn hidden_and_named_directories_are_not_entered_and_siblings_come_in_order() {
        let dir = tree(&[
            ".git/HEAD",
            ".cache/x.py",
            ".env",
            "node_modules/m/index.js",
            "src/b.py",
            "src/a.py",
            "out/app.js",
            ".gitignore",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "out/\n").unwrap();
        let rules = Rules { ignore_files: false, skip: DEPENDENCIES, max_depth: None };
        let all = files(dir.path(), rules);
        let want = [".env", ".gitignore", "out/app.js", "src/a.py", "src/b.py"].map(PathBuf::from);
        assert_eq!(all, want);
        // With ignore files honoured (inside a git repository), `out/` is left out.
        let honoured = files(dir.path(), Rules { ignore_files: true, ..rules });
        assert!(!honoured.contains(&PathBuf::from("out/app.js")), "{honoured:?}");
        let shallow = files(dir.path(), Rules { max_depth: Some(1), ..rules });
        assert_eq!(shallow, [".env", ".gitignore"].map(PathBuf::from));
    }

    #[test]
    fn the_visitor_stops_the_walk() {
        let dir = tree(&["a/1", "a/2", "b/3"]);
        let mut seen = 0;
        let rules = Rules { ignore_files: false, skip: &[], max_depth: None };
        walk(dir.path(), rules, |e| {
            if let Entry::File(_) = e {
                seen += 1;
            }
            if seen == 2 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        assert_eq!(seen, 2);
    }
}
