//! Language servers as live resources: the language and server tables
//! ([`languages`], [`config`], the built-in entries in [`servers`], an
//! entry's shape in [`entry`]) and the intersection rule ([`discovery`]),
//! one [`server`] actor per (server, root) — named by its [`key`] — with
//! its process and documents, the handle ([`opened`]) a
//! caller queries it through, the state the reader
//! task shares ([`shared`]) and the errors a server reports of itself
//! ([`reported`]), the files each server asked to hear about
//! ([`watched`]), and the [`supervisor`] that maps files to servers, owns
//! the run's file watcher (`crate::watch`) and hands every change on
//! disk to the servers it concerns, and answers `status` with what the
//! [`census`] (the files of each language here) holds; [`tsserver`] asks typescript-language-server's tsserver
//! directly what its LSP side cannot answer truthfully; [`unmanaged`] writes the project a server whose build
//! import failed is started on; [`edits`] turns positions into offsets and applies text
//! edits, [`workspace_edit`] plays a whole `WorkspaceEdit` (files created,
//! renamed, deleted) on a copy of what it touches; [`limits`] holds the
//! run's memory budget and idle limit for its servers; [`formatting`] reads
//! the formatting options a file asks for (`.editorconfig`, its own
//! indentation), sent with `format` and answered to servers that ask.

pub mod census;
pub mod checker;
pub mod config;
pub mod discovery;
pub mod edits;
pub mod entry;
pub mod formatting;
pub mod in_use;
pub mod key;
pub mod languages;
pub mod limits;
pub mod opened;
pub mod reported;
pub mod server;
pub mod servers;
pub mod shared;
pub mod supervisor;
pub mod tsserver;
pub mod unmanaged;
pub mod watched;
pub mod workspace_edit;
