//! `lsp symbols`: a file's symbols (`documentSymbol`, nested, at their
//! names' own positions) and the workspace's (`workspace/symbol`, asked of
//! each server of a language the tree holds, once per server).
//! Here: whom a workspace question goes to and how the answers merge,
//! rank and — for a dotted query — are kept by their container; `ask`
//! asks one server, `dotted` reads `Container.member` queries, `document`
//! lists a file's symbols.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use actix::Addr;
use serde_json::{Value, json};
use tether_actors::lsp::census::Present;
use tether_actors::lsp::config::Table;
use tether_actors::lsp::discovery;
use tether_actors::lsp::supervisor::{LspSupervisor, Route, Unavailable};

mod ask;
mod document;
mod dotted;
mod members;

use super::{Page, languages_here};
use crate::result::ToolResult;
use ask::ask;
pub(super) use document::document_symbols;
use dotted::Dotted;

/// Project roots asked per language: a monorepo with more says which
/// were left out, rather than starting a server for each.
const MAX_ROOTS_PER_LANGUAGE: usize = 6;
/// Files of a language tried before it is given up as unroutable.
const MAX_UNROUTED: usize = 32;

/// How a symbol's name answers the query, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// The name itself.
    Exact,
    /// The name in another case.
    ExactIgnoringCase,
    /// The name starts with the query.
    Prefix,
    /// The name holds the query.
    Contains,
    /// Whatever else the server's fuzzy matching found.
    Fuzzy,
}

impl Rank {
    fn of(name: &str, query: &str) -> Rank {
        let (lower, wanted) = (name.to_lowercase(), query.to_lowercase());
        if name == query {
            Rank::Exact
        } else if lower == wanted {
            Rank::ExactIgnoringCase
        } else if lower.starts_with(&wanted) {
            Rank::Prefix
        } else if lower.contains(&wanted) {
            Rank::Contains
        } else {
            Rank::Fuzzy
        }
    }

    fn word(self) -> &'static str {
        match self {
            Rank::Exact => "exact",
            Rank::ExactIgnoringCase => "exact-ignoring-case",
            Rank::Prefix => "prefix",
            Rank::Contains => "contains",
            Rank::Fuzzy => "fuzzy",
        }
    }
}

/// What a symbol is, in the order a model looking for a name wants them:
/// types, then functions and methods, then what a module or a type holds
/// (module-level variables, constants, fields), then a function's own
/// names (its parameters and locals, which pyright lists by the hundred:
/// `console` in every method taking one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    Type,
    Callable,
    Held,
    Local,
}

impl Tier {
    /// The tier of a symbol of `kind` declared in `container`. A variable
    /// is a local when its container is a function: the container's last
    /// segment is spelled as functions are (lower case or `_` first), not
    /// as types are — what the server's answer leaves to tell them apart.
    fn of(kind: &str, container: Option<&str>) -> Tier {
        match kind {
            "class" | "interface" | "struct" | "enum" | "module" | "namespace" | "package"
            | "type parameter" => Tier::Type,
            "function" | "method" | "constructor" | "operator" | "event" => Tier::Callable,
            "variable" | "constant" | "field" | "property" | "key" | "object" | "array" | "string"
            | "number" | "boolean" | "null" => {
                // A package path (`example.com/g`) holds module-level names.
                if container.is_some_and(|c| c.contains('/')) {
                    return Tier::Held;
                }
                let last = container.and_then(|c| c.rsplit(['.', ':']).find(|s| !s.is_empty()));
                match last.and_then(|l| l.chars().next()) {
                    Some(c) if c.is_lowercase() || c == '_' => Tier::Local,
                    _ => Tier::Held,
                }
            }
            _ => Tier::Held,
        }
    }
}

/// One symbol a server answered with.
struct Found {
    name: String,
    /// Where the server says it is declared (`containerName`): a class,
    /// a namespace, a package.
    container: Option<String>,
    kind: &'static str,
    place: super::render::Place,
    /// Where the server said it is, for its body.
    uri: lsp_types::Url,
    range: lsp_types::Range,
    lang: String,
    /// The root of the server that answered, relative to the working directory.
    root: String,
    outside: bool,
    rank: Rank,
}

impl Found {
    /// Where it goes in the list: the project's before what lies outside
    /// the working directory; exact names first; then by [`Tier`]; then
    /// by how well the name answers the query.
    fn order(&self) -> (bool, bool, Tier, Rank) {
        (self.outside, self.rank != Rank::Exact, self.tier(), self.rank)
    }

