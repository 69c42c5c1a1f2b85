//! Files: confinement to the working directory, atomic writes, and
//! all-or-nothing commits of multi-file changes.
//!
//! Every path that comes from a tool argument goes through [`confine()`]
//! before it is touched. Every write goes through [`atomic_write`] (a
//! temporary file in the same directory, then a rename), so a reader never
//! sees half a file. A change to several files goes through [`commit()`]: it
//! first checks that no file moved since the change was prepared, then writes
//! them one by one — each swapped in atomically and checked against what it
//! displaced, so a write someone else makes meanwhile is never overwritten —
//! and, if one write fails or finds its file changed, puts back the ones
//! already written — the tree ends in the old state or the new one, never a
//! mix, with every outside write kept.
//!
//! - `confine` — resolving a path argument inside the root, and checking
//!   that it still resolves so before a write.
//! - `display` — paths relative to the root, as results show them.
//! - `atomic` — writes through a temporary file and a rename.
//! - `replace` — one file swapped in only if it still holds what was expected.
//! - `commit` — multi-file changes, all or nothing.
//! - `diff` — unified diffs of a change, cut at a number of lines.
//! - `links` — a name that shares its content with other hard links (they
//!   keep the old content when it is written).
//! - `temps` — temporary files a run that died between write and rename
//!   left behind, removed by the next write into their directory.

mod atomic;
mod commit;
mod confine;
mod diff;
mod display;
mod links;
mod replace;
mod temps;
#[cfg(test)]
mod tests;

pub use atomic::{NEW_FILE_MODE, atomic_write, atomic_write_mode};
pub use commit::{CommitError, FileChange, WriteStep, commit, commit_with, moved_files};
pub use confine::{PathError, canonical_root, confine, still_resolved};
pub use diff::{Diff, DiffFile, unified};
pub use display::{display_path, relative};
pub use links::{Committed, linked, other_links};
pub use temps::{STALE_TEMP_AGE, TEMP_PREFIX, TEMP_SUFFIX};
