//! Debug adapters, through the `debug` tool.

mod scenarios;
mod sessions;
