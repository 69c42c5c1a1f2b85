//! Language servers as live resources: the language and server tables
//! ([`languages`], [`config`]) and the intersection rule ([`discovery`]), one [`server`] actor per
//! (server, root) with its process and documents, the [`session`] a
//! caller queries it through, the state the reader
//! task shares ([`shared`]), the files each server asked to hear about
//! ([`watched`]), and the [`supervisor`] that maps files to servers, owns
//! the run's file watcher (`crate::watch`) and hands every change on
//! disk to the servers it concerns, and answers `status` with what the
//! [`tree`] holds.

pub mod checker;
pub mod config;
pub mod discovery;
pub mod edits;
pub mod languages;
pub mod server;
pub mod session;
pub mod shared;
pub mod supervisor;
pub mod tree;
pub mod watched;
