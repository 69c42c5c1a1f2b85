//! `lsp_edit` by symbol at the edges real code has: a property (getter,
//! setter, deleter) and an overload group (signatures, doc comment,
//! implementation) are one declaration to `replace`, `insert_*` and
//! `delete`; a name that still matches several declarations is refused
//! with each one's line; and a `line` is held against the file as the
//! caller's conversation read it, when another conversation has shifted
//! it since — followed to where it stands now, or refused naming who
//! changed it. On pyright and typescript-language-server.

use serde_json::{Value, json};

use super::edit_symbol::{edit, edit_ok};
use super::tool::{pyright, tsls};
use crate::common::Harness;

/// `lsp_edit` called in `conversation`.
async fn edit_in(h: &Harness, conversation: &str, args: Value) -> tether::ToolResult {
    h.rt.call_in(conversation, "lsp_edit", args).await
}

const MODELS: &str = r#"class Response:
    def __init__(self):
        self._encoding = None

    @property
    def encoding(self):
        """The encoding."""
        return self._encoding

    @encoding.setter
    def encoding(self, value):
        self._encoding = value

    def text(self):
        return str(self.encoding)


class Headers:
    @property
    def encoding(self):
        return "utf-8"

    @encoding.setter
    def encoding(self, value):
        pass

    @encoding.deleter
    def encoding(self):
        pass

    def keys(self):
        return []
"#;

fn python(files: &[(&str, &str)]) -> Harness {
    let mut all = vec![("pyproject.toml", "[project]\nname = \"m\"\n")];
    all.extend_from_slice(files);
    Harness::new(&all)
}

#[tokio::test]
async fn a_python_property_is_one_declaration_and_its_body_is_the_getters() {
    pyright();
    let h = python(&[("models.py", MODELS)]);

    // pyright lists the property once, at its setter: the body is still the getter's.
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "models.py", "symbol": "Response.encoding", "body_only": true,
               "text": "return self._encoding or \"utf-8\""}),
    )
    .await;
    let expected = MODELS.replacen(
        "        \"\"\"The encoding.\"\"\"\n        return self._encoding\n",
        "        \"\"\"The encoding.\"\"\"\n        return self._encoding or \"utf-8\"\n",
        1,
    );
    assert_eq!(h.read("models.py"), expected, "{text}");
    crate::common::diff_applies(&[("models.py", MODELS)], &text);
    assert!(text.contains("a new body for the getter of `Response.encoding` (models.py:6)"), "{text}");
    assert!(
        text.contains("is a property (the getter at line 6, the setter at line 11); `body_only` replaced the getter's body"),
        "{text}"
    );

    // A whole replacement given getter and setter leaves one of each.
    let before = h.read("models.py");
    let new = "@property\ndef encoding(self):\n    return \"latin-1\"\n\n@encoding.setter\ndef encoding(self, value):\n    raise AttributeError(value)\n";
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "models.py", "symbol": "Headers.encoding", "text": new}),
    )
    .await;
    let old = "    @property\n    def encoding(self):\n        return \"utf-8\"\n\n    @encoding.setter\n    def encoding(self, value):\n        pass\n\n    @encoding.deleter\n    def encoding(self):\n        pass\n";
    let now = "    @property\n    def encoding(self):\n        return \"latin-1\"\n\n    @encoding.setter\n    def encoding(self, value):\n        raise AttributeError(value)\n";
    assert_eq!(h.read("models.py"), before.replacen(old, now, 1), "{text}");
    assert!(
        text.contains("taken whole: the getter at line 20, the setter at line 24, the deleter at line 28"),
        "{text}"
    );

    // `delete` takes every part.
    let before = h.read("models.py");
    let text =
        edit_ok(&h, json!({"action": "delete", "file": "models.py", "symbol": "Headers.encoding"})).await;
    assert_eq!(h.read("models.py"), before.replacen(&format!("{now}\n"), "", 1), "{text}");
    assert_eq!(h.read("models.py").matches("def encoding").count(), 2, "Response's getter and setter stay");

    // On a part's line, the whole property is named too.
    let text = edit_ok(
        &h,
        json!({"action": "insert_after", "file": "models.py", "symbol": "encoding", "line": 11,
               "text": "def size(self):\n    return 0\n"}),
    )
    .await;
    assert!(
        h.read("models.py").contains(
            "        self._encoding = value\n\n    def size(self):\n        return 0\n\n    def text(self):"
        ),
        "after the setter, not between the parts: {text}\n{}",
        h.read("models.py")
    );
}

