//! The actors crate's integration tests, in one binary: the pattern ladder
//! in every language, the prefilter's invariance, the stand-ins for
//! metavariables on real packages, and the file watcher on a
//! real directory. Run one with `cargo test -p tether-actors --test it watch::`.

mod ladder;
mod prefilter;
mod stand_ins;
mod watch;
