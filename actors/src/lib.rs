pub mod ast;
pub mod dap;
pub mod describe;
pub mod fs;
pub mod kernel;
pub mod lsp;
pub mod process;
pub mod wire;
