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
use tether_actors::lsp::server::{OnError, Session, SyncedDoc};
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
fn header_bases(lines: &[&str], from: (usize, usize), python: bool) -> Vec<Named> {
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
                ')' | ']' | '>' => {
                    depth -= 1;
                    if python && depth == 0 && opened {
                        return out;
                    }
                }
                ',' => after_equals = false,
                '=' if python => after_equals = true,
                ':' if python && depth == 0 => return out,
                '{' | ';' if depth <= 0 => return out,
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
    out
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
        for keyword in ["class", "interface", "struct"] {
            let Some(found) = line[..upto].rmatch_indices(keyword).find(|(i, _)| {
                let before = line[..*i].chars().next_back();
                let after = line[i + keyword.len()..].chars().next();
                !before.is_some_and(is_word) && after.is_some_and(char::is_whitespace)
            }) else {
                continue;
            };
            let name_start = found.0 + keyword.len();
            let name_start = name_start + (line[name_start..].len() - line[name_start..].trim_start().len());
            let name_end = name_start
                + line[name_start..]
                    .char_indices()
                    .find(|(_, c)| !is_word(*c))
                    .map_or(line.len() - name_start, |(i, _)| i);
            if name_end == name_start || (k == at.0 && name_end >= upto) {
                continue;
            }
            // The reference is one of this header's bases exactly when the
            // scan of the header from the name reaches it as a base.
            let bases = header_bases(lines, (k, name_end), python);
            let target = Position::new(at.0 as u32, utf16_column(lines[at.0], at.1));
            if bases.iter().any(|b| b.position == target) {
                let kind = match keyword {
                    "interface" => "interface",
                    "struct" => "struct",
                    _ => "class",
                };
                let name = Named {
                    name: line[name_start..name_end].to_string(),
                    position: Position::new(k as u32, utf16_column(line, name_start)),
                };
                return Some((name, kind));
            }
            return None;
        }
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
async fn ask(session: &Session, doc: &SyncedDoc, method: &str, params: Value) -> Result<Value, String> {
    let mut build = |held: Option<&Held>| match held {
        Some(held) if held.version == doc.version => Ok(params.clone()),
        _ => Err(format!("`{}` changed while the call waited for the server; ask again", doc.uri.path())),
    };
    let uri = doc.uri.to_string();
    session.request_on(Some(&uri), method, &mut build, REQUEST_TIMEOUT).await.map_err(|e| match e {
        OnError::Build(why) => why,
        OnError::Request(e) => format!("{} failed: {e}", session.key.server),
    })
}

/// The one-level hierarchy of the type at `at` in `doc`, in the shape of
/// [`super::follow`]'s answer, with `derived` saying how it was found.
pub(in crate::tools::lsp) async fn derive(
    session: &Session,
    doc: &SyncedDoc,
    at: &SymbolAt,
    symbol: &str,
    direction: Direction,
) -> Result<Value, String> {
    let lines: Vec<&str> = doc.text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let python = is_python(&doc.uri);
    let start = at.line_text.char_indices().nth(at.column - 1).map_or(0, |(i, _)| i);
    let here = json!({"name": symbol, "uri": doc.uri, "range": {"start": at.position, "end": at.end}, "selectionRange": {"start": at.position, "end": at.end}});
    let mut found = Vec::new();
    let how;
    match direction {
        Direction::Supertypes | Direction::Incoming | Direction::Outgoing => {
            let bases = header_bases(&lines, (at.position.line as usize, start + symbol.len()), python);
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
            how = if unresolved.is_empty() {
                format!("these are the names in `{symbol}`'s header it resolves by definition")
            } else {
                format!(
                    "these are the names in `{symbol}`'s header it resolves by definition; it resolved no definition of {}",
                    unresolved.join(", ")
                )
            };
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
            for Location { uri: file, range } in
                serde_json::from_value::<Vec<Location>>(answer).unwrap_or_default()
            {
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
        header_bases(&lines, (line, byte), python).into_iter().map(|n| n.name).collect()
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
