//! Project checkers (`lsp diagnostics file="*"`): run the language's
//! whole-project command in a project root and read its output into
//! diagnostics of the same shape the servers publish. A check writes
//! nothing into the project: what a checker keeps between runs (tsc's
//! build info under `incremental`, cargo's target directory) goes to a
//! directory of tether's own outside it ([`cache_dir`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::config::{Checker, CheckerFormat};

/// Longest a project check may run.
pub const CHECKER_TIMEOUT: Duration = Duration::from_secs(300);
/// Most output read from a checker.
const MAX_CHECKER_OUTPUT: usize = 32 * 1024 * 1024;

/// One diagnostic from a checker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckDiag {
    /// The file (absolute, or relative to the checker's directory as it printed it).
    pub path: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// error, warning, information or hint.
    pub severity: String,
    /// The rule or error code, if any.
    pub code: Option<String>,
    /// The message.
    pub message: String,
}

/// Exit statuses a checker of each format gives when it ran to the end:
/// success, and "found problems". Anything else (a crash, a usage error,
/// a signal) means its silence says nothing.
fn expected_status(format: CheckerFormat, code: Option<i32>) -> bool {
    let ok: &[i32] = match format {
        CheckerFormat::Pyright => &[0, 1],
        CheckerFormat::Cargo => &[0, 101],
        CheckerFormat::Tsc => &[0, 1, 2],
        CheckerFormat::LineColMessage => &[0, 1],
    };
    code.is_some_and(|c| ok.contains(&c))
}

/// The last few lines of `bytes`, joined, for an error.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(5);
    if lines.is_empty() { "(nothing on stderr)".to_string() } else { lines[start..].join(" | ") }
}

/// Kills a checker's process group when dropped: what it left running when
/// it ended, overran or its call was dropped. (While any member lives the
/// group id cannot be reused.)
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            crate::process::kill_group(pgid);
        }
    }
}

/// Where a check of `root` keeps what its checker keeps between runs:
/// under the system's temporary directory, one directory per root.
pub fn cache_dir(root: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut hasher);
    std::env::temp_dir().join("tether-check").join(format!("{:016x}", hasher.finish()))
}

/// Why `root` holds no project `checker` can check, if it holds none: tsc
/// run where there is neither `tsconfig.json` nor `jsconfig.json` prints
/// its usage, not diagnostics.
pub fn no_project(checker: &Checker, root: &Path) -> Option<String> {
    let names_one = checker.args.iter().any(|a| matches!(a.as_str(), "-p" | "--project" | "-b" | "--build"));
    let configs = ["tsconfig.json", "jsconfig.json"];
    (checker.format == CheckerFormat::Tsc && !names_one && !configs.iter().any(|c| root.join(c).is_file()))
        .then(|| {
            "neither tsconfig.json nor jsconfig.json is there, so tsc has no project to check".to_string()
        })
}

/// The arguments and environment `checker` runs with in `dir` so that it
/// writes nothing there, its keepings in `cache`.
fn confined_to(checker: &Checker, dir: &Path, cache: &Path) -> (Vec<String>, Vec<(&'static str, PathBuf)>) {
    let mut args = checker.args.clone();
    let mut env = Vec::new();
    let given = |flag: &str| checker.args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}=")));
    match checker.format {
        CheckerFormat::Tsc => {
            let names_one = ["-p", "--project", "-b", "--build"].iter().any(|f| given(f));
            if !names_one && !dir.join("tsconfig.json").is_file() && dir.join("jsconfig.json").is_file() {
                args.extend(["-p".to_string(), "jsconfig.json".to_string()]);
            }
            // With `incremental` (or `composite`) in the project's config,
            // tsc writes its build info beside it even under --noEmit:
            // always incremental, the build info in tether's cache.
            if !given("--tsBuildInfoFile") && !given("-b") && !given("--build") {
                let info = cache.join("tsbuildinfo");
                args.extend(["--incremental".to_string(), "--tsBuildInfoFile".to_string()]);
                args.push(info.display().to_string());
            }
        }
        CheckerFormat::Cargo => env.push(("CARGO_TARGET_DIR", cache.join("target"))),
        CheckerFormat::Pyright | CheckerFormat::LineColMessage => {}
    }
    (args, env)
}

