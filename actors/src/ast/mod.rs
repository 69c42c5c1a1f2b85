pub mod actor;
pub mod lang;
pub mod pattern;
pub mod rewrite;
pub mod scan;
pub mod search;
pub mod staging;
