//! What the working directory holds, language by language: how many files
//! of each, and one file from each directory that holds some — enough to
//! find every project root of a monorepo (`backend/pyproject.toml` under a
//! root `.git`) without a second walk. One bounded walk serves `status`,
//! workspace `symbols` and the project check.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::languages::Languages;
use crate::project_walk::{self, DEPENDENCIES, Entry, Rules};

/// Files looked at in one walk; past this the counts say "or more".
pub const MAX_FILES_WALKED: usize = 50_000;
/// Directories kept per language, each by one of its files: the
/// shallowest, where roots are (chosen once the walk is over, so a deep
/// subtree walked first cannot crowd out a shallow root walked last).
const MAX_DIRECTORIES_PER_LANGUAGE: usize = 512;

/// One language found in the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Present {
    /// Its id.
    pub id: String,
    /// Files of it seen.
    pub files: usize,
    /// One file per directory holding some, shallow directories first, at
    /// most [`MAX_DIRECTORIES_PER_LANGUAGE`].
    pub samples: Vec<PathBuf>,
}

/// The languages found, in table order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InTree {
    /// Languages with at least one file.
    pub languages: Vec<Present>,
    /// Whether the walk stopped at [`MAX_FILES_WALKED`].
    pub capped: bool,
}

impl InTree {
    /// The language of that id, if the tree holds it.
    pub fn get(&self, id: &str) -> Option<&Present> {
        self.languages.iter().find(|l| l.id == id)
    }
}

/// Walks `workdir` (honouring `.gitignore`; hidden directories,
/// `node_modules` and `target` are not the project's own sources).
pub fn scan(workdir: &Path, languages: &Languages) -> InTree {
    let mut found: Vec<(Present, BTreeSet<PathBuf>)> = Vec::new();
    let mut seen = 0;
    let mut capped = false;
    let rules = Rules { ignore_files: true, skip: DEPENDENCIES, max_depth: None };
    project_walk::walk(workdir, rules, |entry| {
        let Entry::File(path) = entry else { return ControlFlow::Continue(()) };
        if seen >= MAX_FILES_WALKED {
            capped = true;
            return ControlFlow::Break(());
        }
        seen += 1;
        let Some(language) = languages.of(path) else { return ControlFlow::Continue(()) };
        let k = match found.iter().position(|(p, _)| p.id == language.id) {
            Some(k) => k,
            None => {
                found.push((
                    Present { id: language.id.clone(), files: 0, samples: Vec::new() },
                    BTreeSet::new(),
                ));
                found.len() - 1
            }
        };
        let (present, dirs) = &mut found[k];
        present.files += 1;
        if let Some(dir) = path.parent()
            && dirs.insert(dir.to_path_buf())
        {
            present.samples.push(path.to_path_buf());
        }
        ControlFlow::Continue(())
    });
    // Shallow first: a root's own files before its subpackages'.
    let order = languages.ids();
    let mut languages: Vec<Present> = found.into_iter().map(|(p, _)| p).collect();
    for p in &mut languages {
        p.samples.sort_by_key(|s| s.components().count());
        p.samples.truncate(MAX_DIRECTORIES_PER_LANGUAGE);
    }
    languages.sort_by_key(|p| order.iter().position(|id| *id == p.id));
    InTree { languages, capped }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_one_file_per_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("backend/app/a.py", ""),
            ("backend/app/b.py", ""),
            ("backend/c.py", ""),
            ("web/src/x.ts", ""),
            ("web/node_modules/dep/index.ts", ""),
            (".venv/lib/site.py", ""),
            ("README.md", ""),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        let tree = scan(root, &Languages::default());
        let ids: Vec<&str> = tree.languages.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["python", "typescript"], "table order, only what is here");
        let python = tree.get("python").unwrap();
        assert_eq!(python.files, 3);
        assert_eq!(python.samples, [root.join("backend/c.py"), root.join("backend/app/a.py")]);
        assert_eq!(tree.get("typescript").unwrap().files, 1, "node_modules is not the project's");
        assert!(!tree.capped);
    }

    #[test]
    fn a_deep_subtree_walked_first_does_not_crowd_out_a_shallow_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for k in 0..MAX_DIRECTORIES_PER_LANGUAGE + 20 {
            std::fs::create_dir_all(root.join(format!("a/apps/d{k}"))).unwrap();
            std::fs::write(root.join(format!("a/apps/d{k}/m.py")), "").unwrap();
        }
        std::fs::create_dir_all(root.join("z")).unwrap();
        std::fs::write(root.join("z/tool.py"), "").unwrap();
        let tree = scan(root, &Languages::default());
        let python = tree.get("python").unwrap();
        assert_eq!(python.files, MAX_DIRECTORIES_PER_LANGUAGE + 21);
        assert_eq!(python.samples.len(), MAX_DIRECTORIES_PER_LANGUAGE);
        assert_eq!(python.samples[0], root.join("z/tool.py"), "walked last, kept first");
    }
}
