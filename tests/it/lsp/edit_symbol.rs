//! `lsp_edit` by symbol — `replace` (whole, or `body_only`),
//! `insert_before` / `insert_after`, `delete` — against pyright on
//! FastAPI's own code and on small files, and against
//! typescript-language-server. Every edit is checked on the whole file
//! after it, byte for byte: the body replaced and not prepended, the
//! decorators, signature and doc comment kept, the text at the symbol's
//! indentation in the file's tabs or spaces, CRLF kept, a missing final
//! newline still missing.

use serde_json::{Value, json};

use super::tool::{pyright, tsls};
use crate::common::{Harness, copy_dir, corpus};

async fn edit(h: &Harness, args: Value) -> tether::ToolResult {
    h.call("lsp_edit", args).await
}

async fn edit_ok(h: &Harness, args: Value) -> String {
    let r = edit(h, args.clone()).await;
    assert!(!r.is_error, "{args}: {}", r.text);
    r.text
}

/// `text` with `old` (which occurs exactly once) replaced by `new`.
fn once(text: &str, old: &str, new: &str) -> String {
    assert_eq!(text.matches(old).count(), 1, "{old:?} occurs once");
    text.replacen(old, new, 1)
}

/// FastAPI's package, as a project pyright serves.
fn fastapi() -> Harness {
    let h = Harness::new(&[
        (".git/HEAD", "ref: refs/heads/main\n"),
        ("pyproject.toml", "[project]\nname = \"f\"\n"),
    ]);
    copy_dir(&corpus("fastapi", "out/fastapi-0.115.0/fastapi"), &h.path("fastapi"));
    h
}

