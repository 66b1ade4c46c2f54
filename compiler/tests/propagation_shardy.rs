//! Shardy's own propagation tests, ported: each test restates one case of
//! `shardy/dialect/sdy/transforms/propagation/test/*.mlir` (Shardy's
//! repository) with its own program and data, and expects the shardings
//! that Shardy's CHECK lines give for that case. The case each test follows
//! is named in its comment (`file.mlir: case`).
//!
//! One module per feature; cases that the older tests already cover
//! (`propagation_strategies.rs`, ...) are not repeated here.

mod propagation_support;

#[path = "propagation_shardy/barrier.rs"]
mod barrier;
#[path = "propagation_shardy/blocked.rs"]
mod blocked;
#[path = "propagation_shardy/call_passes.rs"]
mod call_passes;
#[path = "propagation_shardy/calls.rs"]
mod calls;
#[path = "propagation_shardy/conservative.rs"]
mod conservative;
#[path = "propagation_shardy/data_flow.rs"]
mod data_flow;
#[path = "propagation_shardy/groups.rs"]
mod groups;
#[path = "propagation_shardy/manual_calls.rs"]
mod manual_calls;
#[path = "propagation_shardy/manual_computation.rs"]
mod manual_computation;
#[path = "propagation_shardy/op_priority.rs"]
mod op_priority;
#[path = "propagation_shardy/opaque.rs"]
mod opaque;
#[path = "propagation_shardy/shardings.rs"]
mod shardings;
#[path = "propagation_shardy/unreduced.rs"]
mod unreduced;
