//! The `lsp` tool, `lsp_rename` and diagnostics on write, against the real
//! servers: pyright, clangd and typescript-language-server. A missing
//! server fails its test with the install command; none is skipped.
//! Servers killed under tether are in `restarts` (real) and `fake_server`.

use crate::common;

use std::path::Path;

use crate::common::{Harness, copy_dir};
use serde_json::{Value, json};
use tether::Surface;

pub(super) fn require(binary: &str, install: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(binary).is_file()))
        .unwrap_or(false);
    assert!(found, "`{binary}` is not on PATH; install it with `{install}` (the README's test command does)");
}

pub(super) fn pyright() {
    require("pyright-langserver", "npm install -g pyright");
}

pub(super) fn clangd() {
    require("clangd", "apt-get install clangd");
}

pub(super) fn tsls() {
    require("typescript-language-server", "npm install -g typescript-language-server typescript@5");
}

/// A runtime over a copy of `tests/fixtures/lsp/<name>`.
pub(super) fn fixture(name: &str) -> Harness {
    let h = Harness::new(&[]);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp").join(name);
    copy_dir(&src, &h.root());
    h
}

pub(super) async fn lsp(h: &Harness, args: Value) -> tether::ToolResult {
    h.call("lsp", args).await
}

/// One `lsp` call that must succeed; asked again while the server, busy
/// beside the suite's others, said nothing within the request's bound.
pub(super) async fn lsp_ok(h: &Harness, args: Value) -> String {
    common::ok_once_answered(h, "lsp", args).await.text
}

#[tokio::test]
async fn pyright_answers_every_action() {
    pyright();
    let h = fixture("python");
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "app.py", "line": 4, "symbol": "total_area"}))
            .await;
    assert!(def.contains("shapes.py:16:5: def total_area(shapes: list[Shape]) -> float:"), "{def}");

    let tdef =
        lsp_ok(&h, json!({"action": "type_definition", "file": "app.py", "line": 3, "symbol": "unit"})).await;
    assert!(tdef.contains("shapes.py:8:7: class Square(Shape):"), "{tdef}");

    let refs =
        lsp_ok(&h, json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square"})).await;
    assert!(refs.starts_with("4 references to `Square` in 2 files"), "{refs}");
    assert!(refs.contains("app.py (3)\n") && refs.contains("shapes.py (1)\n"), "grouped with counts: {refs}");

    let hover =
        lsp_ok(&h, json!({"action": "hover", "file": "app.py", "line": 4, "symbol": "total_area"})).await;
    assert!(hover.starts_with("(function) def total_area(shapes: list[Shape]) -> float"), "{hover}");
    assert!(hover.contains("Sum of the areas"), "signature, then doc: {hover}");

    let syms = lsp_ok(&h, json!({"action": "symbols", "file": "shapes.py"})).await;
    assert!(syms.contains("Square (class) 8:7") && syms.contains("  area (method) 12:9"), "{syms}");

    let ws = lsp_ok(&h, json!({"action": "symbols", "query": "total_area"})).await;
    assert!(ws.contains("total_area (function, python) shapes.py:16:5"), "{ws}");

    let actions =
        lsp(&h, json!({"action": "code_actions", "file": "app.py", "line": 5, "symbol": "area"})).await;
    assert_eq!(actions.text, "no code actions for `area` at app.py:5: pyright offers none here");

    let diags = lsp_ok(&h, json!({"action": "diagnostics", "file": "app.py"})).await;
    assert_eq!(diags, "no diagnostics for `app.py` (fresh)");

    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(
        status.contains("python (2 files): usable") && status.contains("running pyright@. [ready]"),
        "{status}"
    );
    let absent = status.lines().find(|l| l.starts_with("servers are configured for, with no file here: "));
    assert!(absent.is_some_and(|l| l.contains(" dart,") && !l.contains("python")), "{status}");

    let reload = lsp_ok(&h, json!({"action": "reload", "file": "app.py"})).await;
    assert_eq!(reload, "restarted pyright (.)");
    let tree = h.rt.tree().await.json();
    let server = &tree["children"][2]["children"][0];
    assert_eq!(server["restarts"], 1, "{tree}");
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "app.py", "line": 5, "symbol": "area"})).await;
    assert!(def.contains("shapes.py:12:9"), "the restarted server answers: {def}");
}

