//! LSP answers as text a model reads: relative `path:line:col` plus the
//! source line, references grouped by file with counts, hover as signature
//! then doc, symbols at their names.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lsp_types::{Location, LocationLink, Range, Url};
use tether_actors::fs::display_path;
use tether_actors::lsp::edits::char_column;

/// Longest source line shown next to a location.
const MAX_SHOWN_LINE: usize = 200;

/// A location resolved to a path and 1-based line/column, with its source line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Place {
    /// Relative to the working directory, or absolute when outside it.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based character column.
    pub column: usize,
    /// The source line (trimmed), when readable.
    pub text: Option<String>,
}

/// Reads files once per answer.
pub struct Lines<'a> {
    workdir: &'a Path,
    cache: HashMap<PathBuf, Option<Vec<String>>>,
}

impl<'a> Lines<'a> {
    /// A reader for locations under `workdir`.
    pub fn new(workdir: &'a Path) -> Self {
        Self { workdir, cache: HashMap::new() }
    }

    /// The lines of the file at `path`, read once.
    pub fn lines(&mut self, path: &Path) -> Option<&[String]> {
        let lines = self.cache.entry(path.to_path_buf()).or_insert_with(|| {
            std::fs::read_to_string(path).ok().map(|t| t.lines().map(str::to_string).collect())
        });
        lines.as_deref()
    }

    fn line(&mut self, path: &Path, line: u32) -> Option<String> {
        self.lines(path)?.get(line as usize).cloned()
    }

    /// The place of `range` in the file at `uri`.
    pub fn place(&mut self, uri: &Url, range: &Range) -> Place {
        let path = uri.to_file_path().unwrap_or_else(|()| PathBuf::from(uri.as_str()));
        let raw = self.line(&path, range.start.line);
        let column = raw
            .as_deref()
            .map_or(range.start.character as usize + 1, |l| char_column(l, range.start.character));
        let text = raw.map(|l| tether_actors::text::cut(l.trim(), MAX_SHOWN_LINE).0);
        Place { path: display_path(self.workdir, &path), line: range.start.line + 1, column, text }
    }

    /// [`Lines::place`] at `name`, where it stands as a whole word on the
    /// range's first line at or after the range's start: a server that
    /// gives a declaration's whole range (typescript-language-server's
    /// workspace symbols start at `export`) would point at a keyword.
    pub fn place_of_name(&mut self, uri: &Url, range: &Range, name: &str) -> Place {
        let mut place = self.place(uri, range);
        let path = uri.to_file_path().unwrap_or_else(|()| PathBuf::from(uri.as_str()));
        let Some(raw) = self.line(&path, range.start.line) else { return place };
        let from = raw.char_indices().nth(place.column - 1).map_or(raw.len(), |(i, _)| i);
        if let Some(at) = tether_actors::lsp::edits::whole_word(&raw[from..], name) {
            place.column = raw[..from + at].chars().count() + 1;
        }
        place
    }
}

impl Place {
    /// `path:line:col: text`.
    pub fn line_entry(&self) -> String {
        match &self.text {
            Some(t) => format!("{}:{}:{}: {t}", self.path, self.line, self.column),
            None => format!("{}:{}:{}", self.path, self.line, self.column),
        }
    }
}

/// The locations of a definition-like answer (`Location`, `Location[]`,
/// `LocationLink[]` or null), at the target's name when links say where.
pub fn locations(value: &serde_json::Value) -> Vec<(Url, Range)> {
    if value.is_null() {
        return Vec::new();
    }
    if let Ok(loc) = serde_json::from_value::<Location>(value.clone()) {
        return vec![(loc.uri, loc.range)];
    }
    if let Ok(locs) = serde_json::from_value::<Vec<Location>>(value.clone()) {
        return locs.into_iter().map(|l| (l.uri, l.range)).collect();
    }
    if let Ok(links) = serde_json::from_value::<Vec<LocationLink>>(value.clone()) {
        return links.into_iter().map(|l| (l.target_uri, l.target_selection_range)).collect();
    }
    Vec::new()
}

