//! meshrun: a facade over the compiler and runtime crates, plus the
//! file-level pipeline the CLI, examples and tests share.

pub use meshrun_compiler as compiler;
pub use meshrun_runtime as runtime;

pub mod bench_comm;
pub mod check;
pub mod cost;
pub mod execute;
pub mod fuzz;
pub mod load;
pub mod plan;
pub mod render;
pub mod show;
pub mod suggest;
pub mod synth;
