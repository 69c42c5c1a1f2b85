//! Staged rewrites: planned changes held under an id (`edit_N`) until they
//! are accepted or discarded.
//!
//! Accepting re-reads every file and compares it with the content captured
//! when the change was planned; one difference refuses the whole change.
//! The writes then go through [`crate::fs::commit`], all or nothing.
//! Every id, once resolved, remembers how, so a second `resolve` gets a
//! clear answer instead of "unknown".

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use super::rewrite::{FileRewrite, RewritePlan};
use crate::fs::{CommitError, Diff, DiffFile, FileChange, commit, relative, unified};

/// Most unresolved edits held at once; more are refused until some resolve.
pub const MAX_STAGED: usize = 4096;
/// Longest diff preview, in lines; the rest is counted, not shown.
pub const MAX_PREVIEW_LINES: usize = 200;
/// Most resolved ids remembered, oldest forgotten first.
const MAX_REMEMBERED: usize = 16 * 1024;

/// A change waiting for `resolve`.
#[derive(Debug, Clone)]
pub struct StagedEdit {
    /// The id handed to the caller.
    pub id: String,
    /// The conversation that staged it; only it may resolve it.
    pub owner: String,
    /// The planned change.
    pub plan: RewritePlan,
}

/// The summary of a staged change a caller sees.
#[derive(Debug, Clone, Serialize)]
pub struct StagedSummary {
    /// The id to resolve.
    pub edit_id: String,
    /// Replacements across all files.
    pub replacements: usize,
    /// How many of them sat inside another match (rewritten inside out).
    pub nested: usize,
    /// Nested matches whose text the rewrite of their outer match drops.
    pub nested_left: usize,
    /// Files that change, with their replacement counts, ordered by path.
    pub files: BTreeMap<String, usize>,
    /// A unified diff, cut at [`MAX_PREVIEW_LINES`].
    pub preview: String,
    /// Diff lines left out of the preview.
    pub preview_lines_omitted: usize,
}

/// How a staged change ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Resolution {
    /// Every file was written.
    Accepted {
        /// Files written.
        files: Vec<String>,
        /// Replacements made.
        replacements: usize,
        /// Files written that had other hard links (relative to the root),
        /// with how many: those links keep the old content.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        linked: Vec<(String, u64)>,
    },
    /// Dropped without writing.
    Discarded,
    /// Refused because files changed after staging; nothing was written.
    Refused {
        /// The files that changed.
        moved: Vec<String>,
    },
    /// A write failed; the files already written were restored.
    Failed {
        /// What went wrong, in a sentence.
        reason: String,
    },
}

/// Why a resolve (or a staging) could not proceed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StagingError {
    /// No such id was ever handed out; the asker's ids still waiting.
    Unknown { id: String, pending: Vec<String> },
    /// The id was resolved before, this way.
    AlreadyResolved { id: String, how: Resolution },
    /// Another conversation staged it; ids count up run-wide, so a guess
    /// or a stale id must not resolve someone else's change. The asker's
    /// own ids still waiting.
    NotYours { id: String, pending: Vec<String> },
    /// [`MAX_STAGED`] edits are waiting already.
    Full,
}

/// The staged edits of one run.
#[derive(Debug, Default)]
pub struct Staging {
    next: u64,
    pending: HashMap<String, StagedEdit>,
    resolved: HashMap<String, Resolution>,
    resolved_order: std::collections::VecDeque<String>,
}

impl Staging {
    /// Holds `plan`, staged by conversation `owner`, under a fresh id and
    /// summarises it.
    pub fn stage(&mut self, plan: RewritePlan, owner: &str) -> Result<StagedSummary, StagingError> {
        if self.pending.len() >= MAX_STAGED {
            return Err(StagingError::Full);
        }
        self.next += 1;
        let id = format!("edit_{}", self.next);
        let summary = summarise(&id, &plan);
        self.pending.insert(id.clone(), StagedEdit { id, owner: owner.to_string(), plan });
        Ok(summary)
    }

    /// How many edits are waiting.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The files the pending edit `id` would write, if `asker` staged it.
    pub fn paths(&self, id: &str, asker: &str) -> Vec<std::path::PathBuf> {
        match self.pending.get(id) {
            Some(edit) if edit.owner == asker => edit.plan.files.iter().map(|f| f.path.clone()).collect(),
            _ => Vec::new(),
        }
    }

    /// Takes the edit out for resolving by conversation `asker`.
    pub fn take(&mut self, id: &str, asker: &str) -> Result<StagedEdit, StagingError> {
        match self.pending.get(id) {
            Some(edit) if edit.owner == asker => return Ok(self.pending.remove(id).expect("just seen")),
            Some(_) => {
                return Err(StagingError::NotYours { id: id.to_string(), pending: self.waiting_for(asker) });
            }
            None => {}
        }
        if let Some(how) = self.resolved.get(id) {
            return Err(StagingError::AlreadyResolved { id: id.to_string(), how: how.clone() });
        }
        Err(StagingError::Unknown { id: id.to_string(), pending: self.waiting_for(asker) })
    }

