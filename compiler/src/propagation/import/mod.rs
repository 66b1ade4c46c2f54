//! Passes before propagation, as Shardy's import pipeline runs them:
//! inlining calls (`ir::inline`), splitting constants per use, applying sharding
//! constraints to their inputs, and importing sharding groups.

pub mod constant_split;
pub mod constraints;
pub mod groups;

pub use crate::ir::inline::inline_calls;
pub use constant_split::split_constants;
pub use constraints::apply_constraints;
pub use groups::import_groups;
