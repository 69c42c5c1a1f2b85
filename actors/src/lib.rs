pub mod ast;
pub mod describe;
pub mod fs;
