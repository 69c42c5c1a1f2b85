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

pub(super) async fn edit(h: &Harness, args: Value) -> tether::ToolResult {
    h.call("lsp_edit", args).await
}

pub(super) async fn edit_ok(h: &Harness, args: Value) -> String {
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
        crate::common::tail(&after, 300)
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

#[tokio::test]
async fn rust_methods_keep_their_attributes_and_docs_and_a_used_function_is_deleted_only_when_forced() {
    crate::common::require("rust-analyzer", &["--version"], "rustup component add rust-analyzer");
    let lib = "pub struct Stack<T> {\n    items: Vec<T>,\n}\n\nimpl<T> Stack<T> {\n    /// Makes one.\n    pub fn new() -> Self {\n        Stack { items: Vec::new() }\n    }\n\n    /// Pushes.\n    #[inline]\n    pub fn push(&mut self, t: T) {\n        self.items.push(t);\n    }\n}\n\npub fn unused() -> u32 {\n    1\n}\n\npub fn used() -> u32 {\n    2\n}\n\npub fn caller() -> u32 {\n    used()\n}\n";
    let h = Harness::new(&[
        ("Cargo.toml", "[package]\nname = \"stack\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("src/lib.rs", lib),
    ]);
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "src/lib.rs", "symbol": "Stack::push", "body_only": true,
               "text": "if self.items.len() < 100 {\n    self.items.push(t);\n}"}),
    )
    .await;
    assert!(text.contains("found by rust-analyzer's document symbols"), "{text}");
    let expected = once(
        lib,
        "    pub fn push(&mut self, t: T) {\n        self.items.push(t);\n    }\n",
        "    pub fn push(&mut self, t: T) {\n        if self.items.len() < 100 {\n            self.items.push(t);\n        }\n    }\n",
    );
    assert_eq!(h.read("src/lib.rs"), expected, "the attribute and the doc comment stay");
    edit_ok(
        &h,
        json!({"action": "insert_before", "file": "src/lib.rs", "symbol": "Stack.new", "text": "pub const CAP: usize = 100;"}),
    )
    .await;
    edit_ok(
        &h,
        json!({"action": "insert_after", "file": "src/lib.rs", "symbol": "Stack.push",
               "text": "pub fn len(&self) -> usize {\n    self.items.len()\n}"}),
    )
    .await;
    let text = h.read("src/lib.rs");
    assert!(
        text.contains("impl<T> Stack<T> {\n    pub const CAP: usize = 100;\n\n    /// Makes one.\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "        }\n    }\n\n    pub fn len(&self) -> usize {\n        self.items.len()\n    }\n}\n"
        ),
        "{text}"
    );
    edit_ok(&h, json!({"action": "delete", "file": "src/lib.rs", "symbol": "unused"})).await;
    assert!(!h.read("src/lib.rs").contains("unused"), "{}", h.read("src/lib.rs"));
    let r = edit(&h, json!({"action": "delete", "file": "src/lib.rs", "symbol": "used"})).await;
    assert!(r.is_error && r.text.contains("src/lib.rs:") && r.text.contains("used()"), "{}", r.text);
    let before = h.read("src/lib.rs");
    edit_ok(&h, json!({"action": "delete", "file": "src/lib.rs", "symbol": "used", "force": true})).await;
    assert_eq!(h.read("src/lib.rs"), once(&before, "pub fn used() -> u32 {\n    2\n}\n\n", ""));
}

#[tokio::test]
async fn go_methods_are_found_by_their_receiver_and_written_with_tabs() {
    crate::common::require("gopls", &["version"], "apt-get install gopls");
    let source = "package stack\n\n// Stack holds ints.\ntype Stack struct {\n\titems []int\n}\n\n// Push pushes.\nfunc (s *Stack) Push(v int) {\n\ts.items = append(s.items, v)\n}\n\nfunc One() int { return 1 }\n";
    let h = Harness::new(&[("go.mod", "module example.com/stack\n\ngo 1.21\n"), ("stack.go", source)]);
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "stack.go", "symbol": "Stack.Push", "body_only": true,
               "text": "if v < 0 {\n    return\n}\ns.items = append(s.items, v)"}),
    )
    .await;
    assert!(text.contains("found by gopls's document symbols"), "{text}");
    let expected = once(
        source,
        "\ts.items = append(s.items, v)\n}\n",
        "\tif v < 0 {\n\t\treturn\n\t}\n\ts.items = append(s.items, v)\n}\n",
    );
    assert_eq!(h.read("stack.go"), expected);
    edit_ok(
        &h,
        json!({"action": "insert_after", "file": "stack.go", "symbol": "Stack.Push",
               "text": "// Len counts.\nfunc (s *Stack) Len() int {\n    return len(s.items)\n}"}),
    )
    .await;
    edit_ok(&h, json!({"action": "replace", "file": "stack.go", "symbol": "One", "body_only": true, "text": "return 2"})).await;
    let text = h.read("stack.go");
    assert!(
        text.ends_with("}\n\n// Len counts.\nfunc (s *Stack) Len() int {\n\treturn len(s.items)\n}\n\nfunc One() int {\n\treturn 2\n}\n"),
        "{text}"
    );
}

