//! What `ast_grep`, `ast_edit` and `resolve` share: the scope their
//! arguments name, the sentences that say what a scan covered and what it
//! left out, and why a request failed.

use tether_actors::ast::actor::AstError;
use tether_actors::ast::lang::Lang;
use tether_actors::ast::scan::{Coverage, MAX_FILE_BYTES, Scope};
use tether_actors::ast::staging::{MAX_STAGED, Resolution, StagingError};

use super::plural;
use crate::args::confined;
use crate::handler::{CallContext, ToolError};

/// Why a structural request failed, and what to do next.
pub(crate) fn ast_error(e: &AstError) -> String {
    match e {
        AstError::Scan(e) => e.to_string(),
        AstError::Rewrite(e) => e.to_string(),
        AstError::Staging(e) => staging_error(e),
        AstError::Worker(e) => format!("the structural search worker stopped unexpectedly: {e}"),
    }
}

/// Why a staged edit could not be resolved (or staged).
fn staging_error(e: &StagingError) -> String {
    match e {
        StagingError::Unknown { id, pending } => {
            format!("no staged edit is called `{id}`; {}", pending_phrase(pending))
        }
        StagingError::AlreadyResolved { id, how } => format!(
            "`{id}` was already resolved: {}. Stage the change again with ast_edit if it is still wanted",
            resolved_how(how)
        ),
        StagingError::NotYours { id, pending } => format!(
            "`{id}` was staged by another conversation, and only that one can resolve it; stage your own change with ast_edit. {}",
            pending_phrase(pending)
        ),
        StagingError::Full => {
            format!(
                "{MAX_STAGED} edits are already staged and unresolved; accept or discard some with resolve first"
            )
        }
    }
}

/// The asker's edits still waiting, or that none is.
fn pending_phrase(pending: &[String]) -> String {
    if pending.is_empty() {
        return "nothing is staged; call ast_edit to stage a change".to_string();
    }
    let shown: Vec<&str> = pending.iter().take(10).map(String::as_str).collect();
    let more = pending.len().saturating_sub(shown.len());
    let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("staged edits waiting: {}{tail}", shown.join(", "))
}

/// How a staged edit ended, in a phrase.
fn resolved_how(how: &Resolution) -> String {
    match how {
        Resolution::Accepted { files, .. } => format!("accepted ({} files written)", files.len()),
        Resolution::Discarded => "discarded".to_string(),
        Resolution::Refused { moved } => {
            format!("refused because {} changed after staging", moved.join(", "))
        }
        Resolution::Failed { reason } => format!("failed: {reason}"),
    }
}

/// Resolves the `path` and `language` arguments of a structural tool.
pub(crate) fn scope(
    ctx: &CallContext,
    path: Option<&str>,
    language: Option<&str>,
) -> Result<Scope, ToolError> {
    let path = match path {
        Some(p) => confined(ctx.root(), "path", p)?,
        None => ctx.root().to_path_buf(),
    };
    if !path.exists() {
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        return Err(ToolError::new(format!(
            "argument `path`: `{rel}` does not exist; give an existing file or directory relative to the working directory (omit it to search everything)"
        )));
    }
    let lang = match language {
        Some(id) => {
            Some(id.parse::<Lang>().map_err(|e| ToolError::new(format!("argument `language`: {e}")))?)
        }
        None => None,
    };
    if lang.is_none() && path.is_file() && Lang::for_path(&path).is_none() {
        let rel = tether_actors::fs::relative(ctx.root(), &path);
        return Err(ToolError::new(format!(
            "argument `path`: cannot tell the language of `{rel}` from its extension; pass `language` (one of: {})",
            Lang::id_list()
        )));
    }
    Ok(Scope { root: ctx.root().to_path_buf(), path, lang, prefilter: true })
}