#[tokio::test]
async fn fastapi_methods_and_functions_are_replaced_inserted_beside_and_deleted_exactly() {
    pyright();
    let h = fastapi();

    // A decorated method with a multi-line signature and a docstring: the
    // body alone goes, given at column 0.
    let app = h.read("fastapi/applications.py");
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "fastapi/applications.py", "symbol": "FastAPI.on_event", "body_only": true,
               "text": "handler = self.router.on_event(event_type)\nreturn handler\n"}),
    )
    .await;
    let expected = once(
        &app,
        "        \"\"\"\n        return self.router.on_event(event_type)\n",
        "        \"\"\"\n        handler = self.router.on_event(event_type)\n        return handler\n",
    );
    assert_eq!(h.read("fastapi/applications.py"), expected, "{text}");
    assert!(
        text.starts_with("applied a new body for `FastAPI.on_event` (fastapi/applications.py:"),
        "{text}"
    );
    assert!(text.contains("found by pyright's document symbols"), "{text}");
    assert!(text.contains("its docstring was kept"), "{text}");
    assert!(text.contains("diagnostics (fresh)"), "{text}");

    // A function with a multi-line signature, replaced whole by text given
    // at another indentation.
    let encoders = h.read("fastapi/encoders.py");
    let old = "def generate_encoders_by_class_tuples(\n    type_encoder_map: Dict[Any, Callable[[Any], Any]],\n) -> Dict[Callable[[Any], Any], Tuple[Any, ...]]:\n    encoders_by_class_tuples: Dict[Callable[[Any], Any], Tuple[Any, ...]] = defaultdict(\n        tuple\n    )\n    for type_, encoder in type_encoder_map.items():\n        encoders_by_class_tuples[encoder] += (type_,)\n    return encoders_by_class_tuples\n";
    let new = "def generate_encoders_by_class_tuples(\n    type_encoder_map: Dict[Any, Callable[[Any], Any]],\n) -> Dict[Callable[[Any], Any], Tuple[Any, ...]]:\n    found: Dict[Callable[[Any], Any], Tuple[Any, ...]] = defaultdict(tuple)\n    for type_, encoder in type_encoder_map.items():\n        found[encoder] += (type_,)\n    return found\n";
    let given: String = new.lines().map(|l| format!("        {l}\n")).collect();
    let line =
        encoders.lines().position(|l| l.starts_with("def generate_encoders_by_class_tuples")).unwrap() + 1;
    edit_ok(
        &h,
        json!({"action": "replace", "file": "fastapi/encoders.py", "line": line, "symbol": "generate_encoders_by_class_tuples", "text": given}),
    )
    .await;
    assert_eq!(h.read("fastapi/encoders.py"), once(&encoders, old, new));

    // A method inserted before the first and after the last member of a class.
    let oauth = h.read("fastapi/security/oauth2.py");
    let text = edit_ok(
        &h,
        json!({"action": "insert_after", "file": "fastapi/security/oauth2.py", "symbol": "SecurityScopes.__init__",
               "text": "def __len__(self) -> int:\n    return len(self.scopes)"}),
    )
    .await;
    let after = h.read("fastapi/security/oauth2.py");
    assert!(
        after.ends_with(
            "] = \" \".join(self.scopes)\n\n    def __len__(self) -> int:\n        return len(self.scopes)\n"
        ),
        "{text}\n{}",
        &after[after.len() - 300..]
    );
    assert_eq!(&after[..oauth.len()], oauth, "nothing else moved");
    edit_ok(
        &h,
        json!({"action": "insert_before", "file": "fastapi/security/oauth2.py", "symbol": "SecurityScopes.__init__",
               "text": "    def __bool__(self) -> bool:\n        return bool(self.scopes)"}),
    )
    .await;
    let with_first = h.read("fastapi/security/oauth2.py");
    let class_at = with_first.find("class SecurityScopes:").unwrap();
    let init_at = with_first[class_at..].find("    def __init__(").unwrap() + class_at;
    assert!(
        with_first[..init_at]
            .ends_with("    def __bool__(self) -> bool:\n        return bool(self.scopes)\n\n"),
        "{}",
        &with_first[class_at..init_at + 40]
    );

    // A function still used: the delete is refused with its uses; forced, it goes.
    let utils = h.read("fastapi/utils.py");
    let r = edit(&h, json!({"action": "delete", "file": "fastapi/utils.py", "symbol": "generate_unique_id"}))
        .await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("`generate_unique_id` is still used in"), "{}", r.text);
    assert!(r.text.contains("fastapi/routing.py:"), "its uses are listed: {}", r.text);
    assert_eq!(h.read("fastapi/utils.py"), utils, "nothing was written");
    edit_ok(&h, json!({"action": "delete", "file": "fastapi/utils.py", "symbol": "generate_unique_id", "force": true}))
        .await;
    let gone = "def generate_unique_id(route: \"APIRoute\") -> str:\n    operation_id = f\"{route.name}{route.path_format}\"\n    operation_id = re.sub(r\"\\W\", \"_\", operation_id)\n    assert route.methods\n    operation_id = f\"{operation_id}_{list(route.methods)[0].lower()}\"\n    return operation_id\n\n\n";
    assert_eq!(h.read("fastapi/utils.py"), once(&utils, gone, ""));

    // Bad input, named.
    let r = edit(
        &h,
        json!({"action": "replace", "file": "fastapi/utils.py", "line": 1, "symbol": "get_path_param_names", "text": "x = 1"}),
    )
    .await;
    assert!(
        r.is_error
            && r.text.contains("line 1 of `fastapi/utils.py` declares nothing, not `get_path_param_names`"),
        "{}",
        r.text
    );
    assert!(r.text.contains("`get_path_param_names` is declared at line"), "{}", r.text);
    let r = edit(
        &h,
        json!({"action": "replace", "file": "fastapi/encoders.py", "symbol": "encoders_by_class_tuples", "body_only": true, "text": "{}"}),
    )
    .await;
    assert!(r.is_error && r.text.contains("has no body"), "{}", r.text);
    let r = edit(&h, json!({"action": "replace", "file": "fastapi/utils.py", "symbol": "get_path_param_names", "text": " "}))
        .await;
    assert!(r.is_error && r.text.contains("to remove the symbol use `delete`"), "{}", r.text);
    let r = edit(
        &h,
        json!({"action": "replace", "file": "fastapi/utils.py", "symbol": "get_path_param_names", "body_only": true, "text": "return set(("}),
    )
    .await;
    assert!(r.is_error && r.text.contains("would leave a syntax error at line"), "{}", r.text);
}