    /// Its [`Tier`]. gopls names a field `Ledger.DependsField` in the
    /// container `example.com/g`: the name's own qualifier is what holds it.
    fn tier(&self) -> Tier {
        let holder = self.name.rsplit_once('.').map(|(q, _)| q).or(self.container.as_deref());
        Tier::of(self.kind, holder)
    }
}

/// A path outside the working directory, shorter where it can be: under
/// the home directory as `~/…` (a toolchain's or a package cache's files:
/// `~/go/pkg/mod/…`, `~/.rustup/…`), else as it is.
fn home_relative(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && home != "/" => match Path::new(path).strip_prefix(&home) {
            Ok(rest) => format!("~/{}", rest.display()),
            Err(_) => path.to_string(),
        },
        _ => path.to_string(),
    }
}

/// One server instance a workspace question goes to.
struct Target {
    lang: String,
    /// A file of its root, to route and open through.
    sample: PathBuf,
    root: PathBuf,
    server: String,
}

/// Whom a workspace question goes to: one file per server instance, at
/// most [`MAX_ROOTS_PER_LANGUAGE`] per language, and what is said of the
/// rest.
struct Asks {
    targets: Vec<Target>,
    notes: Vec<String>,
    /// Languages present whose files no server could be routed for.
    not_asked: usize,
    /// "language (server)" of servers that do not search workspace symbols.
    cannot: Vec<String>,
}

/// Every root of every language: each directory's file is routed to its
/// nearest root's server, and each server asked once. Routed before
/// anything is opened: opening a second language's file in a server
/// already asked would make it the one it searches. Past the roots asked,
/// or past [`MAX_UNROUTED`] files that failed to route (each failure
/// probes every candidate's binary, on the supervisor's thread), the rest
/// are counted from the root markers of the server asked, without routing
/// (routing makes an actor).
async fn plan_asks(sup: &Addr<LspSupervisor>, root: &Path, table: &Table, present: &[Present]) -> Asks {
    let mut asks = Asks { targets: Vec::new(), notes: Vec::new(), not_asked: 0, cannot: Vec::new() };
    let mut keys = std::collections::BTreeSet::new();
    for p in present {
        let candidates = table.candidates(&p.id);
        if !candidates.is_empty() && candidates.iter().all(|s| !s.workspace_symbols) {
            // Not started for a question none of them answers.
            asks.cannot.push(format!("{} ({})", p.id, candidates[0].id));
            continue;
        }
        let (mut asked_here, mut unrouted, mut why_not, mut cannot_here) = (0, 0, None, false);
        let mut rest = Vec::new();
        for (k, sample) in p.samples.iter().enumerate() {
            if asked_here == MAX_ROOTS_PER_LANGUAGE || unrouted == MAX_UNROUTED {
                rest = p.samples[k..].to_vec();
                break;
            }
            match sup.send(Route { file: sample.clone() }).await {
                Ok(Ok(routed)) if keys.insert(routed.key.clone()) => {
                    let server = table.servers.iter().find(|s| s.id == routed.key.server);
                    if server.is_some_and(|s| !s.workspace_symbols) {
                        let entry = format!("{} ({})", p.id, routed.key.server);
                        if !asks.cannot.contains(&entry) {
                            asks.cannot.push(entry);
                        }
                        cannot_here = true;
                    } else {
                        asked_here += 1;
                        asks.targets.push(Target {
                            lang: p.id.clone(),
                            sample: sample.clone(),
                            root: routed.key.root.clone(),
                            server: routed.key.server.clone(),
                        });
                    }
                }
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    unrouted += 1;
                    why_not.get_or_insert_with(|| match e {
                        Unavailable::NotUsable { reasons, .. } => {
                            reasons.iter().map(crate::tools::unusable::brief).collect::<Vec<_>>()
                        }
                        other => vec![crate::tools::unusable::unavailable(&other)],
                    });
                }
                Err(e) => {
                    unrouted += 1;
                    why_not.get_or_insert_with(|| vec![e.to_string()]);
                }
            }
        }
        let left = roots_left(root, table, &asks.targets, &p.id, rest).await;
        if left.roots > 0 {
            asks.notes.push(format!(
                "{}: {} more root(s) not asked (at most {MAX_ROOTS_PER_LANGUAGE} per language)",
                p.id, left.roots
            ));
        }
        let unrouted = unrouted + left.rootless;
        match why_not {
            // Every candidate's reason: which to install, or where a root is missing.
            Some(why) if asked_here == 0 && !cannot_here => {
                asks.not_asked += 1;
                asks.notes.push(format!("{}: not asked ({} file(s)): {}", p.id, p.files, why.join("; ")));
            }
            // Part of the language is under no root a server serves: the
            // server that serves the rest says why.
            Some(why) => asks.notes.push(format!(
                "{}: its files in {}{unrouted} more director{} not searched: {}",
                p.id,
                if left.counted { "" } else { "at least " },
                if unrouted == 1 { "y were" } else { "ies were" },
                why.first().map(String::as_str).unwrap_or("")
            )),
            None if left.rootless > 0 => asks.notes.push(format!(
                "{}: its files in {} more director{} under no root of its server were not searched",
                p.id,
                left.rootless,
                if left.rootless == 1 { "y" } else { "ies" }
            )),
            None => {}
        }
    }
    asks
}