/// How to see more of a paged list that ends at `end` of `total` with
/// `limit` a page: "; pass offset=N for more, or a larger limit (up to
/// …)"; empty on the last page.
pub fn more_hint(end: usize, total: usize, limit: usize) -> String {
    if end >= total {
        return String::new();
    }
    let larger = if limit < super::MAX_REFERENCES_PAGE {
        format!(", or a larger limit (up to {})", super::MAX_REFERENCES_PAGE)
    } else {
        String::new()
    };
    format!("; pass offset={end} for more{larger}")
}

/// References grouped by file with counts, one page of `page` entries
/// starting at `offset`.
pub fn grouped(places: &[Place], offset: usize, page: usize) -> String {
    let mut by_file: BTreeMap<&str, usize> = BTreeMap::new();
    for p in places {
        *by_file.entry(p.path.as_str()).or_default() += 1;
    }
    let shown: Vec<&Place> = places.iter().skip(offset).take(page).collect();
    let mut out = String::new();
    let mut current: Option<&str> = None;
    for p in &shown {
        if current != Some(p.path.as_str()) {
            let _ = writeln!(out, "{} ({})", p.path, by_file[p.path.as_str()]);
            current = Some(p.path.as_str());
        }
        let _ = writeln!(out, "  {}:{}: {}", p.line, p.column, p.text.as_deref().unwrap_or(""));
    }
    out
}

/// Hover contents as signature (the first code block) then documentation.
pub fn hover_text(value: &serde_json::Value) -> Option<String> {
    let contents = value.get("contents")?;
    let raw = match contents {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => match (o.get("kind"), o.get("value"), o.get("language")) {
            (Some(_), Some(v), _) => v.as_str().unwrap_or("").to_string(),
            (None, Some(v), Some(lang)) => {
                format!("```{}\n{}\n```", lang.as_str().unwrap_or(""), v.as_str().unwrap_or(""))
            }
            _ => String::new(),
        },
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| match i {
                serde_json::Value::String(s) => s.clone(),
                other => format!(
                    "```{}\n{}\n```",
                    other["language"].as_str().unwrap_or(""),
                    other["value"].as_str().unwrap_or("")
                ),
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    };
    // Markdown (every form but a `plaintext` MarkupContent) is read as
    // text: pyright's docstrings come with `&nbsp;` indents, `\_` escapes
    // and two-space line breaks, a sixth of a hover.
    let plaintext = contents.get("kind").and_then(|k| k.as_str()) == Some("plaintext");
    let raw = if plaintext { raw } else { markdown_as_text(&raw) };
    let raw = without_inline_images(&raw);
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    // Split off the first fenced block as the signature.
    if let Some(start) = raw.find("```") {
        let after_fence = &raw[start + 3..];
        let body_start = after_fence.find('\n').map_or(after_fence.len(), |i| i + 1);
        if let Some(end) = after_fence[body_start..].find("```") {
            let signature = after_fence[body_start..body_start + end].trim();
            let before = raw[..start].trim();
            let rest = after_fence[body_start + end + 3..].trim().trim_start_matches("---").trim();
            let doc =
                [before, rest].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("\n\n");
            return Some(if doc.is_empty() {
                signature.to_string()
            } else {
                format!("{signature}\n\n{doc}")
            });
        }
    }
    Some(raw.to_string())
}

/// Markdown outside its fenced code blocks read as plain text: HTML
/// entities (`&nbsp;`, `&lt;`, `&gt;`, `&amp;`) as their characters, a
/// backslash escape as the character escaped (not inside inline code,
/// where markdown keeps backslashes), and a line's trailing two-space
/// break dropped.
pub fn markdown_as_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fenced = false;
    for (k, line) in markdown.split('\n').enumerate() {
        if k > 0 {
            out.push('\n');
        }
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push_str(line);
            continue;
        }
        if fenced {
            out.push_str(line);
            continue;
        }
        let line = line.strip_suffix("  ").unwrap_or(line);
        let line =
            line.replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
        let mut code = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '`' => {
                    code = !code;
                    out.push(c);
                }
                '\\' if !code && chars.peek().is_some_and(|n| n.is_ascii_punctuation()) => {
                    out.push(chars.next().expect("peeked"));
                }
                _ => out.push(c),
            }
        }
    }
    out
}

