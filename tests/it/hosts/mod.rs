//! The hosts an agent runs tether in — the Rust API, `tether serve` over
//! stdio and HTTP, `tether call`/`batch` — and what every host shares:
//! surfaces, schemas, conversations, the host tools.

mod cli;
mod conversations;
mod embedding;
mod entries;
mod host_tools;
mod http;
mod mcp;
mod quickstart;
mod schemas;
mod surfaces;
mod terminal;
