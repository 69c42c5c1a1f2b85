//! Language servers as live resources: the server table and the
//! intersection rule ([`config`], [`discovery`]), one [`server`] actor per
//! (server, root) with its process and documents, the state the reader
//! task shares ([`shared`]), and the [`supervisor`] that maps files to
//! servers and answers `status`.

pub mod checker;
pub mod config;
pub mod discovery;
pub mod edits;
pub mod server;
pub mod shared;
pub mod supervisor;
