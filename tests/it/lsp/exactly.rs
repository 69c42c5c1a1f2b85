//! Answers about exactly what was asked, on two real projects (rich 15.0.0
//! from PyPI with pyright, rxjs 7.8.2 from npm with
//! typescript-language-server): a `symbol` that is only part of a longer
//! name on its line, the diagnostics a write introduced against the
//! content it replaced (whoever wrote that content), renames that would
//! write broken code, project checks that write nothing and run once per
//! root, and symbol lists ranked and paged for a model.

use serde_json::json;

use super::tool::{lsp, lsp_ok, pyright, require, tsls};
use crate::common::{self, Harness, copy_dir, corpus};

/// rich's package, as a project pyright serves.
fn rich() -> Harness {
    let h = Harness::new(&[
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("pyproject.toml", "[project]\nname = \"rich\"\n"),
    ]);
    copy_dir(&corpus("rich", "out/rich-15.0.0/rich"), &h.path("rich"));
    h
}

/// rxjs's sources and its tsconfig, as a project
/// typescript-language-server serves.
fn rxjs() -> Harness {
    let h = Harness::new(&[(".git/HEAD", "ref: refs/heads/main\n")]);
    let package = corpus("rxjs", "out/package");
    copy_dir(&package.join("src"), &h.path("src"));
    for file in ["tsconfig.json", "package.json"] {
        std::fs::copy(package.join(file), h.path(file)).unwrap();
    }
    h
}

/// The 1-based line of `rel` that starts (trimmed) with `start`.
fn line_of(h: &Harness, rel: &str, start: &str) -> u32 {
    let text = h.read(rel);
    let k = text.lines().position(|l| l.trim_start().starts_with(start));
    k.unwrap_or_else(|| panic!("no line of {rel} starts with {start:?}")) as u32 + 1
}

/// The `+` lines of a write's diagnostics report.
fn added(text: &str) -> Vec<&str> {
    report(text).filter(|l| l.starts_with("+ ")).collect()
}

/// The `−` lines of a write's diagnostics report.
fn resolved(text: &str) -> Vec<&str> {
    report(text).filter(|l| l.starts_with("− ")).collect()
}

/// The lines of a write's diagnostics report: from its head on, past the
/// diff (whose added lines also start with `+`).
fn report(text: &str) -> impl Iterator<Item = &str> {
    text.lines().skip_while(|l| !l.starts_with("diagnostics"))
}

#[tokio::test]
async fn a_symbol_inside_a_longer_name_is_answered_as_that_name_and_never_renamed() {
    tsls();
    let h = rxjs();
    let file = "src/internal/operators/mergeMap.ts";
    assert!(h.read(file).lines().next().unwrap().contains("ObservableInput"));
    let at = |action: &str| json!({"action": action, "file": file, "line": 1, "symbol": "Observable"});
    let held = "`ObservableInput` (the identifier on line 1 holding `Observable`)";

    let def = lsp_ok(&h, at("definition")).await;
    assert!(def.starts_with("note: line 1 has no identifier `Observable`"), "{def}");
    assert!(def.contains(held), "{def}");
    assert!(def.contains("definition of `ObservableInput`"), "{def}");
    assert!(!def.contains("of `Observable`"), "never labelled with the text asked: {def}");
    assert!(def.contains("src/internal/types.ts:"), "{def}");

    let refs = lsp_ok(&h, at("references")).await;
    assert!(refs.contains(held), "{refs}");
    assert!(refs.contains(" references to `ObservableInput` in "), "{refs}");
    assert!(!refs.contains("to `Observable`"), "{refs}");

    let before = h.read(file);
    let refused = h
        .err("lsp_rename", json!({"file": file, "line": 1, "symbol": "Observable", "new_name": "Stream"}))
        .await;
    assert!(refused.contains("`Observable` is not a whole identifier on line 1"), "{refused}");
    assert!(refused.contains("part of `ObservableInput`"), "{refused}");
    assert!(
        refused.contains("`import`, `ObservableInput`, `OperatorFunction`, `ObservedValueOf`, `from`"),
        "{refused}"
    );
    assert_eq!(h.read(file), before, "nothing written");
    let staged = h
        .err(
            "lsp_rename",
            json!({"file": file, "line": 1, "symbol": "Observable", "new_name": "Stream", "stage": true}),
        )
        .await;
    assert!(staged.contains("not a whole identifier"), "nothing staged either: {staged}");
}