/// What lies past the files routed.
#[derive(Default)]
struct Left {
    /// Roots not asked.
    roots: usize,
    /// Directories under no root of the server.
    rootless: usize,
    /// Whether every file past the routed ones was looked at (always: the
    /// count is exact; `false` only when there was no server to go by).
    counted: bool,
}

/// The roots, other than those its server was asked at, that the files
/// `rest` lie under, by the root markers of the server asked for
/// `language`, and the files under none (off the actor thread: it stats
/// each file's ancestors).
async fn roots_left(
    root: &Path,
    table: &Table,
    targets: &[Target],
    language: &str,
    rest: Vec<PathBuf>,
) -> Left {
    if rest.is_empty() {
        return Left { counted: true, ..Left::default() };
    }
    let Some(server) = targets.iter().find(|t| t.lang == language).map(|t| t.server.clone()) else {
        return Left::default();
    };
    let asked: Vec<PathBuf> = targets.iter().filter(|t| t.server == server).map(|t| t.root.clone()).collect();
    let Some(markers) = table.servers.iter().find(|s| s.id == server).map(|s| s.root_markers.clone()) else {
        return Left::default();
    };
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut roots = std::collections::BTreeSet::new();
        let mut rootless = 0;
        for file in &rest {
            match discovery::find_root(file, &root, &markers) {
                Some(r) if !asked.contains(&r) => {
                    roots.insert(r);
                }
                Some(_) => {}
                None => rootless += 1,
            }
        }
        Left { roots: roots.len(), rootless, counted: true }
    })
    .await
    .unwrap_or_default()
}

