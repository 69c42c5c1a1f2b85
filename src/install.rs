//! `tether install [NAME...]`: installs language servers and debug
//! adapters from the registries, through their ordinary clients, at the
//! versions the tables pin — npm packages and PyPI virtualenvs into
//! tether's tools prefix (`tether_actors::tools_prefix`, looked in before
//! `PATH`), Debian packages, rustup components and an adapter's Python
//! package system-wide. A name is a language (`php`: its preferred server,
//! and its debug adapter), a server id (`basedpyright`) or an adapter id
//! (`debugpy`); no names: every language the working directory holds. What is already
//! there is left alone; what no registry ships is named with upstream's
//! instructions. Never run by a tool call: answers name this command.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use tether_actors::dap::adapters::{self, AdapterConfig};
use tether_actors::lsp::census;
use tether_actors::lsp::config::{self, Install, ServerConfig, Table};
use tether_actors::lsp::discovery;
use tether_actors::tools_prefix;

use crate::cli::output::{errln, outln};

/// What to do for one server.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Its binary already resolves.
    Present { server: String, binary: PathBuf },
    /// A registry ships it: install.
    Install { server: String, command: String, install: Install },
    /// A debug adapter to install (system-wide: apt, or pip for the
    /// `python3` it runs as).
    Adapter { adapter: AdapterConfig },
    /// Nothing here can install it.
    Manual { server: String, how: String },
}

/// The steps for `names` (or for the languages in `workdir`), in order,
/// and the names that mean nothing, each with why.
pub fn plan(workdir: &Path, names: &[String]) -> Result<(Vec<Step>, Vec<String>), String> {
    let table = config::load(workdir)?;
    let mut servers: Vec<&ServerConfig> = Vec::new();
    let mut unknown = Vec::new();
    let wanted: Vec<String> = if names.is_empty() {
        let here = census::scan(workdir, &table.languages);
        here.languages.into_iter().map(|p| p.id).collect()
    } else {
        names.to_vec()
    };
    let adapter_table = adapters::load(workdir)?;
    let mut debuggers: Vec<&AdapterConfig> = Vec::new();
    for name in &wanted {
        let language = table.languages.get(name).is_some();
        for a in adapter_table
            .iter()
            .filter(|a| a.id == name || (language && a.languages.contains(&name.as_str())))
        {
            if !debuggers.iter().any(|d| d.id == a.id) {
                debuggers.push(a);
            }
        }
        let chosen = match table.servers.iter().find(|s| &s.id == name) {
            Some(server) => Some(server),
            None if language => preferred(&table, name, workdir),
            None if adapter_table.iter().any(|a| a.id == name) => continue,
            None => {
                unknown.push(format!(
                    "`{name}` is neither a language, a server nor a debug adapter of the tables (languages: {})",
                    table.languages.ids().join(", ")
                ));
                continue;
            }
        };
        match chosen {
            Some(server) if !servers.iter().any(|s| s.id == server.id) => servers.push(server),
            Some(_) => {}
            None => unknown.push(format!("{name}: no server is configured for it")),
        }
        // A language's helpers (ruff beside pyright) come with it.
        if language {
            for helper in table.all_helpers(name) {
                if !servers.iter().any(|s| s.id == helper.id) {
                    servers.push(helper);
                }
            }
        }
    }
    let manifest = Manifest::read()?;
    let mut steps: Vec<Step> = servers.into_iter().map(|s| step(s, workdir, &manifest)).collect();
    steps.extend(debuggers.into_iter().map(|a| adapter_step(a, workdir)));
    Ok((steps, unknown))
}

/// A language's server to install: one already there, else the first a
/// registry ships, else the first.
fn preferred<'a>(table: &'a Table, language: &str, workdir: &Path) -> Option<&'a ServerConfig> {
    let candidates = table.candidates(language);
    candidates
        .iter()
        .find(|s| discovery::resolve_binary(&s.command, workdir, workdir).is_ok())
        .or_else(|| candidates.iter().find(|s| s.install.as_ref().is_some_and(Install::automatic)))
        .or_else(|| candidates.first())
        .copied()
}

