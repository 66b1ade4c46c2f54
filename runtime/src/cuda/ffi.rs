//! The only `unsafe` code of the CUDA backend: the calls into the CUDA
//! libraries (through cudarc) whose preconditions the compiler cannot
//! check. Each function is small, states what makes it sound, and is the
//! one place its kind of call is made, so a review of the backend's
//! memory safety is a review of this file (plus the argument checks in
//! `kernels.rs`, whose launches end here).
//!
//! Nothing in this file runs without a GPU except the library probes and
//! NVRTC (which needs no GPU: CI compiles every kernel through it).

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, CString};

use cudarc::cublas::sys as cublas_sys;
use cudarc::driver::{DriverError, LaunchArgs, LaunchConfig};
use cudarc::nccl::Comm;
use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys};

/// A CUDA library that is loaded at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// `libcuda` (the driver).
    Driver,
    Nvrtc,
    Cublas,
    Nccl,
}

/// Whether `lib` can be loaded. cudarc panics on the first call into a
/// library it cannot load, so every entry point of the backend asks this
/// first.
pub fn library_present(lib: Library) -> bool {
    // SAFETY: each `is_culib_present` only asks the dynamic loader to open
    // the library under its candidate names and closes it again; it calls
    // no function of the library.
    unsafe {
        match lib {
            Library::Driver => cudarc::driver::sys::is_culib_present(),
            Library::Nvrtc => nvrtc_sys::is_culib_present(),
            Library::Cublas => cublas_sys::is_culib_present(),
            Library::Nccl => cudarc::nccl::sys::is_culib_present(),
        }
    }
}

/// The driver's CUDA version as `(major, minor)`. Call only when
/// [`library_present`]`(Driver)`.
pub fn driver_version() -> Result<(i32, i32), DriverError> {
    let mut v: c_int = 0;
    // SAFETY: `v` is a valid out-pointer for the duration of the call.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result()?;
    Ok((v / 1000, (v % 1000) / 10))
}

/// NVRTC's version. Call only when [`library_present`]`(Nvrtc)`.
pub fn nvrtc_version() -> Result<(i32, i32), String> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: both out-pointers are valid for the duration of the call.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| format!("{e:?}"))?;
    Ok((major, minor))
}

/// cuBLAS's version (`major.minor.patch`); needs no GPU. Call only when
/// [`library_present`]`(Cublas)`.
pub fn cublas_version() -> Result<(i32, i32, i32), String> {
    let get = |p: cublas_sys::libraryPropertyType| {
        let mut v: c_int = 0;
        // SAFETY: `v` is a valid out-pointer; `cublasGetProperty` needs no
        // handle.
        unsafe { cublas_sys::cublasGetProperty(p, &mut v) }
            .result()
            .map(|_| v)
            .map_err(|e| format!("{e:?}"))
    };
    Ok((
        get(cublas_sys::libraryPropertyType::MAJOR_VERSION)?,
        get(cublas_sys::libraryPropertyType::MINOR_VERSION)?,
        get(cublas_sys::libraryPropertyType::PATCH_LEVEL)?,
    ))
}

/// `src` compiled by NVRTC with `options` to a cubin (its bytes), or the
/// error with NVRTC's log. Call only when [`library_present`]`(Nvrtc)`.
pub fn nvrtc_compile_cubin(src: &str, name: &str, options: &[String]) -> Result<Vec<u8>, String> {
    let src_c = CString::new(src).map_err(|_| format!("{name}: source contains a NUL byte"))?;
    let name_c = CString::new(name).map_err(|_| format!("{name}: name contains a NUL byte"))?;
    if let Some(o) = options.iter().find(|o| o.contains('\0')) {
        return Err(format!("{name}: option {o:?} contains a NUL byte"));
    }
    let prog = nvrtc_result::create_program(&src_c, Some(&name_c))
        .map_err(|e| format!("{name}: nvrtcCreateProgram: {e:?}"))?;
    // SAFETY: `prog` was created above from `src_c` and `name_c`, which
    // outlive it; it is used only in this function and destroyed exactly
    // once at its end. Options hold no NUL byte (checked above), so
    // cudarc's `CString::new(..).unwrap()` cannot panic.
    let outcome = unsafe {
        match nvrtc_result::compile_program(prog, options) {
            Ok(()) => cubin_of(prog).map_err(|e| format!("{name}: nvrtcGetCUBIN: {e:?}")),
            Err(e) => {
                let log = nvrtc_result::get_program_log(prog)
                    .map(|l| c_chars_to_string(&l))
                    .unwrap_or_default();
                Err(format!("{name}: {e:?}\n{log}"))
            }
        }
    };
    // SAFETY: see above; `prog` is not used after this.
    let _ = unsafe { nvrtc_result::destroy_program(prog) };
    outcome
}