/// "searched 120 files (python 117, html 3; javascript in 2 of them)" and
/// what was skipped or left out, for result texts.
pub(crate) fn coverage_phrase(cov: &Coverage) -> String {
    let langs: Vec<String> = cov.per_language.iter().map(|(lang, n)| format!("{lang} {n}")).collect();
    let mut out = format!("searched {} file{}", cov.files, plural(cov.files));
    if !langs.is_empty() {
        out.push_str(&format!(" ({})", langs.join(", ")));
    }
    if !cov.embedded.is_empty() {
        let parts: Vec<String> = cov.embedded.iter().map(|(lang, n)| format!("{n} {lang}")).collect();
        out.push_str(&format!(
            ", with {} region{} embedded in them",
            parts.join(", "),
            plural(cov.embedded.values().sum())
        ));
    }
    if let Some(own) = &cov.named_file_language {
        out.push_str(&format!(" (read in the language asked for; by its extension it is {own})"));
    }
    let skipped = cov.skipped();
    if skipped > 0 {
        let mut why = Vec::new();
        for (n, reason) in [
            (cov.skipped_binary, "binary".to_string()),
            (cov.skipped_large, format!("over {} MiB", MAX_FILE_BYTES / (1024 * 1024))),
            (cov.skipped_not_utf8, "not UTF-8".to_string()),
            (cov.unreadable, "unreadable".to_string()),
            (cov.skipped_symlinks, format!("symlink{}, not followed", plural(cov.skipped_symlinks))),
        ] {
            if n > 0 {
                why.push(format!("{n} {reason}"));
            }
        }
        out.push_str(&format!("; skipped {skipped} ({})", why.join(", ")));
    }
    if cov.skipped_ignored > 0 {
        let mut examples = cov.ignored_examples.join(", ");
        if cov.skipped_ignored > cov.ignored_examples.len() {
            examples.push_str(", …");
        }
        out.push_str(&format!(
            "; {} path{} left out by .gitignore/.ignore ({examples})",
            cov.skipped_ignored,
            plural(cov.skipped_ignored)
        ));
    }
    for (lang, n) in &cov.other_language {
        let why = match lang.as_str() {
            "c" => {
                ".c and .h files are C, as the ast-grep CLI reads them; pass language c, or name a header as `path` to read it as C++"
            }
            "cpp" => "pass language cpp to search them",
            "tsx" => ".tsx is its own language id; pass language tsx to search them",
            _ => "pass language typescript to search them",
        };
        out.push_str(&format!("; {n} {lang} file{} not searched ({why})", plural(*n)));
    }
    if !cov.unparseable_files.is_empty() {
        let parts: Vec<String> =
            cov.unparseable_files.iter().map(|(lang, n)| format!("{n} {lang}")).collect();
        out.push_str(&format!(
            "; not searched: {} file(s), where the pattern does not parse",
            parts.join(", ")
        ));
    }
    out
}

/// What to say when a scope held no file of a searchable language.
pub(crate) fn nothing_to_search(scope: &Scope, rel: &str) -> Option<String> {
    if !scope.path.is_dir() {
        return None;
    }
    let which = match scope.lang {
        Some(lang) => format!("no {lang} files"),
        None => "no files of a bundled language".to_string(),
    };
    Some(format!(
        "{which} under `{rel}` (after .gitignore); nothing was searched. Check `path`, or pass `language` (one of: {})",
        Lang::id_list()
    ))
}

/// A hint for a pattern that matched nothing and spells a lower-case
/// `$name`, which ast-grep reads as literal text, not a metavariable.
pub(crate) fn lower_case_hint(pattern: &str) -> Option<String> {
    let bytes = pattern.as_bytes();
    let at = (0..bytes.len()).find(|&i| {
        bytes[i] == b'$'
            && bytes.get(i + 1).is_some_and(|b| b.is_ascii_lowercase())
            && (i == 0 || bytes[i - 1] != b'$')
    })?;
    let word: String = pattern[at + 1..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    Some(format!(
        "`${word}` is literal text, not a metavariable: metavariables are upper case (`${}`, `$$$ARGS`, `$_`)",
        word.to_uppercase()
    ))
}

#[cfg(test)]
mod staging_words {
    use super::*;

    #[test]
    fn a_staging_failure_says_which_ids_wait_and_what_to_call() {
        let theirs = StagingError::NotYours { id: "edit_1".into(), pending: vec!["edit_2".into()] };
        assert_eq!(
            ast_error(&AstError::Staging(theirs)),
            "`edit_1` was staged by another conversation, and only that one can resolve it; stage your own change with ast_edit. staged edits waiting: edit_2"
        );
        let again = StagingError::AlreadyResolved { id: "edit_1".into(), how: Resolution::Discarded };
        assert!(staging_error(&again).contains("already resolved: discarded. Stage the change again"));
        let none = StagingError::Unknown { id: "edit_9".into(), pending: Vec::new() };
        assert_eq!(
            staging_error(&none),
            "no staged edit is called `edit_9`; nothing is staged; call ast_edit to stage a change"
        );
    }
}