#[tokio::test]
async fn a_prefix_of_a_python_name_is_answered_as_the_name() {
    pyright();
    let h = rich();
    let line = line_of(&h, "rich/table.py", "class Table(");
    let hover =
        lsp_ok(&h, json!({"action": "hover", "file": "rich/table.py", "line": line, "symbol": "Tabl"})).await;
    assert!(
        hover.starts_with(&format!(
            "note: line {line} has no identifier `Tabl`; the answer is about `Table` (the identifier on line {line} holding `Tabl`)"
        )),
        "{hover}"
    );
    assert!(hover.contains("class Table"), "{hover}");
}

#[tokio::test]
async fn a_writes_new_diagnostics_are_against_the_content_it_replaced() {
    pyright();
    let h = rich();
    // A file the server has not opened: what it already had is not new.
    let filesize = h.read("rich/filesize.py");
    let doc = filesize.lines().find(|l| l.trim_start().starts_with("\"\"\"")).unwrap().trim().to_string();
    let r = h
        .ok(
            "edit",
            json!({"path": "rich/filesize.py", "old_string": doc, "new_string": format!("{doc}  # reworded")}),
        )
        .await;
    assert!(r.text.contains("diagnostics (fresh) for `rich/filesize.py`"), "{}", r.text);
    assert!(added(&r.text).is_empty(), "a docstring edit introduces nothing: {}", r.text);
    assert!(resolved(&r.text).is_empty(), "{}", r.text);

    // An error another program wrote is not the next edit's.
    lsp_ok(&h, json!({"action": "diagnostics", "file": "rich/rule.py"})).await;
    let rule = h.read("rich/rule.py");
    std::fs::write(h.path("rich/rule.py"), format!("{rule}\nbroken: int = \"text\"\n")).unwrap();
    let r = h
        .ok(
            "edit",
            json!({"path": "rich/rule.py", "old_string": "class Rule(", "new_string": "# A horizontal rule.\nclass Rule("}),
        )
        .await;
    assert!(r.text.contains("diagnostics (fresh) for `rich/rule.py`"), "{}", r.text);
    assert!(added(&r.text).is_empty(), "the outside error is not blamed on the edit: {}", r.text);

    // An edit that does introduce one is told so, at its line.
    let r = h
        .ok(
            "edit",
            json!({"path": "rich/rule.py", "old_string": "# A horizontal rule.\n", "new_string": "also_broken: int = \"text\"\n"}),
        )
        .await;
    let new = added(&r.text);
    let line = line_of(&h, "rich/rule.py", "also_broken");
    assert_eq!(new.len(), 1, "{}", r.text);
    assert!(new[0].starts_with(&format!("+ rich/rule.py:{line}:")), "{}", r.text);

    // And one that fixes both says where each was, before the write.
    let before = h.read("rich/rule.py");
    let was = line_of(&h, "rich/rule.py", "broken: int");
    let fixed = before
        .replace("also_broken: int = \"text\"\n", "")
        .replace("broken: int = \"text\"", "broken = \"text\"");
    let r = h.ok("write", json!({"path": "rich/rule.py", "content": fixed})).await;
    let gone = resolved(&r.text);
    assert_eq!(gone.len(), 2, "{}", r.text);
    assert!(gone.iter().any(|l| l.starts_with(&format!("− rich/rule.py:{was}:"))), "{}", r.text);
}

