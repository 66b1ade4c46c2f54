//! meshrun compiler: the IR, the StableHLO + `sdy` text format, the sharding
//! model, and (in later modules) propagation and partitioning.
//!
//! Pure Rust, no runtime or GPU dependencies. See `ARCHITECTURE.md` at the
//! repository root for how the modules fit together.

pub mod diag;
pub mod ir;
pub mod partition;
pub mod propagation;
pub mod rules;
pub mod sharding;
pub mod splitmix;
pub mod text;

pub use diag::{DiagKind, Diagnostic, SrcPos};
pub use ir::{Function, Module, OpId, OpKind, Value};
pub use sharding::{AxisRef, DimSharding, Mesh, MeshAxis, TensorSharding};
