//! Paths as results show them: relative to the working directory, with
//! `/` separators.

use std::path::Path;

/// `path` relative to `root`, with `/` separators, for results a model reads.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() { ".".to_string() } else { text }
}