#[tokio::test]
async fn references_page_past_the_cap() {
    pyright();
    let mut app = String::from("from shapes import Square\n");
    for i in 0..70 {
        app.push_str(&format!("s{i} = Square({i}.0)\n"));
    }
    let h = fixture("python");
    h.write("app.py", &app);
    let first =
        lsp_ok(&h, json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square"})).await;
    assert!(
        first.starts_with(
            "72 references to `Square` in 2 files (showing 1–50; 50 a page; pass offset=50 for more, or a larger limit (up to 1000))"
        ),
        "{first}"
    );
    let second = lsp_ok(
        &h,
        json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square", "offset": 50}),
    )
    .await;
    assert!(second.contains("(showing 51–72; 50 a page)"), "{second}");
    // One call for all of them, in the same grouped form.
    let all = h
        .ok(
            "lsp",
            json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square", "limit": 100}),
        )
        .await;
    assert!(all.text.starts_with("72 references to `Square` in 2 files:\napp.py (71)\n"), "{}", all.text);
    assert_eq!(all.data.unwrap()["references"].as_array().unwrap().len(), 72);
    let ten = lsp_ok(
        &h,
        json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square", "limit": 10, "offset": 5}),
    )
    .await;
    assert!(
        ten.starts_with(
            "72 references to `Square` in 2 files (showing 6–15; 10 a page; pass offset=15 for more"
        ),
        "{ten}"
    );
    for bad in [0, 1001] {
        let e = h
            .err("lsp", json!({"action": "references", "file": "shapes.py", "line": 8, "symbol": "Square", "limit": bad}))
            .await;
        assert!(
            e.contains(&format!("argument `limit`: {bad} is out of range; give 1 to 1000 (default 50)")),
            "{e}"
        );
    }
}

#[tokio::test]
async fn clangd_answers_navigation_and_diagnostics() {
    clangd();
    let h = fixture("c");
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "main.c", "line": 5, "symbol": "manhattan"})).await;
    assert!(def.contains("geometry.h:10:5: int manhattan(struct point p);"), "{def}");
    let tdef =
        lsp_ok(&h, json!({"action": "type_definition", "file": "main.c", "line": 4, "symbol": "origin"}))
            .await;
    assert!(tdef.contains("geometry.h:4:8: struct point {"), "{tdef}");
    let hover =
        lsp_ok(&h, json!({"action": "hover", "file": "main.c", "line": 5, "symbol": "manhattan"})).await;
    assert!(
        hover.contains("int manhattan(struct point p)") && hover.contains("Distance from the origin"),
        "{hover}"
    );
    let refs =
        lsp_ok(&h, json!({"action": "references", "file": "geometry.h", "line": 10, "symbol": "manhattan"}))
            .await;
    assert!(refs.contains("main.c (1)") && refs.contains("geometry.h (1)"), "{refs}");
    let syms = lsp_ok(&h, json!({"action": "symbols", "file": "geometry.h"})).await;
    assert!(syms.contains("point (class) 4:8") && syms.contains("manhattan (function) 10:5"), "{syms}");
    let ws = lsp_ok(&h, json!({"action": "symbols", "query": "manhattan"})).await;
    assert!(ws.contains("manhattan (function, c)") || ws.contains("manhattan (function, cpp)"), "{ws}");
    // A missing `;`: clangd's fix-it is offered at the line it reports.
    h.write("semi.c", "int main(void) {\n    int x = 1\n    return x;\n}\n");
    let actions =
        lsp(&h, json!({"action": "code_actions", "file": "semi.c", "line": 3, "symbol": "return"})).await;
    assert_eq!(
        common::answer_only(&actions.text),
        "1 code action(s) at semi.c:3 (listed, not applied):\n- insert ';' (quickfix)"
    );
    let action = &actions.data.unwrap()["actions"][0];
    assert_eq!((action["title"].as_str(), action["kind"].as_str()), (Some("insert ';'"), Some("quickfix")));
    h.write("broken.c", "int f(void) {\n    return missing_name;\n}\n");
    let diags = lsp_ok(&h, json!({"action": "diagnostics", "file": "broken.c"})).await;
    assert!(diags.contains("broken.c:2:12: error") && diags.contains("missing_name"), "{diags}");
    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(status.contains("running clangd@. [ready]"), "{status}");
    assert_eq!(lsp_ok(&h, json!({"action": "reload"})).await, "restarted clangd (.)");
}

