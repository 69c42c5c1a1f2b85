//! Dotted symbol queries (`Session.request`, `pkg.http.Session.request`):
//! the containers asked for and the member, and whether a symbol sits in
//! those containers.
//!
//! Workspace-symbol servers match a query on a symbol's own name (pyright
//! answers `Session.request` with nothing), so the member alone is sent
//! and the answers are kept by where they sit: the module their file is,
//! then the server's `containerName` — pyright's class path
//! (`Session.Adapter`), clangd's `net::Session`, jdtls's package, gopls's
//! package path (gopls puts the receiver in the name: `Session.Request`).
//! A file's own symbols are kept by the names of the symbols they nest in.

use std::collections::BTreeMap;

/// Files whose name stands for their directory (`pkg/__init__.py` is `pkg`).
const PACKAGE_FILES: &[&str] = &["__init__", "index", "mod"];
/// Containers named when a dotted query kept nothing.
const MAX_CONTAINERS_NAMED: usize = 8;

/// A query of the form `Container.member`.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::tools::lsp) struct Dotted {
    /// The containers, outermost first (`["pkg", "Session"]`).
    pub containers: Vec<String>,
    /// The member, as the server is asked for it.
    pub member: String,
}

impl Dotted {
    /// The parts of `query`, when it is names joined by dots (no empty
    /// part, no space); anything else is asked as it is written.
    pub fn parse(query: &str) -> Option<Dotted> {
        let parts: Vec<&str> = query.split('.').collect();
        if parts.len() < 2 || parts.iter().any(|p| p.is_empty() || p.contains(char::is_whitespace)) {
            return None;
        }
        let (member, containers) = parts.split_last()?;
        Some(Dotted {
            containers: containers.iter().map(|c| c.to_string()).collect(),
            member: member.to_string(),
        })
    }

    /// `Session`, as the query wrote its containers.
    pub fn container(&self) -> String {
        self.containers.join(".")
    }

    /// Whether `qualifiers` (outermost first) end with the containers asked for.
    pub fn sits_in(&self, qualifiers: &[String]) -> bool {
        qualifiers.ends_with(&self.containers)
    }
}

/// The name a segment of a qualified name holds: `(*Session)` is
/// `Session`, `area(int)` is `area`, `impl Display for Session` is
/// `Session`, `Box<T>` is `Box`.
fn bare(segment: &str) -> String {
    let mut s = segment.trim();
    if let Some(inner) = s.strip_prefix('(').and_then(|r| r.split_once(')')).map(|(inner, _)| inner) {
        s = inner;
    }
    if let Some((head, _)) = s.split_once('(') {
        s = head;
    }
    if let Some((head, _)) = s.split_once('<') {
        s = head;
    }
    let s = s.split_whitespace().last().unwrap_or("");
    s.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).to_string()
}

/// The names in a container as a server writes it: `Session.Adapter`,
/// `net::Session`, `example.com/probe`, `App\Models`.
pub(in crate::tools::lsp) fn segments(container: &str) -> Vec<String> {
    container
        .split("::")
        .flat_map(|p| p.split(['.', '/', '\\']))
        .map(bare)
        .filter(|s| !s.is_empty())
        .collect()
}

/// A symbol's qualifiers (outermost first) and its own name: the module
/// its file is (`pkg/http.py` is `pkg.http`), its container, and what
/// its name qualifies itself with (gopls's `Session.Request`).
pub(in crate::tools::lsp) fn qualified(
    path: &str,
    container: Option<&str>,
    name: &str,
) -> (Vec<String>, String) {
    let mut qualifiers: Vec<String> = Vec::new();
    let mut dirs: Vec<&str> = path.split(['/', '\\']).collect();
    if let Some(file) = dirs.pop() {
        let stem = file.split_once('.').map_or(file, |(stem, _)| stem);
        qualifiers.extend(dirs.iter().map(|d| bare(d)).filter(|d| !d.is_empty()));
        if !PACKAGE_FILES.contains(&stem) {
            qualifiers.push(bare(stem));
        }
    }
    qualifiers.extend(container.map(segments).unwrap_or_default());
    let mut own = segments(name);
    let last = own.pop().unwrap_or_else(|| name.to_string());
    qualifiers.extend(own);
    (qualifiers, last)
}

