//! One workspace question in a monorepo: a git checkout holding FastAPI
//! 0.115.0 (`backend/`, pyright), rxjs 7.8.1's sources (`web/`,
//! typescript-language-server) and a Go module (`svc/`, gopls), asked
//! `lsp symbols query:"Depends"` through tether — servers asked, wall
//! time cold and warm, where the first exact match lands — against raw
//! clients asking each server `workspace/symbol` the way a client without
//! tether's merge would, in server order, unranked.
//!
//! Run: `cargo bench --bench lsp_monorepo` (needs pyright,
//! typescript-language-server and gopls — `./scripts/test` installs them
//! — and pip and npm to fetch the two packages into
//! `target/bench-peers/`). `MONOREPO_BENCH_RUNS` (default 20) warm asks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether::{Resource, Runtime};

#[path = "support/copy_tree.rs"]
mod copy_tree;
#[path = "support/lsp_raw.rs"]
mod lsp_raw;
use copy_tree::copy_tree;
use lsp_raw::Raw;

const QUERY: &str = "Depends";
/// How long a raw server is asked for a non-empty settled answer.
const RAW_WAIT: Duration = Duration::from_secs(30);

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-peers")
}

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(status.success(), "{what}: {status}");
}

/// The unpacked sources of a registry package, fetched once.
fn fetched(dir: &str, fetch: impl FnOnce(&Path)) -> PathBuf {
    let dst = peers().join(dir);
    if !dst.exists() {
        let dl = tempfile::tempdir().unwrap();
        fetch(dl.path());
        let unpacked = std::fs::read_dir(dl.path())
            .unwrap()
            .flatten()
            .find(|e| e.file_type().unwrap().is_dir())
            .expect("an unpacked directory")
            .path();
        std::fs::create_dir_all(peers()).unwrap();
        std::fs::rename(unpacked, &dst).unwrap();
    }
    dst
}

fn fastapi() -> PathBuf {
    fetched("fastapi-src", |dl| {
        run(
            Command::new("python3")
                .args(["-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"])
                .arg("fastapi==0.115.0")
                .arg("-d")
                .arg(dl),
            "pip download fastapi",
        );
        run(Command::new("tar").arg("xzf").arg("fastapi-0.115.0.tar.gz").current_dir(dl), "tar");
        std::fs::remove_file(dl.join("fastapi-0.115.0.tar.gz")).unwrap();
    })
}

fn rxjs() -> PathBuf {
    fetched("rxjs-src", |dl| {
        run(Command::new("npm").args(["pack", "--silent", "rxjs@7.8.1"]).current_dir(dl), "npm pack rxjs");
        run(Command::new("tar").arg("xzf").arg("rxjs-7.8.1.tgz").current_dir(dl), "tar");
        std::fs::remove_file(dl.join("rxjs-7.8.1.tgz")).unwrap();
    })
}

