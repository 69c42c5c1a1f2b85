//! Project checkers (`lsp diagnostics file="*"`): run the language's
//! whole-project command and read its output into diagnostics of the same
//! shape the servers publish.

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

/// Runs `checker` in `dir` and reads its diagnostics.
pub async fn run(checker: &Checker, dir: &Path) -> Result<Vec<CheckDiag>, String> {
    let output = tokio::process::Command::new(&checker.command)
        .args(&checker.args)
        .current_dir(dir)
        .env(crate::process::RUN_ID_VAR, crate::process::run_id())
        .env(crate::process::RUN_ROOT_VAR, dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = match tokio::time::timeout(CHECKER_TIMEOUT, output).await {
        Err(_) => {
            return Err(format!(
                "`{}` did not finish within {} s",
                checker.command,
                CHECKER_TIMEOUT.as_secs()
            ));
        }
        Ok(Err(e)) => return Err(format!("`{}` did not run: {e}", checker.command)),
        Ok(Ok(out)) => out,
    };
    let stdout = String::from_utf8_lossy(&output.stdout[..output.stdout.len().min(MAX_CHECKER_OUTPUT)]);
    let diags = parse(checker.format, &stdout, dir);
    if diags.is_empty() && !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(format!(
            "`{} {}` failed ({}) without reporting diagnostics: {}",
            checker.command,
            checker.args.join(" "),
            output.status,
            tail.join(" | ")
        ));
    }
    Ok(diags)
}

/// Reads checker output.
pub fn parse(format: CheckerFormat, out: &str, dir: &Path) -> Vec<CheckDiag> {
    match format {
        CheckerFormat::Pyright => parse_pyright(out),
        CheckerFormat::Cargo => parse_cargo(out, dir),
        CheckerFormat::Tsc => parse_tsc(out, dir),
        CheckerFormat::LineColMessage => parse_line_col(out, dir),
    }
}

fn parse_pyright(out: &str) -> Vec<CheckDiag> {
    let Ok(v) = serde_json::from_str::<Value>(out) else { return Vec::new() };
    v["generalDiagnostics"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|d| CheckDiag {
                    path: PathBuf::from(d["file"].as_str().unwrap_or("")),
                    line: d["range"]["start"]["line"].as_u64().unwrap_or(0) as u32 + 1,
                    column: d["range"]["start"]["character"].as_u64().unwrap_or(0) as u32 + 1,
                    severity: d["severity"].as_str().unwrap_or("error").to_string(),
                    code: d["rule"].as_str().map(str::to_string),
                    message: d["message"].as_str().unwrap_or("").to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn parse_cargo(out: &str, dir: &Path) -> Vec<CheckDiag> {
    let mut diags = Vec::new();
    for line in out.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
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
    diags
}

fn parse_tsc(out: &str, dir: &Path) -> Vec<CheckDiag> {
    // src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.
    out.lines()
        .filter_map(|line| {
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
        .collect()
}

fn parse_line_col(out: &str, dir: &Path) -> Vec<CheckDiag> {
    out.lines()
        .filter_map(|line| {
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_format() {
        let dir = Path::new("/p");
        let py = r#"{"generalDiagnostics":[{"file":"/p/a.py","severity":"error","message":"x is not defined","range":{"start":{"line":2,"character":4},"end":{"line":2,"character":5}},"rule":"reportUndefinedVariable"}]}"#;
        let d = parse(CheckerFormat::Pyright, py, dir);
        assert_eq!((d[0].line, d[0].column, d[0].code.as_deref()), (3, 5, Some("reportUndefinedVariable")));
        let cargo = r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/main.rs","line_start":4,"column_start":9,"is_primary":true}]}}"#;
        let d = parse(CheckerFormat::Cargo, cargo, dir);
        assert_eq!(d[0].path, PathBuf::from("/p/src/main.rs"));
        assert_eq!(d[0].code.as_deref(), Some("E0308"));
        let tsc = "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\n";
        let d = parse(CheckerFormat::Tsc, tsc, dir);
        assert_eq!((d[0].line, d[0].column, d[0].code.as_deref()), (3, 5, Some("TS2322")));
        let vet = "./main.go:7:2: fmt.Printf format %d has arg of wrong type\n";
        assert_eq!(parse(CheckerFormat::LineColMessage, vet, dir)[0].line, 7);
    }
}