fn step(server: &ServerConfig, workdir: &Path, manifest: &Manifest) -> Step {
    if let Ok(binary) = discovery::resolve_binary(&server.command, workdir, workdir) {
        // Installed by an earlier `tether install` of other pins: again.
        let ours = tools_prefix::bin().is_some_and(|bin| binary.starts_with(bin));
        let current = ours && manifest.holds(&server.id, server.install.as_ref());
        // rustup puts a proxy for every component on PATH, installed or
        // not; it runs only when the component is there.
        let proxy_only = server.install.as_ref().is_some_and(|i| i.rustup.is_some()) && !runs(&binary);
        if (!ours || current) && !proxy_only {
            return Step::Present { server: server.id.clone(), binary };
        }
    }
    match &server.install {
        Some(install) if install.automatic() => Step::Install {
            server: server.id.clone(),
            command: server.command.clone(),
            install: install.clone(),
        },
        Some(install) => Step::Manual {
            server: server.id.clone(),
            how: install.manual.clone().unwrap_or_else(|| "no way to install it is known".into()),
        },
        None => {
            Step::Manual { server: server.id.clone(), how: "its entry names no way to install it".into() }
        }
    }
}

/// The record of what `tether install` installed, by server id, with the
/// pins it installed: a table with other pins installs again. Kept as
/// plain JSON values, so a manifest a newer tether wrote still reads.
const MANIFEST: &str = "installed.json";

struct Manifest(serde_json::Map<String, serde_json::Value>);

