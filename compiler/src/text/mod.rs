//! The text format: StableHLO + `sdy` MLIR as JAX prints it
//! (`jax.jit(f).lower(...).as_text()`), as XLA dumps it after Shardy
//! propagation, and as Shardy's own tests write it.
//!
//! `parse_module` reads it into the IR (building it, not validating
//! sharding invariants or op shape rules); `print_module` writes a module
//! back in the pretty op forms so that `parse(print(m)) == m` and printing
//! is a fixed point.
//!
//! Layout: `lexer` (tokens), `cursor` (token cursor, raw attribute
//! capture), `parse_types`, `parse_sharding`, `parse_literal`,
//! `parse_attrs` (values), `parser` (module/function/block structure),
//! `parse_ops` (pretty op forms), `parse_generic` (quoted generic op form),
//! `parse_generic_module` (generic module/func/mesh), `parse_computation`
//! (scalar bodies), `parse_defined` / `print_defined` (ops defined in
//! `crate::ir::ops`, from their directives); `printer` and `print_literal` for
//! the way back. `async_collectives` reads JAX's async collective custom
//! calls as the collectives they start once the module is read.

mod async_collectives;
mod cursor;
mod lexer;
mod parse_attr_value;
mod parse_attrs;
mod parse_computation;
mod parse_defined;
mod parse_generic;
mod parse_generic_module;
mod parse_literal;
mod parse_ops;
mod parse_sharding;
mod parse_types;
mod parser;
mod print_attr;
mod print_defined;
mod print_literal;
mod printer;
mod value_names;

pub use parser::parse_module;
pub use printer::print_module;
pub use value_names::value_names;