/// Runs `checker` in `dir` and reads its diagnostics. It is an error —
/// never an empty list — when the checker cannot run, ends with a status
/// its format does not give when it ran to the end, prints output that is
/// not its format, or fails without reporting anything.
pub async fn run(checker: &Checker, dir: &Path) -> Result<Vec<CheckDiag>, String> {
    let shown = format!(
        "`{}{}{}`",
        checker.command,
        if checker.args.is_empty() { "" } else { " " },
        checker.args.join(" ")
    );
    let cache = cache_dir(dir);
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("{shown} did not run: cannot make its cache {}: {e}", cache.display()))?;
    let (args, env) = confined_to(checker, dir, &cache);
    let mut command = tokio::process::Command::new(&checker.command);
    command.envs(env);
    // In a group of its own, killed whole when it ends, overruns or the
    // call is dropped: `cargo check` leaves `rustc`s, `go vet` its tools.
    let child = crate::process::without_withheld(&mut command)
        .args(&args)
        .current_dir(dir)
        .env(crate::process::RUN_ID_VAR, crate::process::run_id())
        .env(crate::process::RUN_ROOT_VAR, dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{shown} did not run: {e}"))?;
    let group = GroupGuard(child.id());
    let output = match tokio::time::timeout(CHECKER_TIMEOUT, child.wait_with_output()).await {
        Err(_) => {
            return Err(format!("{shown} did not finish within {} s", CHECKER_TIMEOUT.as_secs()));
        }
        Ok(Err(e)) => return Err(format!("{shown} did not run: {e}")),
        Ok(Ok(out)) => out,
    };
    drop(group);
    let stdout = String::from_utf8_lossy(&output.stdout[..output.stdout.len().min(MAX_CHECKER_OUTPUT)]);
    // gcc-style tools (`go vet`) report on stderr.
    let text = match checker.format {
        CheckerFormat::LineColMessage => {
            let stderr =
                String::from_utf8_lossy(&output.stderr[..output.stderr.len().min(MAX_CHECKER_OUTPUT)]);
            format!("{stdout}\n{stderr}")
        }
        _ => stdout.into_owned(),
    };
    if !expected_status(checker.format, output.status.code()) {
        return Err(format!(
            "{shown} ended with {} — not how it ends after checking — so its report cannot be trusted; stderr: {}",
            output.status,
            tail(&output.stderr)
        ));
    }
    let diags = parse(checker.format, &text, dir).map_err(|why| {
        format!("{shown} printed output tether cannot read ({why}); stderr: {}", tail(&output.stderr))
    })?;
    if diags.is_empty() && !output.status.success() {
        return Err(format!(
            "{shown} failed ({}) without reporting diagnostics; stderr: {}",
            output.status,
            tail(&output.stderr)
        ));
    }
    Ok(diags)
}

/// Reads checker output; an error says what did not fit the format.
pub fn parse(format: CheckerFormat, out: &str, dir: &Path) -> Result<Vec<CheckDiag>, String> {
    match format {
        CheckerFormat::Pyright => parse_pyright(out),
        CheckerFormat::Cargo => parse_cargo(out, dir),
        CheckerFormat::Tsc => parse_tsc(out, dir),
        CheckerFormat::LineColMessage => parse_line_col(out, dir),
    }
}

/// The start of a line that did not fit, for an error.
fn quote(line: &str) -> String {
    format!("`{}`", crate::text::cut(line, 120).0)
}

