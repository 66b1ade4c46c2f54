//! meshrun kernels: CPU implementations of the local ops of a (per-device)
//! program, on host tensors. CUDA kernels will live beside `cpu` later.
//!
//! - [`HostTensor`]: a dense host tensor of a supported element type (f64,
//!   f32, f16, bf16, i1, i32, i64), with [`HostElem`] for generic kernels.
//! - [`cpu::eval_op`]: compute one `OpKind` (everything but calls and the
//!   `sdy` sharding ops).
//! - [`KernelError`]: typed errors for bad operands, attributes or types.
//!
//! `unsafe` code is in three places: the call into `gemm::gemm` in
//! [`cpu::dot::gemm_2d`], whose arguments come straight from checked
//! `ndarray` views; the calls into `target_feature` loops in
//! `cpu/vmath/dispatch.rs` and `cpu/vmath/arith.rs`, after run-time feature
//! detection; and the AVX2
//! intrinsics of [`cpu::packed_gemm`] (`avx2.rs`), reached only through a
//! token that proves the CPU has them.

#![deny(unsafe_code)]

pub mod cpu;
pub mod cuda;
pub mod error;
pub mod tensor;

pub use cpu::eval_op;
pub use error::KernelError;
pub use tensor::{HostElem, HostTensor};

/// How many threads `dot_general` may use: `Parallelism::None` inside a
/// simulated device (each device is one thread), `Parallelism::Rayon(n)` for
/// a one-device run (`n = 0`: all of rayon's threads).
pub use gemm::Parallelism;

/// Re-exported so that users of [`with_array!`] name the same `half`.
pub use half;