#[tokio::test]
async fn python_one_liners_nested_classes_crlf_tabs_and_a_missing_final_newline_keep_their_shape() {
    pyright();
    let h = Harness::new(&[
        ("pyproject.toml", ""),
        ("one.py", "def f(): return 1\n\n\ndef g():\n    return f()\n"),
        (
            "nested.py",
            "class Outer:\n    class Inner:\n        def m(self):\n            return 1\n\n        def n(self):\n            return 2\n",
        ),
        ("crlf.py", "def a():\r\n    return 1\r\n\r\n\r\ndef b():\r\n    return 2\r\n"),
        ("tabs.py", "class T:\n\tdef a(self):\n\t\treturn 1\n\n\tdef b(self):\n\t\treturn 2\n"),
        ("last.py", "def a():\n    return 1\n\n\ndef b():\n    return 2"),
    ]);
    edit_ok(&h, json!({"action": "replace", "file": "one.py", "symbol": "f", "body_only": true, "text": "x = 2\nreturn x"}))
        .await;
    assert_eq!(h.read("one.py"), "def f():\n    x = 2\n    return x\n\n\ndef g():\n    return f()\n");
    edit_ok(
        &h,
        json!({"action": "replace", "file": "nested.py", "symbol": "Outer.Inner.m", "text": "def m(self):\n    return 10"}),
    )
    .await;
    assert_eq!(
        h.read("nested.py"),
        "class Outer:\n    class Inner:\n        def m(self):\n            return 10\n\n        def n(self):\n            return 2\n"
    );
    edit_ok(
        &h,
        json!({"action": "insert_after", "file": "crlf.py", "symbol": "a", "text": "def between():\n    return 3\n"}),
    )
    .await;
    assert_eq!(
        h.read("crlf.py"),
        "def a():\r\n    return 1\r\n\r\n\r\ndef between():\r\n    return 3\r\n\r\n\r\ndef b():\r\n    return 2\r\n"
    );
    edit_ok(
        &h,
        json!({"action": "insert_after", "file": "tabs.py", "symbol": "T.b", "text": "def c(self):\n    if self:\n        return 3"}),
    )
    .await;
    assert_eq!(
        h.read("tabs.py"),
        "class T:\n\tdef a(self):\n\t\treturn 1\n\n\tdef b(self):\n\t\treturn 2\n\n\tdef c(self):\n\t\tif self:\n\t\t\treturn 3\n"
    );
    edit_ok(&h, json!({"action": "replace", "file": "last.py", "symbol": "b", "body_only": true, "text": "return 20\n"}))
        .await;
    assert_eq!(h.read("last.py"), "def a():\n    return 1\n\n\ndef b():\n    return 20");
    edit_ok(&h, json!({"action": "delete", "file": "last.py", "symbol": "b"})).await;
    assert_eq!(h.read("last.py"), "def a():\n    return 1", "still no final newline");
    // A preview writes nothing.
    let text =
        edit_ok(&h, json!({"action": "delete", "file": "one.py", "symbol": "g", "preview": true})).await;
    assert!(text.starts_with("(preview) the deletion of `g` (one.py:6); nothing was written:"), "{text}");
    assert!(text.contains("-def g():"), "{text}");
    assert_eq!(h.read("one.py"), "def f():\n    x = 2\n    return x\n\n\ndef g():\n    return f()\n");
}

const TSCONFIG: &str = r#"{"compilerOptions": {"strict": true, "target": "es2020", "experimentalDecorators": true}, "include": ["src/**/*.ts"]}"#;

