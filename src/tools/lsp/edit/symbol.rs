//! `lsp_edit` by symbol: `replace` a declaration (or with `body_only` its
//! body), `insert_before` / `insert_after` it a sibling, `delete` it.
//!
//! Which symbol: the language server's document symbols where one serves
//! the file, the file's syntax tree otherwise (the answer says which).
//! The extent — decorators, attributes, an `export`, the doc comment, the
//! body — is always the syntax tree's ([`tether_actors::ast::declaration`]),
//! and the text is written at the file's own indentation, line ending and
//! final newline ([`tether_actors::ast::splice`]). An edit that would
//! leave a syntax error the file did not have is refused; a `delete` is
//! refused while references to the symbol remain, unless `force`.

use std::path::{Path, PathBuf};

use actix::Addr;
use lsp_types::Position;
use serde_json::json;
use tether_actors::ast::declaration::{self, Declaration, GroupKind, Role, row_of};
use tether_actors::ast::lang::Lang;
use tether_actors::ast::splice::{self, Side};
use tether_actors::ast::syntax;
use tether_actors::lsp::edits::offset_of;
use tether_actors::lsp::server::Opened;
use tether_actors::lsp::supervisor::LspSupervisor;
use tether_actors::lsp::workspace_edit::Played;

use super::{Computed, EditAction, EditArgs, NAME, finish};
use crate::handler::CallContext;
use crate::result::ToolResult;
use crate::tools::lsp::{REQUEST_TIMEOUT, open, outline, ready_for};

/// Most remaining references a refused `delete` lists (the rest counted).
pub const MAX_REFERENCES_LISTED: usize = 20;
/// Most candidates an ambiguous name lists.
const MAX_CANDIDATES: usize = 10;

/// A symbol as found: where its name is, and by what.
struct Found {
    decl: Declaration,
    /// "pyright's document symbols", or "the syntax tree (…)".
    by: String,
}

/// The `lsp_edit` actions by symbol.
pub(super) async fn edit_symbol(
    sup: Addr<LspSupervisor>,
    ctx: CallContext,
    path: PathBuf,
    args: EditArgs,
) -> ToolResult {
    match run(&sup, &ctx, &path, args).await {
        Ok(result) => result,
        Err(why) => ToolResult::error(format!("{NAME}: {why}")),
    }
}