fn parse_pyright(out: &str) -> Result<Vec<CheckDiag>, String> {
    let v = serde_json::from_str::<Value>(out)
        .map_err(|e| format!("not JSON ({e}); it began {}", quote(out.lines().next().unwrap_or(""))))?;
    let items = v["generalDiagnostics"]
        .as_array()
        .ok_or_else(|| "JSON without a `generalDiagnostics` list".to_string())?;
    Ok(items
        .iter()
        .map(|d| CheckDiag {
            path: PathBuf::from(d["file"].as_str().unwrap_or("")),
            line: d["range"]["start"]["line"].as_u64().unwrap_or(0) as u32 + 1,
            column: d["range"]["start"]["character"].as_u64().unwrap_or(0) as u32 + 1,
            severity: d["severity"].as_str().unwrap_or("error").to_string(),
            code: d["rule"].as_str().map(str::to_string),
            message: d["message"].as_str().unwrap_or("").to_string(),
        })
        .collect())
}

fn parse_cargo(out: &str, dir: &Path) -> Result<Vec<CheckDiag>, String> {
    let mut diags = Vec::new();
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v = serde_json::from_str::<Value>(line)
            .map_err(|_| format!("a line that is not cargo's JSON: {}", quote(line)))?;
        if v["reason"] != "compiler-message" {
            continue;
        }
        let msg = &v["message"];
        let Some(span) = msg["spans"].as_array().and_then(|s| s.iter().find(|s| s["is_primary"] == true))
        else {
            continue;
        };
        diags.push(CheckDiag {
            path: dir.join(span["file_name"].as_str().unwrap_or("")),
            line: span["line_start"].as_u64().unwrap_or(1) as u32,
            column: span["column_start"].as_u64().unwrap_or(1) as u32,
            severity: match msg["level"].as_str() {
                Some("error") | Some("error: internal compiler error") => "error".into(),
                Some("warning") => "warning".into(),
                Some(other) => other.to_string(),
                None => "error".into(),
            },
            code: msg["code"]["code"].as_str().map(str::to_string),
            message: msg["message"].as_str().unwrap_or("").to_string(),
        });
    }
    Ok(diags)
}

/// Keeps the lines `read` understands; a line it does not is an error
/// unless it is indented (a message's continuation) or a `#` heading.
fn read_lines(out: &str, read: impl Fn(&str) -> Option<CheckDiag>) -> Result<Vec<CheckDiag>, String> {
    let mut diags = Vec::new();
    for line in out.lines() {
        if line.trim().is_empty() || line.starts_with(char::is_whitespace) || line.starts_with('#') {
            continue;
        }
        diags.push(read(line).ok_or_else(|| format!("a line that is not a diagnostic: {}", quote(line)))?);
    }
    Ok(diags)
}

fn parse_tsc(out: &str, dir: &Path) -> Result<Vec<CheckDiag>, String> {
    // src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.
    read_lines(out, |line| {
        let (loc, rest) = line.split_once("): ")?;
        let (file, pos) = loc.rsplit_once('(')?;
        let (l, c) = pos.split_once(',')?;
        let (severity, rest) = rest.split_once(' ')?;
        let (code, message) = rest.split_once(": ").unwrap_or(("", rest));
        Some(CheckDiag {
            path: dir.join(file),
            line: l.parse().ok()?,
            column: c.parse().ok()?,
            severity: severity.to_string(),
            code: (!code.is_empty()).then(|| code.to_string()),
            message: message.to_string(),
        })
    })
}

