//! Which checkouts may run programs of their own. A cloned repository is
//! untrusted input: until its user trusts it, a run there starts nothing
//! the checkout supplies (its `tether.toml` commands, its `.venv/bin`).
//! Trust is recorded outside the checkout, in the user's configuration
//! directory (`$XDG_CONFIG_HOME/tether/`, else `~/.config/tether/`), keyed
//! by the directory's canonical path and a digest of its `tether.toml`: a
//! `tether.toml` changed or added since is untrusted again until trusted
//! anew. The record is written atomically under a lock (two runs trusting
//! at once both land); a record tether cannot read means untrusted, with a
//! note, never a crash.

use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use tether_actors::lsp::config::CONFIG_FILE;

/// The record's file name in the configuration directory.
pub const RECORD_FILE: &str = "trusted.json";
/// The lock held while the record is read and rewritten.
const LOCK_FILE: &str = "trusted.lock";

/// tether's configuration directory: `$XDG_CONFIG_HOME/tether`, else
/// `~/.config/tether`; `None` without either variable.
pub fn config_dir() -> Option<PathBuf> {
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    nonempty("XDG_CONFIG_HOME")
        .or_else(|| nonempty("HOME").map(|home| home.join(".config")))
        .map(|base| base.join("tether"))
}

/// One trusted directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its canonical path.
    pub path: PathBuf,
    /// The SHA-256 of its `tether.toml` when trusted (`None`: it had none).
    pub config: Option<String>,
    /// When, in seconds since the Unix epoch.
    pub at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    trusted: Vec<Entry>,
}

/// Whether a directory is trusted, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Recorded as trusted, with the `tether.toml` it has now.
    Trusted,
    /// Not: why, in a phrase ("never trusted", "its tether.toml changed
    /// since it was trusted", "the trust record … cannot be read: …").
    Untrusted(String),
}

impl Verdict {
    /// Whether the directory is trusted.
    pub fn is_trusted(&self) -> bool {
        matches!(self, Verdict::Trusted)
    }
}