#[tokio::test]
async fn c_and_cpp_functions_and_methods_are_edited_through_their_declarators() {
    super::tool::clangd();
    let c = "#include <stdio.h>\n\n/* Squares. */\nstatic int square(int n) {\n  return n * n;\n}\n\nint main(void) {\n  printf(\"%d\\n\", square(3));\n  return 0;\n}\n";
    let cpp = "namespace shop {\nclass Cart {\n public:\n  int total() const;\n  int count() const { return 0; }\n};\n\nint Cart::total() const {\n  return 1;\n}\n}  // namespace shop\n";
    let h = Harness::new(&[("compile_flags.txt", "-std=c++17\n"), ("sq.c", c), ("cart.cpp", cpp)]);
    edit_ok(&h, json!({"action": "replace", "file": "sq.c", "symbol": "square", "body_only": true, "text": "int m = n;\nreturn m * n;"}))
        .await;
    assert_eq!(h.read("sq.c"), once(c, "  return n * n;\n", "  int m = n;\n  return m * n;\n"));
    let r = edit(&h, json!({"action": "delete", "file": "sq.c", "symbol": "square"})).await;
    assert!(r.is_error && r.text.contains("sq.c:10:"), "{}", r.text);
    // The out-of-line definition, by line: the class declares `total` too.
    let r = edit(&h, json!({"action": "replace", "file": "cart.cpp", "symbol": "Cart::total", "body_only": true, "text": "return 2;"})).await;
    assert!(
        r.is_error && r.text.contains("2 declarations match") && r.text.contains("give `line`"),
        "{}",
        r.text
    );
    edit_ok(
        &h,
        json!({"action": "replace", "file": "cart.cpp", "line": 8, "symbol": "total", "body_only": true, "text": "return 2;"}),
    )
    .await;
    edit_ok(&h, json!({"action": "replace", "file": "cart.cpp", "symbol": "Cart.count", "body_only": true, "text": "return 3;"}))
        .await;
    assert_eq!(
        h.read("cart.cpp"),
        "namespace shop {\nclass Cart {\n public:\n  int total() const;\n  int count() const {\n    return 3;\n  }\n};\n\nint Cart::total() const {\n  return 2;\n}\n}  // namespace shop\n"
    );
}

#[tokio::test]
async fn a_java_method_keeps_its_annotation_and_javadoc_and_a_used_one_is_refused() {
    super::languages::installed("jdtls", "jdtls");
    let h = super::languages::fixture_with("java", &[super::languages::GIT]);
    let square = h.read("src/shapes/Square.java");
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "src/shapes/Square.java", "symbol": "Square.area", "body_only": true,
               "text": "double s = side;\nreturn s * s;"}),
    )
    .await;
    assert!(text.contains("found by jdtls's document symbols"), "{text}");
    let expected =
        once(&square, "        return side * side;\n", "        double s = side;\n        return s * s;\n");
    assert_eq!(h.read("src/shapes/Square.java"), expected);
    edit_ok(
        &h,
        json!({"action": "insert_after", "file": "src/shapes/Square.java", "symbol": "Square.area",
               "text": "@Override\npublic String toString() {\n    return \"square\";\n}"}),
    )
    .await;
    assert!(
        h.read("src/shapes/Square.java").ends_with("        return s * s;\n    }\n\n    @Override\n    public String toString() {\n        return \"square\";\n    }\n}\n"),
        "{}",
        h.read("src/shapes/Square.java")
    );
    let r = edit(&h, json!({"action": "delete", "file": "src/shapes/Square.java", "symbol": "area"})).await;
    assert!(
        r.is_error
            && r.text.contains("is still used in 2 place(s)")
            && r.text.contains("src/shapes/Main.java:7:"),
        "{}",
        r.text
    );
    edit_ok(&h, json!({"action": "delete", "file": "src/shapes/Square.java", "symbol": "toString"})).await;
    assert_eq!(h.read("src/shapes/Square.java"), expected);
}