async fn run(
    sup: &Addr<LspSupervisor>,
    ctx: &CallContext,
    path: &Path,
    args: EditArgs,
) -> Result<ToolResult, String> {
    let root = ctx.root().to_path_buf();
    let rel = tether_actors::fs::relative(&root, path);
    let lang = Lang::for_path(path).ok_or_else(|| {
        format!("`{rel}` is in no language with a grammar here, so its declarations cannot be read")
    })?;
    let symbol = args.symbol.clone().unwrap_or_default();
    // The server's view first: it syncs the file and lists its symbols.
    let session = open(sup, path, false).await.map(|(s, _)| s);
    let text = match &session {
        Ok(s) => s.doc.as_ref().map(|d| d.text.to_string()).unwrap_or_default(),
        Err(_) => std::fs::read_to_string(path).map_err(|e| format!("`{rel}` could not be read: {e}"))?,
    };
    let found = find(lang, &text, &symbol, args.line, session.as_ref(), &rel).await?;
    let decl = &found.decl;
    let python = lang == Lang::PYTHON;
    let mut notes = vec![format!("note: `{symbol}` found by {}", found.by)];
    let shown_name = match decl.containers.last() {
        Some(c) => format!("{c}.{}", decl.name),
        None => decl.name.clone(),
    };
    let line = row_of(&text, decl.name_at) + 1;
    if let Some(group) = &decl.group
        && !(args.action == EditAction::Replace && args.body_only)
    {
        notes.push(format!(
            "note: `{shown_name}` is {}, taken whole: {}",
            group_words(group.kind),
            parts_of(&text, group)
        ));
    }
    let new_text = args.text.clone().unwrap_or_default();
    let (after, what) = match args.action {
        EditAction::Replace if args.body_only => {
            // A group's body is one part's: the getter's, the implementation's.
            let (whose, at) = match &decl.group {
                Some(g) => {
                    let role = body_role(g.kind);
                    let Some(part) = g.parts.iter().find(|p| p.role == role) else {
                        return Err(format!(
                            "`{shown_name}` is {} without an implementation ({}), so it has no body; replace it whole without `body_only`",
                            group_words(g.kind),
                            parts_of(&text, g)
                        ));
                    };
                    (format!("{} of ", role_words(role)), row_of(&text, part.name_at) + 1)
                }
                None => (String::new(), line),
            };
            let (after, body) = splice::replace_body(&text, decl, &new_text, python).map_err(|e| {
                format!("{e}: `body_only` replaces a body; give the whole declaration without `body_only`")
            })?;
            if body.kept_docstring {
                notes.push("note: its docstring was kept (the new body brought none)".into());
            }
            if let Some(g) = &decl.group {
                notes.push(format!(
                    "note: `{shown_name}` is {} ({}); `body_only` replaced {}'s body",
                    group_words(g.kind),
                    parts_of(&text, g),
                    role_words(body_role(g.kind))
                ));
            }
            (after, format!("a new body for {whose}`{shown_name}` ({rel}:{at})"))
        }
        EditAction::Replace => (
            splice::replace(&text, decl, &new_text),
            format!("a replacement of `{shown_name}` ({rel}:{line})"),
        ),
        EditAction::InsertBefore => (
            splice::insert(&text, decl, &new_text, Side::Before, python),
            format!("an insertion before `{shown_name}` ({rel}:{line})"),
        ),
        EditAction::InsertAfter => (
            splice::insert(&text, decl, &new_text, Side::After, python),
            format!("an insertion after `{shown_name}` ({rel}:{line})"),
        ),
        EditAction::Delete => {
            let remaining = match &session {
                Ok(_) => references_outside(sup, &root, path, &text, decl, args.force).await?,
                Err(e) if !args.force => {
                    return Err(format!(
                        "no language server could say whether `{symbol}` is still used ({e}); delete it with `force: true` to do so unchecked"
                    ));
                }
                Err(_) => Vec::new(),
            };
            if !remaining.is_empty() && !args.force {
                return Err(refused_delete(&symbol, &remaining));
            }
            if !remaining.is_empty() {
                notes.push(format!(
                    "note: deleted with `force` while {} reference(s) remain",
                    remaining.len()
                ));
            }
            (splice::delete(&text, decl), format!("the deletion of `{shown_name}` ({rel}:{line})"))
        }
        EditAction::Apply | EditAction::Format => {
            return Err("`apply` and `format` are not edits by symbol".into());
        }
    };
    check_syntax(lang, &text, &after)?;
    let server = session.as_ref().map(|s| s.key.server.clone()).unwrap_or_else(|_| "syntax tree".into());
    let files =
        vec![Played { path: path.to_path_buf(), before: Some(text.clone()), after: Some(after), edits: 1 }];
    Ok(finish(ctx.clone(), Computed { what, server, files, notes, made: Vec::new() }, args.preview).await)
}

/// Refuses `after` when it has a syntax error `before` did not.
fn check_syntax(lang: Lang, before: &str, after: &str) -> Result<(), String> {
    let (was, now) = (syntax::error_lines(lang, before), syntax::error_lines(lang, after));
    if now.len() > was.len() {
        let first = now.iter().find(|l| !was.contains(l)).or(now.first()).copied().unwrap_or(1);
        return Err(format!(
            "the edit would leave a syntax error at line {first}, which the file does not have now; nothing was written (check `text`)"
        ));
    }
    Ok(())
}