/// The cubin of a compiled program.
///
/// # Safety
/// `prog` must be a live, successfully compiled NVRTC program.
unsafe fn cubin_of(prog: nvrtc_sys::nvrtcProgram) -> Result<Vec<u8>, nvrtc_result::NvrtcError> {
    let mut size: usize = 0;
    nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size).result()?;
    let mut buf: Vec<c_char> = vec![0; size];
    nvrtc_sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr()).result()?;
    Ok(buf.into_iter().map(|c| c as u8).collect())
}

fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Launch a kernel whose arguments `args` already holds.
///
/// Sound when the arguments match the kernel's C signature in number,
/// order and type, and every index the kernel computes from them stays
/// inside the buffers passed. The typed wrappers of `kernels.rs` are the
/// only callers: each pushes exactly the parameters of one kernel family
/// (see `meshrun_kernels::cuda::names`) and checks element counts against
/// buffer lengths first.
pub fn launch(args: &mut LaunchArgs<'_>, cfg: LaunchConfig) -> Result<(), DriverError> {
    // SAFETY: see the function's documentation; the arguments were pushed
    // by a wrapper of `kernels.rs` that checked them.
    unsafe { args.launch(cfg) }.map(drop)
}

/// An NCCL communicator that may move to another thread.
///
/// cudarc's `Comm` is not `Send` (it holds a raw `ncclComm_t`). NCCL
/// communicators may be used from any thread as long as no two threads
/// use one at the same time; the backend keeps each in the state of one
/// mesh device, which only that device's thread holds during a run (the
/// state moves between runs, never during one), so uses never overlap.
pub struct SendComm(pub Comm);

// SAFETY: see the type's documentation: a communicator is only ever used
// by the one thread that holds the device state it lives in.
unsafe impl Send for SendComm {}

/// cuBLAS's strided batched GEMM (`cublasGemmStridedBatchedEx`).
pub mod gemm {
    use std::sync::Arc;

    use super::cublas_sys as sys;
    use crate::cuda::buffer::{with_dev, DevData};
    use cudarc::cublas::CudaBlas;
    use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
    use meshrun_compiler::ir::ElemType;

