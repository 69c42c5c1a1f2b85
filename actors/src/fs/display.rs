//! Paths as results show them: relative to the working directory, with
//! `/` separators.

use std::path::Path;

/// `path` relative to `root`, with `/` separators, for results a model reads.
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() { ".".to_string() } else { text }
}

/// `path` as an answer shows it: relative to `workdir` when inside it
/// ([`relative`]), else whole (a library, a typeshed stub, a runtime file).
pub fn display_path(workdir: &Path, path: &Path) -> String {
    if path.starts_with(workdir) { relative(workdir, path) } else { path.display().to_string() }
}
