//! meshrun runtime: devices, buffers, collectives, the executor and its
//! backends.
//!
//! - [`backend`] — the [`Backend`] / [`Device`](backend::Device) traits every
//!   backend implements;
//! - [`cpu`] — the CPU backend: one thread per simulated device,
//!   collectives through shared memory;
//! - [`cuda`] — the CUDA backend (NVIDIA GPUs, NCCL) and its placement
//!   and planning logic;
//! - `spmd` — the driver every backend runs its devices with (a thread
//!   per device, panics caught, the first failure reported);
//! - [`executor`] — runs a partitioned device program on any backend
//!   (`exec_plan`: scopes, releases and collective places per block;
//!   `exec_blocks`: running blocks, loops and branches; `exec_step`: one
//!   instruction or fused unit; `exec_options`: how to run);
//! - [`fusion`] — which element-wise chains of a device program run as
//!   one pass;
//! - [`shard_io`] — global inputs to per-device blocks and back;
//! - [`pipeline`] — propagate + partition + run in one call;
//! - [`compare`] — the tolerance rule for sharded vs reference outputs;
//! - [`random_inputs`] — deterministic random inputs;
//! - [`reference`](mod@reference) — the one-device reference interpreter every sharded run
//!   is checked against (`reference_walk`: the one op walk, for one device or
//!   many in lockstep; `reference_manual`, `reference_collectives`:
//!   `shard_map` bodies run on every device, with their collectives);
//! - [`npy`] — `.npy` files to and from host tensors;
//! - [`blocks`] — copying boxes between row-major tensors;
//! - [`capacity`] — whether a program fits the backend and the host,
//!   checked before anything is allocated;
//! - [`testgen`] — random sharded programs for differential tests;
//! - [`error`] — `RuntimeError`;
//! - `mpi` (feature `mpi`) — the MPI backend: one process per device
//!   under `mpirun`/`srun`.

pub mod backend;
pub mod blocks;
pub mod capacity;
pub mod collective_kinds;
pub mod comm_bench;
pub mod compare;
pub mod cpu;
pub mod cuda;
pub mod error;
mod exec_blocks;
mod exec_options;
mod exec_plan;
mod exec_profile;
mod exec_step;
pub mod executor;
pub mod fusion;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod npy;
pub mod pipeline;
pub mod random_inputs;
pub mod reference;
mod reference_collectives;
mod reference_manual;
mod reference_scope;
mod reference_value;
mod reference_walk;
mod replica_results;
pub mod shard_io;
mod spmd;
pub mod testgen;
pub mod wide_reference;

pub use backend::Backend;
pub use cpu::{CpuBackend, CpuExecutor};
pub use error::RuntimeError;
pub use exec_plan::PlannedProgram;
pub use executor::{ExecOptions, Executor};