#[tokio::test]
async fn rust_analyzer_answers_once_its_project_is_loaded() {
    let works = std::process::Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        works,
        "rust-analyzer does not run; install it with `rustup component add rust-analyzer` (the README's test command does)"
    );
    let h = Harness::new(&[]);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/rust");
    copy_dir(&src, &h.root());
    // The first answer comes after indexing, never an empty list that means "not loaded yet".
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "src/main.rs", "line": 5, "symbol": "area"})).await;
    assert!(def.contains("src/shapes.rs:5:8: pub fn area(s: &Square) -> u32 {"), "{def}");
    let refs =
        lsp_ok(&h, json!({"action": "references", "file": "src/shapes.rs", "line": 1, "symbol": "Square"}))
            .await;
    assert!(refs.starts_with("3 references to `Square` in 2 files"), "{refs}");
}

#[tokio::test]
async fn the_project_checker_runs_for_star() {
    require("pyright", "npm install -g pyright");
    require("tsc", "npm install -g typescript@5");
    let h = fixture("python");
    h.write("bad.py", "from shapes import Square\n\nSquare('one').area(2)\n");
    let text = lsp_ok(&h, json!({"action": "diagnostics", "file": "*", "language": "python"})).await;
    assert!(text.contains("python: `pyright --outputjson` reported"), "{text}");
    assert!(text.contains("\nbad.py (") && text.contains("\n  3:"), "{text}");
    let ts = fixture("ts");
    let text = lsp_ok(&ts, json!({"action": "diagnostics", "file": "*"})).await;
    assert!(text.contains("\napp.ts (") && text.contains("\n  5:7: error [TS2322]"), "{text}");
}

#[tokio::test]
async fn typescript_language_server_answers_definition_references_implementation_diagnostics() {
    tsls();
    let h = fixture("ts");
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "app.ts", "line": 4, "symbol": "total"})).await;
    assert!(def.contains("shapes.ts:12:17: export function total(shapes: Shape[]): number {"), "{def}");
    let refs =
        lsp_ok(&h, json!({"action": "references", "file": "shapes.ts", "line": 5, "symbol": "Square"})).await;
    assert!(refs.contains("app.ts (2)") && refs.contains("shapes.ts (1)"), "{refs}");
    let imp =
        lsp_ok(&h, json!({"action": "implementation", "file": "shapes.ts", "line": 2, "symbol": "area"}))
            .await;
    assert!(imp.contains("shapes.ts:7:3: area(): number {"), "{imp}");
    let diags = lsp_ok(&h, json!({"action": "diagnostics", "file": "app.ts"})).await;
    assert!(
        diags.contains("app.ts:5:7: error [2322] Type 'string' is not assignable to type 'number'."),
        "{diags}"
    );
}

#[tokio::test]
async fn rename_across_two_files_writes_all_or_stages_for_resolve() {
    pyright();
    let h = fixture("python");
    let r = h.ok("lsp_rename", json!({"file": "shapes.py", "line": 16, "symbol": "total_area", "new_name": "sum_areas", "stage": true})).await;
    assert!(r.text.contains("edit_id \"edit_1\""), "{}", r.text);
    assert!(h.read("app.py").contains("total_area"), "staging writes nothing");
    h.ok("resolve", json!({"edit_id": "edit_1", "action": "discard"})).await;

    let r = h
        .ok("lsp_rename", json!({"file": "shapes.py", "line": 8, "symbol": "Square", "new_name": "Tile"}))
        .await;
    assert!(r.text.starts_with("renamed `Square` → `Tile`: 4 edit(s) in 2 file(s)"), "{}", r.text);
    assert_eq!(
        h.read("app.py"),
        "from shapes import Tile, total_area\n\nunit = Tile(1.0)\nprint(total_area([unit, Tile(2.0)]))\nprint(unit.area())\n"
    );
    assert!(h.read("shapes.py").contains("class Tile(Shape):"));
    assert!(r.text.contains("diagnostics (fresh)"), "written files are synced and checked: {}", r.text);
    // The server saw the rename: navigation works on the new name.
    let def =
        lsp_ok(&h, json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "Tile"})).await;
    assert!(def.contains("shapes.py:8:7: class Tile(Shape):"), "{def}");
}

