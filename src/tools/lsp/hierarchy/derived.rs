//! A type hierarchy for servers that offer none (pyright and
//! typescript-language-server announce no `typeHierarchyProvider`),
//! derived from what they do answer. Supertypes: the names in the type's
//! own header (`class Dog(Animal):`, `class Cube extends Square
//! implements Shape {`, `struct D : public B {`) that the server resolves
//! by `definition`. Subtypes: the server's `references` to the type that
//! stand in another type's header. One level, like `typeHierarchy`; the
//! answer says how it was found, and names what did not resolve.

use lsp_types::{Location, Position, Range, Url};
use serde_json::{Value, json};
use tether_actors::lsp::edits::utf16_column;
use tether_actors::lsp::server::{OnError, Opened, SyncedDoc};
use tether_actors::lsp::shared::Held;

use super::super::REQUEST_TIMEOUT;
use super::super::position::SymbolAt;
use super::super::render::locations;
use super::Direction;

/// Lines a type's header may run over.
const MAX_HEADER_LINES: usize = 8;

/// Words of a header that are not the names of types.
const NOT_TYPES: &[&str] = &[
    "extends",
    "implements",
    "public",
    "private",
    "protected",
    "virtual",
    "final",
    "sealed",
    "open",
    "internal",
    "abstract",
    "class",
    "struct",
    "interface",
    "enum",
    "where",
    "with",
    "new",
    "readonly",
];

/// A name in a type's header, at its position.
#[derive(Debug, PartialEq)]
struct Named {
    name: String,
    position: Position,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn is_python(uri: &Url) -> bool {
    uri.path().ends_with(".py") || uri.path().ends_with(".pyi")
}

/// Words that may stand before `class` (or `interface`, `struct`) on a
/// declaration's line.
const MODIFIERS: &[&str] = &[
    "export",
    "default",
    "declare",
    "abstract",
    "public",
    "private",
    "protected",
    "internal",
    "sealed",
    "final",
    "open",
    "data",
    "static",
    "partial",
    "inner",
];

/// The keyword that declares a type named at byte `name_start` of `line`
/// (`class`, `interface` or `struct`), when the line is that declaration:
/// the keyword just before the name, and before it only modifiers and a
/// C++ `template <…>` — not a comment, a string or an expression that
/// happens to hold the word, and not `enum class`.
fn declared_by(line: &str, name_start: usize) -> Option<&'static str> {
    let before = line[..name_start].trim_end();
    let keyword = ["class", "interface", "struct"].into_iter().find(|k| {
        before.strip_suffix(k).is_some_and(|rest| !rest.chars().next_back().is_some_and(is_word))
    })?;
    let mut rest = before[..before.len() - keyword.len()].trim();
    if let Some(after) = rest.strip_prefix("template")
        && let Some(close) = after.rfind('>')
    {
        rest = after[close + 1..].trim();
    }
    let modifiers_only = rest.split_whitespace().all(|w| MODIFIERS.contains(&w) || w.starts_with('@'));
    modifiers_only.then_some(keyword)
}