fn parse_line_col(out: &str, dir: &Path) -> Result<Vec<CheckDiag>, String> {
    read_lines(out, |line| {
        let mut parts = line.splitn(4, ':');
        let (file, l, c, message) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        Some(CheckDiag {
            path: dir.join(file.trim()),
            line: l.trim().parse().ok()?,
            column: c.trim().parse().ok()?,
            severity: "error".into(),
            code: None,
            message: message.trim().to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_a_checker_leaves_running_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let script = "sleep 300 >/dev/null 2>&1 & echo $! > left.pid; echo 'a.go:1:1: vet: x'";
        let checker = Checker {
            command: "sh".into(),
            args: vec!["-c".into(), script.into()],
            format: CheckerFormat::LineColMessage,
        };
        let diags = run(&checker, dir.path()).await.unwrap();
        assert_eq!(diags.len(), 1);
        let left: i32 = std::fs::read_to_string(dir.path().join("left.pid")).unwrap().trim().parse().unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!crate::process::is_running(left), "the checker's background child {left} was killed");
    }

    #[test]
    fn a_check_keeps_its_build_info_and_target_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Path::new("/cache");
        let tsc =
            Checker { command: "tsc".into(), args: vec!["--noEmit".into()], format: CheckerFormat::Tsc };
        assert!(no_project(&tsc, dir.path()).unwrap().contains("neither tsconfig.json nor jsconfig.json"));
        std::fs::write(dir.path().join("jsconfig.json"), "{}").unwrap();
        assert_eq!(no_project(&tsc, dir.path()), None);
        let (args, env) = confined_to(&tsc, dir.path(), cache);
        assert_eq!(
            args,
            ["--noEmit", "-p", "jsconfig.json", "--incremental", "--tsBuildInfoFile", "/cache/tsbuildinfo"]
        );
        assert!(env.is_empty());
        let cargo =
            Checker { command: "cargo".into(), args: vec!["check".into()], format: CheckerFormat::Cargo };
        let (args, env) = confined_to(&cargo, dir.path(), cache);
        assert_eq!(
            (args, env),
            (vec!["check".to_string()], vec![("CARGO_TARGET_DIR", PathBuf::from("/cache/target"))])
        );
        assert!(!cache_dir(dir.path()).starts_with(dir.path()));
    }

    #[test]
    fn reads_each_format() {
        let dir = Path::new("/p");
        let py = r#"{"generalDiagnostics":[{"file":"/p/a.py","severity":"error","message":"x is not defined","range":{"start":{"line":2,"character":4},"end":{"line":2,"character":5}},"rule":"reportUndefinedVariable"}]}"#;
        let d = parse(CheckerFormat::Pyright, py, dir).unwrap();
        assert_eq!((d[0].line, d[0].column, d[0].code.as_deref()), (3, 5, Some("reportUndefinedVariable")));
        let cargo = r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/main.rs","line_start":4,"column_start":9,"is_primary":true}]}}"#;
        let d = parse(CheckerFormat::Cargo, cargo, dir).unwrap();
        assert_eq!(d[0].path, PathBuf::from("/p/src/main.rs"));
        assert_eq!(d[0].code.as_deref(), Some("E0308"));
        let tsc = "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\n";
        let d = parse(CheckerFormat::Tsc, tsc, dir).unwrap();
        assert_eq!((d[0].line, d[0].column, d[0].code.as_deref()), (3, 5, Some("TS2322")));
        let vet = "# demo\n./main.go:7:2: fmt.Printf format %d has arg of wrong type\n";
        assert_eq!(parse(CheckerFormat::LineColMessage, vet, dir).unwrap()[0].line, 7);
    }

    #[test]
    fn output_that_is_not_the_format_is_an_error() {
        let dir = Path::new("/p");
        let e = parse(CheckerFormat::Pyright, "Traceback (most recent call last):", dir).unwrap_err();
        assert!(e.starts_with("not JSON") && e.contains("`Traceback"), "{e}");
        assert!(parse(CheckerFormat::Pyright, "{}", dir).unwrap_err().contains("generalDiagnostics"));
        assert!(parse(CheckerFormat::Cargo, "warning: oops", dir).unwrap_err().contains("not cargo's JSON"));
        assert!(parse(CheckerFormat::Tsc, "garbage", dir).unwrap_err().contains("`garbage`"));
        assert_eq!(parse(CheckerFormat::Tsc, "", dir).unwrap(), Vec::new(), "no output: no problems");
    }
}