#[tokio::test]
async fn diagnostics_on_write_report_new_problems_once_and_resolutions() {
    pyright();
    let h = fixture("python");
    let broken = "from shapes import Square\n\nprint(undefined_thing)\n";
    h.ok("read", json!({"path": "app.py"})).await;
    let r = h.ok("write", json!({"path": "app.py", "content": broken})).await;
    assert!(r.text.contains("diagnostics (fresh) for `app.py`: 1 new, 0 resolved"), "{}", r.text);
    assert!(
        r.text.contains("+ app.py:3:7: error [reportUndefinedVariable] \"undefined_thing\" is not defined"),
        "{}",
        r.text
    );

    let moved = "from shapes import Square\n\n\n\n\n\nprint(undefined_thing)\n";
    let r = h.ok("write", json!({"path": "app.py", "content": moved})).await;
    assert!(
        r.text.contains("diagnostics (fresh) for `app.py`: nothing new (1 known in the file)"),
        "moved four lines down is not new: {}",
        r.text
    );

    let r = h.ok("edit", json!({"path": "app.py", "old_string": "print(undefined_thing)", "new_string": "print(Square(1.0).area())"})).await;
    assert!(r.text.contains("0 new, 1 resolved"), "{}", r.text);
    assert!(
        r.text.contains("− app.py:7:7: error [reportUndefinedVariable] \"undefined_thing\" is not defined"),
        "{}",
        r.text
    );

    // A host writing with its own tools asks the runtime directly.
    let before = h.rt.before_write(vec![h.path("app.py")]).await;
    std::fs::write(h.path("app.py"), "x: int = 'text'\n").unwrap();
    let text = h.rt.after_write(vec![h.path("app.py")], before).await.expect("a report");
    assert!(text.contains("1 new") && text.contains("reportAssignmentType"), "{text}");
}

#[tokio::test]
async fn a_write_says_what_it_broke_in_the_other_files_the_server_checked_and_that_no_other_was() {
    pyright();
    let models = "class Response:\n    @classmethod\n    def from_text(cls, text: str) -> \"Response\":\n        return cls()\n";
    let client = "from models import Response\n\nr = Response.from_text(\"x\")\n";
    let files =
        [("pyproject.toml", "[project]\nname = \"m\"\n"), ("models.py", models), ("client.py", client)];
    // No other file open in pyright: nothing else was checked, and the
    // answer says so rather than reading as a clean project.
    let h = Harness::new(&files);
    h.ok("read", json!({"path": "models.py"})).await;
    let drop = json!({"path": "models.py", "old_string": "    @classmethod\n", "new_string": ""});
    let r = h.ok("edit", drop.clone()).await;
    assert!(r.text.contains("diagnostics (fresh) for `models.py`: 2 new"), "{}", r.text);
    assert!(
        r.text.contains("other files: not checked (pyright has none open; `lsp references` finds the uses)"),
        "{}",
        r.text
    );
    // The caller open in pyright: the call the write broke is the write's.
    let h = Harness::new(&files);
    let listed = lsp_ok(&h, json!({"action": "diagnostics", "file": "client.py"})).await;
    assert!(listed.contains("no diagnostics"), "{listed}");
    h.ok("read", json!({"path": "models.py"})).await;
    let r = h.ok("edit", drop).await;
    assert!(
        r.text.contains(
            "other files: pyright checked 1 again (`client.py`): 1 new, 0 resolved; no other file was (`lsp references` finds the uses)"
        ),
        "{}",
        r.text
    );
    assert!(r.text.contains("+ client.py:3:5: error [reportCallIssue]"), "{}", r.text);
    let back = json!({"path": "models.py", "old_string": "    def from_text", "new_string": "    @classmethod\n    def from_text"});
    let r = h.ok("edit", back).await;
    assert!(r.text.contains("pyright checked 1 again (`client.py`): 0 new, 1 resolved"), "{}", r.text);
    assert!(r.text.contains("− client.py:3:5: error [reportCallIssue]"), "{}", r.text);
}