/// The byte offset of the UTF-16 column `utf16` in `line`.
fn byte_at(line: &str, utf16: u32) -> usize {
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= utf16 {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    line.len()
}

/// The supertypes' names in the header that follows the type's name at
/// `from` (0-based line, byte): in Python the first parenthesised list
/// (keyword arguments left out); elsewhere everything up to the body's
/// `{` (or `;`), keywords left out. Names inside brackets (type
/// arguments) and qualifiers (`abc.` of `abc.ABC`, `std::`) are not.
fn header_bases(lines: &[&str], from: (usize, usize), python: bool) -> (Vec<Named>, bool) {
    let mut out = Vec::new();
    let (mut depth, mut opened) = (0i32, false);
    let mut after_equals = false;
    for (k, line) in lines.iter().enumerate().skip(from.0).take(MAX_HEADER_LINES) {
        let start = if k == from.0 { from.1 } else { 0 };
        let rest = &line[start.min(line.len())..];
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '#' if python => break,
                '/' if rest[i..].starts_with("//") => break,
                '(' | '[' | '<' => {
                    depth += 1;
                    opened |= c == '(';
                }
                // An arrow (`() => void`, `-> int`) closes nothing.
                '>' if i > 0 && matches!(rest.as_bytes()[i - 1], b'=' | b'-') => {}
                ')' | ']' | '>' => {
                    depth -= 1;
                    if python && depth == 0 && opened {
                        return (out, true);
                    }
                }
                ',' => after_equals = false,
                '=' if python => after_equals = true,
                ':' if python && depth == 0 => return (out, true),
                '{' | ';' if depth <= 0 => return (out, true),
                c if is_word(c) && !c.is_ascii_digit() => {
                    let mut end = i + c.len_utf8();
                    while let Some(&(j, d)) = chars.peek() {
                        if !is_word(d) {
                            break;
                        }
                        end = j + d.len_utf8();
                        chars.next();
                    }
                    let word = &rest[i..end];
                    // Java's `permits` lists subtypes, not supertypes.
                    if word == "permits" && depth == 0 {
                        return (out, true);
                    }
                    let tail = rest[end..].trim_start();
                    let qualifier = tail.starts_with('.') || tail.starts_with("::");
                    let keyword_argument = python && tail.starts_with('=') && !tail.starts_with("==");
                    let wanted = if python { depth == 1 && opened } else { depth == 0 };
                    if wanted
                        && !qualifier
                        && !keyword_argument
                        && !after_equals
                        && !NOT_TYPES.contains(&word)
                    {
                        let byte = start + i;
                        out.push(Named {
                            name: word.to_string(),
                            position: Position::new(k as u32, utf16_column(line, byte)),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    (out, false)
}

/// The type whose header holds the reference at `at` (0-based line,
/// byte), if it stands in one: `class NAME` (or `interface`, `struct`)
/// before it on its line or the lines above, with the header still open
/// there and the reference outside the header's brackets.
fn header_holding(lines: &[&str], at: (usize, usize), python: bool) -> Option<(Named, &'static str)> {
    let first = at.0.saturating_sub(MAX_HEADER_LINES - 1);
    for k in (first..=at.0).rev() {
        let line = lines.get(k)?;
        let upto = if k == at.0 { at.1.min(line.len()) } else { line.len() };
        // The declaration on this line, if the line is one: the last
        // keyword-and-name before the reference that declares a type.
        let mut declared = None;
        for keyword in ["class", "interface", "struct"] {
            for (i, _) in line[..upto].match_indices(keyword) {
                let after = line[i + keyword.len()..].chars().next();
                if line[..i].chars().next_back().is_some_and(is_word)
                    || !after.is_some_and(char::is_whitespace)
                {
                    continue;
                }
                let name_start = i + keyword.len();
                let name_start =
                    name_start + (line[name_start..].len() - line[name_start..].trim_start().len());
                let name_end = name_start
                    + line[name_start..]
                        .char_indices()
                        .find(|(_, c)| !is_word(*c))
                        .map_or(line.len() - name_start, |(i, _)| i);
                let name = &line[name_start..name_end];
                // `class extends Base`: an anonymous class, not one named `extends`.
                if name.is_empty() || NOT_TYPES.contains(&name) || (k == at.0 && name_end >= upto) {
                    continue;
                }
                if declared_by(line, name_start).is_some() && declared.is_none_or(|(s, _, _)| s < name_start)
                {
                    declared = Some((name_start, name_end, keyword));
                }
            }
        }
        let Some((name_start, name_end, keyword)) = declared else { continue };
        // The reference is one of this header's bases exactly when the
        // scan of the header from the name reaches it as a base.
        let (bases, _) = header_bases(lines, (k, name_end), python);
        let target = Position::new(at.0 as u32, utf16_column(lines[at.0], at.1));
        if bases.iter().any(|b| b.position == target) {
            let name = Named {
                name: line[name_start..name_end].to_string(),
                position: Position::new(k as u32, utf16_column(line, name_start)),
            };
            return Some((name, keyword));
        }
        return None;
    }
    None
}

fn kind_number(kind: &str) -> u32 {
    match kind {
        "interface" => 11,
        "struct" => 23,
        _ => 5,
    }
}

/// Asks `method` on the text the names were read from: a change synced
/// since moves them, and the question is not asked.
async fn ask(session: &Opened, doc: &SyncedDoc, method: &str, params: Value) -> Result<Value, String> {
    let mut build = |held: Option<&Held>| match held {
        Some(held) if held.version == doc.version => Ok(params.clone()),
        _ => Err(format!("`{}` changed while the call waited for the server; ask again", doc.uri.path())),
    };
    let uri = doc.uri.to_string();
    session.request_on(Some(&uri), method, &mut build, REQUEST_TIMEOUT).await.map_err(|e| match e {
        OnError::Build(why) | OnError::Unfit(why) => why,
        OnError::Request(e) => format!("{} failed: {e}", session.key.server),
    })
}

/// The one-level hierarchy of the type at `at` in `doc`, in the shape of
/// [`super::follow`]'s answer, with `derived` saying how it was found.
pub(in crate::tools::lsp) async fn derive(
    session: &Opened,
    doc: &SyncedDoc,
    at: &SymbolAt,
    symbol: &str,
    direction: Direction,
) -> Result<Value, String> {
    let lines: Vec<&str> = doc.text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let python = is_python(&doc.uri);
    let start = at.line_text.char_indices().nth(at.column - 1).map_or(0, |(i, _)| i);
    // The whole identifier the symbol is part of: `Cub` of `class Cube`.
    let (mut name_start, mut name_end) = (start, start + symbol.len());
    while let Some(c) = at.line_text[..name_start].chars().next_back().filter(|c| is_word(*c)) {
        name_start -= c.len_utf8();
    }
    while let Some(c) = at.line_text[name_end..].chars().next().filter(|c| is_word(*c)) {
        name_end += c.len_utf8();
    }
    // Headers are read at a type's own declaration, never at a use (the
    // names after `make` in `def make(self, a: Animal)` are no supertypes).
    if declared_by(&at.line_text, name_start).is_none() {
        return Err(format!(
            "{} offers no standard type hierarchy, and tether derives one only at a type's declaration (`class {symbol}`, `interface {symbol}`, `struct {symbol}`); line {} is not one — ask `definition` for where `{symbol}` is declared, then type_hierarchy there",
            session.key.server,
            at.position.line + 1
        ));
    }
    let here = json!({"name": symbol, "uri": doc.uri, "range": {"start": at.position, "end": at.end}, "selectionRange": {"start": at.position, "end": at.end}});
    let mut found = Vec::new();
    let how;
    match direction {
        Direction::Supertypes | Direction::Incoming | Direction::Outgoing => {
            let (bases, closed) = header_bases(&lines, (at.position.line as usize, name_end), python);
            let mut unresolved = Vec::new();
            for base in &bases {
                let answer = ask(
                    session,
                    doc,
                    "textDocument/definition",
                    json!({"textDocument": {"uri": doc.uri}, "position": base.position}),
                )
                .await?;
                match locations(&answer).into_iter().next() {
                    Some((target, range)) => found.push(json!({
                        "item": {"name": base.name, "uri": target, "range": range, "selectionRange": range},
                        "sites": [],
                    })),
                    None => unresolved.push(format!("`{}`", base.name)),
                }
            }
            let mut said = format!("these are the names in `{symbol}`'s header it resolves by definition");
            if !unresolved.is_empty() {
                said.push_str(&format!("; it resolved no definition of {}", unresolved.join(", ")));
            }
            if !closed {
                said.push_str(&format!(
                    "; the header did not end within {MAX_HEADER_LINES} lines, so names past them are not listed"
                ));
            }
            how = said;
        }
        Direction::Subtypes => {
            let answer = ask(
                session,
                doc,
                "textDocument/references",
                json!({"textDocument": {"uri": doc.uri}, "position": at.position, "context": {"includeDeclaration": false}}),
            )
            .await?;
            let mut texts: std::collections::HashMap<Url, Option<String>> = std::collections::HashMap::new();
            let references: Vec<Location> = match answer {
                Value::Null => Vec::new(),
                other => serde_json::from_value(other).map_err(|e| {
                    format!(
                        "{} answered `references` with what is not a list of locations ({e})",
                        session.key.server
                    )
                })?,
            };
            for Location { uri: file, range } in references {
                let text = texts.entry(file.clone()).or_insert_with(|| {
                    file.to_file_path().ok().and_then(|p| std::fs::read_to_string(p).ok())
                });
                let Some(text) = text.as_deref() else { continue };
                let file_lines: Vec<&str> =
                    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
                let Some(line) = file_lines.get(range.start.line as usize) else { continue };
                let byte = byte_at(line, range.start.character);
                if let Some((named, kind)) =
                    header_holding(&file_lines, (range.start.line as usize, byte), is_python(&file))
                {
                    let end = Position::new(
                        named.position.line,
                        named.position.character + named.name.encode_utf16().count() as u32,
                    );
                    let name_range = Range::new(named.position, end);
                    found.push(json!({
                        "item": {"name": named.name, "kind": kind_number(kind), "uri": file, "range": name_range, "selectionRange": name_range},
                        "sites": [],
                    }));
                }
            }
            how = format!("these are the types whose headers name `{symbol}`, among its references");
        }
    }
    Ok(json!({"prepared": [here], "found": found, "derived": how}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, line: usize, after: &str, python: bool) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        let byte = lines[line].find(after).unwrap() + after.len();
        header_bases(&lines, (line, byte), python).0.into_iter().map(|n| n.name).collect()
    }

    #[test]
    fn a_python_header_names_its_bases_without_type_arguments_or_keywords() {
        let text = "class Dog(Animal, abc.ABC, Generic[T], metaclass=Meta):\n    pass\n";
        assert_eq!(names(text, 0, "Dog", true), ["Animal", "ABC", "Generic"]);
        assert_eq!(names("class Plain:\n    x = Base()\n", 0, "Plain", true), Vec::<String>::new());
        let split = "class Long(\n    First,\n    Second,\n):\n";
        assert_eq!(names(split, 0, "Long", true), ["First", "Second"]);
    }

    #[test]
    fn a_brace_header_names_what_it_extends_and_implements() {
        let ts = "export class Cube<T> extends Square<T> implements Shape, ns.Named {\n  area() { return 1; }\n}\n";
        assert_eq!(names(ts, 0, "Cube", false), ["Square", "Shape", "Named"]);
        let cpp = "struct D : public B, private std::vector<int> {\n};\n";
        assert_eq!(names(cpp, 0, "D", false), ["B", "vector"]);
    }

    #[test]
    fn only_a_declaration_is_a_type_header() {
        let line = "    def make(self, a: Animal):";
        assert_eq!(declared_by(line, line.find("make").unwrap()), None);
        assert_eq!(declared_by("export abstract class Cube<T> {", 22), Some("class"));
        let cpp = "template <class T> struct Vec : Base<T> {";
        assert_eq!(declared_by(cpp, cpp.find("Vec").unwrap()), Some("struct"));
        let e = "enum class Color : uint8_t {";
        assert_eq!(declared_by(e, e.find("Color").unwrap()), None, "an enum has no supertypes");
        let c = "    # Check the class first";
        assert_eq!(declared_by(c, c.find("first").unwrap()), None, "a comment");
    }

    #[test]
    fn arrows_and_permits_do_not_end_or_extend_a_header() {
        let ts = "class Store<T = () => void> extends Base {\n}\n";
        assert_eq!(names(ts, 0, "Store", false), ["Base"]);
        let java = "sealed interface Shape extends Named permits Circle, Square {\n}\n";
        assert_eq!(names(java, 0, "Shape", false), ["Named"]);
        let lines: Vec<&str> = vec!["template <class T> struct Vec : Base<T> {"];
        let at = lines[0].find("Base").unwrap();
        assert_eq!(header_holding(&lines, (0, at), false).unwrap().0.name, "Vec");
        let anonymous: Vec<&str> = vec!["  return class extends Base {"];
        assert_eq!(header_holding(&anonymous, (0, anonymous[0].find("Base").unwrap()), false), None);
        let commented: Vec<&str> = vec!["# Check the class first", "if isinstance(obj, Animal):"];
        assert_eq!(header_holding(&commented, (1, commented[1].find("Animal").unwrap()), true), None);
    }

    #[test]
    fn a_reference_in_a_header_names_the_subtype() {
        let text = "class Dog(Animal):\n    def f(self): return Animal()\nclass Cat(\n    Animal,\n):\n";
        let lines: Vec<&str> = text.lines().collect();
        let (dog, kind) = header_holding(&lines, (0, 10), true).unwrap();
        assert_eq!((dog.name.as_str(), dog.position, kind), ("Dog", Position::new(0, 6), "class"));
        assert_eq!(
            header_holding(&lines, (1, lines[1].find("Animal").unwrap()), true),
            None,
            "a use in a body"
        );
        assert_eq!(header_holding(&lines, (3, 4), true).unwrap().0.name, "Cat", "a header over lines");
        let ts: Vec<&str> = vec!["class Box<T extends Shape> extends Base {}"];
        assert_eq!(header_holding(&ts, (0, ts[0].find("Shape").unwrap()), false), None, "a type argument");
        assert_eq!(header_holding(&ts, (0, ts[0].find("Base").unwrap()), false).unwrap().0.name, "Box");
    }
}