#[tokio::test]
async fn typescript_bodies_decorated_methods_namespaces_crlf_and_tabs_keep_their_shape() {
    tsls();
    let shop = "function logged(_t: object, _k: string) {}\n\nexport namespace Shop {\n  export class Cart {\n    /** The total. */\n    @logged\n    total(\n      prices: number[],\n    ): number {\n      return prices.reduce((a, b) => a + b, 0);\n    }\n\n    count(): number { return 0; }\n  }\n}\n\nexport function unused(): number {\n  return 1;\n}\n\nexport function used(): number {\n  return 2;\n}\n\nexport const main = used();";
    let h = Harness::new(&[
        ("tsconfig.json", TSCONFIG),
        ("src/shop.ts", shop),
        ("src/crlf.ts", "export function a(): number {\r\n  return 1;\r\n}\r\n"),
        ("src/tabs.ts", "export class T {\n\ta(): number {\n\t\treturn 1;\n\t}\n}\n"),
    ]);
    // A decorated method with a doc comment and a multi-line signature: the
    // statements go between its braces; decorator, doc and signature stay.
    edit_ok(
        &h,
        json!({"action": "replace", "file": "src/shop.ts", "symbol": "Cart.total", "body_only": true,
               "text": "let sum = 0;\nfor (const p of prices) {\n  sum += p;\n}\nreturn sum;"}),
    )
    .await;
    let expected = once(
        shop,
        "      return prices.reduce((a, b) => a + b, 0);\n",
        "      let sum = 0;\n      for (const p of prices) {\n        sum += p;\n      }\n      return sum;\n",
    );
    assert_eq!(h.read("src/shop.ts"), expected);
    // A one-line method's body gets lines of its own.
    edit_ok(&h, json!({"action": "replace", "file": "src/shop.ts", "symbol": "Shop.Cart.count", "body_only": true, "text": "return 1;"}))
        .await;
    let expected = once(
        &expected,
        "    count(): number { return 0; }\n",
        "    count(): number {\n      return 1;\n    }\n",
    );
    assert_eq!(h.read("src/shop.ts"), expected);
    // Replaced whole with a doc comment of its own: the old one goes.
    edit_ok(
        &h,
        json!({"action": "replace", "file": "src/shop.ts", "symbol": "Cart.total",
               "text": "/** The sum. */\n@logged\ntotal(prices: number[]): number {\n  return 0;\n}"}),
    )
    .await;
    let text = h.read("src/shop.ts");
    assert!(
        text.contains("  export class Cart {\n    /** The sum. */\n    @logged\n    total(prices: number[]): number {\n      return 0;\n    }\n\n    count(): number {"),
        "{text}"
    );
    assert!(!text.contains("The total."), "{text}");
    // Before the first and after the last member.
    edit_ok(&h, json!({"action": "insert_before", "file": "src/shop.ts", "symbol": "Cart.total", "text": "items: string[] = [];"}))
        .await;
    edit_ok(&h, json!({"action": "insert_after", "file": "src/shop.ts", "symbol": "Cart.count", "text": "clear(): void {\n  this.items = [];\n}"}))
        .await;
    let text = h.read("src/shop.ts");
    assert!(
        text.contains("  export class Cart {\n    items: string[] = [];\n\n    /** The sum. */"),
        "{text}"
    );
    assert!(
        text.contains(
            "      return 1;\n    }\n\n    clear(): void {\n      this.items = [];\n    }\n  }\n}\n"
        ),
        "{text}"
    );
    // Delete: an unused function goes with its blank lines; a used one is
    // refused, then forced; the file keeps no final newline.
    let before = h.read("src/shop.ts");
    edit_ok(&h, json!({"action": "delete", "file": "src/shop.ts", "symbol": "unused"})).await;
    assert_eq!(
        h.read("src/shop.ts"),
        once(&before, "export function unused(): number {\n  return 1;\n}\n\n", "")
    );
    let r = edit(&h, json!({"action": "delete", "file": "src/shop.ts", "symbol": "used"})).await;
    assert!(
        r.is_error && r.text.contains("is still used in 1 place(s)") && r.text.contains("src/shop.ts:"),
        "{}",
        r.text
    );
    edit_ok(&h, json!({"action": "delete", "file": "src/shop.ts", "symbol": "main"})).await;
    assert!(
        h.read("src/shop.ts").ends_with("export function used(): number {\n  return 2;\n}"),
        "{}",
        h.read("src/shop.ts")
    );
    // CRLF and tabs.
    edit_ok(&h, json!({"action": "replace", "file": "src/crlf.ts", "symbol": "a", "body_only": true, "text": "const x = 2;\nreturn x;"}))
        .await;
    assert_eq!(
        h.read("src/crlf.ts"),
        "export function a(): number {\r\n  const x = 2;\r\n  return x;\r\n}\r\n"
    );
    edit_ok(&h, json!({"action": "insert_after", "file": "src/tabs.ts", "symbol": "T.a", "text": "b(): number {\n    return 2;\n}"}))
        .await;
    assert_eq!(
        h.read("src/tabs.ts"),
        "export class T {\n\ta(): number {\n\t\treturn 1;\n\t}\n\n\tb(): number {\n\t\treturn 2;\n\t}\n}\n"
    );
}