#[tokio::test]
async fn a_project_checker_that_did_not_check_is_an_error_never_zero_diagnostics() {
    let entry = |checker: &str| {
        format!(
            "[[server]]\nid = \"pyright\"\ncommand = \"pyright-langserver\"\nargs = [\"--stdio\"]\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\nchecker = {checker}\n"
        )
    };
    let cases = [
        (
            r#"{ command = "sh", args = ["-c", "echo 'checker: config broken' >&2; exit 3"], format = "pyright" }"#,
            vec![
                "`sh -c",
                "ended with exit status: 3",
                "not how it ends after checking",
                "stderr: checker: config broken",
            ],
        ),
        (
            r#"{ command = "sh", args = ["-c", "echo 'Traceback (most recent call last):'"], format = "pyright" }"#,
            vec![
                "printed output tether cannot read (not JSON",
                "it began `Traceback (most recent call last):`",
            ],
        ),
        (
            r#"{ command = "sh", args = ["-c", "echo 'segfault' >&2; exit 1"], format = "pyright" }"#,
            vec!["printed output tether cannot read (not JSON", "stderr: segfault"],
        ),
        (
            r#"{ command = "no-such-checker-here", format = "pyright" }"#,
            vec!["`no-such-checker-here` did not run"],
        ),
    ];
    for (checker, expected) in cases {
        let h =
            Harness::new(&[("pyproject.toml", ""), ("a.py", "x = 1\n"), ("tether.toml", &entry(checker))]);
        let r = lsp(&h, json!({"action": "diagnostics", "file": "*", "language": "python"})).await;
        assert!(r.is_error, "{checker}: {}", r.text);
        assert!(r.text.starts_with("python: the project check failed: "), "{}", r.text);
        for part in expected {
            assert!(r.text.contains(part), "{checker}: `{part}` missing from: {}", r.text);
        }
        assert!(!r.text.contains("0 diagnostic"), "{}", r.text);
    }
}

#[tokio::test]
async fn a_dart_checkout_without_dart_says_why_and_keeps_the_tool() {
    let h = fixture("dart");
    assert!(h.rt.tools(Surface::ReadOnly).iter().any(|t| t.name == "lsp"), "the tool stays visible");
    let text =
        h.err("lsp", json!({"action": "hover", "file": "lib/main.dart", "line": 2, "symbol": "greet"})).await;
    assert!(
        text.contains("server unavailable") && text.contains("dart: `dart` not found on PATH; tried:"),
        "{text}"
    );
    let status = lsp_ok(&h, json!({"action": "status"})).await;
    assert!(
        status.contains("dart (1 file): not usable") && status.contains("; root at ."),
        "the root half is fine, the binary half is not: {status}"
    );
    // Writing a Dart file says why diagnostics are unavailable instead of claiming it is clean.
    h.ok("read", json!({"path": "lib/main.dart"})).await;
    let r = h.ok("write", json!({"path": "lib/main.dart", "content": "void main() {}\n"})).await;
    assert!(r.text.contains("diagnostics unavailable for `lib/main.dart`"), "{}", r.text);
}

#[tokio::test]
async fn a_file_outside_every_root_marker_says_why() {
    clangd();
    let h = Harness::new(&[("loose.c", "int main(void) { return 0; }\n")]);
    let text = h.err("lsp", json!({"action": "hover", "file": "loose.c", "line": 1, "symbol": "main"})).await;
    assert!(
        text.contains("clangd: no compile_commands.json")
            && text.contains("in the directory of loose.c or above it"),
        "{text}"
    );
}