/// Whether a symbol of `kind` lives in a type (its container is then worth
/// showing with it).
pub(in crate::tools::lsp) fn is_member(kind: &str) -> bool {
    matches!(kind, "method" | "property" | "field" | "constructor" | "enum member" | "event" | "operator")
}

/// A symbol's name with its container before it (`Session.request`,
/// `net::Session::request`), when it has one and the name does not
/// already carry it (gopls's `Session.Request`).
pub(in crate::tools::lsp) fn with_container(name: &str, container: Option<&str>) -> String {
    match container {
        Some(c) if !c.is_empty() && !name.contains('.') => {
            let sep = if c.contains("::") { "::" } else { "." };
            format!("{c}{sep}{name}")
        }
        _ => name.to_string(),
    }
}

/// "Session (2), Pool (1), no container (1)": where the symbols the
/// member alone matched sit, most first.
pub(in crate::tools::lsp) fn where_they_sit<'a>(containers: impl Iterator<Item = Option<&'a str>>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in containers {
        *counts.entry(c.unwrap_or("")).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = counts.into_iter().collect();
    counts.sort_by_key(|(c, n)| (std::cmp::Reverse(*n), c.is_empty(), *c));
    let named: Vec<String> = counts
        .iter()
        .take(MAX_CONTAINERS_NAMED)
        .map(|(c, n)| if c.is_empty() { format!("no container ({n})") } else { format!("{c} ({n})") })
        .collect();
    let more = counts.len().saturating_sub(MAX_CONTAINERS_NAMED);
    let more = if more > 0 { format!(", and {more} more") } else { String::new() };
    format!("{}{more}", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_dotted_query_is_names_joined_by_dots() {
        let d = Dotted::parse("pkg.Session.request").unwrap();
        assert_eq!((d.containers.clone(), d.member.as_str()), (v(&["pkg", "Session"]), "request"));
        assert_eq!(d.container(), "pkg.Session");
        for plain in ["request", "Session.", ".request", "a..b", "a. b", "."] {
            assert_eq!(Dotted::parse(plain), None, "{plain}");
        }
    }

    #[test]
    fn containers_are_read_as_each_server_writes_them() {
        assert_eq!(segments("Session.Adapter"), v(&["Session", "Adapter"]));
        assert_eq!(segments("net::Session"), v(&["net", "Session"]));
        assert_eq!(segments("example.com/probe"), v(&["example", "com", "probe"]));
        assert_eq!(segments("impl Display for Session"), v(&["Session"]));
        assert_eq!(segments("(*Session).Request"), v(&["Session", "Request"]));
        assert_eq!(segments("area(int)"), v(&["area"]));
    }

    #[test]
    fn a_symbol_sits_in_the_module_of_its_file_then_its_container() {
        let (q, own) = qualified("pkg/http.py", Some("Session"), "request");
        assert_eq!((q.clone(), own.as_str()), (v(&["pkg", "http", "Session"]), "request"));
        let asked = |query: &str| Dotted::parse(query).unwrap().sits_in(&q);
        assert!(asked("Session.request") && asked("http.Session.request") && asked("pkg.http.Session.r"));
        assert!(!asked("Pool.request") && !asked("pkg.Session.request") && !asked("session.request"));
        assert_eq!(qualified("pkg/__init__.py", None, "f").0, v(&["pkg"]));
        let (q, own) = qualified("client.go", Some("example.com/probe"), "Session.Request");
        assert_eq!((q.last().map(String::as_str), own.as_str()), (Some("Session"), "Request"));
    }

    #[test]
    fn a_member_is_shown_after_its_container() {
        assert_eq!(with_container("request", Some("Session.Adapter")), "Session.Adapter.request");
        assert_eq!(with_container("request", Some("net::Session")), "net::Session::request");
        assert_eq!(with_container("Session.Request", Some("example.com/probe")), "Session.Request");
        assert_eq!(with_container("request", None), "request");
    }

    #[test]
    fn where_they_sit_names_the_most_first() {
        let found = [Some("Pool"), Some("Session"), None, Some("Session")];
        assert_eq!(where_they_sit(found.into_iter()), "Session (2), Pool (1), no container (1)");
    }
}
