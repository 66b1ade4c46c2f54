//! The sharding model (SPEC §1-§2): meshes, axis references, dimension and
//! tensor shardings; their invariants (`validate`) and what they mean for
//! data placement (`layout`: local shapes, padding, per-device slices).

pub mod groups;
pub mod layout;
pub mod mesh;
pub mod tensor;
pub mod validate;

pub use mesh::{Mesh, MeshAxis, MeshDef};
pub use tensor::{AxisRef, DimSharding, MeshRef, ReductionOp, SubAxis, TensorSharding};

/// Whether `op` has no results and one rank-0 sharding: not a value's
/// sharding but where the op runs (Shardy keeps `sdy.sharding` on a
/// side-effecting custom call without results, maximal meshes included).
pub fn is_placement_only(op: &crate::ir::OpData) -> bool {
    op.results.is_empty()
        && op
            .shardings
            .as_ref()
            .is_some_and(|s| s.len() == 1 && s[0].dims.is_empty())
}