/// The symbol named by `symbol` (on `line`, or as `Container.member`).
///
/// Every declaration the syntax tree reads for the name counts, a property
/// or an overload group as one ([`declaration::whole`]), whatever the
/// server lists (pyright lists a property once): one is taken, several are
/// refused the same way on every path, each with its line. The server's
/// document symbols still find a declaration the tree does not name the
/// same way, and say by whom it was found.
async fn find(
    lang: Lang,
    text: &str,
    symbol: &str,
    line: Option<u32>,
    session: Result<&Opened, &String>,
    rel: &str,
) -> Result<Found, String> {
    // `Foo::bar` as `Foo.bar`, as C++ and Rust write it.
    let symbol = symbol.replace("::", ".");
    let symbol = symbol.as_str();
    let path: Vec<&str> = symbol.split('.').collect();
    let (containers, name) = path.split_at(path.len() - 1);
    let (containers, name): (Vec<String>, &str) =
        (containers.iter().map(|c| c.to_string()).collect(), name[0]);
    let on_line = |d: &Declaration| {
        line.is_none_or(|l| d.names_at().iter().any(|at| row_of(text, *at) + 1 == l as usize))
    };
    let all = declaration::whole(lang, text);
    let mut hits: Vec<Declaration> = all
        .iter()
        .filter(|d| d.name == name && d.containers.ends_with(&containers) && on_line(d))
        .cloned()
        .collect();
    // The server's document symbols, where it answers: where it lists the
    // name, each read as the declaration (all its parts) the tree has there.
    let mut server_said = None;
    let mut server_at = Vec::new();
    if let Ok(s) = session {
        match server_symbols(s).await {
            Ok(listed) => {
                let listed: Vec<&(Vec<String>, String, Position)> = listed
                    .iter()
                    .filter(|(within, n, at)| {
                        n == name && within.ends_with(&containers) && line.is_none_or(|l| at.line + 1 == l)
                    })
                    .collect();
                for (_, _, at) in &listed {
                    let Some(decl) =
                        offset_of(text, *at).and_then(|o| declaration::named_at(lang, text, o).ok())
                    else {
                        continue;
                    };
                    server_at.push(decl.name_at);
                    // One the tree names otherwise (its containers) is still a candidate.
                    if let Some(whole) = all.iter().find(|d| d.names_at().contains(&decl.name_at))
                        && !hits.contains(whole)
                    {
                        hits.push(whole.clone());
                    }
                }
                server_said = Some(match listed.len() {
                    0 => format!("{} lists no such symbol", s.key.server),
                    _ if server_at.is_empty() => {
                        format!("the syntax tree reads no declaration where {} lists it", s.key.server)
                    }
                    n => format!("{} lists {n} of that name", s.key.server),
                });
            }
            Err(e) => server_said = Some(e),
        }
    }
    let server_found =
        matches!(hits.as_slice(), [one] if server_at.iter().any(|a| one.names_at().contains(a)));
    let by = match (&session, server_found) {
        (Ok(s), true) => format!("{}'s document symbols", s.key.server),
        _ => {
            // Why the server's word was not taken: what it said, or why it could not be asked.
            let why = server_said
                .or_else(|| session.err().map(|e| e.trim_start_matches("server unavailable: ").to_string()));
            format!("the syntax tree ({})", why.as_deref().unwrap_or("no language server serves this file"))
        }
    };
    hits.sort_by_key(|d| d.start);
    match hits.as_slice() {
        [one] => Ok(Found { decl: one.clone(), by }),
        [] => Err(not_found(text, symbol, line, &all, rel)),
        many => {
            let listed: Vec<String> = many
                .iter()
                .take(MAX_CANDIDATES)
                .map(|d| format!("{}{} at {}", prefix(d), d.name, lines_of(text, d)))
                .collect();
            Err(format!(
                "{} declarations match `{symbol}` in `{rel}`: {}; give `line`, or `Container.member`; nothing was written",
                many.len(),
                listed.join(", ")
            ))
        }
    }
}

/// "line 12", or for a declaration in parts "lines 12, 20 (a property)".
fn lines_of(text: &str, d: &Declaration) -> String {
    let rows: Vec<String> = d.names_at().iter().map(|at| (row_of(text, *at) + 1).to_string()).collect();
    match &d.group {
        None => format!("line {}", rows.join(", ")),
        Some(g) => format!("lines {} ({})", rows.join(", "), group_words(g.kind)),
    }
}

/// Its parts with their lines: "getter at line 649, setter at line 671".
fn parts_of(text: &str, group: &declaration::Group) -> String {
    let parts: Vec<String> = group
        .parts
        .iter()
        .map(|p| format!("{} at line {}", role_words(p.role), row_of(text, p.name_at) + 1))
        .collect();
    parts.join(", ")
}

/// Which part's body is a group's body.
fn body_role(kind: GroupKind) -> Role {
    match kind {
        GroupKind::Property => Role::Getter,
        GroupKind::Overloads => Role::Implementation,
    }
}

fn role_words(role: Role) -> &'static str {
    match role {
        Role::Getter => "the getter",
        Role::Setter => "the setter",
        Role::Deleter => "the deleter",
        Role::Signature => "a signature",
        Role::Implementation => "the implementation",
    }
}

fn group_words(kind: GroupKind) -> &'static str {
    match kind {
        GroupKind::Property => "a property",
        GroupKind::Overloads => "an overload group",
    }
}

fn prefix(d: &Declaration) -> String {
    d.containers.iter().map(|c| format!("{c}.")).collect()
}