#[tokio::test]
async fn a_rename_after_a_checkout_resolves_only_what_it_fixed() {
    pyright();
    let h = rich();
    // What the checkout takes away: errors the server has seen.
    let segment = h.read("rich/segment.py");
    let broken = format!("{segment}\nbad_one: int = \"a\"\nbad_two: str = 2\n");
    std::fs::write(h.path("rich/segment.py"), &broken).unwrap();
    // Seen by the server (on a busy machine, maybe after a "pending" answer).
    let ask = json!({"action": "diagnostics", "file": "rich/segment.py"});
    common::until_answer(&h, "lsp", ask, |t| t.contains("bad_one") || t.contains("reportAssignmentType"))
        .await;
    // The checkout: the file back as it was, written by another program.
    std::fs::write(h.path("rich/segment.py"), &segment).unwrap();
    let line = line_of(&h, "rich/segment.py", "def split_and_crop_lines(");
    let r = h
        .ok(
            "lsp_rename",
            json!({"file": "rich/segment.py", "line": line, "symbol": "split_and_crop_lines", "new_name": "split_crop_lines"}),
        )
        .await;
    assert!(r.text.starts_with("renamed `split_and_crop_lines` → `split_crop_lines`"), "{}", r.text);
    assert!(resolved(&r.text).is_empty(), "the checkout resolved those, not the rename: {}", r.text);
    assert!(added(&r.text).is_empty(), "{}", r.text);
}

#[tokio::test]
async fn a_rename_onto_a_keyword_or_a_name_in_the_same_scope_writes_nothing() {
    pyright();
    let h = rich();
    let before = h.read("rich/segment.py");
    let line = line_of(&h, "rich/segment.py", "def split_and_crop_lines(");
    let rename = |new_name: &str| json!({"file": "rich/segment.py", "line": line, "symbol": "split_and_crop_lines", "new_name": new_name});
    let keyword = h.err("lsp_rename", rename("class")).await;
    assert!(keyword.contains("`class` is not a name in python"), "{keyword}");
    assert!(keyword.contains("nothing was written"), "{keyword}");
    let literal = h.err("lsp_rename", rename("None")).await;
    assert!(literal.contains("`None` is not a name in python"), "{literal}");
    let taken = h.err("lsp_rename", rename("split_lines")).await;
    let declared = line_of(&h, "rich/segment.py", "def split_lines(");
    assert!(
        taken.contains(&format!("`split_lines` is already declared beside `split_and_crop_lines` in `rich/segment.py` (line {declared}, method)")),
        "{taken}"
    );
    assert_eq!(h.read("rich/segment.py"), before, "nothing written");
    let soft = h.ok("lsp_rename", rename("match")).await;
    assert!(
        soft.text.starts_with("renamed `split_and_crop_lines` → `match`"),
        "a soft keyword is a name: {}",
        soft.text
    );
    assert!(
        lsp(&h, json!({"action": "diagnostics", "file": "rich/segment.py"}))
            .await
            .text
            .contains("rich/segment.py")
    );
}

#[tokio::test]
async fn a_typescript_rename_does_not_count_the_files_old_hints_as_new() {
    tsls();
    let h = rxjs();
    let file = "src/internal/operators/publishReplay.ts";
    let line = line_of(&h, file, "const selector =");
    let r = h
        .ok("lsp_rename", json!({"file": file, "line": line, "symbol": "selector", "new_name": "chosen"}))
        .await;
    assert!(r.text.starts_with("renamed `selector` → `chosen`"), "{}", r.text);
    assert!(added(&r.text).is_empty(), "the deprecation hints were there before: {}", r.text);
    assert!(r.text.contains(&format!("for `{file}`: nothing new")), "{}", r.text);
    let listed = lsp_ok(&h, json!({"action": "diagnostics", "file": file})).await;
    assert!(listed.contains("'multicast' is deprecated"), "the hints are in the file: {listed}");
}

/// Every file under `h`'s root, relative, sorted.
fn files_in(h: &Harness) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(h.root())
        .hidden(false)
        .ignore(false)
        .git_ignore(false)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().strip_prefix(h.root()).unwrap().display().to_string())
        .collect();
    files.sort();
    files
}

