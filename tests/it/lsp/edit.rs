//! `lsp_edit` against the real servers — typescript-language-server, and
//! ruff beside pyright: a missing import fixed in one call, imports sorted, a function and a constant
//! extracted, a file and a range of lines formatted with the indentation
//! `.editorconfig` gives — each answered with its diff; `preview` writes
//! nothing; without a unique choice the offered actions are listed.

use serde_json::{Value, json};

use crate::common::{self, Harness};

const TSCONFIG: &str = r#"{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["src/**/*.ts"]}"#;
const UTIL: &str = "export function plusOne(n: number): number {\n  return n + 1;\n}\n\nexport function twice(n: number): number {\n  return 2 * n;\n}\n\nexport const thrice = (n: number): number => 3 * n;\n";

fn need_tsls() {
    common::require(
        "typescript-language-server",
        &["--version"],
        "npm install -g typescript-language-server typescript@5",
    );
}

fn project(main: &str) -> Harness {
    Harness::new(&[("tsconfig.json", TSCONFIG), ("src/util.ts", UTIL), ("src/main.ts", main)])
}

async fn edit(h: &Harness, args: Value) -> tether::ToolResult {
    h.call("lsp_edit", args).await
}

#[tokio::test]
async fn a_missing_import_is_added_in_one_call_with_its_diff_and_the_error_it_fixed() {
    need_tsls();
    let h = project("export const two = plusOne(1);\n");
    let r = edit(
        &h,
        json!({"action": "apply", "file": "src/main.ts", "line": 1, "symbol": "plusOne", "title": "Add import from"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    let main = h.read("src/main.ts");
    assert!(
        main.contains("import { plusOne } from \"./util\";")
            || main.contains("import { plusOne } from './util';"),
        "{main}"
    );
    assert!(main.ends_with("export const two = plusOne(1);\n"), "{main}");
    assert!(r.text.starts_with("applied `Add import from"), "{}", r.text);
    assert!(r.text.contains("+import { plusOne }"), "the diff: {}", r.text);
    assert!(r.text.contains("Cannot find name 'plusOne'"), "the error it fixed: {}", r.text);
    assert!(r.text.chars().count() < 600, "{} characters: {}", r.text.chars().count(), r.text);
}

#[tokio::test]
async fn without_a_unique_choice_the_offered_actions_are_listed_and_nothing_is_written() {
    need_tsls();
    let source = "export const two = plusOne(1);\n";
    let h = project(source);
    // No choice: a listing, not an error.
    let r = edit(&h, json!({"action": "apply", "file": "src/main.ts", "line": 1, "symbol": "plusOne"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("name one by `title` or `kind`"), "{}", r.text);
    assert!(r.text.contains("Add import from \"./util\" (quickfix"), "{}", r.text);
    assert!(r.text.contains("fixes: Cannot find name 'plusOne'"), "{}", r.text);
    // An unknown title: refused, with what is there.
    let r = edit(&h, json!({"action": "apply", "file": "src/main.ts", "line": 1, "title": "Make it faster"}))
        .await;
    assert!(
        r.is_error && r.text.contains("no code action at src/main.ts:1 matches title `Make it faster`"),
        "{}",
        r.text
    );
    assert!(r.text.contains("Add import from"), "{}", r.text);
    assert_eq!(h.read("src/main.ts"), source);
    // A symbol not on the line says what is.
    let r = edit(&h, json!({"action": "apply", "file": "src/main.ts", "line": 1, "symbol": "minusOne", "kind": "quickfix"})).await;
    assert!(r.is_error && r.text.contains("minusOne"), "{}", r.text);
    assert!(r.text.contains("plusOne"), "what the line holds: {}", r.text);
}

#[tokio::test]
async fn organize_imports_sorts_them() {
    need_tsls();
    let h = project(
        "import { twice, thrice, plusOne } from './util';\n\nexport const three = plusOne(2);\nexport const four = twice(2);\n",
    );
    let r = edit(
        &h,
        json!({"action": "apply", "file": "src/main.ts", "line": 1, "kind": "source.organizeImports"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    let main = h.read("src/main.ts");
    assert!(main.starts_with("import { plusOne, thrice, twice } from './util';\n"), "sorted: {main}");
    assert!(r.text.contains("-import { twice, thrice, plusOne } from './util';"), "{}", r.text);
}

#[tokio::test]
async fn organize_imports_keeps_the_files_two_space_indentation() {
    need_tsls();
    let h = project(
        "import {\n  twice,\n  thrice,\n  plusOne,\n} from './util';\n\nexport function all(n: number): number {\n  return plusOne(twice(thrice(n)));\n}\n",
    );
    let r = edit(
        &h,
        json!({"action": "apply", "file": "src/main.ts", "line": 1, "kind": "source.organizeImports"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    let main = h.read("src/main.ts");
    assert!(
        main.starts_with("import {\n  plusOne,\n  thrice,\n  twice,\n} from './util';\n"),
        "sorted, at 2 spaces: {main}"
    );
}

#[tokio::test]
async fn a_constant_and_a_function_are_extracted_and_the_made_up_name_is_said() {
    need_tsls();
    let h = project(
        "export function area(w: number, h: number): number {\n  const a = w * h + 1 + 2;\n  return a;\n}\n",
    );
    let constant = json!({"action": "apply", "file": "src/main.ts", "line": 2, "symbol": "w * h", "kind": "refactor.extract.constant"});
    let r = edit(&h, constant).await;
    assert!(!r.is_error, "{}", r.text);
    let main = h.read("src/main.ts");
    assert!(
        main.contains("const newLocal = w * h;") && main.contains("const a = newLocal + 1 + 2;"),
        "{main}"
    );
    assert!(r.text.contains("note: the server named it `newLocal` (src/main.ts:3)"), "{}", r.text);
    // Two scopes to extract a function to: listed, nothing written.
    let function = json!({"action": "apply", "file": "src/main.ts", "line": 3, "symbol": "newLocal + 1", "kind": "refactor.extract.function"});
    let r = edit(&h, function.clone()).await;
    assert!(
        r.is_error
            && r.text.contains("2 code actions at src/main.ts:3 match kind `refactor.extract.function`"),
        "{}",
        r.text
    );
    assert!(r.text.contains("Extract to function in module scope"), "{}", r.text);
    assert_eq!(h.read("src/main.ts"), main);
    let mut module_scope = function;
    module_scope["title"] = json!("module scope");
    let r = edit(&h, module_scope).await;
    assert!(!r.is_error, "{}", r.text);
    let main = h.read("src/main.ts");
    assert!(main.contains("const a = newFunction(newLocal) + 2;"), "{main}");
    assert!(
        main.contains("function newFunction(newLocal: number) {\n  return newLocal + 1;\n}"),
        "appended past the last line's end, at the file's 2 spaces (tsserver's own 4 otherwise): {main}"
    );
}

#[tokio::test]
async fn a_file_and_a_range_are_formatted_with_the_editorconfig_indentation_and_preview_writes_nothing() {
    need_tsls();
    let messy = "export function f(a:number,b:number){\nif(a>b){\nreturn a}\n    return b;\n}\n";
    let h = Harness::new(&[
        ("tsconfig.json", TSCONFIG),
        (".editorconfig", "root = true\n[*.ts]\nindent_style = space\nindent_size = 2\n"),
        ("src/main.ts", messy),
    ]);
    let r = edit(&h, json!({"action": "format", "file": "src/main.ts", "preview": true})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.starts_with("(preview) formatting of `src/main.ts` (typescript-language-server, 2 spaces)"),
        "{}",
        r.text
    );
    assert!(r.text.contains("nothing was written"), "{}", r.text);
    assert_eq!(h.read("src/main.ts"), messy, "preview writes nothing");
    let r = edit(&h, json!({"action": "format", "file": "src/main.ts", "lines": [2, 3]})).await;
    assert!(!r.is_error, "{}", r.text);
    let ranged = h.read("src/main.ts");
    assert!(ranged.starts_with("export function f(a:number,b:number){\n"), "line 1 untouched: {ranged}");
    assert!(ranged.contains("  if (a > b) {"), "{ranged}");
    let r = edit(&h, json!({"action": "format", "file": "src/main.ts"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(
        h.read("src/main.ts"),
        "export function f(a: number, b: number) {\n  if (a > b) {\n    return a\n  }\n  return b;\n}\n"
    );
    assert!(r.text.contains("2 spaces"), "{}", r.text);
    let r = edit(&h, json!({"action": "format", "file": "src/main.ts"})).await;
    assert!(!r.is_error && r.text.contains("is already formatted"), "{}", r.text);
    let r = edit(&h, json!({"action": "format", "file": "src/main.ts", "lines": [3, 40]})).await;
    assert!(r.is_error && r.text.contains("`src/main.ts` has 6 line(s)"), "{}", r.text);
}

fn need_ruff() {
    common::require("pyright", &["--version"], "npm install -g pyright");
    // In tether's tools prefix (where the test command installs it) or on PATH.
    super::languages::installed("ruff", "ruff");
}

const MESSY_PY: &str =
    "import sys\nimport os\nfrom typing import List\n\n\ndef f(x:int)->int:\n    return x+len(os.sep)\n";

#[tokio::test]
async fn ruff_beside_pyright_organizes_imports_fixes_all_and_formats() {
    need_ruff();
    let h = Harness::new(&[("pyproject.toml", ""), ("a.py", MESSY_PY)]);
    // Offers come from both servers, each saying which made it.
    let r = edit(&h, json!({"action": "apply", "file": "a.py", "line": 1})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("Ruff: Organize imports (source.organizeImports.ruff, from ruff)"), "{}", r.text);
    assert!(r.text.contains("fixes: `sys` imported but unused"), "{}", r.text);
    let r = edit(&h, json!({"action": "apply", "file": "a.py", "line": 1, "kind": "source.organizeImports"}))
        .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.starts_with("applied `Ruff: Organize imports` (source.organizeImports.ruff, ruff)"),
        "{}",
        r.text
    );
    assert!(
        h.read("a.py").starts_with("import os\nimport sys\nfrom typing import List\n"),
        "{}",
        h.read("a.py")
    );
    let r = edit(&h, json!({"action": "apply", "file": "a.py", "line": 1, "kind": "source.fixAll"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        h.read("a.py").starts_with("import os\n\n\ndef f"),
        "the unused imports are gone: {}",
        h.read("a.py")
    );
    // Nothing left to fix: done, as a format of a formatted file is.
    let fixed = h.read("a.py");
    let r = edit(&h, json!({"action": "apply", "file": "a.py", "line": 1, "kind": "source.fixAll"})).await;
    assert!(!r.is_error && r.text.contains("nothing was written"), "{}", r.text);
    assert_eq!(h.read("a.py"), fixed);
    let r = edit(&h, json!({"action": "format", "file": "a.py"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.starts_with("applied formatting of `a.py` (ruff, 4 spaces)"), "{}", r.text);
    assert_eq!(h.read("a.py"), "import os\n\n\ndef f(x: int) -> int:\n    return x + len(os.sep)\n");
    // `lsp status` says what the helper is asked for.
    let r = h.call("lsp", json!({"action": "status"})).await;
    assert!(r.text.contains("ruff (asked only for code_actions, format): usable"), "{}", r.text);
}

#[tokio::test]
async fn tether_toml_changes_the_split_and_a_server_that_does_not_format_names_a_formatter() {
    need_ruff();
    // ruff asked for code actions only: pyright would format, and cannot.
    let toml = "[[server]]\nid = \"ruff\"\ncommand = \"ruff\"\nargs = [\"server\"]\nlanguages = [\"python\"]\nroot_markers = [\"pyproject.toml\"]\nonly_features = [\"code_actions\"]\n";
    let h = Harness::new(&[("pyproject.toml", ""), ("tether.toml", toml), ("a.py", "x=1\n")]);
    let r = edit(&h, json!({"action": "format", "file": "a.py"})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("pyright does not format `a.py`") && r.text.contains("ruff"), "{}", r.text);
    assert_eq!(h.read("a.py"), "x=1\n");
    let r = h.call("lsp", json!({"action": "status"})).await;
    assert!(r.text.contains("ruff (asked only for code_actions): usable"), "{}", r.text);
    // A feature tether does not know is named.
    let bad = toml.replace("code_actions", "hover");
    let h = Harness::new(&[("pyproject.toml", ""), ("tether.toml", &bad), ("a.py", "x=1\n")]);
    let r = edit(&h, json!({"action": "format", "file": "a.py"})).await;
    assert!(r.is_error && r.text.contains("`only_features` `hover`"), "{}", r.text);
}

#[tokio::test]
async fn rust_analyzer_imports_a_name_extracts_a_variable_and_formats_with_rustfmt() {
    common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer");
    let lib = "use std::collections::HashMap;\n\npub fn area(w: u32, h: u32) -> u32 {\n    let a = w * h + 1;\n    a\n}\n\npub fn make() -> HashMap<u32,u32> {\n  HashMap::new()\n}\n\npub fn count() -> usize {\n    HashSet::<u32>::new().len()\n}\n";
    let h = Harness::new(&[
        ("Cargo.toml", "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("src/lib.rs", lib),
    ]);
    // The error the import fixes is known before the edit: the answer
    // can then say the edit fixed it.
    let listed = json!({"action": "diagnostics", "file": "src/lib.rs"});
    common::until_answer(&h, "lsp", listed, |t| t.contains("cannot find type `HashSet` in this scope")).await;
    let r = edit(&h, json!({"action": "apply", "file": "src/lib.rs", "line": 13, "symbol": "HashSet", "kind": "quickfix", "title": "Import"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        h.read("src/lib.rs").starts_with("use std::collections::{HashMap, HashSet};\n"),
        "{}",
        h.read("src/lib.rs")
    );
    assert!(r.text.contains("cannot find type `HashSet` in this scope"), "the error it fixed: {}", r.text);
    // rust-analyzer files its extractions as plain `refactor.extract`.
    let r = edit(&h, json!({"action": "apply", "file": "src/lib.rs", "line": 4, "symbol": "w * h", "kind": "refactor.extract.variable"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        h.read("src/lib.rs").contains("    let var_name = w * h;\n    let a = var_name + 1;\n"),
        "{}",
        h.read("src/lib.rs")
    );
    let r = edit(&h, json!({"action": "format", "file": "src/lib.rs"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        h.read("src/lib.rs").contains("pub fn make() -> HashMap<u32, u32> {\n    HashMap::new()\n}"),
        "{}",
        h.read("src/lib.rs")
    );
}

#[tokio::test]
async fn gopls_organizes_imports_and_formats_with_tabs() {
    common::require("gopls", &["version"], "apt-get install gopls");
    let source = "package demo\n\nimport (\n\t\"strings\"\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc Hello(name string) string {\n  return fmt.Sprintf(\"hi %s\", strings.ToUpper(name))\n}\n";
    let h = Harness::new(&[("go.mod", "module example.com/demo\n\ngo 1.21\n"), ("a.go", source)]);
    let r = edit(&h, json!({"action": "apply", "file": "a.go", "line": 3, "kind": "source.organizeImports"}))
        .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        h.read("a.go").contains("import (\n\t\"fmt\"\n\t\"strings\"\n)\n"),
        "sorted, `os` gone: {}",
        h.read("a.go")
    );
    let r = edit(&h, json!({"action": "format", "file": "a.go"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("(gopls, tabs)"), "{}", r.text);
    assert!(h.read("a.go").contains("\n\treturn fmt.Sprintf"), "{}", h.read("a.go"));
}

#[tokio::test]
async fn clangd_applies_a_fix_it_and_formats_a_line() {
    common::require("clangd", &["--version"], "apt-get install clangd");
    let source = "struct Point { int x; int y; };\n\nint area(struct Point p) {\n  int a = p.x * p.y\n  return a;\n}\n\nint    twice(int v){return 2*v;}\n";
    let h = Harness::new(&[("compile_flags.txt", "-std=c11\n"), ("a.c", source)]);
    // clang reports the missing `;` where the next statement starts.
    let r = edit(&h, json!({"action": "apply", "file": "a.c", "line": 5, "kind": "quickfix"})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(h.read("a.c").contains("  int a = p.x * p.y;\n"), "{}", h.read("a.c"));
    assert!(r.text.contains("Expected ';' at end of declaration"), "the error it fixed: {}", r.text);
    let r = edit(&h, json!({"action": "apply", "file": "a.c", "line": 1, "kind": "quickfix"})).await;
    assert!(
        r.is_error && r.text.contains("clangd offers no code actions at a.c:1 of kind `quickfix`"),
        "{}",
        r.text
    );
    let r = edit(&h, json!({"action": "format", "file": "a.c", "lines": [8, 8]})).await;
    assert!(!r.is_error, "{}", r.text);
    let c = h.read("a.c");
    assert!(c.ends_with("int twice(int v) { return 2 * v; }\n") && c.contains("  int a = p.x"), "{c}");
}

#[tokio::test]
async fn bad_arguments_are_named() {
    let h = Harness::new(&[("a.ts", "x\n")]);
    for (args, expect) in [
        (json!({"action": "apply", "file": "a.ts"}), "argument `line`"),
        (json!({"action": "apply", "file": "a.ts", "line": 0}), "lines are 1-based"),
        (json!({"action": "format", "file": "a.ts", "lines": [3, 2]}), "argument `lines`"),
        (json!({"action": "format", "file": "a.ts", "title": "x"}), "are for `apply`"),
        (json!({"action": "apply", "file": "../a.ts", "line": 1}), "file"),
        (json!({"action": "rewrite", "file": "a.ts"}), "action"),
    ] {
        let r = edit(&h, args.clone()).await;
        assert!(r.is_error && r.text.contains(expect), "{args}: {}", r.text);
    }
}
