//! The prefix `tether install` installs servers and adapters into, and
//! where they are looked for before `PATH`: `$TETHER_TOOLS`, else
//! `$XDG_DATA_HOME/tether/tools`, else `~/.local/share/tether/tools`.
//! Its `bin/` holds one launcher per installed command.

use std::path::PathBuf;

/// The environment variable that moves the prefix.
pub const TOOLS_ENV: &str = "TETHER_TOOLS";

/// The prefix.
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(TOOLS_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    data.join("tether/tools")
}

/// Where the installed commands' launchers are.
pub fn bin() -> PathBuf {
    dir().join("bin")
}

/// A directory of tether's own for a server's per-project state (jdtls's
/// Eclipse workspace), unique per server and project root.
pub fn cache_for(server: &str, root: &std::path::Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    base.join("tether/servers").join(server).join(format!("{name}-{:016x}", h.finish()))
}
