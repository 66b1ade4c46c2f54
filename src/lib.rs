//! meshrun: a facade over the compiler and runtime crates.

pub use meshrun_compiler as compiler;
pub use meshrun_runtime as runtime;