pub(super) async fn workspace_symbols(
    sup: Addr<LspSupervisor>,
    root: PathBuf,
    query: String,
    language: Option<String>,
    body: bool,
    page: Page,
) -> ToolResult {
    let (table, mut present, capped) = match languages_here(&sup, &root, language.clone()).await {
        Ok(here) => (here.table, here.present, here.capped),
        Err(e) => return ToolResult::error(format!("lsp symbols: {e}")),
    };
    // One server may serve several languages (typescript-language-server:
    // TypeScript and JavaScript); it is asked once, through a file of the
    // language it is built for — a `.js` file outside every tsconfig is
    // a project of its own, and tsserver searches only that one.
    present.sort_by_key(|p| p.id == "javascript");
    let Asks { targets, mut notes, not_asked, mut cannot } = plan_asks(&sup, &root, &table, &present).await;
    if capped {
        notes.push(format!(
            "the walk for languages and roots stopped at {} files: what lies past it was not asked",
            tether_actors::lsp::census::MAX_FILES_WALKED
        ));
    }
    let reached = targets.len();
    // `Session.request`: the servers are asked for the member, and what
    // they find is kept by its container.
    let dotted = Dotted::parse(&query);
    let asked_for = dotted.as_ref().map_or_else(|| query.clone(), |d| d.member.clone());
    // Which servers were asked, as `language@root`.
    let asked: Vec<String> = targets
        .iter()
        .map(|t| format!("{}@{}", t.lang, tether_actors::fs::relative(&root, &t.root)))
        .collect();
    let answers = futures::future::join_all(
        targets.into_iter().map(|t| ask(sup.clone(), root.clone(), t.lang, t.sample, asked_for.clone())),
    )
    .await;
    let mut places = Vec::new();
    let mut failed = 0;
    let mut unsupported = 0;
    for asked in answers {
        unsupported += usize::from(asked.cannot.is_some());
        failed += usize::from(asked.failed);
        places.extend(asked.found);
        notes.extend(asked.notes);
        if let Some(c) = asked.cannot
            && !cannot.contains(&c)
        {
            cannot.push(c);
        }
    }
    if !cannot.is_empty() {
        notes.push(format!("not searched: {} (no workspace symbols in these servers)", cannot.join(", ")));
    }
    let mut elsewhere = Vec::new();
    if let Some(d) = &dotted {
        (places, elsewhere) = in_containers(places, d);
    }
    // What the model asked for first: exact names, then types, functions
    // and methods, what modules and types hold, and a function's locals
    // last; within each, prefixes before what the servers' fuzzy matching
    // let through; the project's before what lies outside the working
    // directory (a toolchain's standard library). Stable: within a rank,
    // each server's own order.
    places.sort_by_key(Found::order);
    // jdtls lists a class twice on its line, in either order: at the
    // declaration's start (its modifiers) and at its name. One row per
    // name, kind and line, at the later column — the name's.
    let mut kept: std::collections::HashMap<(String, &str, String, u32), usize> =
        std::collections::HashMap::new();
    let mut rows: Vec<Found> = Vec::with_capacity(places.len());
    for f in places {
        let key = (f.name.clone(), f.kind, f.place.path.clone(), f.place.line);
        match kept.get(&key) {
            Some(&k) if rows[k].place.column < f.place.column => rows[k] = f,
            Some(_) => {}
            None => {
                kept.insert(key, rows.len());
                rows.push(f);
            }
        }
    }
    let places = rows;
    let several_roots = places.iter().any(|f| f.root != places[0].root);
    let total = places.len();
    if reached == unsupported && failed == 0 && not_asked == 0 && !cannot.is_empty() {
        return ToolResult::error(format!(
            "lsp symbols: no server here searches workspace symbols for `{query}`: {}; ask for a file's symbols (`file`), or search the text (`ast_grep`)",
            notes.join("; ")
        ));
    }
    if reached == 0 {
        // No server was asked: "none match" would be about nothing.
        let why = if not_asked > 0 {
            notes.join("; ")
        } else {
            format!(
                "no file under the working directory is of a language a server is configured for{}",
                language.as_deref().map(|l| format!(" (asked for {l})")).unwrap_or_default()
            )
        };
        return ToolResult::error(format!(
            "lsp symbols: no server was asked for `{query}`: {why}; pass `language`, or check `tether status`"
        ));
    }
    if total == 0 && failed > 0 {
        return ToolResult::error(format!(
            "lsp symbols: no server could answer for `{query}`: {}; ask again (a crashed server restarts on the next call)",
            notes.join("; ")
        ));
    }
    let (span, paged) = match page.span(total, "symbols") {
        Ok(span) => span,
        Err(e) => return ToolResult::error(format!("lsp symbols: {e}")),
    };
    let shown = &places[span.clone()];
    let locals = shown.iter().filter(|f| f.tier() == Tier::Local).count();
    let mut text = if total == 0 {
        // A line of its own: notes follow.
        let none = match &dotted {
            Some(d) => none_in_containers(&query, d, &elsewhere),
            None => format!("no workspace symbols match `{query}`"),
        };
        none + "\n"
    } else {
        format!("{total} workspace symbol(s) match `{query}`{paged}:\n")
    };
    for f in shown {
        let root = if several_roots { format!(", root {}", f.root) } else { String::new() };
        let outside = if f.outside { " (outside the working directory)" } else { "" };
        let _ = writeln!(
            text,
            "{} ({}, {}{root}) {}:{}:{}{outside}",
            shown_name(f, dotted.is_some()),
            f.kind,
            f.lang,
            f.place.path,
            f.place.line,
            f.place.column
        );
    }
    if locals > 0 {
        let _ = writeln!(
            text,
            "note: {locals} of those listed are parameters or locals of functions, each listed after the types, functions, methods and module-level names that match as well"
        );
    }
    for note in &notes {
        let _ = writeln!(text, "note: {note}");
    }
    let bodies = if body {
        let at: Vec<(lsp_types::Url, lsp_types::Range)> =
            shown.iter().map(|f| (f.uri.clone(), f.range)).collect();
        Some(super::body::of_locations(&sup, &root, &at).await)
    } else {
        None
    };
    let data: Vec<Value> = shown
        .iter()
        .map(|f| {
            json!({
                "name": f.name, "container": f.container, "kind": f.kind, "path": f.place.path,
                "line": f.place.line, "column": f.place.column, "language": f.lang, "root": f.root,
                "outside_workdir": f.outside, "match": f.rank.word(),
            })
        })
        .collect();
    let result = ToolResult::text(text.trim_end())
        .with_data(json!({"total": total, "offset": span.start, "symbols": data, "asked": asked}));
    match bodies {
        Some(bodies) => super::body::attach(result, bodies),
        None => result,
    }
}

