//! Language servers, through the `lsp` and `lsp_rename` tools and the
//! diagnostics a write carries.

mod freshness;
mod languages;
mod navigation;
mod outside_changes;
mod real_projects;
mod tool;
