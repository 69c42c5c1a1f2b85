//! Structural search and rewrite: the grammars (`lang`), the walk
//! (`walk`, `coverage`), the scan of each file's regions (`scan`), patterns
//! read through a ladder of contexts (`ladder`, `reading`, `pattern`),
//! search (`search`), rewrites (`template`, `rewrite`, `staging`), what a
//! rename does to a file's syntax (`renamed`), a symbol's declaration as
//! the grammar reads it (`declaration`) and the edits made by symbol on it
//! (`splice`), and the actor that holds them (`actor`).

pub mod actor;
pub mod coverage;
pub mod declaration;
pub mod indentation;
mod ladder;
pub mod lang;
pub mod parts;
pub mod pattern;
mod reading;
pub mod renamed;
pub mod rewrite;
pub mod scan;
pub mod search;
pub mod splice;
pub mod staging;
pub mod syntax;
pub mod template;
mod walk;