/// The digest of `dir`'s `tether.toml`, `None` when it has none.
fn config_digest(dir: &Path) -> Result<Option<String>, String> {
    match std::fs::read(dir.join(CONFIG_FILE)) {
        Ok(bytes) => {
            let hash = Sha256::digest(&bytes);
            Ok(Some(hash.iter().map(|b| format!("{b:02x}")).collect()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read its {CONFIG_FILE}: {e}")),
    }
}

fn canonical(dir: &Path) -> Result<PathBuf, String> {
    dir.canonicalize().map_err(|e| format!("`{}` cannot be resolved: {e}", dir.display()))
}

fn read_record(file: &Path) -> Result<Record, String> {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("the trust record {} cannot be read: {e}", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
        Err(e) => Err(format!("the trust record {} cannot be read: {e}", file.display())),
    }
}

/// Whether `dir` is trusted, by the record in `config` (see [`config_dir`]).
pub fn verdict_in(config: Option<&Path>, dir: &Path) -> Verdict {
    let Some(config) = config else {
        return Verdict::Untrusted(
            "no configuration directory (neither XDG_CONFIG_HOME nor HOME is set)".into(),
        );
    };
    let dir = match canonical(dir) {
        Ok(dir) => dir,
        Err(e) => return Verdict::Untrusted(e),
    };
    let record = match read_record(&config.join(RECORD_FILE)) {
        Ok(record) => record,
        Err(e) => return Verdict::Untrusted(e),
    };
    let Some(entry) = record.trusted.iter().find(|e| e.path == dir) else {
        return Verdict::Untrusted("it was never trusted".into());
    };
    match config_digest(&dir) {
        Ok(now) if now == entry.config => Verdict::Trusted,
        Ok(_) if entry.config.is_none() => {
            Verdict::Untrusted(format!("its {CONFIG_FILE} was added since it was trusted"))
        }
        Ok(_) => Verdict::Untrusted(format!("its {CONFIG_FILE} changed since it was trusted")),
        Err(e) => Verdict::Untrusted(e),
    }
}

/// Whether `dir` is trusted, by the user's record.
pub fn verdict(dir: &Path) -> Verdict {
    verdict_in(config_dir().as_deref(), dir)
}

/// Holds the record's lock while `change` rewrites the record, then
/// writes it atomically; a record that cannot be read is refused, never
/// replaced (it is the user's).
fn rewrite<T>(config: &Path, change: impl FnOnce(&mut Record) -> T) -> Result<T, String> {
    std::fs::create_dir_all(config).map_err(|e| format!("cannot create {}: {e}", config.display()))?;
    let lock_path = config.join(LOCK_FILE);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns; no memory is involved.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!("cannot lock {}: {}", lock_path.display(), std::io::Error::last_os_error()));
    }
    let file = config.join(RECORD_FILE);
    let mut record = read_record(&file).map_err(|e| format!("{e}; fix or remove it, then trust again"))?;
    let out = change(&mut record);
    let mut bytes = serde_json::to_vec_pretty(&record).map_err(|e| e.to_string())?;
    let _ = bytes.write_all(b"\n");
    tether_actors::fs::atomic_write(&file, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    // The lock goes with `lock`, closed here.
    Ok(out)
}

/// Records `dir` as trusted with the `tether.toml` it has now.
pub fn trust_in(config: &Path, dir: &Path) -> Result<Entry, String> {
    let dir = canonical(dir)?;
    let entry = Entry {
        path: dir.clone(),
        config: config_digest(&dir)?,
        at: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    };
    rewrite(config, |record| {
        record.trusted.retain(|e| e.path != dir);
        record.trusted.push(entry.clone());
        record.trusted.sort_by(|a, b| a.path.cmp(&b.path));
    })?;
    Ok(entry)
}

/// Takes `dir`'s trust back; whether it had any.
pub fn revoke_in(config: &Path, dir: &Path) -> Result<bool, String> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    rewrite(config, |record| {
        let before = record.trusted.len();
        record.trusted.retain(|e| e.path != dir);
        record.trusted.len() != before
    })
}

/// Every trusted directory.
pub fn list_in(config: &Path) -> Result<Vec<Entry>, String> {
    read_record(&config.join(RECORD_FILE)).map(|r| r.trusted)
}

/// What trusting `dir` would let run, a line each: the `tether.toml`
/// sections that name programs, and the programs the checkout holds.
pub fn would_allow(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    if let Ok(text) = std::fs::read_to_string(dir.join(CONFIG_FILE))
        && let Ok(table) = text.parse::<toml::Table>()
    {
        for section in tether_actors::trust::PROGRAM_SECTIONS {
            if let Some(value) = table.get(*section) {
                let what = what_starts(section);
                lines.push(format!("{CONFIG_FILE} [{section}]: {what}: {}", commands_in(value).join(", ")));
            }
        }
    }
    for local in tether_actors::trust::LOCAL_PROGRAM_DIRS {
        let bin = dir.join(local);
        let Ok(entries) = std::fs::read_dir(&bin) else { continue };
        let mut names: Vec<String> =
            entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        if !names.is_empty() {
            let shown = names.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
            let more = names.len().saturating_sub(8);
            let more = if more > 0 { format!(", and {more} more") } else { String::new() };
            lines.push(format!("{local}/: programs found before PATH: {shown}{more}"));
        }
    }
    lines
}

/// What each of the sections a restricted checkout holds back
/// ([`tether_actors::trust::PROGRAM_SECTIONS`]) starts.
fn what_starts(section: &str) -> &'static str {
    match section {
        "server" => "language servers (with their checkers and install steps)",
        "adapter" => "debug adapters",
        _ => "background workers",
    }
}