fn tsc() {
    require("tsc", "npm install -g typescript@5");
}

#[tokio::test]
async fn a_project_check_writes_nothing_and_runs_tsc_once_for_typescript_and_javascript() {
    tsc();
    let h = rxjs();
    // rxjs's tsconfig sets `incremental`: tsc would leave its build info.
    assert!(h.read("tsconfig.json").contains("\"incremental\": true"));
    assert!(h.path("src/Rx.global.js").is_file(), "JavaScript beside the TypeScript");
    let before = files_in(&h);
    let r = lsp(&h, json!({"action": "diagnostics", "file": "*", "language": "typescript"})).await;
    assert!(!r.is_error, "{}", r.text);
    let runs = r.text.lines().filter(|l| l.contains("`tsc ")).count();
    assert_eq!(runs, 1, "one run for both languages: {}", r.text);
    assert!(r.text.contains("typescript: `tsc --noEmit --pretty false` reported"), "{}", r.text);
    assert_eq!(files_in(&h), before, "a read-level check writes nothing (no tsconfig.tsbuildinfo)");

    // Both languages asked: still one run, each diagnostic once.
    h.write("src/broken.ts", "export const n: number = \"s\";\n");
    let r = lsp(&h, json!({"action": "diagnostics", "file": "*"})).await;
    let runs: Vec<&str> = r.text.lines().filter(|l| l.contains("`tsc ")).collect();
    assert_eq!(runs.len(), 1, "{}", r.text);
    assert!(runs[0].starts_with("typescript, javascript: "), "{}", r.text);
    assert!(runs[0].contains("reported 1 diagnostic(s) in 1 file(s): 1 error"), "{}", r.text);
    assert_eq!(r.data.as_ref().unwrap()["total"], 1, "{}", r.text);
}

