//! Language servers, through the `lsp`, `lsp_rename` and `lsp_edit` tools and the
//! diagnostics a write carries.

mod budget;
mod edit;
mod edit_parts;
mod edit_symbol;
mod exactly;
mod fake_server;
mod freshness;
mod java;
mod languages;
mod members;
mod navigation;
mod outside_changes;
mod project_check;
mod real_projects;
mod restarts;
mod tool;