    /// Element types of a GEMM operand.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum GemmType {
        F64,
        F32,
        F16,
        BF16,
    }

    impl GemmType {
        fn elem(self) -> ElemType {
            match self {
                GemmType::F64 => ElemType::F64,
                GemmType::F32 => ElemType::F32,
                GemmType::F16 => ElemType::F16,
                GemmType::BF16 => ElemType::BF16,
            }
        }

        fn cuda(self) -> sys::cudaDataType_t {
            match self {
                GemmType::F64 => sys::cudaDataType_t::CUDA_R_64F,
                GemmType::F32 => sys::cudaDataType_t::CUDA_R_32F,
                GemmType::F16 => sys::cudaDataType_t::CUDA_R_16F,
                GemmType::BF16 => sys::cudaDataType_t::CUDA_R_16BF,
            }
        }
    }

    /// One column-major strided batched GEMM `C = A * B` (no transposes,
    /// alpha 1, beta 0): `m x k` times `k x n`, `batch` times. Inputs of
    /// type `ab`, output `c`; f64 computes in f64, everything else in f32
    /// (f16/bf16 on tensor cores).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct StridedGemm {
        pub m: i32,
        pub n: i32,
        pub k: i32,
        pub lda: i32,
        pub ldb: i32,
        pub ldc: i32,
        pub stride_a: i64,
        pub stride_b: i64,
        pub stride_c: i64,
        pub batch: i32,
        pub ab: GemmType,
        pub c: GemmType,
    }

    #[cfg(test)]
    pub(crate) fn span_for_test(
        rows: i32,
        cols: i32,
        ld: i32,
        stride: i64,
        batch: i32,
    ) -> Option<usize> {
        span(rows, cols, ld, stride, batch)
    }

    /// Elements a column-major `rows x cols` operand with leading
    /// dimension `ld` and batch stride `stride` spans over `batch` matrices.
    fn span(rows: i32, cols: i32, ld: i32, stride: i64, batch: i32) -> Option<usize> {
        if rows < 0 || cols < 0 || batch < 0 || ld < rows.max(1) || stride < 0 {
            return None;
        }
        if rows == 0 || cols == 0 || batch == 0 {
            return Some(0);
        }
        let one = (ld as i64)
            .checked_mul(cols as i64 - 1)?
            .checked_add(rows as i64)?;
        let all = stride.checked_mul(batch as i64 - 1)?.checked_add(one)?;
        usize::try_from(all).ok()
    }

    /// `C = A * B` per `g` on `stream` (the stream of `blas`): checks that
    /// each buffer has `g`'s element type and holds every element the call
    /// reads or writes, then calls cuBLAS.
    pub fn strided_batched(
        blas: &CudaBlas,
        stream: &Arc<CudaStream>,
        g: &StridedGemm,
        a: &DevData,
        b: &DevData,
        c: &mut DevData,
    ) -> Result<(), String> {
        let need_a = span(g.m, g.k, g.lda, g.stride_a, g.batch);
        let need_b = span(g.k, g.n, g.ldb, g.stride_b, g.batch);
        let need_c = span(g.m, g.n, g.ldc, g.stride_c, g.batch);
        let fits = |d: &DevData, need: Option<usize>, t: GemmType| {
            d.elem() == t.elem() && need.is_some_and(|n| n <= d.len())
        };
        if !fits(a, need_a, g.ab) || !fits(b, need_b, g.ab) || !fits(c, need_c, g.c) {
            return Err(format!("GEMM {g:?} does not fit its buffers"));
        }
        let (pa, ga) = with_dev!(a, s => s.device_ptr(stream));
        let (pb, gb) = with_dev!(b, s => s.device_ptr(stream));
        let (pc, gc) = with_dev!(c, s => s.device_ptr_mut(stream));
        // SAFETY: the three pointers are live allocations (borrowed for the
        // whole call) that hold every element the GEMM touches (checked
        // above); the guards make `stream` wait for their writers and
        // record this read/write once the GEMM is queued.
        let done = unsafe { run(blas, g, pa, pb, pc) };
        drop((ga, gb, gc));
        done
    }

    /// # Safety
    /// See [`strided_batched`], the only caller.
    unsafe fn run(blas: &CudaBlas, g: &StridedGemm, a: u64, b: u64, c: u64) -> Result<(), String> {
        let (alpha64, beta64) = (1.0f64, 0.0f64);
        let (alpha32, beta32) = (1.0f32, 0.0f32);
        let f64_compute = g.ab == GemmType::F64;
        let (alpha, beta, compute) = if f64_compute {
            (
                &alpha64 as *const f64 as *const std::ffi::c_void,
                &beta64 as *const f64 as *const std::ffi::c_void,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_64F,
            )
        } else {
            (
                &alpha32 as *const f32 as *const std::ffi::c_void,
                &beta32 as *const f32 as *const std::ffi::c_void,
                sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            )
        };
        // SAFETY: see `strided_batched`; alpha and beta point at locals
        // that outlive the call.
        cudarc::cublas::result::gemm_strided_batched_ex(
            *blas.handle(),
            sys::cublasOperation_t::CUBLAS_OP_N,
            sys::cublasOperation_t::CUBLAS_OP_N,
            g.m,
            g.n,
            g.k,
            alpha,
            a as *const std::ffi::c_void,
            g.ab.cuda(),
            g.lda,
            g.stride_a,
            b as *const std::ffi::c_void,
            g.ab.cuda(),
            g.ldb,
            g.stride_b,
            beta,
            c as *mut std::ffi::c_void,
            g.c.cuda(),
            g.ldc,
            g.stride_c,
            g.batch,
            compute,
            sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
        .map_err(|e| format!("cublasGemmStridedBatchedEx: {e:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::gemm::span_for_test as span;

    #[test]
    fn gemm_spans_count_every_element_touched() {
        // Two 5x4 column-major matrices, leading dimension 5, 20 apart.
        assert_eq!(span(5, 4, 5, 20, 2), Some(40));
        // A padded leading dimension: the last column ends early.
        assert_eq!(span(5, 4, 8, 32, 1), Some(29));
        assert_eq!(span(0, 4, 1, 0, 2), Some(0));
        // A leading dimension shorter than a column is invalid.
        assert_eq!(span(5, 4, 4, 20, 2), None);
        assert_eq!(span(5, 4, 5, -1, 2), None);
    }
}
