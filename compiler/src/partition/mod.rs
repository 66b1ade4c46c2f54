//! The partitioner's reshard lowering (SPEC §6): turning a change of
//! sharding into collectives on explicit device groups.
//!
//! - [`collective`]: one collective as plain data (kind, axes, groups,
//!   shardings, local shapes), its cost and its Shardy notation;
//! - [`groups`]: device groups along (sub-)axes of a mesh;
//! - [`reshard`]: [`lower_reshard`] and its cross-mesh variant;
//! - [`simulate`]: the ground truth — collectives run on index tensors and
//!   checked against the target sharding's blocks.
//!
//! Internals: `pieces` (axis pieces and their alignment) and `planner` (the
//! greedy slice / permute / all-to-all / gather search).

pub mod collective;
pub mod compat;
pub mod device_program;
pub mod error;
pub mod explicit_reshards;
pub mod global;
pub mod groups;
pub mod hoist;
pub mod inline;
mod local_ops;
pub mod lower;
mod op_reshards;
pub mod op_text;
pub mod padding;
mod pieces;
mod planner;
pub mod print_program;
mod remap;
pub mod remap_plan;
pub mod report;
pub mod reshard;
pub mod simulate;

pub use collective::{AllToAllDims, Collective, CollectiveKind};
pub use error::{ReshardError, Side};
pub use groups::{device_groups, GroupError};
pub use reshard::{
    lower_reshard, lower_reshard_between_meshes, plan_reshard, ReshardPlan, ReshardStrategy,
};
pub use simulate::{check_reshard, SimError, Simulation};
