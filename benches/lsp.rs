//! Warm `references` and `hover` through tether against a raw client in
//! this file speaking to the same server program in the same run, cold
//! start to first answer, and cold start to the first *correct*
//! `references` (the count a long-settled server gives) per server.
//!
//! The raw client is the floor: blocking writes of framed JSON and reads
//! until the matching response, no actors, no rendering. tether's figure
//! is a whole tool call (router, supervisor, file sync check, request,
//! rendering with source lines). Calls alternate between the two so noise
//! hits both; medians are reported.
//!
//! Run: `cargo bench --bench lsp` (needs the servers `./scripts/test`
//! installs). Set `LSP_BENCH_RUNS` (default 200) and `LSP_BENCH_ONLY`
//! (a comma-separated list of server commands) to narrow it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether::{Resource, Runtime};

#[path = "support/copy_tree.rs"]
mod copy_tree;
#[path = "support/lsp_raw.rs"]
mod lsp_raw;
use copy_tree::copy_tree;
use lsp_raw::Raw;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A copy of `tests/fixtures/lsp/<name>`, with `extra` files added (a
/// `.git` marker, a `tether.toml`).
fn fixture(name: &str, extra: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp").join(name), dir.path());
    for (path, text) in extra {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

struct Case {
    fixture: &'static str,
    /// Files added to the fixture's copy.
    extra: &'static [(&'static str, &'static str)],
    server: (&'static str, &'static [&'static str]),
    language_id: &'static str,
    file: &'static str,
    line: u32,
    symbol: &'static str,
}

const GIT: (&str, &str) = (".git/HEAD", "ref: refs/heads/main\n");
const PREFER_BASEDPYRIGHT: (&str, &str) =
    ("tether.toml", "[[language]]\nid = \"python\"\nextensions = [\"py\"]\nservers = [\"basedpyright\"]\n");
const PREFER_PYLSP: (&str, &str) =
    ("tether.toml", "[[language]]\nid = \"python\"\nextensions = [\"py\"]\nservers = [\"pylsp\"]\n");

const CASES: &[Case] = &[
    Case {
        fixture: "python",
        extra: &[],
        server: ("pyright-langserver", &["--stdio"]),
        language_id: "python",
        file: "app.py",
        line: 4,
        symbol: "total_area",
    },
    Case {
        fixture: "python",
        extra: &[PREFER_BASEDPYRIGHT],
        server: ("basedpyright-langserver", &["--stdio"]),
        language_id: "python",
        file: "app.py",
        line: 4,
        symbol: "total_area",
    },
    Case {
        fixture: "python",
        extra: &[PREFER_PYLSP],
        server: ("pylsp", &[]),
        language_id: "python",
        file: "app.py",
        line: 4,
        symbol: "total_area",
    },
    Case {
        fixture: "c",
        extra: &[],
        server: ("clangd", &["--log=error"]),
        language_id: "c",
        file: "main.c",
        line: 5,
        symbol: "manhattan",
    },
    Case {
        fixture: "ts",
        extra: &[],
        server: ("typescript-language-server", &["--stdio"]),
        language_id: "typescript",
        file: "app.ts",
        line: 4,
        symbol: "total",
    },
    Case {
        fixture: "java",
        extra: &[GIT],
        server: ("jdtls", &["-data", "{cache}"]),
        language_id: "java",
        file: "src/shapes/Main.java",
        line: 7,
        symbol: "area",
    },
    Case {
        fixture: "php",
        extra: &[],
        server: ("intelephense", &["--stdio"]),
        language_id: "php",
        file: "src/main.php",
        line: 7,
        symbol: "total",
    },
    Case {
        fixture: "bash",
        extra: &[],
        server: ("bash-language-server", &["start"]),
        language_id: "shellscript",
        file: "main.sh",
        line: 3,
        symbol: "greet",
    },
    Case {
        fixture: "css",
        extra: &[],
        server: ("vscode-css-language-server", &["--stdio"]),
        language_id: "css",
        file: "styles.css",
        line: 6,
        symbol: "--brand",
    },
    Case {
        fixture: "fortran",
        extra: &[],
        server: ("fortls", &[]),
        language_id: "fortran",
        file: "main.f90",
        line: 4,
        symbol: "area",
    },
];

/// Distinct locations in a `references` answer (tether counts them so).
fn distinct(answer: &Value) -> usize {
    let mut seen: Vec<String> =
        answer.as_array().map(|a| a.iter().map(|l| l.to_string()).collect()).unwrap_or_default();
    seen.sort();
    seen.dedup();
    seen.len()
}

/// The most a cold start is given to reach the settled answer.
const COLD_LIMIT: Duration = Duration::from_secs(90);

/// How many references a server gives once settled: asked of a raw
/// process until three answers a second apart agree.
fn settled_references(case: &Case, root: &Path, text: &str, params: &Value) -> usize {
    let mut raw = Raw::start(case.server.0, case.server.1, root);
    let uri = params["textDocument"]["uri"].clone();
    raw.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": case.language_id, "version": 1, "text": text}}),
    );
    let mut last = Vec::new();
    let started = Instant::now();
    loop {
        let n = distinct(&raw.request("textDocument/references", params.clone()));
        last.push(n);
        if last.len() >= 3 && last[last.len() - 3..].iter().all(|m| *m == n) && n > 0 {
            return n;
        }
        assert!(started.elapsed() < COLD_LIMIT, "{} never settled: {last:?}", case.server.0);
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let runs: usize = std::env::var("LSP_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let only: Option<Vec<String>> =
        std::env::var("LSP_BENCH_ONLY").ok().map(|v| v.split(',').map(str::to_string).collect());
    for case in CASES {
        if only.as_ref().is_some_and(|o| !o.iter().any(|c| c == case.server.0)) {
            continue;
        }
        let (_dir, root) = fixture(case.fixture, case.extra);
        let file = root.join(case.file);
        let text = std::fs::read_to_string(&file).unwrap();
        let line_text = text.lines().nth(case.line as usize - 1).unwrap();
        let character = line_text.find(case.symbol).unwrap() as u32;
        let uri = format!("file://{}", file.display());
        let pos = json!({"textDocument": {"uri": uri}, "position": {"line": case.line - 1, "character": character}});
        let mut refs_params = pos.clone();
        refs_params["context"] = json!({"includeDeclaration": true});
        let refs_args =
            json!({"action": "references", "file": case.file, "line": case.line, "symbol": case.symbol});

        // Cold start to the first correct references: the settled count,
        // then a fresh tether run and a fresh raw process each asked until
        // they give it (tether is asked once a second; the raw client, which
        // has no way to know when the server is ready, every 100 ms).
        let truth = {
            let (_d, settle_root) = fixture(case.fixture, case.extra);
            let settle_file = settle_root.join(case.file);
            let mut p = refs_params.clone();
            p["textDocument"]["uri"] = json!(format!("file://{}", settle_file.display()));
            settled_references(case, &settle_root, &text, &p)
        };
        let (tether_first, tether_calls) = {
            let (_d, cold_root) = fixture(case.fixture, case.extra);
            let started = Instant::now();
            let rt = Runtime::builder()
                .trust(tether::Trust::Trusted)
                .workdir(&cold_root)
                .connect(Resource::LanguageServers)
                .start()
                .unwrap();
            let mut calls = 0;
            loop {
                calls += 1;
                let r = tokio.block_on(rt.call("lsp", refs_args.clone()));
                let total = r.data.as_ref().and_then(|d| d["total"].as_u64()).unwrap_or(0) as usize;
                if total == truth {
                    break (started.elapsed(), calls);
                }
                assert!(started.elapsed() < COLD_LIMIT, "tether never gave {truth}: {}", r.text);
                std::thread::sleep(Duration::from_secs(1));
            }
        };
        let (raw_first, raw_asks) = {
            let (_d, cold_root) = fixture(case.fixture, case.extra);
            let cold_file = cold_root.join(case.file);
            let started = Instant::now();
            let mut raw = Raw::start(case.server.0, case.server.1, &cold_root);
            let cold_uri = format!("file://{}", cold_file.display());
            raw.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": cold_uri, "languageId": case.language_id, "version": 1, "text": text}}),
            );
            let mut p = refs_params.clone();
            p["textDocument"]["uri"] = json!(cold_uri);
            let mut asks = 0;
            loop {
                asks += 1;
                let n = distinct(&raw.request("textDocument/references", p.clone()));
                if n == truth {
                    break (started.elapsed(), asks);
                }
                assert!(started.elapsed() < COLD_LIMIT, "the raw client never got {truth}");
                std::thread::sleep(Duration::from_millis(100));
            }
        };

        // Cold start to first answer, through tether.
        let cold = Instant::now();
        let rt = Runtime::builder()
            .trust(tether::Trust::Trusted)
            .workdir(&root)
            .connect(Resource::LanguageServers)
            .start()
            .unwrap();
        let hover_args =
            json!({"action": "hover", "file": case.file, "line": case.line, "symbol": case.symbol});
        let first = tokio.block_on(rt.call("lsp", hover_args.clone()));
        let cold = cold.elapsed();
        assert!(!first.is_error, "{}", first.text);

        // Cold start to first answer, raw (spawn, initialize, open, hover).
        let raw_cold = Instant::now();
        let mut raw = Raw::start(case.server.0, case.server.1, &root);
        raw.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": case.language_id, "version": 1, "text": text}}),
        );
        let _ = raw.request("textDocument/hover", pos.clone());
        let raw_cold = raw_cold.elapsed();
        // Warm both up.
        for _ in 0..10 {
            tokio.block_on(rt.call("lsp", refs_args.clone()));
            raw.request("textDocument/references", refs_params.clone());
        }
        let (mut t_hover, mut r_hover, mut t_refs, mut r_refs) = (vec![], vec![], vec![], vec![]);
        for _ in 0..runs {
            let s = Instant::now();
            let r = tokio.block_on(rt.call("lsp", hover_args.clone()));
            t_hover.push(s.elapsed());
            assert!(!r.is_error);
            let s = Instant::now();
            raw.request("textDocument/hover", pos.clone());
            r_hover.push(s.elapsed());
            let s = Instant::now();
            let r = tokio.block_on(rt.call("lsp", refs_args.clone()));
            t_refs.push(s.elapsed());
            assert!(!r.is_error);
            let s = Instant::now();
            raw.request("textDocument/references", refs_params.clone());
            r_refs.push(s.elapsed());
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let (th, rh, tr, rr) = (median(t_hover), median(r_hover), median(t_refs), median(r_refs));
        println!(
            "{}: cold start to first hover: tether {:.0} ms, raw {:.0} ms\n  cold start to the settled {truth} references: tether {:.0} ms in {tether_calls} call(s), raw {:.0} ms in {raw_asks} ask(s)\n  hover      tether {:.3} ms  raw {:.3} ms  overhead {:.3} ms\n  references tether {:.3} ms  raw {:.3} ms  overhead {:.3} ms",
            case.server.0,
            ms(cold),
            ms(raw_cold),
            ms(tether_first),
            ms(raw_first),
            ms(th),
            ms(rh),
            ms(th) - ms(rh),
            ms(tr),
            ms(rr),
            ms(tr) - ms(rr)
        );
    }
}