/// Why nothing matched: what the line declares, or the names nearest.
fn not_found(text: &str, symbol: &str, line: Option<u32>, all: &[Declaration], rel: &str) -> String {
    match line {
        Some(l) => {
            let on_line: Vec<String> = all
                .iter()
                .filter(|d| row_of(text, d.name_at) + 1 == l as usize)
                .map(|d| format!("`{}{}`", prefix(d), d.name))
                .collect();
            let shown = text.lines().nth(l as usize - 1).map(str::trim).unwrap_or("");
            let declares = if on_line.is_empty() {
                "declares nothing".to_string()
            } else {
                format!("declares {}", on_line.join(", "))
            };
            let last = symbol.rsplit('.').next().unwrap_or(symbol);
            let elsewhere: Vec<String> = all
                .iter()
                .filter(|d| d.name == last)
                .take(MAX_CANDIDATES)
                .map(|d| format!("line {}", row_of(text, d.name_at) + 1))
                .collect();
            let hint = match elsewhere.is_empty() {
                true => String::new(),
                false => format!("; `{last}` is declared at {}", elsewhere.join(", ")),
            };
            format!("line {l} of `{rel}` {declares}, not `{symbol}` (the line: `{shown}`){hint}")
        }
        None => {
            let last = symbol.rsplit('.').next().unwrap_or(symbol);
            let similar: Vec<String> = all
                .iter()
                .filter(|d| d.name.to_lowercase().contains(&last.to_lowercase()))
                .take(MAX_CANDIDATES)
                .map(|d| format!("`{}{}` (line {})", prefix(d), d.name, row_of(text, d.name_at) + 1))
                .collect();
            match similar.is_empty() {
                true => format!("`{rel}` declares no `{symbol}`"),
                false => format!("`{rel}` declares no `{symbol}`; it declares {}", similar.join(", ")),
            }
        }
    }
}

/// The file's document symbols, flattened: the containers' names, the
/// name, and where the name is.
async fn server_symbols(session: &Opened) -> Result<Vec<(Vec<String>, String, Position)>, String> {
    let doc = session.doc.as_ref().ok_or("the server synced no document")?;
    ready_for(session).await;
    let answer = session
        .request("textDocument/documentSymbol", json!({"textDocument": {"uri": doc.uri}}), REQUEST_TIMEOUT)
        .await
        .map_err(|e| format!("{} could not list the file's symbols ({e})", session.key.server))?;
    Ok(outline::flatten(&answer).into_iter().map(|l| (l.containers, l.name, l.at.start)).collect())
}

/// The references to `decl` outside its own declaration (a recursive call
/// does not keep it alive), as `file:line: text`, asked as the
/// `references` action asks; an answer that may be missing uses (the
/// server still indexing, files it leaves out) is an error unless `force`.
async fn references_outside(
    sup: &Addr<LspSupervisor>,
    root: &Path,
    path: &Path,
    text: &str,
    decl: &Declaration,
    force: bool,
) -> Result<Vec<String>, String> {
    let line = row_of(text, decl.name_at) as u32 + 1;
    let answer = crate::tools::lsp::all_references(
        sup.clone(),
        root.to_path_buf(),
        path.to_path_buf(),
        line,
        decl.name.clone(),
    )
    .await;
    if answer.is_error {
        return match force {
            true => Ok(Vec::new()),
            false => Err(format!(
                "whether `{}` is still used could not be told ({}); delete it with `force: true` to do so unchecked",
                decl.name,
                answer.text.trim_start_matches("lsp references: ")
            )),
        };
    }
    let rel = tether_actors::fs::relative(root, path);
    let (own_first, own_last) =
        (row_of(text, decl.doc.unwrap_or(decl.start)) + 1, row_of(text, decl.end) + 1);
    let places = answer.data.as_ref().and_then(|d| d["references"].as_array().cloned()).unwrap_or_default();
    let mut out = Vec::new();
    for place in places {
        let (Some(file), Some(at)) = (place["path"].as_str(), place["line"].as_u64()) else { continue };
        if file == rel && (own_first..=own_last).contains(&(at as usize)) {
            continue;
        }
        out.push(format!("{file}:{at}: {}", place["text"].as_str().unwrap_or("")));
    }
    // What the answer says it may be missing.
    let doubts: Vec<&str> = answer.text.lines().filter(|l| l.starts_with("note: ")).collect();
    if out.is_empty() && !doubts.is_empty() && !force {
        return Err(format!(
            "no use of `{}` was found, but the answer may be missing some ({}); delete it with `force: true` to do so anyway",
            decl.name,
            doubts.iter().map(|d| d.trim_start_matches("note: ")).collect::<Vec<_>>().join("; ")
        ));
    }
    Ok(out)
}

fn refused_delete(symbol: &str, remaining: &[String]) -> String {
    let mut s = format!(
        "`{symbol}` is still used in {} place(s); nothing was written (remove the uses, or pass `force: true`):",
        remaining.len()
    );
    for r in remaining.iter().take(MAX_REFERENCES_LISTED) {
        s.push_str(&format!("\n{r}"));
    }
    if remaining.len() > MAX_REFERENCES_LISTED {
        s.push_str(&format!("\n… {} more not shown", remaining.len() - MAX_REFERENCES_LISTED));
    }
    s
}
