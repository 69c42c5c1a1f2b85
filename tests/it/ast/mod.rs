//! Structural search and rewrite: `ast_grep`, `ast_edit`, `resolve`.

mod edit;
mod grep;
mod parity;