#[tokio::test]
async fn bad_arguments_are_clear_errors() {
    pyright();
    let h = fixture("python");
    let cases = [
        (json!({"action": "definition", "file": "app.py", "line": 0, "symbol": "unit"}), "1-based"),
        (
            json!({"action": "definition", "file": "app.py", "line": 99, "symbol": "unit"}),
            "past the end of `app.py`, which has 5 lines",
        ),
        (json!({"action": "definition", "file": "app.py", "line": 3}), "`symbol` is required"),
        (
            json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "nope"}),
            "that line is: unit = Square(1.0)",
        ),
        (json!({"action": "definition", "file": ".", "line": 3, "symbol": "unit"}), "is a directory"),
        (
            json!({"action": "definition", "file": "missing.py", "line": 3, "symbol": "unit"}),
            "does not exist",
        ),
        (
            json!({"action": "definition", "file": "../x.py", "line": 3, "symbol": "unit"}),
            "outside the working directory",
        ),
        (json!({"action": "jump", "file": "app.py"}), "`action`"),
        (json!({"action": "symbols"}), "give `query` (search the workspace), `file`"),
        (
            json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "unit", "occurrence": 0}),
            "occurrences are 1-based",
        ),
        (
            json!({"action": "hover", "file": "app.py", "line": 3, "symbol": "unit", "direction": "incoming"}),
            "argument `direction` applies to call_hierarchy and type_hierarchy only",
        ),
        (
            json!({"action": "call_hierarchy", "file": "app.py", "line": 3, "symbol": "unit", "direction": "subtypes"}),
            "belongs to the other hierarchy; give incoming or outgoing",
        ),
        (json!({"action": "status", "occurrence": 2}), "argument `occurrence` applies to"),
    ];
    for (args, needle) in cases {
        let text = h.err("lsp", args.clone()).await;
        assert!(text.contains(needle), "{args}: {text}");
    }
    // A new name must be one identifier: a server may write `a-b` as given.
    for bad in ["unit-size", "a.b", "2nd", ""] {
        let args = json!({"file": "app.py", "line": 3, "symbol": "unit", "new_name": bad});
        let text = h.err("lsp_rename", args).await;
        assert!(text.contains("argument `new_name`") && text.contains("not an identifier"), "{bad}: {text}");
    }
    let r =
        lsp_ok(&h, json!({"action": "definition", "file": "app.py", "line": 4, "symbol": "Square"})).await;
    assert!(r.contains("shapes.py:8:7"), "{r}");
}

#[test]
fn batch_drives_the_language_server_too() {
    pyright();
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp/python"), dir.path());
    let input = [
        json!({"tool": "lsp", "args": {"action": "definition", "file": "app.py", "line": 5, "symbol": "area"}}),
        json!({"tool": "lsp", "args": {"action": "hover", "file": "app.py", "line": 3, "symbol": "Square"}}),
        json!({"op": "tree"}),
    ];
    let (answers, _) = common::batch(dir.path(), &[], &input);
    assert!(answers[0]["text"].as_str().unwrap().contains("shapes.py:12:9"), "{}", answers[0]);
    assert_eq!(answers[0]["data"]["locations"][0]["path"], "shapes.py");
    assert!(answers[1]["text"].as_str().unwrap().contains("class Square"), "{}", answers[1]);
    let text = answers[2]["text"].as_str().unwrap();
    assert!(text.contains("lsp-supervisor") && text.contains("lsp-server pyright@. [ready]"), "{text}");
}