/// The commands a section names: each `[[server]]`'s or `[[adapter]]`'s
/// `command`, or each `[vibe]` tier's command line.
fn commands_in(value: &toml::Value) -> Vec<String> {
    let line = |v: &toml::Value| match v {
        toml::Value::String(s) => Some(format!("`{s}`")),
        toml::Value::Array(words) => {
            Some(format!("`{}`", words.iter().filter_map(|w| w.as_str()).collect::<Vec<_>>().join(" ")))
        }
        _ => None,
    };
    let found: Vec<String> = match value {
        toml::Value::Table(tiers) => tiers.values().filter_map(line).collect(),
        toml::Value::Array(entries) => {
            entries.iter().filter_map(|e| e.get("command")).filter_map(line).collect()
        }
        _ => Vec::new(),
    };
    if found.is_empty() { vec!["entries of built-in ones".into()] } else { found }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_directory_is_untrusted_again_when_its_tether_toml_changes_or_appears() {
        let config = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            verdict_in(Some(config.path()), dir.path()),
            Verdict::Untrusted("it was never trusted".into())
        );
        trust_in(config.path(), dir.path()).unwrap();
        assert!(verdict_in(Some(config.path()), dir.path()).is_trusted());
        std::fs::write(dir.path().join(CONFIG_FILE), "[vibe]\nfast = \"x\"\n").unwrap();
        assert_eq!(
            verdict_in(Some(config.path()), dir.path()),
            Verdict::Untrusted("its tether.toml was added since it was trusted".into())
        );
        trust_in(config.path(), dir.path()).unwrap();
        assert!(verdict_in(Some(config.path()), dir.path()).is_trusted());
        std::fs::write(dir.path().join(CONFIG_FILE), "[vibe]\nfast = \"y\"\n").unwrap();
        assert_eq!(
            verdict_in(Some(config.path()), dir.path()),
            Verdict::Untrusted("its tether.toml changed since it was trusted".into())
        );
        assert!(revoke_in(config.path(), dir.path()).unwrap());
        assert!(!revoke_in(config.path(), dir.path()).unwrap());
        assert!(list_in(config.path()).unwrap().is_empty());
    }

    #[test]
    fn a_record_that_cannot_be_read_means_untrusted_and_is_never_replaced() {
        let config = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(config.path().join(RECORD_FILE), "{not json").unwrap();
        match verdict_in(Some(config.path()), dir.path()) {
            Verdict::Untrusted(why) => assert!(why.contains("cannot be read"), "{why}"),
            Verdict::Trusted => panic!("a corrupted record trusts nothing"),
        }
        let refused = trust_in(config.path(), dir.path()).unwrap_err();
        assert!(refused.contains("fix or remove it"), "{refused}");
        assert_eq!(std::fs::read_to_string(config.path().join(RECORD_FILE)).unwrap(), "{not json");
        assert!(verdict_in(None, dir.path()) != Verdict::Trusted);
    }

    #[test]
    fn runs_trusting_at_once_all_land() {
        let config = tempfile::tempdir().unwrap();
        let dirs: Vec<_> = (0..8).map(|_| tempfile::tempdir().unwrap()).collect();
        std::thread::scope(|s| {
            for dir in &dirs {
                let config = config.path();
                s.spawn(move || trust_in(config, dir.path()).unwrap());
            }
        });
        assert_eq!(list_in(config.path()).unwrap().len(), 8);
        for dir in &dirs {
            assert!(verdict_in(Some(config.path()), dir.path()).is_trusted());
        }
    }

    #[test]
    fn what_trusting_would_allow_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "[[server]]\nid = \"mine\"\ncommand = \"tools/lsp\"\n\n[vibe]\nfast = \"./worker --fast\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join(".venv/bin")).unwrap();
        std::fs::write(dir.path().join(".venv/bin/pyright-langserver"), "").unwrap();
        let lines = would_allow(dir.path());
        assert!(
            lines.iter().any(|l| l
                .contains("[server]: language servers (with their checkers and install steps): `tools/lsp`")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("[vibe]: background workers: `./worker --fast`")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l == ".venv/bin/: programs found before PATH: pyright-langserver"),
            "{lines:?}"
        );
    }
}
