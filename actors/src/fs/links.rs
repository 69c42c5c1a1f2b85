//! What a write through a new file and a rename does to a name that is
//! one of several hard links: the name gets the new content, the other
//! links keep the old. A write says so ([`other_links`], [`Committed`]).

use std::path::{Path, PathBuf};

/// How many other hard links share `path`'s content: a regular file's
/// link count less one, `None` when it has no other (or is no file).
pub fn other_links(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
    (meta.nlink() > 1).then(|| meta.nlink() - 1)
}

/// What a commit wrote that the caller should know beyond "done".
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Committed {
    /// Files rewritten that had other hard links, with how many: those
    /// links keep the content the file had before.
    pub linked: Vec<(PathBuf, u64)>,
}

/// The files of `paths` that have other hard links, with how many.
pub fn linked(paths: impl IntoIterator<Item = PathBuf>) -> Vec<(PathBuf, u64)> {
    paths.into_iter().filter_map(|p| other_links(&p).map(|n| (p, n))).collect()
}
