//! The CUDA backend: mesh devices on NVIDIA GPUs, collectives through
//! NCCL, local ops through cuBLAS and NVRTC-compiled kernels.
//!
//! Two halves:
//!
//! - **Planning** (always built, tested on the CPU): [`placement`] (mesh
//!   device → GPU and stream), [`routes`] (collective group → local copies,
//!   an NCCL communicator, or both through per-GPU leaders), [`boxes`]
//!   (a collective's result as box copies of the members' blocks),
//!   [`layout`] (the one strided-copy descriptor behind transposes,
//!   broadcasts, slices, pads, concatenations and remaps), [`gemm_plan`]
//!   (`dot_general` as one strided batched GEMM), [`conv_plan`]
//!   (convolution as im2col + strided batched GEMMs), [`dynamic_copy`]
//!   (dynamic slices as box copies), [`launch`] (grid sizes)
//!   [`reverse_copy`] (reverse as a strided copy with signed strides)
//!   [`kernel_plans`] (every kernel launch as a checked argument list,
//!   [`kernel_args`]) and [`probe`] (what CUDA the machine has, never
//!   panicking);
//!   [`kernel_check`] compiles every kernel (NVRTC only, no GPU).
//! - **Execution** (feature `cuda`, on by default; cudarc loads the CUDA
//!   libraries at run time, so it builds without CUDA): [`CudaBackend`]
//!   and its devices, buffers, kernel launchers, cuBLAS and NCCL calls.
//!   [`nvrtc`] compiles the kernels of `meshrun_kernels::cuda`; CI runs it
//!   for sm_80 and sm_90 without a GPU. Everything else in this half needs
//!   a GPU to run and is exercised by `ci/gpu-check.sh`, not by CI.
//!
//! All `unsafe` code is in [`ffi`].

#![deny(unsafe_code)]

pub mod boxes;
pub mod conv_plan;
pub mod dynamic_copy;
pub mod gemm_plan;
pub mod kernel_args;
pub mod kernel_check;
pub mod kernel_plans;
pub mod launch;
pub mod layout;
pub mod placement;
pub mod probe;
pub mod reverse_copy;
pub mod routes;

#[cfg(feature = "cuda")]
mod backend;
#[cfg(feature = "cuda")]
pub mod buffer;
#[cfg(feature = "cuda")]
mod collectives;
#[cfg(feature = "cuda")]
mod conv_op;
#[cfg(feature = "cuda")]
mod data_op;
#[cfg(feature = "cuda")]
pub mod device;
#[cfg(feature = "cuda")]
mod device_sort;
#[cfg(feature = "cuda")]
mod dot;
#[cfg(feature = "cuda")]
mod dynamic_op;
#[cfg(feature = "cuda")]
pub mod ffi;
#[cfg(feature = "cuda")]
pub mod kernels;
#[cfg(feature = "cuda")]
pub mod nccl_comms;
#[cfg(feature = "cuda")]
pub mod nvrtc;
#[cfg(feature = "cuda")]
mod ragged_op;
#[cfg(feature = "cuda")]
mod run_shared;
#[cfg(feature = "cuda")]
mod window_op;

#[cfg(all(feature = "cuda", feature = "mpi"))]
pub(crate) use backend::open_lone_device;
#[cfg(feature = "cuda")]
pub use backend::{CudaBackend, GPUS_ENV};
#[cfg(feature = "cuda")]
pub use buffer::CudaBuffer;
#[cfg(feature = "cuda")]
pub use device::CudaDevice;

/// Why the CUDA backend cannot run on this machine, in one line (no
/// driver, no GPU, no NVRTC, no CUDA headers).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the CUDA backend cannot run here: {0}")]
pub struct CudaUnavailable(pub String);

/// Open the CUDA backend on every GPU, or say why not.
#[cfg(feature = "cuda")]
pub fn open_backend() -> Result<CudaBackend, CudaUnavailable> {
    CudaBackend::new().map_err(CudaUnavailable)
}