#[tokio::test]
async fn stub_overloads_are_one_declaration_and_have_no_body() {
    pyright();
    let stub = "from typing import overload\n\nclass Stub:\n    @overload\n    def get(self, k: int) -> int: ...\n    @overload\n    def get(self, k: str) -> str: ...\n    def other(self) -> None: ...\n";
    let h = python(&[("stub.pyi", stub)]);
    let r = edit(
        &h,
        json!({"action": "replace", "file": "stub.pyi", "symbol": "Stub.get", "body_only": true, "text": "return k"}),
    )
    .await;
    assert!(
        r.is_error
            && r.text.contains("`Stub.get` is an overload group without an implementation (a signature at line 5, a signature at line 7), so it has no body"),
        "{}",
        r.text
    );
    assert_eq!(h.read("stub.pyi"), stub, "nothing written");
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "stub.pyi", "symbol": "Stub.get", "text": "def get(self, k: object) -> object: ..."}),
    )
    .await;
    assert_eq!(
        h.read("stub.pyi"),
        "from typing import overload\n\nclass Stub:\n    def get(self, k: object) -> object: ...\n    def other(self) -> None: ...\n",
        "both overloads replaced: {text}"
    );
}

#[tokio::test]
async fn a_name_declared_twice_is_refused_with_each_line_whatever_the_server_lists() {
    pyright();
    let src = "def f():\n    return 1\n\n\nx = f()\n\n\ndef f():\n    return 2\n";
    let h = python(&[("twice.py", src)]);
    let r = edit(&h, json!({"action": "replace", "file": "twice.py", "symbol": "f", "body_only": true, "text": "return 3"})).await;
    assert!(
        r.is_error && r.text.contains("2 declarations match `f` in `twice.py`: f at line 1, f at line 8"),
        "{}",
        r.text
    );
    assert_eq!(h.read("twice.py"), src, "nothing written");
    // With `line`, the one there.
    edit_ok(&h, json!({"action": "replace", "file": "twice.py", "symbol": "f", "line": 8, "body_only": true, "text": "return 3"}))
        .await;
    let second = src.replacen("return 2", "return 3", 1);
    assert_eq!(h.read("twice.py"), second);
    // The hunk ends in two blank context lines: the diff shown keeps them.
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "twice.py", "symbol": "f", "line": 1, "body_only": true, "text": "return 0", "preview": true}),
    )
    .await;
    assert!(text.contains("@@ -1,4 +1,4 @@\n def f():\n-    return 1\n+    return 0\n \n \n"), "{text}");
    crate::common::diff_applies(&[("twice.py", &second)], &text);
}

const OVERLOADS: &str = "/** Gets it. */\nexport function get(a: string): string;\nexport function get(a: number): number;\nexport function get(a: any): any {\n  return a;\n}\n\nexport function after(): number {\n  return 1;\n}\n\nexport class Box {\n  private v = 0;\n\n  get value(): number {\n    return this.v;\n  }\n\n  set value(x: number) {\n    this.v = x;\n  }\n\n  put(a: string): void;\n  put(a: number): void;\n  put(a: any): void {\n    this.v = Number(a);\n  }\n}\n";