#[tokio::test]
async fn workspace_symbols_of_a_typescript_project_are_found_beside_a_stray_javascript_file() {
    tsls();
    // A `.js` file outside the tsconfig is a project of its own; asked
    // through it, tsserver found nothing and the answer read "no symbols".
    let h = Harness::new(&[
        ("tsconfig.json", r#"{"compilerOptions": {"strict": true}, "include": ["src/**/*.ts"]}"#),
        ("src/ops.ts", "export function mapValues(x: number): number {\n  return x * 2;\n}\n"),
        ("src/use.ts", "import { mapValues } from './ops';\nexport const y = mapValues(1);\n"),
        ("a_build.js", "module.exports = { ok: true };\n"),
    ]);
    // A JavaScript query first, so the stray file is open and handled last.
    let _ = lsp(&h, json!({"action": "symbols", "query": "ok", "language": "javascript"})).await;
    let found = lsp_ok(&h, json!({"action": "symbols", "query": "mapValues"})).await;
    assert!(found.contains("mapValues (function, typescript) src/ops.ts:1:"), "{found}");
}

#[tokio::test]
async fn workspace_symbols_that_no_server_could_answer_are_an_error_not_none() {
    // Every Python candidate of the table pointed at a binary that is not there.
    let absent_python_servers: String = ["pyright", "basedpyright", "pylsp"]
        .iter()
        .map(|id| {
            format!("[[server]]\nid = \"{id}\"\ncommand = \"no-such-{id}-binary\"\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\n\n")
        })
        .collect();
    let h = Harness::new(&[
        ("pyproject.toml", ""),
        ("app.py", "def present():\n    return 1\n"),
        ("tether.toml", &absent_python_servers),
    ]);
    let r = lsp(&h, json!({"action": "symbols", "query": "present", "language": "python"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.starts_with("lsp symbols: no server was asked for `present`: python: not asked (1 file(s)): pyright: `no-such-pyright-binary` not found on PATH;"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn workspace_symbols_where_no_server_language_is_present_are_an_error_not_none() {
    // Ruby has a grammar but no server: "no symbols match" would be about nothing.
    let h = Harness::new(&[("app.rb", "def total_area\nend\n"), ("notes.md", "# total_area\n")]);
    let text = h.err("lsp", json!({"action": "symbols", "query": "total_area"})).await;
    assert!(text.contains("no server was asked for `total_area`"), "{text}");
}

#[tokio::test]
async fn workspace_symbols_rank_the_exact_name_first() {
    pyright();
    // pyright's fuzzy matching lists these in its own order; the exact
    // name the model asked for must lead.
    let h = Harness::new(&[
        ("pyrightconfig.json", "{}\n"),
        (
            "a_deps.py",
            "dependencies = []\nsub_dependencies = []\n\n\ndef get_depends_list():\n    return dependencies\n\n\nclass DependsOn:\n    pass\n",
        ),
        ("z_params.py", "def Depends(dependency=None):\n    return dependency\n"),
    ]);
    let text = lsp_ok(&h, json!({"action": "symbols", "query": "Depends"})).await;
    let first = text.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with("Depends (function, python) z_params.py:1:5"), "{text}");
    let r = lsp(&h, json!({"action": "symbols", "query": "Depends"})).await;
    let symbols = r.data.unwrap()["symbols"].clone();
    let matches: Vec<&str> =
        symbols.as_array().unwrap().iter().map(|s| s["match"].as_str().unwrap()).collect();
    let mut sorted = matches.clone();
    sorted.sort_by_key(|m| {
        ["exact", "exact-ignoring-case", "prefix", "contains", "fuzzy"].iter().position(|k| k == m)
    });
    assert_eq!(matches, sorted, "exact, then prefix, then the rest: {text}");
}

#[tokio::test]
async fn clangd_without_a_compilation_database_says_its_references_may_be_incomplete() {
    clangd();
    let h = Harness::new(&[
        ("compile_flags.txt", "-std=c11\n"),
        ("core.h", "int target(int x);\n"),
        ("core.c", "#include \"core.h\"\nint target(int x) { return x + 1; }\n"),
        ("user.c", "#include \"core.h\"\nint use(void) { return target(1); }\n"),
    ]);
    let refs =
        lsp_ok(&h, json!({"action": "references", "file": "core.h", "line": 1, "symbol": "target"})).await;
    assert!(
        refs.contains("clangd indexes the files `compile_commands.json` names, and its root has none, so this answer covers only the files it has opened so far and may be incomplete"),
        "{refs}"
    );
    // With one, the note goes.
    let root = h.root();
    let entries: Vec<Value> = ["core.c", "user.c"]
        .iter()
        .map(|f| json!({"directory": root, "file": root.join(f), "command": format!("cc -c {f}")}))
        .collect();
    h.write("compile_commands.json", &serde_json::to_string(&entries).unwrap());
    let refs =
        lsp_ok(&h, json!({"action": "references", "file": "core.h", "line": 1, "symbol": "target"})).await;
    assert!(!refs.contains("may be incomplete"), "{refs}");
}
