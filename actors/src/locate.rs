//! Finding a project's root by its markers and a program by its name —
//! the two halves of the intersection rule a language server, a debug
//! adapter and a worker's command are each held to (the rule itself is
//! `lsp::discovery`'s and `dap::adapters`'), and [`Unusable`]: which half
//! failed, for either.

use std::path::{Path, PathBuf};

/// Why a language server or a debug adapter cannot serve a file here:
/// which half of the intersection rule failed (the tools word it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// No root marker in the file's directory or above it, up to the
    /// working directory (`file`: relative to it).
    NoRoot { id: String, markers: Vec<String>, file: String },
    /// Its program is in none of the places tried; how to get it.
    NoBinary { id: String, commands: Vec<String>, tried: Vec<PathBuf>, install: Option<Fetch> },
}

/// How a missing program is got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetch {
    /// `tether install ID` installs it.
    Tether,
    /// No registry tether reaches ships it: upstream's instructions.
    Manual(String),
}

impl Unusable {
    /// The server's or adapter's id.
    pub fn id(&self) -> &str {
        match self {
            Unusable::NoRoot { id, .. } | Unusable::NoBinary { id, .. } => id,
        }
    }
}

/// The nearest directory at or above `file`'s directory, up to `workdir`,
/// that holds one of `markers` (a name, or `*.ext` for any file of that
/// extension: `*.csproj`). No markers: the working directory.
pub fn find_root(file: &Path, workdir: &Path, markers: &[String]) -> Option<PathBuf> {
    if markers.is_empty() {
        return Some(workdir.to_path_buf());
    }
    let mut dir = if file.is_dir() { file } else { file.parent()? };
    loop {
        if markers.iter().any(|m| holds_marker(dir, m)) {
            return Some(dir.to_path_buf());
        }
        if dir == workdir || !dir.starts_with(workdir) {
            return None;
        }
        dir = dir.parent()?;
    }
}

/// Whether `dir` holds `marker` (a name, or `*.ext`).
pub fn holds_marker(dir: &Path, marker: &str) -> bool {
    match marker.strip_prefix("*.") {
        Some(ext) => std::fs::read_dir(dir)
            .is_ok_and(|entries| entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == ext))),
        None => dir.join(marker).exists(),
    }
}

/// Resolves `command`: a path with `/` is taken relative to the working
/// directory; a bare name is looked for in the project's `.venv/bin` and
/// `venv/bin` (a PATH python is another environment), then in what
/// `tether install` installed (`crate::tools_prefix`), then on PATH. In a
/// restricted checkout ([`crate::trust`]) nothing inside it is taken: not
/// its `.venv/bin`, not a path into it.
/// On failure, returns every location tried.
pub fn resolve_binary(command: &str, root: &Path, workdir: &Path) -> Result<PathBuf, Vec<PathBuf>> {
    let trusted = crate::trust::of(workdir).is_trusted();
    if command.contains('/') {
        let path = workdir.join(command);
        if !trusted && path.canonicalize().unwrap_or_else(|_| path.clone()).starts_with(workdir) {
            return Err(vec![path]);
        }
        return if is_executable(&path) { Ok(path) } else { Err(vec![path]) };
    }
    let mut tried = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for base in [root, workdir].into_iter().filter(|_| trusted) {
        for venv in [".venv/bin", "venv/bin"] {
            let dir = base.join(venv);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs.extend(crate::tools_prefix::bin());
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            // A PATH entry that is relative (`.`, `node_modules/.bin`) or
            // inside the checkout names the checkout's own programs.
            let inside = dir.is_relative() || dir.starts_with(workdir);
            if inside && !trusted {
                continue;
            }
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    for dir in dirs {
        let candidate = dir.join(command);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        tried.push(candidate);
    }
    Err(tried)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
