//! Whether a run's checkout may run programs of its own. A cloned
//! repository is untrusted input: in a restricted checkout nothing it
//! supplies is started — its `tether.toml` sections that name programs
//! (`[[server]]`, `[[adapter]]`, `[vibe]`) are not used, and programs
//! resolve from tether's tools prefix and PATH only, never from its
//! `.venv/bin`, `venv/bin` or a path inside it. The `tether` crate decides
//! (its user's trust record, or a host's own trust step) and sets it when
//! a run starts; everything that resolves or starts a program here asks
//! [`of`] with the run's working directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// What a checkout may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trust {
    /// Its own programs run: `tether.toml`'s commands, its `.venv/bin`.
    Trusted,
    /// Nothing it supplies runs (the default for a directory no run set).
    #[default]
    Restricted,
}

impl Trust {
    /// Whether the checkout's own programs may run.
    pub fn is_trusted(self) -> bool {
        self == Trust::Trusted
    }
}

/// Each run's working directory (canonical), with its trust.
static RUNS: LazyLock<Mutex<HashMap<PathBuf, Trust>>> = LazyLock::new(Default::default);

/// Sets the trust of the run over `workdir` (canonical).
pub fn set(workdir: &Path, trust: Trust) {
    RUNS.lock().unwrap_or_else(|e| e.into_inner()).insert(workdir.to_path_buf(), trust);
}

/// The trust of the run over `workdir` (as given, or canonical):
/// restricted unless a run set it.
pub fn of(workdir: &Path) -> Trust {
    let runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(trust) = runs.get(workdir) {
        return *trust;
    }
    workdir.canonicalize().ok().and_then(|dir| runs.get(&dir).copied()).unwrap_or_default()
}

/// The `tether.toml` sections that name programs, held back in a
/// restricted checkout.
pub const PROGRAM_SECTIONS: &[&str] = &["server", "adapter", "vibe"];

/// The checkout's own program directories, searched (before PATH) only
/// in a trusted checkout.
pub const LOCAL_PROGRAM_DIRS: &[&str] = &[".venv/bin", "venv/bin", "node_modules/.bin"];

/// What a restricted checkout at `workdir` holds back now: each
/// `tether.toml` section that names programs, and each program directory
/// of its own that is there. Empty when it holds nothing of its own.
pub fn held_back(workdir: &Path) -> Vec<String> {
    let mut held = Vec::new();
    if let Ok(text) = std::fs::read_to_string(workdir.join(crate::lsp::config::CONFIG_FILE))
        && let Ok(table) = text.parse::<toml::Table>()
    {
        for section in PROGRAM_SECTIONS {
            if table.contains_key(*section) {
                held.push(format!("tether.toml [{section}]"));
            }
        }
    }
    for dir in LOCAL_PROGRAM_DIRS {
        if workdir.join(dir).is_dir() {
            held.push(format!("{dir}/"));
        }
    }
    held
}
