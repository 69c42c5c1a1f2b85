//! Debug adapters, through the `debug` tool.

mod fake_adapters;
mod native;
mod scenarios;
mod sessions;
