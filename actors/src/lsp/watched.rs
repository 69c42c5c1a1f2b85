//! The files a server asked to hear about: `workspace/didChangeWatchedFiles`
//! registrations (`client/registerCapability`), compiled once, and the
//! match of a changed file against them.
//!
//! A watcher's `globPattern` is either a string — matched against the
//! file's absolute path, and failing that its path relative to the
//! server's root (`**/*.py` matches both; pyright registers `**`, gopls
//! `**/*.{go,mod,sum,work}`, rust-analyzer absolute paths) — or a
//! relative pattern `{baseUri, pattern}`, matched against the path
//! relative to its base. Its `kind` is a bit set: 1 created, 2 changed,
//! 4 deleted (all three when absent).

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use crate::watch::ChangeKind;

/// Most watchers kept per server (typescript-language-server re-registers
/// its growing list each time tsserver adds a watch).
const MAX_WATCHERS: usize = 4_096;

/// One compiled watcher.
#[derive(Debug, Clone)]
struct Watch {
    base: Option<PathBuf>,
    glob: GlobMatcher,
    kinds: u8,
}

/// One registration: its id and its watchers.
#[derive(Debug, Clone)]
struct Registration {
    id: String,
    watches: Vec<Watch>,
}

/// A server's registrations.
#[derive(Debug, Default)]
pub struct WatchedFiles {
    registrations: Vec<Registration>,
}

fn compile(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern).literal_separator(true).build().ok().map(|g| g.compile_matcher())
}

fn bit(kind: ChangeKind) -> u8 {
    match kind {
        ChangeKind::Created => 1,
        ChangeKind::Changed => 2,
        ChangeKind::Deleted => 4,
    }
}

impl WatchedFiles {
    /// Takes in `client/registerCapability` params; registrations of other
    /// methods are ignored. Returns how many watchers were added.
    pub fn register(&mut self, params: &Value) -> usize {
        let mut added = 0;
        for r in params["registrations"].as_array().into_iter().flatten() {
            if r["method"] != "workspace/didChangeWatchedFiles" {
                continue;
            }
            let id = r["id"].as_str().unwrap_or_default().to_string();
            let mut watches = Vec::new();
            for w in r["registerOptions"]["watchers"].as_array().into_iter().flatten() {
                let kinds = w["kind"].as_u64().map_or(7, |k| k as u8 & 7);
                let watch = match &w["globPattern"] {
                    Value::String(p) => compile(p).map(|glob| Watch { base: None, glob, kinds }),
                    Value::Object(rel) => {
                        let base = rel
                            .get("baseUri")
                            .and_then(|b| b.as_str().or_else(|| b["uri"].as_str()))
                            .and_then(|u| lsp_types::Url::parse(u).ok())
                            .and_then(|u| u.to_file_path().ok());
                        let glob = rel.get("pattern").and_then(Value::as_str).and_then(compile);
                        base.zip(glob).map(|(base, glob)| Watch { base: Some(base), glob, kinds })
                    }
                    _ => None,
                };
                watches.extend(watch);
            }
            added += watches.len();
            self.registrations.retain(|old| old.id != id);
            self.registrations.push(Registration { id, watches });
        }
        // Bound what a server can make tether hold: oldest registrations go first.
        while self.watchers() > MAX_WATCHERS && self.registrations.len() > 1 {
            self.registrations.remove(0);
        }
        added
    }

    /// Takes in `client/unregisterCapability` params.
    pub fn unregister(&mut self, params: &Value) {
        // The field's name is misspelt in the specification, and kept so.
        for u in params["unregisterations"].as_array().into_iter().flatten() {
            if let Some(id) = u["id"].as_str() {
                self.registrations.retain(|r| r.id != id);
            }
        }
    }

    /// Watchers registered.
    pub fn watchers(&self) -> usize {
        self.registrations.iter().map(|r| r.watches.len()).sum()
    }

    /// Whether the server asked to hear about `kind` at `path`; `None`
    /// when it registered nothing (the caller then decides by language).
    pub fn wants(&self, path: &Path, root: &Path, kind: ChangeKind) -> Option<bool> {
        if self.registrations.iter().all(|r| r.watches.is_empty()) {
            return None;
        }
        let relative = path.strip_prefix(root).ok();
        let hit = self.registrations.iter().flat_map(|r| &r.watches).any(|w| {
            w.kinds & bit(kind) != 0
                && match &w.base {
                    Some(base) => path.strip_prefix(base).is_ok_and(|rel| w.glob.is_match(rel)),
                    None => w.glob.is_match(path) || relative.is_some_and(|rel| w.glob.is_match(rel)),
                }
        });
        Some(hit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_patterns_real_servers_register_match_what_they_should() {
        let root = Path::new("/w/proj");
        let mut w = WatchedFiles::default();
        assert_eq!(w.wants(&root.join("a.py"), root, ChangeKind::Changed), None, "nothing registered");
        // pyright
        w.register(&json!({"registrations": [{"id": "p", "method": "workspace/didChangeWatchedFiles",
            "registerOptions": {"watchers": [{"globPattern": "**/pyrightconfig.json", "kind": 7}, {"globPattern": "**", "kind": 7}]}}]}));
        assert_eq!(w.wants(&root.join("pkg/a.py"), root, ChangeKind::Created), Some(true));
        // gopls, replacing nothing (another id); rust-analyzer's relative patterns
        let mut g = WatchedFiles::default();
        g.register(&json!({"registrations": [
            {"id": "g", "method": "workspace/didChangeWatchedFiles", "registerOptions": {"watchers": [{"globPattern": "**/*.{go,mod,sum,work}"}]}},
            {"id": "r", "method": "workspace/didChangeWatchedFiles", "registerOptions": {"watchers": [
                {"globPattern": {"baseUri": "file:///w/proj", "pattern": "**/*.rs"}, "kind": 4}]}},
            {"id": "x", "method": "textDocument/formatting", "registerOptions": {}}]}));
        assert_eq!(g.watchers(), 2);
        assert_eq!(g.wants(&root.join("cmd/main.go"), root, ChangeKind::Changed), Some(true));
        assert_eq!(g.wants(&root.join("README.md"), root, ChangeKind::Changed), Some(false));
        assert_eq!(g.wants(&root.join("src/lib.rs"), root, ChangeKind::Deleted), Some(true));
        assert_eq!(
            g.wants(&root.join("src/lib.rs"), root, ChangeKind::Changed),
            Some(false),
            "kind 4: deletes only"
        );
        assert_eq!(g.wants(Path::new("/elsewhere/lib.rs"), root, ChangeKind::Deleted), Some(false));
        g.unregister(
            &json!({"unregisterations": [{"id": "g", "method": "workspace/didChangeWatchedFiles"}]}),
        );
        assert_eq!(g.wants(&root.join("cmd/main.go"), root, ChangeKind::Changed), Some(false));
    }
}
