//! Every integration test of the `tether` crate, in one binary: one link of
//! the crate and its dependencies instead of one per file. A module per
//! resource; each file's `//!` says whether it drives the real program
//! (the default: servers, adapters and interpreters as users install them)
//! or a fake standing in for a fault no real program makes on demand.
//!
//! - [`lsp`] — language servers: the `lsp` tool, navigation, the languages
//!   beyond the first seven, real projects, freshness, outside changes.
//! - [`dap`] — debug adapters: sessions and their rules, scenarios driven
//!   the way a model drives them.
//! - [`kernel`] — `eval` against python3 and node.
//! - [`ast`] — `ast_grep`, `ast_edit` and `resolve`, and parity with the
//!   ast-grep CLI.
//! - [`hosts`] — the three hosts (Rust API, `tether serve`, the CLI), their
//!   surfaces, schemas, conversations and the host tools.
//! - [`router`] — property and fuzz tests over argument handling.
//! - [`question`] and [`workers`] — `ask_user` and `vibe_*`.
//! - [`faults`] — faults injected into real programs and through fakes,
//!   orphans, 10,000 concurrent calls, and the hunt for wrong answers.
//!
//! Shared helpers live in `tests/common` and nowhere else. Run one
//! resource's tests with `cargo test --test it lsp::`.

#[path = "../common/mod.rs"]
mod common;

mod ast;
mod dap;
mod faults;
mod hosts;
mod kernel;
mod lsp;
mod question;
mod router;
mod shared_run;
mod trust;
mod workers;