/// What a row shows as the symbol's name: a member's (every symbol's,
/// under a dotted query) with its container before it, `Session.request`.
fn shown_name(f: &Found, dotted: bool) -> String {
    if dotted || dotted::is_member(f.kind) {
        dotted::with_container(&f.name, f.container.as_deref())
    } else {
        f.name.clone()
    }
}

/// Where a symbol sits, as the server says: the qualifier in its name
/// (gopls's `Session.Request`), else its container.
fn sits_in(f: &Found) -> Option<String> {
    let own = dotted::segments(&f.name);
    match own.split_last() {
        Some((_, qualifiers)) if !qualifiers.is_empty() => Some(qualifiers.join(".")),
        _ => f.container.clone(),
    }
}

/// The symbols the member matched that sit in the containers `d` asks
/// for (ranked by their own name against the member), and the rest.
fn in_containers(found: Vec<Found>, d: &Dotted) -> (Vec<Found>, Vec<Found>) {
    let (mut kept, mut rest) = (Vec::new(), Vec::new());
    for mut f in found {
        let (qualifiers, own) = dotted::qualified(&f.place.path, f.container.as_deref(), &f.name);
        f.rank = Rank::of(&own, &d.member);
        if d.sits_in(&qualifiers) { kept.push(f) } else { rest.push(f) }
    }
    (kept, rest)
}

/// Why a dotted query found nothing: what the member alone matched, and
/// where those sit, so the next query names a container that is there.
fn none_in_containers(query: &str, d: &Dotted, elsewhere: &[Found]) -> String {
    let (member, container) = (&d.member, d.container());
    // Names that hold the member, not what fuzzy matching let through.
    let named: Vec<&Found> = elsewhere.iter().filter(|f| f.rank < Rank::Fuzzy).collect();
    let alone = if named.is_empty() { elsewhere.iter().collect() } else { named };
    if alone.is_empty() {
        return format!(
            "no workspace symbols match `{query}`: none is named like `{member}` at all (the servers are asked for the member alone)"
        );
    }
    let sits: Vec<Option<String>> = alone.iter().map(|f| sits_in(f)).collect();
    let mut text = format!(
        "no workspace symbols match `{query}`: nothing `{member}` matches sits in `{container}`; `{member}` alone matches {}: {}",
        alone.len(),
        dotted::where_they_sit(sits.iter().map(Option::as_deref))
    );
    let unplaced: Vec<&&Found> = alone.iter().filter(|f| dotted::is_member(f.kind)).collect();
    if sits.iter().any(Option::is_some) {
        let _ = write!(text, "; write one of those before `.{member}`");
    } else if !unplaced.is_empty() {
        // Members with no container: the server does not name them
        // (typescript-language-server).
        let servers: std::collections::BTreeSet<&str> = unplaced.iter().map(|f| f.lang.as_str()).collect();
        let _ = write!(
            text,
            "; the {} server names no container for its symbols: ask a file's symbols with `file` and this `query`, which follows their nesting",
            servers.into_iter().collect::<Vec<_>>().join("/")
        );
    } else {
        // At top level only: a module is the one container they have.
        let module = dotted::qualified(&alone[0].place.path, None, &alone[0].name).0.pop();
        let module = module.map(|m| format!(" (`{m}.{member}`)")).unwrap_or_default();
        let _ = write!(text, "; leave the container out, or name the module{module}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_paths_are_shortened_under_home_only() {
        let home = std::env::var("HOME").unwrap_or_default();
        if !home.is_empty() && home != "/" {
            assert_eq!(home_relative(&format!("{home}/go/pkg/mod/x.go")), "~/go/pkg/mod/x.go");
        }
        assert_eq!(home_relative("/usr/lib/go/src/fmt/print.go"), "/usr/lib/go/src/fmt/print.go");
    }

    #[test]
    fn exact_names_rank_first() {
        assert!(Rank::of("Depends", "Depends") < Rank::of("depends", "Depends"));
        assert!(Rank::of("DependsOn", "Depends") < Rank::of("route_Depends", "Depends"));
        assert_eq!(Rank::of("dependencies", "Depends"), Rank::Fuzzy);
    }

    #[test]
    fn a_field_in_a_go_package_is_held_not_a_local() {
        assert!(Tier::of("field", Some("example.com/g")) == Tier::Held);
        assert!(Tier::of("field", Some("Ledger")) == Tier::Held);
        assert!(Tier::of("variable", Some("handler")) == Tier::Local);
    }
}
