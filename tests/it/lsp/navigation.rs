//! The navigation answers that hold the next question: `call_hierarchy`
//! (checked on FastAPI against a text search for its callers),
//! `type_hierarchy` (native, or derived where the server has none) in
//! Python, TypeScript and C++, `body: true`, and `occurrence` on a line
//! holding the symbol twice.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::tool::{clangd, lsp, lsp_ok, pyright, tsls};
use crate::common::{Harness, copy_dir, corpus};

fn data(r: &tether::ToolResult) -> &Value {
    r.data.as_ref().expect("the answer has data")
}

/// The 1-based line of `text` that starts (trimmed) with `start`.
fn line_of(text: &str, start: &str) -> u32 {
    let k = text.lines().position(|l| l.trim_start().starts_with(start));
    k.unwrap_or_else(|| panic!("no line starts with {start:?}")) as u32 + 1
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The `def` a line of Python is in: the nearest line above it that
/// starts a function and is indented less — what a reader finds by eye.
fn enclosing_def(lines: &[&str], k: usize) -> Option<(String, u32)> {
    let depth = indent(lines[k]);
    (0..k).rev().find_map(|j| {
        let t = lines[j].trim_start();
        let rest = t.strip_prefix("async def ").or_else(|| t.strip_prefix("def "))?;
        (indent(lines[j]) < depth).then(|| (rest.split('(').next().unwrap().to_string(), j as u32 + 1))
    })
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

/// Every `(file, caller's def line, call line)` of `name(` in the tree,
/// outside its own definition: the callers a text search finds.
fn callers_by_text(h: &Harness, name: &str) -> BTreeSet<(String, u32, u32)> {
    let mut found = BTreeSet::new();
    for entry in ignore::WalkBuilder::new(h.root()).build().flatten() {
        if entry.path().extension().is_none_or(|e| e != "py") {
            continue;
        }
        let rel = entry.path().strip_prefix(h.root()).unwrap().display().to_string();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            if t.starts_with('#') || t.starts_with("def ") || t.starts_with("async def ") {
                continue;
            }
            let called = line.match_indices(&format!("{name}(")).any(|(at, _)| {
                !line[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            });
            if called {
                let (_, def_line) = enclosing_def(&lines, k).expect("a call inside a function");
                found.insert((rel.clone(), def_line, k as u32 + 1));
            }
        }
    }
    found
}

#[tokio::test]
async fn fastapi_callers_are_the_ones_a_text_search_finds_and_callees_are_what_the_body_calls() {
    pyright();
    let h = fastapi();
    let utils = h.read("fastapi/dependencies/utils.py");
    let line = line_of(&utils, "async def solve_dependencies(");
    let args = json!({"action": "call_hierarchy", "file": "fastapi/dependencies/utils.py", "line": line, "symbol": "solve_dependencies"});
    let r = h.ok("lsp", args).await;
    let expected = callers_by_text(&h, "solve_dependencies");
    assert!(expected.len() >= 3, "the search finds the callers: {expected:?}");
    let mut answered = BTreeSet::new();
    for item in data(&r)["items"].as_array().unwrap() {
        for call in item["calls"].as_array().unwrap() {
            answered.insert((
                item["path"].as_str().unwrap().to_string(),
                item["line"].as_u64().unwrap() as u32,
                call["line"].as_u64().unwrap() as u32,
            ));
        }
    }
    assert_eq!(answered, expected, "{}", r.text);
    // Grouped by file, each caller with its call lines, the nested `app`
    // of routing.py named as the caller, not the function around it.
    assert!(r.text.starts_with("3 callers of `solve_dependencies` (3 calls) in 2 files:"), "{}", r.text);
    assert!(r.text.contains("fastapi/routing.py (2)\n  app (function) "), "{}", r.text);
    assert!(r.text.contains("calls at 291:39: solved_result = await solve_dependencies("), "{}", r.text);

    // Outgoing: the project's functions and classes the body calls, by text.
    let start = line_of(&utils, "def get_dependant(") as usize;
    let lines: Vec<&str> = utils.lines().collect();
    // To the next line at the margin, past the signature's closing `)`.
    let end = (start..lines.len())
        .find(|&k| !lines[k].is_empty() && indent(lines[k]) == 0 && !lines[k].starts_with(')'))
        .unwrap();
    let body = lines[start..end].join("\n");
    let mut defined = BTreeSet::new();
    for entry in ignore::WalkBuilder::new(h.path("fastapi")).build().flatten() {
        if entry.path().extension().is_some_and(|e| e == "py") {
            for l in std::fs::read_to_string(entry.path()).unwrap().lines() {
                for head in ["def ", "class "] {
                    if let Some(rest) = l.strip_prefix(head) {
                        defined.insert(rest.split(['(', ':']).next().unwrap().to_string());
                    }
                }
            }
        }
    }
    let called: BTreeSet<String> = defined
        .into_iter()
        .filter(|name| {
            body.match_indices(&format!("{name}(")).any(|(at, _)| {
                !body[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            })
        })
        .collect();
    let args = json!({"action": "call_hierarchy", "file": "fastapi/dependencies/utils.py", "line": start, "symbol": "get_dependant", "direction": "outgoing"});
    let r = h.ok("lsp", args).await;
    let ours: BTreeSet<String> = data(&r)["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| !i["path"].as_str().unwrap().starts_with('/'))
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ours, called, "{}", r.text);
    // The project's callees come before the standard library's.
    let first_outside = r.text.lines().position(|l| l.starts_with('/'));
    let first_ours = r.text.lines().position(|l| l.starts_with("fastapi/"));
    assert!(first_ours < first_outside || first_outside.is_none(), "{}", r.text);
}

const ANIMALS: &str = "class Animal:\n    pass\n\n\nclass Dog(Animal):\n    pass\n\n\nclass Cat(\n    Animal,\n):\n    pass\n\n\nclass Puppy(Dog, metaclass=type):\n    def make(self) -> Animal:\n        return Dog()\n";

fn names(r: &tether::ToolResult) -> Vec<String> {
    data(r)["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn python_type_hierarchy_is_derived_from_pyright_both_ways() {
    pyright();
    let h = Harness::new(&[
        ("pyproject.toml", "[project]\nname = \"z\"\n"),
        ("zoo.py", ANIMALS),
        ("birds.py", "from zoo import Animal\n\n\nclass Bird(Animal):\n    pass\n"),
    ]);
    let up = h
        .ok("lsp", json!({"action": "type_hierarchy", "file": "zoo.py", "line": 15, "symbol": "Puppy"}))
        .await;
    assert_eq!(names(&up), ["Dog"], "{}", up.text);
    assert!(up.text.contains("zoo.py:5") || up.text.contains("Dog (type) 5:7"), "{}", up.text);
    assert!(up.text.contains("pyright offers no standard type hierarchy"), "{}", up.text);
    let down = h
        .ok("lsp", json!({"action": "type_hierarchy", "file": "zoo.py", "line": 1, "symbol": "Animal", "direction": "subtypes"}))
        .await;
    // Not Puppy's return annotation, nor the import: the headers only.
    assert_eq!(names(&down), ["Bird", "Dog", "Cat"], "{}", down.text);
    assert!(down.text.contains("in 2 files"), "{}", down.text);
    let wrong = h
        .err("lsp", json!({"action": "type_hierarchy", "file": "zoo.py", "line": 1, "symbol": "Animal", "direction": "incoming"}))
        .await;
    assert!(wrong.contains("argument `direction`") && wrong.contains("supertypes or subtypes"), "{wrong}");
    // At a use, not the declaration: no header is read, and it says where to ask.
    let at_use = h
        .err("lsp", json!({"action": "type_hierarchy", "file": "zoo.py", "line": 17, "symbol": "Dog"}))
        .await;
    assert!(
        at_use.contains("only at a type's declaration") && at_use.contains("ask `definition`"),
        "{at_use}"
    );
    let at_method = h
        .err("lsp", json!({"action": "type_hierarchy", "file": "zoo.py", "line": 16, "symbol": "make"}))
        .await;
    assert!(at_method.contains("line 16 is not one"), "{at_method}");
}

#[tokio::test]
async fn typescript_and_cpp_type_hierarchies_name_what_extends_and_implements() {
    tsls();
    clangd();
    let ts = "export interface Shape { area(): number; }\nexport interface Named extends Shape { name: string; }\nexport class Square implements Shape {\n  constructor(private s: number) {}\n  area(): number { return this.s * this.s; }\n}\nexport class Cube extends Square implements Named {\n  name = \"cube\";\n}\n";
    let cpp = "struct Shape { virtual double area() const = 0; virtual ~Shape() = default; };\nstruct Square : Shape { double s = 1; double area() const override { return s * s; } };\nstruct Cube : public Square { double volume() const { return area() * s; } };\nint main() { Cube c; return (int)c.volume(); }\n";
    let h = Harness::new(&[
        ("web/tsconfig.json", "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\"}}\n"),
        ("web/shapes.ts", ts),
        ("native/shapes.cpp", cpp),
        ("native/compile_flags.txt", "-std=c++17\n"),
    ]);
    let up = h
        .ok("lsp", json!({"action": "type_hierarchy", "file": "web/shapes.ts", "line": 7, "symbol": "Cube"}))
        .await;
    assert_eq!(names(&up), ["Named", "Square"], "by line: {}", up.text);
    let down = h
        .ok("lsp", json!({"action": "type_hierarchy", "file": "web/shapes.ts", "line": 1, "symbol": "Shape", "direction": "subtypes"}))
        .await;
    assert_eq!(names(&down), ["Named", "Square"], "{}", down.text);
    let up = h
        .ok(
            "lsp",
            json!({"action": "type_hierarchy", "file": "native/shapes.cpp", "line": 3, "symbol": "Cube"}),
        )
        .await;
    assert_eq!(names(&up), ["Square"], "{}", up.text);
    let down = h
        .ok("lsp", json!({"action": "type_hierarchy", "file": "native/shapes.cpp", "line": 1, "symbol": "Shape", "direction": "subtypes"}))
        .await;
    assert_eq!(names(&down), ["Square"], "{}", down.text);
    // One level: Cube derives from Square, not from Shape.
    assert!(down.text.contains("one level"), "{}", down.text);
}

#[tokio::test]
async fn body_true_carries_the_source_of_a_function_a_class_and_a_method_and_says_its_cut() {
    pyright();
    let long: String = (0..150).map(|k| format!("    v{k} = {k}\n")).collect();
    let lib = format!(
        "def short(x):\n    return x + 1\n\n\nclass Box:\n    def pick(self):\n        return 1\n\n    def drop(self):\n        return 2\n\n\ndef long_one():\n{long}    return 0\n"
    );
    let app = "from lib import Box, long_one, short\n\nb = Box()\nprint(short(1), b.pick(), long_one())\n";
    let h =
        Harness::new(&[("pyproject.toml", "[project]\nname = \"b\"\n"), ("lib.py", &lib), ("app.py", app)]);
    let at = |symbol: &str, body: bool| json!({"action": "definition", "file": "app.py", "line": 4, "symbol": symbol, "body": body});
    let r = h.ok("lsp", at("short", true)).await;
    assert!(r.text.contains("lib.py:1–2:\n  1| def short(x):\n  2|     return x + 1"), "{}", r.text);
    assert_eq!(data(&r)["bodies"][0]["cut"], 0);
    let r = h.ok("lsp", at("pick", true)).await;
    assert!(r.text.contains("lib.py:6–7:\n  6|     def pick(self):\n  7|         return 1"), "{}", r.text);
    assert!(!r.text.contains("def drop"), "the method, not its class: {}", r.text);
    let r = h
        .ok(
            "lsp",
            json!({"action": "definition", "file": "app.py", "line": 3, "symbol": "Box", "body": true}),
        )
        .await;
    assert!(
        r.text.contains("lib.py:5–10:") && r.text.contains("10|         return 2"),
        "the whole class: {}",
        r.text
    );
    // Past the cap: the first lines, and where the rest ends.
    let r = h.ok("lsp", at("long_one", true)).await;
    let cut = 152 - tether::tools::lsp::MAX_BODY_LINES;
    assert!(r.text.contains(&format!("… {cut} more lines to line 164 not shown")), "{}", r.text);
    assert_eq!(data(&r)["bodies"][0]["cut"], cut);
    // Without `body`, the answer is the location alone.
    let r = h.ok("lsp", at("short", false)).await;
    assert!(data(&r).get("bodies").is_none() && !r.text.contains("1| def"), "{}", r.text);
    // A file's symbols narrowed by a query, with their source.
    let r = h.ok("lsp", json!({"action": "symbols", "file": "lib.py", "query": "pick", "body": true})).await;
    assert!(r.text.starts_with("1 symbol(s) matching `pick` in `lib.py`"), "{}", r.text);
    assert!(r.text.contains("6|     def pick(self):"), "{}", r.text);
    // A caller's body in the same call as the callers.
    let r = h
        .ok(
            "lsp",
            json!({"action": "call_hierarchy", "file": "lib.py", "line": 1, "symbol": "short", "body": true}),
        )
        .await;
    assert!(r.text.contains("app.py:"), "{}", r.text);
    let refused = h
        .err("lsp", json!({"action": "hover", "file": "app.py", "line": 4, "symbol": "short", "body": true}))
        .await;
    assert!(refused.contains("argument `body` applies to"), "{refused}");
}

#[tokio::test]
async fn a_symbol_twice_on_its_line_says_which_was_used_and_occurrence_picks_the_other() {
    pyright();
    let text = "def pick(x):\n    return x\n\n\nclass Box:\n    def pick(self):\n        return 1\n\n\nb = Box()\ny = pick(b.pick())\n";
    let h = Harness::new(&[("pyproject.toml", "[project]\nname = \"o\"\n"), ("a.py", text)]);
    let first =
        lsp_ok(&h, json!({"action": "definition", "file": "a.py", "line": 11, "symbol": "pick"})).await;
    assert!(first.contains("a.py:1:5: def pick(x):"), "{first}");
    assert!(first.contains("`pick` occurs 2 times on line 11; the answer is about the first (column 5); pass `occurrence` (1 to 2)"), "{first}");
    let second = lsp_ok(
        &h,
        json!({"action": "definition", "file": "a.py", "line": 11, "symbol": "pick", "occurrence": 2}),
    )
    .await;
    assert!(second.contains("a.py:6:9: def pick(self):"), "{second}");
    assert!(second.contains("occurrence 2 of 2 of `pick` on line 11 (column 12)"), "{second}");
    let past = lsp(
        &h,
        json!({"action": "definition", "file": "a.py", "line": 11, "symbol": "pick", "occurrence": 3}),
    )
    .await;
    assert!(
        past.is_error && past.text.contains("argument `occurrence`: 3") && past.text.contains("give 1 to 2"),
        "{}",
        past.text
    );
}
