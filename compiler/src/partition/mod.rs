//! The partitioner (SPEC §6): a propagated module becomes one SPMD
//! [`DeviceProgram`]. [`partition`] below is the whole pipeline; the
//! modules are listed in pipeline order and import each other without
//! circles (a stage reads what earlier stages made; hoisting also prices
//! a reshard with stage 2's lowering).
//!
//! 1. **Global program** — `inline` (calls inlined; `cse`: repeated ops
//!    merged, as XLA's CSE after its propagation), `explicit_reshards`
//!    (with `op_reshards` and `compat`: make each op's factor shardings
//!    compatible; partial sums become all-reduces), `hoist` (reshards above
//!    cheap ops). The result is a [`global::GlobalProgram`]: steps, each
//!    data movement with its `Cause`.
//! 2. **Reshard lowering** — `lower` turns each reshard / all-reduce step
//!    into [`Collective`]s: `reshard` (its plan from `planner` over
//!    `pieces`: slice → permute → all-to-all → gather; `padded` for
//!    dimensions that do not divide), `remap_plan` (fetch only the missing elements
//!    when that is cheaper), `error`; device groups of (sub-)axes come
//!    from `sharding::groups`.
//! 3. **Device program** — `local_ops` walks the global steps and builds
//!    the [`DeviceProgram`] on a `device_builder` (local types, plain ops,
//!    padding masks from `padding`), with `remap` for sharded slice, pad
//!    and concatenate, and `local_index_ops` for gather, scatter and the
//!    dynamic slices (ids shifted into sharded tables, masks, padding).
//!
//! Outputs and checks: [`program`] (the types the pipeline produces),
//! `print_program` and `op_text` (listings), `report` (`--json`),
//! [`simulate`] (collectives run on index tensors: the ground truth of the
//! lowering tests).

// 1. Global program.
mod combine_partials;
pub mod compat;
mod conv_factors;
mod cse;
pub mod explicit_reshards;
pub mod global;
mod halo;
pub mod hoist;
pub mod inline;
pub mod limits;
pub mod manual;
mod op_reshards;
mod partial_ops;
mod structure;
mod to_unreduced;
pub mod trip_count;
mod whole_dims;
mod window_factors;
// 2. Reshard lowering.
pub mod collective;
pub mod error;
pub mod lower;
mod padded;
mod pieces;
mod planner;
pub mod remap_plan;
pub mod reshard;
mod search;
// 3. Device program.
mod device_builder;
mod local_conv;
mod local_index_ops;
mod local_ops;
mod local_ragged_dot;
mod local_regions;
mod local_window;
mod manual_ops;
pub mod padding;
mod remap;
// Outputs and checks.
pub mod op_text;
pub mod print_program;
pub mod program;
pub mod program_regions;
pub mod report;
pub mod simulate;

pub use crate::sharding::groups::{device_groups, GroupError};
pub use collective::{collective_bytes, AllToAllDims, Collective, CollectiveKind};
pub use error::{ReshardError, Side};
pub use program::{
    DeviceProgram, Instr, LocalId, LocalValue, PartitionedProgram, PerDevice, ProgramIo, RemapEntry,
};
pub use program_regions::{walk_instrs, Block, BranchInstr, LoopInstr, Repeats};
pub use reshard::{
    lower_reshard, lower_reshard_between_meshes, plan_reshard, ReshardPlan, ReshardStrategy,
};
pub use simulate::{check_reshard, SimError, Simulation};

use crate::diag::Diagnostic;
use crate::ir::{verify_module, Module};

/// Partition `module`'s entry function (calls inlined). The module must
/// be propagated: every op's sharding is final (an op without one is
/// replicated). It is verified first (op types and attributes), so that
/// malformed input is a diagnostic rather than a surprise later.
pub fn partition(module: &Module) -> Result<PartitionedProgram, Diagnostic> {
    verify_module(module)?;
    let global = explicit_reshards::insert_explicit_reshards(module)?;
    let lowering = lower::lower_program(&global)?;
    let device = local_ops::build_device_program(&global, &lowering)?;
    Ok(PartitionedProgram {
        global,
        lowering,
        device,
    })
}