    /// The ids `conversation` staged and has not resolved, oldest first.
    fn waiting_for(&self, conversation: &str) -> Vec<String> {
        let mut pending: Vec<String> =
            self.pending.values().filter(|e| e.owner == conversation).map(|e| e.id.clone()).collect();
        pending.sort_by_key(|id| id.trim_start_matches("edit_").parse::<u64>().unwrap_or(0));
        pending
    }

    /// Remembers how `id` ended.
    pub fn record(&mut self, id: &str, how: Resolution) {
        if self.resolved_order.len() >= MAX_REMEMBERED
            && let Some(old) = self.resolved_order.pop_front()
        {
            self.resolved.remove(&old);
        }
        self.resolved_order.push_back(id.to_string());
        self.resolved.insert(id.to_string(), how);
    }
}

/// Writes a staged edit: drift check, then every file or none.
/// How an accepted edit's files are written: [`commit`], or the host's
/// own path around it (tether's records what each conversation wrote).
pub type Committer =
    std::sync::Arc<dyn Fn(&[FileChange]) -> Result<crate::fs::Committed, CommitError> + Send + Sync>;

pub fn accept(edit: &StagedEdit, root: &Path, committer: Option<&Committer>) -> Resolution {
    let changes: Vec<FileChange> = edit.plan.files.iter().map(file_change).collect();
    let committed = match committer {
        Some(commit_with) => commit_with(&changes),
        None => commit(&changes),
    };
    match committed {
        Ok(committed) => Resolution::Accepted {
            files: edit.plan.files.iter().map(|f| f.rel.clone()).collect(),
            replacements: edit.plan.replacements(),
            linked: committed.linked.iter().map(|(p, n)| (relative(root, p), *n)).collect(),
        },
        Err(CommitError::Drift { moved }) => {
            Resolution::Refused { moved: moved.iter().map(|p| relative(root, p)).collect() }
        }
        Err(e) => Resolution::Failed { reason: format!("{}; {}", e.describe(root), e.left()) },
    }
}

fn file_change(file: &FileRewrite) -> FileChange {
    FileChange {
        path: file.path.clone(),
        before: Some(file.before.clone().into_bytes()),
        after: Some(file.after.clone().into_bytes()),
        mode: None,
    }
}

fn summarise(id: &str, plan: &RewritePlan) -> StagedSummary {
    let files: Vec<DiffFile<'_>> = plan
        .files
        .iter()
        .map(|f| DiffFile { rel: &f.rel, before: Some(&f.before), after: Some(&f.after) })
        .collect();
    let Diff { text: preview, omitted } = unified(&files, MAX_PREVIEW_LINES);
    StagedSummary {
        edit_id: id.to_string(),
        replacements: plan.replacements(),
        nested: plan.files.iter().map(|f| f.nested).sum(),
        nested_left: plan.files.iter().map(|f| f.nested_left).sum(),
        files: plan.files.iter().map(|f| (f.rel.clone(), f.replacements)).collect(),
        preview,
        preview_lines_omitted: omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::scan::Coverage;

    fn plan(n: usize) -> RewritePlan {
        RewritePlan { files: Vec::new(), coverage: Coverage { files: n, ..Default::default() } }
    }

    #[test]
    fn ids_count_up_and_resolved_ids_say_how_they_ended() {
        let mut staging = Staging::default();
        assert_eq!(staging.stage(plan(0), "a").unwrap().edit_id, "edit_1");
        assert_eq!(staging.stage(plan(0), "a").unwrap().edit_id, "edit_2");
        let edit = staging.take("edit_1", "a").unwrap();
        staging.record(&edit.id, Resolution::Discarded);
        let again = staging.take("edit_1", "a").unwrap_err();
        assert_eq!(again, StagingError::AlreadyResolved { id: "edit_1".into(), how: Resolution::Discarded });
        let unknown = staging.take("edit_9", "a").unwrap_err();
        assert_eq!(unknown, StagingError::Unknown { id: "edit_9".into(), pending: vec!["edit_2".into()] });
    }

    #[test]
    fn only_the_staging_conversation_resolves_its_edit() {
        let mut staging = Staging::default();
        staging.stage(plan(0), "a").unwrap();
        staging.stage(plan(0), "b").unwrap();
        let theirs = staging.take("edit_1", "b").unwrap_err();
        let own = vec!["edit_2".to_string()];
        assert_eq!(theirs, StagingError::NotYours { id: "edit_1".into(), pending: own }, "b's own ids only");
        assert_eq!(staging.pending(), 2, "the refused id stays staged for its owner");
        assert_eq!(staging.take("edit_1", "a").unwrap().owner, "a");
    }
}
