//! The text format: StableHLO + `sdy` MLIR as JAX prints it.
//! `parse_module` reads it; `print_module` writes it back so that
//! `parse(print(m)) == m`.

mod lexer;
mod parser;
mod printer;

pub use parser::parse_module;
pub use printer::print_module;
