//! Passes after propagation, as Shardy's export pipeline runs them:
//! named computations back to functions and calls (`calls`), merging
//! constant copies, dropping sharding groups, turning constraints into
//! reshards (and dropping the unused ones), fixing argument/result
//! shardings, closing everything, and writing out the all-reduces of
//! unreduced values (`all_reduces`).

pub mod all_reduces;
pub mod calls;
pub mod cleanup;
pub mod close;
pub mod io_shardings;
pub mod merge;

pub use all_reduces::insert_all_reduces;
pub use calls::export_calls;
pub use cleanup::{constraints_to_reshards, remove_sharding_groups, remove_unused_reshards};
pub use close::{close_shardings, make_explicit, make_module_explicit};
pub use io_shardings::{evenly_sharded, fix_io_shardings};
pub use merge::merge_constants;
