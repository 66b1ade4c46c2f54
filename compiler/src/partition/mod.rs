//! The partitioner (SPEC §6): a propagated module becomes one SPMD
//! [`DeviceProgram`]. [`partition`] below is the whole pipeline. Each stage
//! is a room (a folder) that reads what earlier rooms made and never the
//! rooms after it; `tests/import_graph.rs` keeps it so.
//!
//! 1. **[`global`]** — the [`global::GlobalProgram`]: `inline` (calls
//!    inlined; `cse`: repeated ops merged, as XLA's CSE after its
//!    propagation), `explicit_reshards` (with `op_reshards` and `compat`:
//!    make each op's factor shardings compatible; partial sums become
//!    all-reduces; `structure`: loops and branches), `hoist` (reshards above
//!    cheap ops). Steps, each data movement with its `Cause`. Windowed ops
//!    choose their factors with [`window`].
//! 2. **[`lower`]** turns each reshard / all-reduce step into
//!    [`Collective`]s, planned in [`reshard`] (`planner` over `pieces`:
//!    slice → permute → all-to-all → gather; `search` where that is not
//!    the cheapest; `padded` for dimensions that do not divide;
//!    `remap_plan`: fetch only the missing elements when that is cheaper;
//!    `simulate`: collectives run on index tensors, the ground truth of
//!    the planner's tests). Device groups of (sub-)axes come from
//!    `sharding::groups`; [`limits`] bounds the sizes it takes on.
//! 3. **[`local`]** walks the global steps and builds the
//!    [`DeviceProgram`] on a `builder` (local types, plain ops, padding
//!    masks from `padding`), with `remap` for sharded slice, pad and
//!    concatenate, `index_ops` for gather, scatter and the dynamic slices,
//!    `window` for halo exchanges, `regions` for loops and branches.
//!
//! The output is [`program`]: the types the pipeline produces, with their
//! listings (`print`, `op_text`) and the `--json` report (`report`).

// 1. Global program.
pub mod global;
// 2. Reshard lowering.
pub mod limits;
pub mod lower;
pub mod reshard;
// 3. Device program.
pub mod local;
pub mod window;
// The output, its listings and report.
pub mod program;

pub use crate::sharding::groups::{device_groups, GroupError};
pub use program::regions::{walk_instrs, Block, BranchInstr, LoopInstr, Repeats};
pub use program::{
    DeviceProgram, Instr, LocalId, LocalValue, PartitionedProgram, PerDevice, ProgramIo, RemapEntry,
};
pub use reshard::collective::{collective_bytes, AllToAllDims, Collective, CollectiveKind};
pub use reshard::error::{ReshardError, Side};
pub use reshard::simulate::{check_reshard, SimError, Simulation};
pub use reshard::{
    lower_reshard, lower_reshard_between_meshes, plan_reshard, ReshardPlan, ReshardStrategy,
};

use crate::diag::Diagnostic;
use crate::ir::{verify_module, Module};

/// Partition `module`'s entry function (calls inlined). The module must
/// be propagated: every op's sharding is final (an op without one is
/// replicated). It is verified first (op types and attributes), so that
/// malformed input is a diagnostic rather than a surprise later.
pub fn partition(module: &Module) -> Result<PartitionedProgram, Diagnostic> {
    verify_module(module)?;
    let global = global::explicit_reshards::insert_explicit_reshards(module)?;
    let lowering = lower::lower_program(&global)?;
    let device = local::build_device_program(&global, &lowering)?;
    Ok(PartitionedProgram {
        global,
        lowering,
        device,
    })
}