#[tokio::test]
async fn typescript_overload_groups_and_accessors_are_one_declaration() {
    tsls();
    let h = Harness::new(&[
        ("tsconfig.json", r#"{"compilerOptions": {"strict": true}, "include": ["*.ts"]}"#),
        ("a.ts", OVERLOADS),
    ]);
    // Inserted before the group, JSDoc and all: the group stays whole.
    let text = edit_ok(
        &h,
        json!({"action": "insert_before", "file": "a.ts", "symbol": "get", "line": 4,
               "text": "export const first = 0;"}),
    )
    .await;
    let now = h.read("a.ts");
    assert!(now.starts_with("export const first = 0;\n") && now.ends_with(OVERLOADS), "{text}\n{now}");
    assert!(!text.contains("2391"), "no implementation split from its signatures: {text}");

    // `body_only` on the group is the implementation's body, and says so.
    let text = edit_ok(
        &h,
        json!({"action": "replace", "file": "a.ts", "symbol": "Box.put", "body_only": true, "text": "this.v = +a;"}),
    )
    .await;
    assert!(h.read("a.ts").contains("  put(a: any): void {\n    this.v = +a;\n  }\n"), "{}", h.read("a.ts"));
    assert!(text.contains("a new body for the implementation of `Box.put`"), "{text}");

    // An accessor pair: the getter's body.
    edit_ok(
        &h,
        json!({"action": "replace", "file": "a.ts", "symbol": "Box.value", "body_only": true, "text": "return this.v * 2;"}),
    )
    .await;
    assert!(
        h.read("a.ts").contains("  get value(): number {\n    return this.v * 2;\n  }\n"),
        "{}",
        h.read("a.ts")
    );
    assert!(
        h.read("a.ts").contains("  set value(x: number) {\n    this.v = x;\n  }\n"),
        "{}",
        h.read("a.ts")
    );

    // `delete` takes the signatures, their JSDoc and the implementation.
    let text = edit_ok(&h, json!({"action": "delete", "file": "a.ts", "symbol": "get", "force": true})).await;
    let now = h.read("a.ts");
    assert!(!now.contains("function get") && !now.contains("Gets it"), "{text}\n{now}");
    assert!(
        now.starts_with("export const first = 0;\n") && now.contains("\nexport function after(): number {"),
        "{now}"
    );
}

const DUP: &str = "class A:\n    def close(self):\n        return \"a\"\n\n    def open(self):\n        return \"a\"\n\n\nclass B:\n    def open(self):\n        return \"b\"\n\n    def close(self):\n        return \"b\"\n";

#[tokio::test]
async fn a_line_another_conversation_shifted_is_followed_or_refused_naming_who() {
    pyright();
    let h = python(&[("_dup.py", DUP)]);
    let read = h.rt.call_in("A", "read", json!({"path": "_dup.py"})).await;
    assert!(!read.is_error, "{}", read.text);
    // B puts eight lines above: `B.close`, line 13 as A read it, is line 21 now.
    let shifted = format!("{}{DUP}", "# shifted\n".repeat(8));
    h.rt.call_in("B", "read", json!({"path": "_dup.py"})).await;
    let wrote = h.rt.call_in("B", "write", json!({"path": "_dup.py", "content": shifted})).await;
    assert!(!wrote.is_error, "{}", wrote.text);

    let r = edit_in(
        &h,
        "A",
        json!({"action": "replace", "file": "_dup.py", "line": 13, "symbol": "close", "body_only": true, "text": "return \"B\""}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(
        h.read("_dup.py"),
        shifted.replacen(
            "    def close(self):\n        return \"b\"\n",
            "    def close(self):\n        return \"B\"\n",
            1
        )
    );
    assert!(r.text.contains("a new body for `B.close` (_dup.py:21)"), "{}", r.text);
    assert!(
        r.text.contains("line 13 as you read `_dup.py` at ") && r.text.contains("is line 21 now"),
        "{}",
        r.text
    );
    assert!(r.text.contains("by conversation B"), "names who shifted it: {}", r.text);
    assert!(
        r.text.contains(
            "note: changed since your previous call: _dup.py (by conversation B, before your write)"
        ),
        "the change note, though the file now holds A's own edit: {}",
        r.text
    );

    // A reads again; B then rewrites the line A names: refused, nothing written.
    h.rt.call_in("A", "read", json!({"path": "_dup.py"})).await;
    let renamed = h.read("_dup.py").replacen(
        "    def open(self):\n        return \"b\"",
        "    def shut(self):\n        return \"b\"",
        1,
    );
    h.rt.call_in("B", "read", json!({"path": "_dup.py"})).await;
    let wrote = h.rt.call_in("B", "write", json!({"path": "_dup.py", "content": renamed})).await;
    assert!(!wrote.is_error, "{}", wrote.text);
    let r = edit_in(
        &h,
        "A",
        json!({"action": "replace", "file": "_dup.py", "line": 18, "symbol": "open", "body_only": true, "text": "return 0"}),
    )
    .await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("line 18 of `_dup.py` as you read it at ")
            && r.text.contains("was changed since (by conversation B)")
            && r.text.contains("nothing was written"),
        "{}",
        r.text
    );
    assert_eq!(h.read("_dup.py"), renamed);
}

#[tokio::test]
async fn a_move_to_a_new_file_completes_and_a_preview_leaves_nothing_behind() {
    tsls();
    let list = "export function addToEnd(xs: number[], x: number): number[] {\n  return [...xs, x];\n}\n\nexport function total(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n";
    let main = "import { addToEnd, total } from \"./list\";\n\nexport const n = total(addToEnd([1], 2));\n";
    let h = Harness::new(&[
        ("tsconfig.json", r#"{"compilerOptions": {"strict": true}, "include": ["src/**/*.ts"]}"#),
        ("src/list.ts", list),
        ("src/main.ts", main),
    ]);
    let args = json!({"action": "apply", "file": "src/list.ts", "line": 1, "symbol": "addToEnd",
                      "kind": "refactor.move.newFile", "preview": true});
    for _ in 0..2 {
        let r = edit(&h, args.clone()).await;
        assert!(!r.is_error, "{}", r.text);
        assert!(r.text.starts_with("(preview)") && r.text.contains("nothing was written"), "{}", r.text);
        let left: Vec<String> = std::fs::read_dir(h.path("src"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "list.ts" && n != "main.ts")
            .collect();
        assert!(left.is_empty(), "a preview leaves no file behind: {left:?}\n{}", r.text);
        assert_eq!(h.read("src/list.ts"), list);
    }
    let mut args = args;
    args["preview"] = json!(false);
    let r = edit(&h, args).await;
    assert!(!r.is_error, "{}", r.text);
    let moved = h.read("src/addToEnd.ts");
    assert!(
        moved.contains("export function addToEnd(xs: number[], x: number): number[] {"),
        "{moved}\n{}",
        r.text
    );
    assert!(!h.read("src/list.ts").contains("addToEnd"), "{}", h.read("src/list.ts"));
    assert!(h.read("src/main.ts").contains("./addToEnd"), "its importer follows: {}", h.read("src/main.ts"));
    assert!(!r.text.contains("changed on disk"), "{}", r.text);
    assert!(r.text.contains("--- /dev/null\n+++ b/src/addToEnd.ts\n"), "shown as created: {}", r.text);
    crate::common::diff_applies(&[("src/list.ts", list), ("src/main.ts", main)], &r.text);
}

#[tokio::test]
async fn text_that_would_leave_a_python_indentation_error_is_refused() {
    pyright();
    let src = "class P:\n    def reset(self):\n        self.x = 0\n";
    let h = python(&[("p.py", src)]);
    let r = edit(
        &h,
        json!({"action": "replace", "file": "p.py", "symbol": "P.reset", "body_only": true,
               "text": "self.y = 0\n  return None"}),
    )
    .await;
    assert!(r.is_error && r.text.contains("would leave a syntax error at line 4"), "{}", r.text);
    assert_eq!(h.read("p.py"), src, "nothing written");
}

#[tokio::test]
async fn a_rename_shows_its_diff_and_names_the_strings_and_comments_it_left() {
    pyright();
    let limits = "class Limits:\n    \"\"\"Limits of a pool.\"\"\"\n\n    def __repr__(self):\n        return \"Limits()\"\n";
    let test = "from limits import Limits\n\n\ndef test_repr():\n    # Limits reads back as written.\n    assert repr(Limits()) == \"Limits()\"\n";
    let h = python(&[("limits.py", limits), ("test_limits.py", test)]);
    let r = h
        .ok("lsp_rename", json!({"file": "limits.py", "line": 1, "symbol": "Limits", "new_name": "Bounds"}))
        .await;
    assert!(r.text.contains("-class Limits:\n+class Bounds:"), "the diff is shown: {}", r.text);
    crate::common::diff_applies(&[("limits.py", limits), ("test_limits.py", test)], &r.text);
    assert!(r.text.contains("note: `Limits` is still written in 4 place(s)"), "{}", r.text);
    for place in [
        "limits.py:2: \"\"\"Limits of a pool.\"\"\"",
        "limits.py:5: return \"Limits()\"",
        "test_limits.py:5: # Limits reads back as written.",
        "test_limits.py:6: assert repr(Bounds()) == \"Limits()\"",
    ] {
        assert!(r.text.contains(place), "{place}: {}", r.text);
    }
}