/// The monorepo: `backend/` FastAPI (with its pyproject.toml), `web/`
/// rxjs's `src/` with a tsconfig, `svc/` a Go module with its own
/// `Depends`, under one git checkout.
fn monorepo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    copy_tree(&fastapi(), &root.join("backend"));
    copy_tree(&rxjs().join("src"), &root.join("web/src"));
    std::fs::write(
        root.join("web/tsconfig.json"),
        r#"{"compilerOptions": {"target": "es2020", "module": "commonjs", "strict": true, "lib": ["es2020", "dom"]}, "include": ["src"]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("svc")).unwrap();
    std::fs::write(root.join("svc/go.mod"), "module example.com/svc\n\ngo 1.19\n").unwrap();
    std::fs::write(
        root.join("svc/deps.go"),
        "package svc\n\n// Depends names what a handler needs.\nfunc Depends(name string) []string { return []string{name} }\n\n// Dependencies lists them all.\nvar Dependencies = Depends(\"db\")\n",
    )
    .unwrap();
    run(Command::new("git").args(["init", "-q"]).current_dir(&root), "git init");
    (dir, root)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// 1-based place of the first exact `QUERY` in `names`, if any.
fn first_exact<'a>(names: impl Iterator<Item = &'a str>) -> Option<usize> {
    names.enumerate().find(|(_, n)| *n == QUERY).map(|(k, _)| k + 1)
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runs: usize =
        std::env::var("MONOREPO_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(20).max(1);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (_dir, root) = monorepo();
    let args = json!({"action": "symbols", "query": QUERY});

    // tether: cold (servers start within the call), then warm.
    let started = Instant::now();
    let rt = Runtime::builder()
        .trust(tether::Trust::Trusted)
        .workdir(&root)
        .connect(Resource::LanguageServers)
        .start()
        .unwrap();
    let first = tokio.block_on(rt.call("lsp", args.clone()));
    let cold = started.elapsed();
    assert!(!first.is_error, "{}", first.text);
    // The servers may still be indexing on the first call; the warm
    // figures are taken once they are not.
    std::thread::sleep(Duration::from_secs(5));
    let mut warm = Vec::new();
    let mut last = first.clone();
    for _ in 0..runs {
        let s = Instant::now();
        last = tokio.block_on(rt.call("lsp", args.clone()));
        warm.push(s.elapsed());
    }
    let data = last.data.clone().unwrap_or(Value::Null);
    let rows = data["symbols"].as_array().cloned().unwrap_or_default();
    let asked: Vec<&str> =
        data["asked"].as_array().map(|a| a.iter().filter_map(|s| s.as_str()).collect()).unwrap_or_default();
    let in_first_100 = rows.iter().take(100).filter(|r| r["match"] == "exact").count();
    let exact = rows.iter().filter(|r| r["match"] == "exact").count();
    let place = first_exact(rows.iter().filter_map(|r| r["name"].as_str()));
    let languages: std::collections::BTreeSet<&str> =
        rows.iter().filter(|r| r["match"] == "exact").filter_map(|r| r["language"].as_str()).collect();
    println!(
        "tether: {} server(s) asked ({}); {} symbol(s), {exact} exact ({}), first exact at {:?}, the first 100 hold {in_first_100}; cold {:.0} ms, warm median {:.0} ms; {} characters",
        asked.len(),
        asked.join(", "),
        data["total"],
        languages.into_iter().collect::<Vec<_>>().join(", "),
        place,
        cold.as_secs_f64() * 1e3,
        median(warm).as_secs_f64() * 1e3,
        last.text.len()
    );

    // Raw clients: each server asked at its root, answers listed in server
    // order as they come.
    let mut merged: Vec<String> = Vec::new();
    let mut chars = 0;
    let mut raw_total = Duration::ZERO;
    for (server, args, dir, file, language_id) in [
        ("pyright-langserver", &["--stdio"][..], "backend", "fastapi/param_functions.py", "python"),
        ("typescript-language-server", &["--stdio"][..], "web", "src/index.ts", "typescript"),
        ("gopls", &[][..], "svc", "deps.go", "go"),
    ] {
        let at = root.join(dir);
        let started = Instant::now();
        let mut raw = Raw::start(server, args, &at);
        let path = at.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        raw.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": format!("file://{}", path.display()), "languageId": language_id, "version": 1, "text": text}}),
        );
        // A raw client cannot tell "still loading" from "none". Asked once
        // a second: the first answer two asks agree on (what a client that
        // waits for quiet would take), and the first non-empty one that
        // two asks agree on, within RAW_WAIT.
        let mut last: Option<Value> = None;
        let mut first_settled: Option<(usize, Duration)> = None;
        let answer = loop {
            let a = raw.request("workspace/symbol", json!({"query": QUERY}));
            let n = a.as_array().map_or(0, Vec::len);
            let agrees = last.as_ref() == Some(&a);
            if agrees && first_settled.is_none() {
                first_settled = Some((n, started.elapsed()));
            }
            if (agrees && n > 0) || started.elapsed() > RAW_WAIT {
                break a;
            }
            last = Some(a);
            std::thread::sleep(Duration::from_secs(1));
        };
        if let Some((n, at)) = first_settled {
            println!("raw {server}: first settled answer {n} symbol(s) at {:.1} s", at.as_secs_f64());
        }
        raw_total += started.elapsed();
        let names: Vec<String> = answer
            .as_array()
            .map(|v| v.iter().filter_map(|s| s["name"].as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        chars += answer.to_string().len();
        println!(
            "raw {server}: {} symbol(s) after {:.1} s, first exact at {:?}",
            names.len(),
            started.elapsed().as_secs_f64(),
            first_exact(names.iter().map(String::as_str))
        );
        merged.extend(names);
    }
    println!(
        "raw, three clients merged in server order: {} symbol(s), first exact at {:?}, the first 100 hold {} exact; {} characters of JSON; {:.0} ms asking",
        merged.len(),
        first_exact(merged.iter().map(String::as_str)),
        merged.iter().take(100).filter(|n| *n == QUERY).count(),
        chars,
        raw_total.as_secs_f64() * 1e3
    );
}
