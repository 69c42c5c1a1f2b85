//! A server's `WorkspaceEdit` played, in its own order, on a copy of the
//! files it touches: text edits, and the files it creates, renames and
//! deletes. The result is each touched file's content before and after,
//! ready for an all-or-nothing commit; nothing here writes.
//!
//! LSP lets one edit create a file and fill it, or rename a file and then
//! edit it under its new name: the operations only make sense in order, on
//! the state the ones before them left, which is what the copy holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lsp_types::{DocumentChangeOperation, DocumentChanges, OneOf, ResourceOp, TextEdit, Url, WorkspaceEdit};

use super::edits::{EditError, apply_edits};

/// One file as the edit leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Played {
    /// Where it is (absolute, as the server named it).
    pub path: PathBuf,
    /// What it held before the edit; `None` if it did not exist.
    pub before: Option<String>,
    /// What it holds after; `None` if the edit deletes it (or renames it away).
    pub after: Option<String>,
    /// How many text edits landed in it.
    pub edits: usize,
}

/// Why an edit could not be played. Nothing was written in any case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// A URI that is not a file.
    #[error("the edit touches {0}, which is not a file")]
    NotAFile(String),
    /// A file could not be read.
    #[error("cannot read {path} ({why})", path = .0.display(), why = .1)]
    Unreadable(PathBuf, String),
    /// A directory is created, renamed or deleted.
    #[error("the edit creates, renames or deletes the directory {}, which tether does not do", .0.display())]
    Directory(PathBuf),
    /// A text edit, rename or delete of a file that is not there.
    #[error("the edit changes {}, which does not exist at that point of the edit", .0.display())]
    Missing(PathBuf),
    /// A file is created or renamed onto one that exists, without `overwrite`.
    #[error("the edit creates {} over an existing file without saying to overwrite it", .0.display())]
    Exists(PathBuf),
    /// A text edit does not apply.
    #[error("in {}: {}", .0.display(), .1)]
    Text(PathBuf, EditError),
}

/// Plays `edit`, reading each file it touches the first time through
/// `read` (`Ok(None)`: it does not exist). The files come back in path
/// order, those the edit left as they were left out.
pub fn play(
    edit: &WorkspaceEdit,
    read: &mut dyn FnMut(&Path) -> Result<Option<String>, String>,
) -> Result<Vec<Played>, PlayError> {
    let mut copy = Copy { files: BTreeMap::new(), read };
    // A server may send both forms of the same edit; `documentChanges` wins.
    match (&edit.document_changes, &edit.changes) {
        (Some(DocumentChanges::Edits(edits)), _) => {
            for doc in edits {
                copy.text(&doc.text_document.uri, doc.edits.iter().map(plain).collect())?;
            }
        }
        (Some(DocumentChanges::Operations(ops)), _) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(doc) => {
                        copy.text(&doc.text_document.uri, doc.edits.iter().map(plain).collect())?
                    }
                    DocumentChangeOperation::Op(ResourceOp::Create(c)) => {
                        let option = |f: fn(&lsp_types::CreateFileOptions) -> Option<bool>| {
                            c.options.as_ref().and_then(f) == Some(true)
                        };
                        copy.create(&c.uri, option(|o| o.overwrite), option(|o| o.ignore_if_exists))?
                    }
                    DocumentChangeOperation::Op(ResourceOp::Rename(r)) => {
                        let option = |f: fn(&lsp_types::RenameFileOptions) -> Option<bool>| {
                            r.options.as_ref().and_then(f) == Some(true)
                        };
                        copy.rename(
                            &r.old_uri,
                            &r.new_uri,
                            option(|o| o.overwrite),
                            option(|o| o.ignore_if_exists),
                        )?
                    }
                    DocumentChangeOperation::Op(ResourceOp::Delete(d)) => {
                        let ignore = d.options.as_ref().and_then(|o| o.ignore_if_not_exists) == Some(true);
                        copy.delete(&d.uri, ignore)?
                    }
                }
            }
        }
        (None, Some(changes)) => {
            for (uri, edits) in changes {
                copy.text(uri, edits.clone())?;
            }
        }
        (None, None) => {}
    }
    Ok(copy
        .files
        .into_iter()
        .filter(|(_, f)| f.before != f.now)
        .map(|(path, f)| Played { path, before: f.before, after: f.now, edits: f.edits })
        .collect())
}

fn plain(edit: &OneOf<TextEdit, lsp_types::AnnotatedTextEdit>) -> TextEdit {
    match edit {
        OneOf::Left(t) => t.clone(),
        OneOf::Right(annotated) => annotated.text_edit.clone(),
    }
}

struct File {
    before: Option<String>,
    now: Option<String>,
    edits: usize,
}

struct Copy<'r> {
    files: BTreeMap<PathBuf, File>,
    read: &'r mut dyn FnMut(&Path) -> Result<Option<String>, String>,
}

