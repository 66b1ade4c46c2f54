//! Passes before propagation, as Shardy's import pipeline runs them:
//! calls into named computations (`calls`), naming inline meshes and
//! merging identical ones, removing mesh axes of size 1 from shardings,
//! splitting constants per use, applying sharding constraints to their
//! inputs, and importing sharding groups (`groups::sync_groups` runs at
//! the start of every strategy, as in Shardy). One runs before them as
//! XLA's pipeline runs it before its propagation: selects between a
//! value and itself folded (`fold_selects`, XLA's simplifier).

pub mod calls;
pub mod constant_split;
pub mod constraints;
pub mod fold_selects;
pub mod groups;
pub mod lift_meshes;
pub mod size_one_axes;

pub use calls::import_calls;
pub use constant_split::split_constants;
pub use constraints::apply_constraints;
pub use fold_selects::fold_selects;
pub use groups::{sync_groups, GroupSync};
pub use lift_meshes::lift_inline_meshes;
pub use size_one_axes::remove_size_one_axes;
