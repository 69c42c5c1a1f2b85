//! The intersection rule (S3): a server starts for a file only when a root
//! marker exists (in the file's directory or an ancestor, up to the working
//! directory) **and** its binary resolves. Either half failing is reported
//! as such, never guessed around. Finding a root and a program is
//! [`crate::locate`]'s, which the debug adapters and the workers use too.

use std::path::{Path, PathBuf};

use super::entry::ServerConfig;
pub use crate::locate::{Fetch, Unusable, find_root, holds_marker, resolve_binary};

/// A server that can start for a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Usable {
    /// Its table entry.
    pub config: ServerConfig,
    /// The project root it serves.
    pub root: PathBuf,
    /// The resolved program.
    pub binary: PathBuf,
    /// The language table, to tell which files are the server's.
    pub languages: super::languages::Languages,
}

/// Why `config` is not usable for `file_rel`: no root marker.
pub fn why_not_root(config: &ServerConfig, file_rel: &str) -> Unusable {
    Unusable::NoRoot {
        id: config.id.clone(),
        markers: config.root_markers.clone(),
        file: file_rel.to_string(),
    }
}

/// Why `config` is not usable: its binary is in none of the places `tried`.
pub fn why_not_binary(config: &ServerConfig, tried: &[PathBuf]) -> Unusable {
    Unusable::NoBinary {
        id: config.id.clone(),
        commands: vec![config.command.clone()],
        tried: tried.to_vec(),
        install: config.install.as_ref().and_then(super::entry::Install::fetch),
    }
}

/// The first server of `candidates` usable for `file`, or why none is.
pub fn choose(candidates: &[&ServerConfig], file: &Path, workdir: &Path) -> Result<Usable, Vec<Unusable>> {
    let languages = super::languages::Languages::default();
    choose_cached(candidates, &languages, file, workdir, &mut std::collections::HashMap::new())
}

/// [`choose`], remembering resolved binaries by server id (failures are
/// not remembered: a server installed mid-run is found on the next call).
/// A project-local binary (`.venv/bin`) is per root, so it is not cached.
pub fn choose_cached(
    candidates: &[&ServerConfig],
    languages: &super::languages::Languages,
    file: &Path,
    workdir: &Path,
    binaries: &mut std::collections::HashMap<String, PathBuf>,
) -> Result<Usable, Vec<Unusable>> {
    let rel = crate::fs::relative(workdir, file);
    let mut reasons = Vec::new();
    for config in candidates {
        let Some(root) = find_root(file, workdir, &config.root_markers) else {
            reasons.push(why_not_root(config, &rel));
            continue;
        };
        if let Some(binary) = binaries.get(&config.id) {
            let (config, binary, languages) = ((*config).clone(), binary.clone(), languages.clone());
            return Ok(Usable { config, root, binary, languages });
        }
        match resolve_binary(&config.command, &root, workdir) {
            Ok(binary) => {
                if !binary.starts_with(workdir) {
                    binaries.insert(config.id.clone(), binary.clone());
                }
                return Ok(Usable { config: (*config).clone(), root, binary, languages: languages.clone() });
            }
            Err(tried) => reasons.push(why_not_binary(config, &tried)),
        }
    }
    Err(reasons)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::servers::builtin;

    #[test]
    fn the_nearest_marker_wins_and_the_search_stops_at_the_workdir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("w/pkg/src")).unwrap();
        std::fs::write(root.join("w/pkg/pyproject.toml"), "").unwrap();
        std::fs::write(root.join("pyproject.toml"), "").unwrap(); // above the workdir
        let workdir = root.join("w");
        let markers = vec!["pyproject.toml".to_string()];
        let file = workdir.join("pkg/src/a.py");
        assert_eq!(find_root(&file, &workdir, &markers), Some(workdir.join("pkg")));
        assert_eq!(find_root(&workdir.join("b.py"), &workdir, &markers), None);
    }

    #[test]
    fn a_dart_checkout_without_dart_says_which_half_failed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        let table = builtin();
        let dart: Vec<&ServerConfig> = table.iter().filter(|s| s.id == "dart").collect();
        let file = root.join("lib/main.dart");
        let why = choose(&dart, &file, &root).unwrap_err();
        let markers = vec!["pubspec.yaml".to_string()];
        assert_eq!(why, vec![Unusable::NoRoot { id: "dart".into(), markers, file: "lib/main.dart".into() }]);
        std::fs::write(root.join("pubspec.yaml"), "name: x\n").unwrap();
        let mut fake = dart[0].clone();
        fake.command = "no-such-dart-binary".into();
        let why = choose(&[&fake], &file, &root).unwrap_err();
        assert!(
            matches!(&why[..], [Unusable::NoBinary { id, commands, tried, .. }]
                if id == "dart" && commands == &["no-such-dart-binary"] && !tried.is_empty()),
            "{why:?}"
        );
    }

    #[test]
    fn a_missing_binary_says_how_to_get_it() {
        let table = builtin();
        let php = table.iter().find(|s| s.id == "intelephense").unwrap();
        let why = why_not_binary(php, &[PathBuf::from("/a/intelephense")]);
        assert!(matches!(why, Unusable::NoBinary { install: Some(Fetch::Tether), .. }), "{why:?}");
        let ruby = table.iter().find(|s| s.id == "ruby-lsp").unwrap();
        let why = why_not_binary(ruby, &[PathBuf::from("/a/ruby-lsp")]);
        let manual = Some(Fetch::Manual("gem install ruby-lsp (RubyGems)".into()));
        assert!(matches!(&why, Unusable::NoBinary { install, .. } if *install == manual), "{why:?}");
    }

    #[test]
    fn markers_may_be_extensions_and_none_means_the_workdir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("app/src")).unwrap();
        std::fs::write(root.join("app/App.csproj"), "").unwrap();
        let file = root.join("app/src/Program.cs");
        assert_eq!(find_root(&file, &root, &["*.csproj".to_string()]), Some(root.join("app")));
        assert_eq!(find_root(&file, &root, &["*.sln".to_string()]), None);
        assert_eq!(find_root(&file, &root, &[]), Some(root.clone()));
    }

    #[test]
    fn a_project_venv_wins_over_path() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let bin = root.join(".venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("python3"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join("python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
        // Restricted (no run trusted it): the checkout's own is never taken.
        assert_ne!(resolve_binary("python3", &root, &root), Ok(bin.join("python3")));
        assert!(resolve_binary(".venv/bin/python3", &root, &root).is_err());
        crate::trust::set(&root, crate::trust::Trust::Trusted);
        assert_eq!(resolve_binary("python3", &root, &root), Ok(bin.join("python3")));
    }
}