impl Manifest {
    /// The manifest, empty when there is none; an unreadable one is an
    /// error (rewriting it would forget every other install).
    fn read() -> Result<Manifest, String> {
        let Some(path) = tools_prefix::dir().map(|d| d.join(MANIFEST)) else {
            return Ok(Manifest(Default::default()));
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map(Manifest).map_err(|e| {
                format!(
                    "{} is not a manifest tether can read ({e}); move it aside and run again",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest(Default::default())),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn holds(&self, server: &str, install: Option<&Install>) -> bool {
        let want = install.and_then(|i| serde_json::to_value(i).ok());
        want.is_some() && self.0.get(server) == want.as_ref()
    }

    /// Records `server` as installed with `install`, re-reading the file
    /// first (another run may have recorded since).
    fn record(server: &str, install: &Install, prefix: &Path) -> Result<(), String> {
        let mut all = Manifest::read()?;
        all.0.insert(server.to_string(), serde_json::to_value(install).map_err(|e| e.to_string())?);
        let text = serde_json::to_string_pretty(&all.0).map_err(|e| e.to_string())?;
        tether_actors::fs::atomic_write(&prefix.join(MANIFEST), text.as_bytes())
            .map_err(|e| format!("cannot record the install: {e}"))
    }
}

/// Whether `binary --version` runs and succeeds.
fn runs(binary: &Path) -> bool {
    let mut cmd = Command::new(binary);
    cmd.arg("--version");
    tether_actors::process::probe(&mut cmd, tether_actors::process::PROBE_WAIT)
        .is_some_and(|o| o.status.success())
}

fn adapter_step(adapter: &AdapterConfig, workdir: &Path) -> Step {
    // `dart` is a server and an adapter: the line says which.
    let name = format!("{} debug adapter", adapter.id);
    if let Some(binary) = adapters::installed(adapter, workdir) {
        return Step::Present { server: name, binary };
    }
    if adapter.install.automatic() {
        Step::Adapter { adapter: adapter.clone() }
    } else {
        let how = adapter.install.manual.clone().unwrap_or_else(|| "no way to install it is known".into());
        Step::Manual { server: name, how }
    }
}

/// Runs `tether install`: prints each step's outcome; 0 when everything
/// asked for is there at the end.
pub fn run(workdir: &Path, names: &[String], dry_run: bool) -> ExitCode {
    let (steps, unknown) = match plan(workdir, names) {
        Ok(p) => p,
        Err(e) => {
            errln!("tether install: {e}");
            return ExitCode::from(2);
        }
    };
    for u in &unknown {
        outln!("not installed: {u}");
    }
    if steps.is_empty() && unknown.is_empty() {
        outln!("nothing to install: no file here is of a language a server is configured for");
    }
    let mut ok = unknown.is_empty();
    let Some(prefix) = tools_prefix::dir() else {
        errln!("tether install: no home directory (HOME, XDG_DATA_HOME) to install into; set TETHER_TOOLS");
        return ExitCode::from(2);
    };
    for s in steps {
        match s {
            Step::Present { server, binary } => outln!("already there: {server} ({})", binary.display()),
            Step::Manual { server, how } => {
                ok = false;
                outln!("not installed: {server}: no registry tether reaches ships it; to install it: {how}");
            }
            Step::Adapter { adapter } if dry_run => {
                outln!("would install {} debug adapter: {}", adapter.id, describe(&adapter.install, &prefix));
            }
            Step::Adapter { adapter } => match install_adapter(&adapter, &prefix) {
                Ok(binary) => {
                    outln!(
                        "installed {}: {} ({})",
                        adapter.id,
                        binary.display(),
                        describe(&adapter.install, &prefix)
                    )
                }
                Err(e) => {
                    ok = false;
                    outln!("not installed: {} debug adapter: {e}", adapter.id);
                }
            },
            Step::Install { server, command, install } if dry_run => {
                outln!("would install {server}: {}", describe(&install, &prefix));
                let _ = command;
            }
            Step::Install { server, command, install } => {
                match install_one(&server, &command, &install, &prefix)
                    .and_then(|binary| Manifest::record(&server, &install, &prefix).map(|()| binary))
                {
                    Ok(binary) => {
                        outln!("installed {server}: {} ({})", binary.display(), describe(&install, &prefix))
                    }
                    Err(e) => {
                        ok = false;
                        outln!("not installed: {server}: {e}");
                    }
                }
            }
        }
    }
    if ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The commands a step runs, in words.
fn describe(install: &Install, prefix: &Path) -> String {
    let mut parts = Vec::new();
    if !install.apt.is_empty() {
        parts.push(format!("apt-get install {}", install.apt.join(" ")));
    }
    if let Some(c) = &install.rustup {
        parts.push(format!("rustup component add {c}"));
    }
    if !install.npm.is_empty() {
        parts.push(format!(
            "npm install --prefix {} {}",
            prefix.join("npm").display(),
            install.npm.join(" ")
        ));
    }
    if !install.pip.is_empty() {
        parts.push(format!(
            "pip install {} (a virtualenv under {})",
            install.pip.join(" "),
            prefix.join("pip").display()
        ));
    }
    if !install.python.is_empty() {
        parts.push(format!("python3 -m pip install {}", install.python.join(" ")));
    }
    parts.join("; ")
}

fn install_one(server: &str, command: &str, install: &Install, prefix: &Path) -> Result<PathBuf, String> {
    if !install.apt.is_empty() {
        let extras = !install.npm.is_empty() || !install.pip.is_empty();
        match apt(&install.apt) {
            Ok(()) => {}
            // The server itself comes from npm or PyPI; a Debian package
            // beside it (shellcheck) only adds to it.
            Err(e) if extras => errln!("tether install: {server}: {e}; installing the server without it"),
            Err(e) => return Err(e),
        }
    }
    if let Some(component) = &install.rustup {
        run_step(Command::new("rustup").args(["component", "add", component]), "rustup")?;
    }
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let mut target = None;
    if !install.npm.is_empty() {
        let npm_dir = prefix.join("npm");
        run_step(
            Command::new("npm")
                .args(["install", "--no-fund", "--no-audit", "--loglevel=error", "--prefix"])
                .arg(&npm_dir)
                .args(&install.npm),
            "npm",
        )?;
        target = Some(npm_dir.join("node_modules/.bin").join(command));
    }
    if !install.pip.is_empty() {
        let venv = prefix.join("pip").join(server);
        if !venv.join("bin/python").exists() {
            let made = run_step(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3 -m venv");
            if made.is_err() {
                // Debian's python3 leaves `venv` to a package of its own.
                let _ = std::fs::remove_dir_all(&venv);
                apt(&["python3-venv".to_string()])
                    .map_err(|e| format!("`python3 -m venv` failed, and installing python3-venv too: {e}"))?;
                run_step(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3 -m venv")?;
            }
        }
        run_step(
            Command::new(venv.join("bin/python"))
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
                .args(&install.pip),
            "pip",
        )?;
        let site = site_packages(&venv)?;
        let env: Vec<(String, String)> =
            install.env.iter().map(|(k, v)| (k.clone(), v.replace("{site}", &site))).collect();
        let path: Vec<String> = install.path.iter().map(|d| d.replace("{site}", &site)).collect();
        let program = venv.join("bin").join(command);
        if env.is_empty() && path.is_empty() {
            target = Some(program);
        } else {
            return launcher(&bin, command, &program, &env, &path, None);
        }
    }
    match target {
        Some(program) => link(&bin, command, &program),
        // apt or rustup: the command is on PATH now, or it did not install.
        None => discovery::resolve_binary(command, prefix, prefix)
            .map_err(|_| format!("`{command}` is still not found after the install")),
    }
}

/// Installs a debug adapter (system-wide, or an npm one into the tools
/// prefix with a launcher that runs its script on `node`), then checks it
/// is there.
fn install_adapter(adapter: &AdapterConfig, prefix: &Path) -> Result<PathBuf, String> {
    if !adapter.install.apt.is_empty() {
        apt(&adapter.install.apt)?;
    }
    if !adapter.install.npm.is_empty() {
        let npm_dir = prefix.join("npm");
        run_step(
            Command::new("npm")
                .args(["install", "--no-fund", "--no-audit", "--loglevel=error", "--prefix"])
                .arg(&npm_dir)
                .args(&adapter.install.npm),
            "npm",
        )?;
        if let (Some(script), Some(command)) = (&adapter.install.node_script, adapter.commands.first()) {
            let bin = prefix.join("bin");
            std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
            let node = discovery::resolve_binary("node", prefix, prefix)
                .map_err(|_| "`node` is not on PATH (apt-get install nodejs)".to_string())?;
            let script = npm_dir.join("node_modules").join(script);
            launcher(&bin, command, &script, &[], &[], Some(&node))?;
        }
    }
    if !adapter.install.python.is_empty() {
        // As the README's test command does: the user's site, then past
        // Debian's "externally managed" guard.
        let pip = |extra: &[&str]| {
            let mut cmd = Command::new("python3");
            cmd.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(extra);
            cmd.args(&adapter.install.python);
            run_step(&mut cmd, "python3 -m pip install")
        };
        pip(&[])
            .or_else(|_| pip(&["--break-system-packages"]))
            .or_else(|_| pip(&["--user", "--break-system-packages"]))?;
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    adapters::installed(adapter, &here)
        .ok_or_else(|| format!("{} is still not usable after the install", adapter.id))
}

fn apt(packages: &[String]) -> Result<(), String> {
    let root = runs_as_root();
    let mut cmd = if root { Command::new("apt-get") } else { Command::new("sudo") };
    if !root {
        cmd.args(["-n", "apt-get"]);
    }
    cmd.env("DEBIAN_FRONTEND", "noninteractive").args(["install", "-y", "-q"]).args(packages);
    if run_step(&mut cmd, "apt-get install").is_ok() {
        return Ok(());
    }
    // The package lists may be stale or absent on a fresh machine.
    let mut update = if root { Command::new("apt-get") } else { Command::new("sudo") };
    if !root {
        update.args(["-n", "apt-get"]);
    }
    run_step(update.args(["update", "-q"]), "apt-get update")?;
    run_step(&mut cmd, "apt-get install")
}

/// Whether this process runs as root (the id, not the name).
fn runs_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

fn site_packages(venv: &Path) -> Result<String, String> {
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
        .output()
        .map_err(|e| format!("cannot run the virtualenv's python: {e}"))?;
    let site = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !Path::new(&site).is_dir() {
        return Err(format!(
            "the virtualenv at {} names no site-packages ({}); remove it and run again",
            venv.display(),
            out.status
        ));
    }
    Ok(site)
}

/// `bin/<command>` → `program`, replacing an older link.
fn link(bin: &Path, command: &str, program: &Path) -> Result<PathBuf, String> {
    if !program.exists() {
        return Err(format!("the install did not produce {}", program.display()));
    }
    let at = bin.join(command);
    let _ = std::fs::remove_file(&at);
    std::os::unix::fs::symlink(program, &at).map_err(|e| format!("cannot link {}: {e}", at.display()))?;
    Ok(at)
}

/// A `bin/<command>` script that sets `env`, puts `path` first on `PATH`
/// and runs `program` (with `runner`, when given: `node` for a script).
fn launcher(
    bin: &Path,
    command: &str,
    program: &Path,
    env: &[(String, String)],
    path: &[String],
    runner: Option<&Path>,
) -> Result<PathBuf, String> {
    if !program.exists() {
        return Err(format!("the install did not produce {}", program.display()));
    }
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut script = String::from("#!/bin/sh\n# Written by `tether install`.\n");
    for (k, v) in env {
        let _ = writeln!(script, "export {k}={}", quote(v));
    }
    for dir in path.iter().rev() {
        let _ = writeln!(script, "export PATH={}:\"$PATH\"", quote(dir));
    }
    let runner = runner.map(|r| format!("{} ", quote(&r.display().to_string()))).unwrap_or_default();
    let _ = writeln!(script, "exec {runner}{} \"$@\"", quote(&program.display().to_string()));
    let at = bin.join(command);
    let tmp = bin.join(format!(".{command}.tmp"));
    std::fs::write(&tmp, script).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
        .and_then(|_| std::fs::rename(&tmp, &at))
        .map_err(|e| format!("cannot install {}: {e}", at.display()))?;
    Ok(at)
}

/// Runs one install command, its output passed through to stderr (stdout
/// is for the lines saying what was installed); an error names the command
/// and its exit status.
fn run_step(cmd: &mut Command, what: &str) -> Result<(), String> {
    match cmd.stdout(std::io::stderr()).status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("`{what}` failed ({status})")),
        Err(e) => Err(format!("cannot run `{what}`: {e} (is it installed?)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_follows_the_languages_here_and_names_what_it_cannot_install() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("index.php"), "<?php\n").unwrap();
        std::fs::write(root.join("app.rb"), "puts 1\n").unwrap();
        let (steps, unknown) = plan(&root, &[]).unwrap();
        assert!(unknown.is_empty(), "{unknown:?}");
        let php = steps.iter().find(|s| matches!(s, Step::Install { server, .. } | Step::Present { server, .. } if server == "intelephense"));
        assert!(php.is_some(), "{steps:?}");
        let ruby = steps.iter().find_map(|s| match s {
            Step::Manual { server, how } if server == "ruby-lsp" => Some(how.clone()),
            _ => None,
        });
        assert_eq!(ruby.as_deref(), Some("gem install ruby-lsp (RubyGems)"), "{steps:?}");
        let (_, unknown) = plan(&root, &["cobol".into()]).unwrap();
        assert!(
            unknown[0].starts_with("`cobol` is neither a language, a server nor a debug adapter"),
            "{unknown:?}"
        );
        let (steps, unknown) = plan(&root, &["go".into()]).unwrap();
        assert!(unknown.is_empty(), "{unknown:?}");
        let names: Vec<String> = steps
            .iter()
            .map(|s| match s {
                Step::Present { server, .. } | Step::Install { server, .. } | Step::Manual { server, .. } => {
                    server.clone()
                }
                Step::Adapter { adapter } => format!("{} debug adapter", adapter.id),
            })
            .collect();
        assert_eq!(names, ["gopls", "delve debug adapter"], "the server and the debugger of the language");
        let (steps, _) = plan(&root, &["python".into()]).unwrap();
        let servers: Vec<&str> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Present { server, .. } | Step::Install { server, .. } | Step::Manual { server, .. } => {
                    Some(server.as_str())
                }
                Step::Adapter { .. } => None,
            })
            .collect();
        assert!(servers.contains(&"ruff"), "a language's helper comes with it: {servers:?}");
    }
}
