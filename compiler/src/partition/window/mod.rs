//! Windowed ops on sharded operands (`convolution`, `reduce_window`,
//! `select_and_scatter`): which factor shardings each can be computed with
//! on local blocks, and the halo arithmetic of a sharded window dimension.
//! The global program chooses the factors here; the device program builds
//! the halo exchange (`local::window`) from the same plan.

pub(crate) mod conv_factors;
pub(crate) mod halo;
pub(crate) mod window_factors;
