//! tether-actors: the live resources behind tether's tools, each an actix
//! actor answering typed messages. It knows nothing of tool names or JSON
//! schemas; the `tether` crate turns tool calls into these messages.
//!
//! # Layout
//!
//! - [`lsp`] — language servers: the server table, the intersection rule,
//!   one actor per (server, root), their supervisor, the memory budget and
//!   idle limit they are held to (`lsp::limits`); [`watch`] — the run's
//!   file watcher, which carries every change on disk to those servers
//!   before the next query.
//! - [`ast`] — structural search and staged rewrites in the 29 grammars of
//!   `ast-grep-language` (`ast::lang`): the walk and what it counts
//!   (`walk`, `coverage`), the scan over files and their embedded regions
//!   (`scan`), the pattern ladder (`ladder`, `reading`, `pattern`, with
//!   stand-ins where a grammar rejects a metavariable), search,
//!   rewrite templates and plans (`template`, `rewrite`), staging.
//! - [`dap`] — debug adapters, in layers: the typed client
//!   (`dap::client`), what a session is asked for (`dap::asked`), the
//!   table with each adapter's quirks and own ways (`dap::adapters`), and
//!   why a session could not start (`dap::start_failure`), and
//!   one session actor per conversation on top (`dap::session`: starting,
//!   the one configure path, the ops, stop snapshots, breakpoints, the
//!   processes a js-debug launch follows).
//! - [`kernel`] — persistent Python and JavaScript interpreters.
//! - [`question`] — the question gate to the human; [`workers`] — the
//!   vibe-mode worker pool.
//! - [`wire`] — one transport (framing, the reader and writer tasks, the
//!   pending map, cancel-on-drop requests) under both protocol clients:
//!   JSON-RPC (`wire::client`) and DAP (`wire::dap`); [`process`] —
//!   spawning children in their own process group, tagged with the run
//!   id, killed with their actor, and the `/proc` readers.
//! - [`text`] — cuts (in characters for what a model reads), durations,
//!   plurals; [`waiting`] — the one wait-for-change loop.
//! - [`trust`] — whether a run's checkout may run programs of its own
//!   (its `tether.toml` commands, its `.venv/bin`), asked wherever one is
//!   resolved or started.
//! - [`tools_prefix`] — where `tether install` puts servers and adapters,
//!   looked in before `PATH`; [`locate`] — a project's root by its markers
//!   and a program by its name, for servers, adapters and workers alike,
//!   and why one is not usable (`Unusable`); [`project_walk`] — the one
//!   bounded walk over a project's own files (the census, the marker
//!   walk, an unmanaged Java tree's source roots, compiled output).
//! - [`fs`] — confinement to the working directory, atomic writes,
//!   all-or-nothing commits; [`describe`] — the supervision tree's nodes.

pub mod ast;
pub mod dap;
pub mod describe;
pub mod fs;
pub mod kernel;
pub mod locate;
pub mod lsp;
pub mod process;
pub mod project_walk;
pub mod question;
pub mod text;
pub mod tools_prefix;
pub mod trust;
pub mod waiting;
pub mod watch;
pub mod wire;
pub mod workers;
