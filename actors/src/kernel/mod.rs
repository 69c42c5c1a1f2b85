//! Kernels: persistent Python and JavaScript interpreters as live
//! resources, one [`actor::KernelActor`] per language in a run, gathered
//! by a [`pool::KernelPool`].
//!
//! Each kernel is a small driver program shipped inside the crate
//! (`drivers/`), started through the conversation's enclosure when it has
//! one, speaking JSON lines to its actor over pipes user code cannot reach
//! (see the drivers' headers for how each keeps them out of the cell's way).
//!
//! Below the actor: `outcome` (a cell as asked and as it ended, and their
//! bounds), `cell` (one cell's run) and `protocol` (the driver's lines);
//! none of them reaches up into the actor.

pub mod actor;
mod cell;
mod outcome;
pub mod pool;
mod protocol;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A kernel language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelLang {
    /// CPython, `python3`.
    Python,
    /// Node.js, `node`.
    Javascript,
}

impl KernelLang {
    /// The language's name.
    pub fn as_str(self) -> &'static str {
        match self {
            KernelLang::Python => "python",
            KernelLang::Javascript => "javascript",
        }
    }
}

const PYTHON_DRIVER: &str = include_str!("drivers/driver.py");
const JS_DRIVER: &str = include_str!("drivers/driver.js");
const JS_WORKER: &str = include_str!("drivers/worker.js");

/// The program and arguments that start a kernel of `lang` in `workdir`,
/// through `enclosure` (a command prefix) when given.
pub fn command(lang: KernelLang, workdir: &Path, enclosure: &[String]) -> (PathBuf, Vec<String>) {
    let (interpreter, mut args) = match lang {
        KernelLang::Python => {
            let python = if enclosure.is_empty() { python_for(workdir) } else { PathBuf::from("python3") };
            (python, vec!["-u".to_string(), "-c".to_string(), PYTHON_DRIVER.to_string()])
        }
        KernelLang::Javascript => {
            let source =
                JS_DRIVER.replace("__WORKER_SOURCE__", &serde_json::to_string(JS_WORKER).unwrap_or_default());
            (PathBuf::from("node"), vec!["-e".to_string(), source])
        }
    };
    match enclosure.split_first() {
        None => (interpreter, args),
        Some((program, prefix)) => {
            let mut all: Vec<String> = prefix.to_vec();
            all.push(interpreter.display().to_string());
            all.append(&mut args);
            (PathBuf::from(program), all)
        }
    }
}

/// The project's own interpreter (`.venv/bin/python3`, `venv/bin/python3`)
/// if it has one and is trusted ([`crate::trust`]), else the real `python3` behind PATH (resolved once: a
/// pyenv shim costs ~30 ms per start).
fn python_for(workdir: &Path) -> PathBuf {
    // A restricted checkout's own interpreter is not its to run.
    let venvs = if crate::trust::of(workdir).is_trusted() {
        [".venv/bin/python3", "venv/bin/python3", ".venv/bin/python", "venv/bin/python"].as_slice()
    } else {
        &[]
    };
    for venv in venvs {
        let candidate = workdir.join(venv);
        if candidate.is_file() {
            return candidate;
        }
    }
    static REAL: OnceLock<PathBuf> = OnceLock::new();
    REAL.get_or_init(|| {
        let mut command = std::process::Command::new("python3");
        command.args(["-c", "import sys; print(sys.executable)"]);
        crate::process::probe(&mut command, crate::process::PROBE_WAIT)
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from("python3"))
    })
    .clone()
}