#[tokio::test]
async fn a_file_no_server_serves_is_edited_by_its_syntax_tree_and_says_so() {
    let h = Harness::new(&[(
        "notes.lua",
        "local function a()\n  return 1\nend\n\nlocal function b()\n  return 2\nend\n",
    )]);
    let text = edit_ok(&h, json!({"action": "replace", "file": "notes.lua", "symbol": "b", "body_only": true, "text": "return 3"}))
        .await;
    assert!(text.contains("found by the syntax tree"), "{text}");
    let r = edit(&h, json!({"action": "delete", "file": "notes.lua", "symbol": "a"})).await;
    assert!(r.is_error && r.text.contains("`force: true`"), "no server can say it is unused: {}", r.text);
}

#[tokio::test]
async fn bad_arguments_of_the_edits_by_symbol_are_named() {
    let h = Harness::new(&[("a.lua", "local function a()\n  return 1\nend\n")]);
    for (args, says) in [
        (
            json!({"action": "replace", "file": "a.lua", "text": "x"}),
            "argument `symbol`: `replace` needs the symbol's name",
        ),
        (
            json!({"action": "delete", "file": "a.lua", "symbol": "a", "text": "x"}),
            "argument `text`: `delete` takes none",
        ),
        (
            json!({"action": "insert_after", "file": "a.lua", "symbol": "a"}),
            "argument `text`: `insert_after` needs the text",
        ),
        (
            json!({"action": "insert_before", "file": "a.lua", "symbol": "a", "text": "x", "body_only": true}),
            "argument `body_only`: only `replace` takes it",
        ),
        (
            json!({"action": "replace", "file": "a.lua", "symbol": "a", "text": "x", "force": true}),
            "argument `force`: only `delete` takes it",
        ),
        (
            json!({"action": "replace", "file": "a.lua", "symbol": "a", "text": "x", "title": "t"}),
            "`title` and `kind` are for `apply`",
        ),
        (
            json!({"action": "format", "file": "a.lua", "text": "x"}),
            "`text`, `body_only` and `force` are for the edits by symbol",
        ),
        (
            json!({"action": "delete", "file": "a.lua", "symbol": "zzz", "force": true}),
            "`a.lua` declares no `zzz`",
        ),
    ] {
        let r = edit(&h, args.clone()).await;
        assert!(r.is_error && r.text.contains(says), "{args}: {}", r.text);
    }
    assert_eq!(h.read("a.lua"), "local function a()\n  return 1\nend\n");
}
