//! The prefix `tether install` installs servers and adapters into, and
//! where they are looked for before `PATH`: `$TETHER_TOOLS`, else
//! `$XDG_DATA_HOME/tether/tools`, else `~/.local/share/tether/tools`.
//! Its `bin/` holds one launcher per installed command. With no home
//! directory to put it in there is no prefix: a shared directory such as
//! `/tmp` searched before `PATH` would run whatever another user put there.

use std::path::{Path, PathBuf};

/// The environment variable that moves the prefix.
pub const TOOLS_ENV: &str = "TETHER_TOOLS";

/// The prefix, absolute (a relative `TETHER_TOOLS` is taken from the
/// current directory), or `None` with no home to put it in.
pub fn dir() -> Option<PathBuf> {
    let dir = match std::env::var_os(TOOLS_ENV).filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => data_home()?.join("tether/tools"),
    };
    std::path::absolute(&dir).ok()
}

/// Where the installed commands' launchers are.
pub fn bin() -> Option<PathBuf> {
    dir().map(|d| d.join("bin"))
}

fn data_home() -> Option<PathBuf> {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".local/share")))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// A directory of tether's own for a server's per-project state (jdtls's
/// Eclipse workspace), unique per server and project root.
/// With no home, a directory of this process's own under the temporary
/// directory, made private on first use (see [`private_temp`]).
pub fn cache_for(server: &str, root: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".cache")))
        .unwrap_or_else(private_temp);
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    base.join("tether/servers").join(server).join(format!("{name}-{:016x}", h.finish()))
}

/// A directory only this process made and only its user can enter:
/// created fresh (never an existing path another user may have planted)
/// with mode 0700, once per process.
fn private_temp() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        for k in 0..16u32 {
            let dir = base.join(format!("tether-{}-{nanos:x}-{k}", std::process::id()));
            if std::fs::DirBuilder::new().mode(0o700).create(&dir).is_ok() {
                return dir;
            }
        }
        base.join(format!("tether-{}-unavailable", std::process::id()))
    })
    .clone()
}