impl Copy<'_> {
    fn path(uri: &Url) -> Result<PathBuf, PlayError> {
        uri.to_file_path().map_err(|()| PlayError::NotAFile(uri.to_string()))
    }

    fn file(&mut self, path: &Path) -> Result<&mut File, PlayError> {
        if !self.files.contains_key(path) {
            if path.is_dir() {
                return Err(PlayError::Directory(path.to_path_buf()));
            }
            let before = (self.read)(path).map_err(|why| PlayError::Unreadable(path.to_path_buf(), why))?;
            self.files.insert(path.to_path_buf(), File { now: before.clone(), before, edits: 0 });
        }
        Ok(self.files.get_mut(path).expect("inserted above"))
    }

    fn text(&mut self, uri: &Url, edits: Vec<TextEdit>) -> Result<(), PlayError> {
        let path = Self::path(uri)?;
        let file = self.file(&path)?;
        let Some(now) = &file.now else { return Err(PlayError::Missing(path)) };
        let after = apply_edits(now, &edits).map_err(|e| PlayError::Text(path.clone(), e))?;
        file.now = Some(after);
        file.edits += edits.len();
        Ok(())
    }

    fn create(&mut self, uri: &Url, overwrite: bool, ignore_if_exists: bool) -> Result<(), PlayError> {
        let path = Self::path(uri)?;
        let file = self.file(&path)?;
        match (&file.now, overwrite, ignore_if_exists) {
            (None, _, _) | (Some(_), true, _) => file.now = Some(String::new()),
            (Some(_), false, true) => {}
            (Some(_), false, false) => return Err(PlayError::Exists(path)),
        }
        Ok(())
    }

    fn rename(
        &mut self,
        from: &Url,
        to: &Url,
        overwrite: bool,
        ignore_if_exists: bool,
    ) -> Result<(), PlayError> {
        let (from, to) = (Self::path(from)?, Self::path(to)?);
        if from == to {
            return Ok(());
        }
        let exists = self.file(&to)?.now.is_some();
        if exists && !overwrite {
            return if ignore_if_exists { Ok(()) } else { Err(PlayError::Exists(to)) };
        }
        let source = self.file(&from)?;
        let Some(content) = source.now.take() else { return Err(PlayError::Missing(from)) };
        self.file(&to)?.now = Some(content);
        Ok(())
    }

    fn delete(&mut self, uri: &Url, ignore_if_not_exists: bool) -> Result<(), PlayError> {
        let path = Self::path(uri)?;
        let file = self.file(&path)?;
        if file.now.take().is_none() && !ignore_if_not_exists {
            return Err(PlayError::Missing(path));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{
        CreateFile, DeleteFile, OptionalVersionedTextDocumentIdentifier, Position, Range, RenameFile,
        TextDocumentEdit,
    };

    fn uri(name: &str) -> Url {
        Url::from_file_path(format!("/w/{name}")).unwrap()
    }

    fn text_edit(name: &str, at: (u32, u32), new_text: &str) -> DocumentChangeOperation {
        DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier { uri: uri(name), version: None },
            edits: vec![OneOf::Left(TextEdit {
                range: Range::new(Position::new(at.0, at.1), Position::new(at.0, at.1)),
                new_text: new_text.into(),
            })],
        })
    }

    fn disk() -> impl FnMut(&Path) -> Result<Option<String>, String> {
        |p: &Path| {
            Ok(match p.file_name().and_then(|n| n.to_str()) {
                Some("a.ts") => Some("export const a = 1;\n".into()),
                Some("b.ts") => Some("b\n".into()),
                _ => None,
            })
        }
    }

    #[test]
    fn operations_play_in_order_on_what_the_ones_before_left() {
        let edit = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![
                DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                    uri: uri("new.ts"),
                    options: None,
                    annotation_id: None,
                })),
                text_edit("new.ts", (0, 0), "export function f() {}\n"),
                DocumentChangeOperation::Op(ResourceOp::Rename(RenameFile {
                    old_uri: uri("a.ts"),
                    new_uri: uri("c.ts"),
                    options: None,
                    annotation_id: None,
                })),
                text_edit("c.ts", (0, 0), "// moved\n"),
                DocumentChangeOperation::Op(ResourceOp::Delete(DeleteFile {
                    uri: uri("b.ts"),
                    options: None,
                })),
            ])),
            ..Default::default()
        };
        let played = play(&edit, &mut disk()).unwrap();
        let by: BTreeMap<_, _> =
            played.iter().map(|p| (p.path.file_name().unwrap().to_str().unwrap(), p)).collect();
        assert_eq!(by["a.ts"].after, None);
        assert_eq!(by["b.ts"].after, None);
        assert_eq!(by["b.ts"].before.as_deref(), Some("b\n"));
        assert_eq!(by["c.ts"].before, None);
        assert_eq!(by["c.ts"].after.as_deref(), Some("// moved\nexport const a = 1;\n"));
        assert_eq!(by["new.ts"].after.as_deref(), Some("export function f() {}\n"));
    }

    #[test]
    fn creating_over_a_file_or_editing_a_missing_one_is_refused() {
        let create = |options| WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![DocumentChangeOperation::Op(
                ResourceOp::Create(CreateFile { uri: uri("a.ts"), options, annotation_id: None }),
            )])),
            ..Default::default()
        };
        assert!(matches!(play(&create(None), &mut disk()), Err(PlayError::Exists(_))));
        let ignore = lsp_types::CreateFileOptions { overwrite: None, ignore_if_exists: Some(true) };
        assert_eq!(play(&create(Some(ignore)), &mut disk()).unwrap(), Vec::new());
        let edit = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![text_edit("gone.ts", (0, 0), "x")])),
            ..Default::default()
        };
        assert!(matches!(play(&edit, &mut disk()), Err(PlayError::Missing(_))));
    }
}