/// Markdown with its inline images (`![alt](data:…)`) left out: the CSS
/// and HTML servers attach a base64 "Baseline" badge of some 3,000
/// characters to every hover, which a model pays for and cannot see.
fn without_inline_images(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(start) = rest.find("![") {
        let tail = &rest[start..];
        // `![alt](data:…)`: the alt text ends at the first `]`, which must
        // open the target at once, and the target must be a `data:` URI.
        let image_end = tail[2..]
            .find(']')
            .map(|close| close + 2)
            .filter(|close| !tail[2..*close].contains('\n') && tail[*close..].starts_with("](data:"))
            .and_then(|close| tail[close..].find(')').map(|end| close + end + 1));
        match image_end {
            Some(end) => {
                out.push_str(&rest[..start]);
                rest = &tail[end..];
            }
            None => {
                out.push_str(&rest[..start + 2]);
                rest = &tail[2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The name of an LSP symbol kind.
pub fn kind_name(kind: lsp_types::SymbolKind) -> &'static str {
    use lsp_types::SymbolKind as K;
    match kind {
        K::FILE => "file",
        K::MODULE => "module",
        K::NAMESPACE => "namespace",
        K::PACKAGE => "package",
        K::CLASS => "class",
        K::METHOD => "method",
        K::PROPERTY => "property",
        K::FIELD => "field",
        K::CONSTRUCTOR => "constructor",
        K::ENUM => "enum",
        K::INTERFACE => "interface",
        K::FUNCTION => "function",
        K::VARIABLE => "variable",
        K::CONSTANT => "constant",
        K::STRING => "string",
        K::NUMBER => "number",
        K::BOOLEAN => "boolean",
        K::ARRAY => "array",
        K::OBJECT => "object",
        K::KEY => "key",
        K::NULL => "null",
        K::ENUM_MEMBER => "enum member",
        K::STRUCT => "struct",
        K::EVENT => "event",
        K::OPERATOR => "operator",
        K::TYPE_PARAMETER => "type parameter",
        _ => "symbol",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hover_puts_the_signature_first() {
        let v = json!({"contents": {"kind": "markdown", "value": "```python\ndef f(x: int) -> str\n```\n---\nTurns x into text."}});
        assert_eq!(hover_text(&v).unwrap(), "def f(x: int) -> str\n\nTurns x into text.");
        assert_eq!(hover_text(&json!({"contents": ""})), None);
    }

    #[test]
    fn markdown_reads_as_text_outside_code() {
        let md = "Args:  \n&nbsp;&nbsp;no\\_wrap (Optional\\[bool\\]): end \"\\\\n\", `a\\_b` &lt;x&gt;\n```python\nx = a\\_b&nbsp;\n```";
        assert_eq!(
            markdown_as_text(md),
            "Args:\n  no_wrap (Optional[bool]): end \"\\n\", `a\\_b` <x>\n```python\nx = a\\_b&nbsp;\n```"
        );
        let v = json!({"contents": {"kind": "plaintext", "value": "a\\_b &nbsp;"}});
        assert_eq!(hover_text(&v).unwrap(), "a\\_b &nbsp;", "plain text is left as it is");
    }

    #[test]
    fn hover_leaves_inline_images_out() {
        let badge = "![Baseline icon](data:image/svg+xml;base64,PHN2Zz4=)";
        let v = json!({"contents": {"kind": "markdown", "value": format!("The h1 element.\n\n{badge} _Widely available_\n\n![a link](https://x/y.png)")}});
        assert_eq!(
            hover_text(&v).unwrap(),
            "The h1 element.\n\n _Widely available_\n\n![a link](https://x/y.png)"
        );
        // Only the data: image goes; an image before it, and code that
        // merely holds `![`, stay.
        let mixed = "![logo](https://x/y.png) see ![b](data:image/png;base64,AA) and `a![0]`";
        assert_eq!(without_inline_images(mixed), "![logo](https://x/y.png) see  and `a![0]`");
        assert_eq!(without_inline_images("`v![0]` then ![x](data:a) end"), "`v![0]` then  end");
    }

    #[test]
    fn references_are_grouped_by_file_with_counts() {
        let place = |path: &str, line| Place { path: path.into(), line, column: 1, text: Some("x".into()) };
        let places = vec![place("a.py", 1), place("a.py", 5), place("b.py", 2)];
        assert_eq!(grouped(&places, 0, 50), "a.py (2)\n  1:1: x\n  5:1: x\nb.py (1)\n  2:1: x\n");
        assert_eq!(grouped(&places, 2, 50), "b.py (1)\n  2:1: x\n");
    }
}
