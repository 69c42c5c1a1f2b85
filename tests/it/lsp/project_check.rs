//! `lsp diagnostics file:"*"` (the project's checker) against pyright on
//! a project with errors in several files: counts first (by severity, by
//! file with where each starts), then a page of the diagnostics grouped
//! by file, paged with `offset` and `limit` as `references` is.

use serde_json::{Value, json};

use super::tool::{fixture, lsp, lsp_ok, require};

fn check(offset: Option<usize>, limit: Option<usize>) -> Value {
    let mut args = json!({"action": "diagnostics", "file": "*", "language": "python"});
    if let Some(o) = offset {
        args["offset"] = json!(o);
    }
    if let Some(l) = limit {
        args["limit"] = json!(l);
    }
    args
}

#[tokio::test]
async fn the_project_check_is_counted_by_file_first_and_paged() {
    require("pyright", "npm install -g pyright");
    // a.py 3 errors; b.py 5; c.py 4 and a warning.
    let h = fixture("python_errors");
    let first = h.ok("lsp", check(None, Some(5))).await;
    let header = "python: `pyright --outputjson` reported 13 diagnostic(s) in 3 file(s): 12 errors, 1 warning\n  a.py 3 (offset 0)\n  b.py 5 (offset 3)\n  c.py 5 (offset 8)\nshowing 1–5 of 13; 5 a page; pass offset=5 for more, or a larger limit (up to 1000):\na.py (3)\n  2:19: error [reportUndefinedVariable] \"sid\" is not defined\n    | return side * sid\n";
    assert!(first.text.starts_with(header), "{}", first.text);
    assert!(first.text.contains("\nb.py (5)\n  3:10: error [reportAssignmentType] "), "{}", first.text);
    let data = first.data.clone().unwrap();
    assert_eq!((data["total"].as_u64(), data["diagnostics"].as_array().map(Vec::len)), (Some(13), Some(5)));
    let per_file: u64 = data["files"].as_array().unwrap().iter().map(|f| f["count"].as_u64().unwrap()).sum();
    let per_severity: u64 =
        data["by_severity"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!((per_file, per_severity), (13, 13), "the counts add up to the total: {data}");

    // The next page starts where the first ended, in the same order.
    let all = h.ok("lsp", check(None, Some(100))).await;
    assert!(!all.text.contains("showing"), "one page holds them all: {}", all.text);
    let every = all.data.unwrap()["diagnostics"].as_array().unwrap().clone();
    assert_eq!(every.len(), 13);
    let second = h.ok("lsp", check(Some(5), Some(5))).await;
    assert!(
        second.text.contains("\nshowing 6–10 of 13; 5 a page; pass offset=10 for more"),
        "{}",
        second.text
    );
    assert_eq!(second.data.unwrap()["diagnostics"].as_array().unwrap()[..], every[5..10]);
    let last = lsp_ok(&h, check(Some(10), Some(5))).await;
    assert!(last.contains("\nshowing 11–13 of 13; 5 a page:\nc.py (5)\n"), "{last}");
    assert!(last.contains("  7:1: warning [reportUnusedExpression] "), "{last}");
    // Default: 50 a page, so all 13 at once.
    let whole = lsp_ok(&h, check(None, None)).await;
    assert_eq!(whole.matches("\n    | ").count(), 13, "{whole}");

    // Bad pages say what to give instead; single-file diagnostics take none.
    for (args, needle) in [
        (check(None, Some(0)), "argument `limit`: 0 is out of range; give 1 to 1000 (default 50)"),
        (check(None, Some(1001)), "argument `limit`: 1001 is out of range; give 1 to 1000 (default 50)"),
        (check(Some(13), None), "lsp diagnostics: `offset` 13 is past the 13 diagnostics; use 0 to 12"),
        (
            json!({"action": "diagnostics", "file": "a.py", "offset": 5}),
            "lsp diagnostics: argument `offset` applies to references, symbols and diagnostics of `file: \"*\"` only",
        ),
        (
            json!({"action": "hover", "file": "a.py", "line": 1, "symbol": "area", "limit": 5}),
            "lsp hover: argument `limit` applies to references, symbols and diagnostics of `file: \"*\"` only",
        ),
    ] {
        let r = lsp(&h, args.clone()).await;
        assert!(r.is_error && r.text.contains(needle), "{args}: {}", r.text);
    }
}
