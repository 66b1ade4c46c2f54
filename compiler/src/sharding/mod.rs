//! The sharding model (SPEC §1-§2): meshes, axis references, dimension and
//! tensor shardings; their invariants (`validate`, and `valid`: a sharding
//! that passed them, as a type) and what they mean for data placement
//! (`layout`: local shapes, padding, per-device slices).

pub mod groups;
pub mod layout;
pub mod mesh;
pub mod tensor;
pub mod valid;
pub mod validate;

pub use mesh::{Mesh, MeshAxis, MeshDef};
pub use tensor::{AxisRef, DimSharding, MeshRef, ReductionOp, SubAxis, TensorSharding};
pub use valid::ValidSharding;
