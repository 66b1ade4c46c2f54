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