#[tokio::test]
async fn a_project_check_runs_in_each_root_its_servers_would_use() {
    tsc();
    pyright();
    let h = Harness::new(&[
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("pyproject.toml", "[project]\nname = \"m\"\n"),
        ("app.py", "x: int = \"a\"\n"),
        (
            "web/tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"incremental\": true}, \"include\": [\"*.ts\"]}\n",
        ),
        ("web/app.ts", "const n: number = \"s\";\nexport {};\n"),
    ]);
    let before = files_in(&h);
    let r = lsp(&h, json!({"action": "diagnostics", "file": "*"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("python: `pyright --outputjson` reported 1 diagnostic(s)"), "{}", r.text);
    assert!(r.text.contains("`tsc --noEmit --pretty false` in `web` reported 1 diagnostic(s)"), "{}", r.text);
    assert!(r.text.contains("web/app.ts (1)\n  1:7: error [TS2322]"), "{}", r.text);
    assert!(r.text.contains("app.py (1)\n  1:10: error [reportAssignmentType]"), "{}", r.text);
    assert_eq!(files_in(&h), before, "nothing written");

    // A TypeScript root with no tsconfig is said, not failed.
    std::fs::remove_file(h.path("web/tsconfig.json")).unwrap();
    h.write("web/package.json", "{}\n");
    let r = lsp(&h, json!({"action": "diagnostics", "file": "*"})).await;
    assert!(
        r.text.contains("not checked in `web`: neither tsconfig.json nor jsconfig.json is there"),
        "{}",
        r.text
    );
    assert!(!r.is_error, "python was checked: {}", r.text);
}

#[tokio::test]
async fn workspace_symbols_rank_names_before_locals_and_both_lists_page() {
    pyright();
    let h = rich();
    let r = h.ok("lsp", json!({"action": "symbols", "query": "Console"})).await;
    let rows: Vec<&str> = r.text.lines().skip(1).take_while(|l| !l.starts_with("note:")).collect();
    assert!(rows[0].starts_with("Console (class, python) rich/console.py:"), "{}", r.text);
    // A local is a variable whose container is a function (`inspect`,
    // `Align.__rich_console__`); after the first, only locals follow.
    let symbols = r.data.as_ref().unwrap()["symbols"].as_array().unwrap().clone();
    let local = |s: &serde_json::Value| {
        let last = s["container"].as_str().and_then(|c| c.rsplit('.').next()).unwrap_or("");
        s["kind"] == "variable" && last.starts_with(|c: char| c.is_lowercase() || c == '_')
    };
    let options = symbols.iter().position(|s| s["name"] == "ConsoleOptions").expect("ConsoleOptions listed");
    let first_local = symbols.iter().position(local).expect("pyright lists locals named console");
    assert!(options < first_local, "{}", r.text);
    assert!(symbols[first_local..].iter().all(local), "after the first local, only locals: {}", r.text);
    assert!(r.text.contains("are parameters or locals of functions"), "{}", r.text);
    let total = r.data.as_ref().unwrap()["total"].as_u64().unwrap() as usize;
    assert!(total > 100, "pyright lists the locals: {total}");
    assert!(r.text.contains("(showing 1–100; 100 a page; pass offset=100 for more"), "{}", r.text);
    let next = h.ok("lsp", json!({"action": "symbols", "query": "Console", "offset": 100})).await;
    assert!(next.text.contains(&format!("(showing 101–{}", total.min(200))), "{}", next.text);
    let past = h.err("lsp", json!({"action": "symbols", "query": "Console", "offset": total})).await;
    assert!(past.contains(&format!("`offset` {total} is past the {total} symbols")), "{past}");

    // The outline of a long file: every entry reachable, a later page's
    // rows named with their containers.
    let outline = h.ok("lsp", json!({"action": "symbols", "file": "rich/table.py"})).await;
    let total = outline.data.as_ref().unwrap()["total"].as_u64().unwrap();
    assert!(total > 200, "{}", outline.text);
    let rest = h.ok("lsp", json!({"action": "symbols", "file": "rich/table.py", "offset": 200})).await;
    let both = format!("{}\n{}", outline.text, rest.text);
    assert!(both.contains("_render (method)") || both.contains("Table._render (method)"), "{both}");
    assert!(rest.text.contains(&format!("(showing 201–{total}; 200 a page)")), "{}", rest.text);
    let empty = h.err("lsp", json!({"action": "symbols", "query": " "})).await;
    assert!(empty.contains("argument `query` is empty"), "{empty}");
}

#[tokio::test]
async fn a_pyright_hover_reads_as_text() {
    pyright();
    let h = rich();
    let line = line_of(&h, "rich/console.py", "def print(");
    let hover =
        lsp_ok(&h, json!({"action": "hover", "file": "rich/console.py", "line": line, "symbol": "print"}))
            .await;
    assert!(hover.contains("\n    no_wrap (Optional[bool], optional): Disable word wrapping."), "{hover}");
    assert!(hover.contains("Defaults to \"\\n\"."), "an escaped backslash is one backslash: {hover}");
    assert!(!hover.contains("&nbsp;") && !hover.contains("\\_") && !hover.contains("  \n"), "{hover}");
}

#[tokio::test]
async fn a_typescript_workspace_symbol_points_at_its_name_not_at_export() {
    tsls();
    let h = rxjs();
    let file = "src/internal/operators/mergeMap.ts";
    let r = h.ok("lsp", json!({"action": "symbols", "query": "mergeMap", "language": "typescript"})).await;
    let row = format!("mergeMap (function, typescript) {file}:");
    let at =
        r.text.lines().find_map(|l| l.strip_prefix(row.as_str())).unwrap_or_else(|| panic!("{}", r.text));
    let (line, column) = at.split_once(':').unwrap();
    let (line, column): (usize, usize) = (line.parse().unwrap(), column.parse().unwrap());
    let text = h.read(file).lines().nth(line - 1).unwrap().to_string();
    assert!(text.starts_with("export function mergeMap"), "{text}");
    assert_eq!(
        &text[column - 1..column - 1 + "mergeMap".len()],
        "mergeMap",
        "at the name, not `export`: {text}"
    );
}
