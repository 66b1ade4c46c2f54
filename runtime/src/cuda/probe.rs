//! What CUDA this machine has, found without panicking: cudarc panics on
//! the first call into a library it cannot load, so every library is
//! probed with the dynamic loader first (`ffi::library_present`), and
//! every absence comes back as a reason (`Err(String)`) for `meshrun
//! doctor` and for the one-line error of `meshrun run --backend cuda`.

use std::path::PathBuf;

/// One GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    pub memory_bytes: usize,
    /// `(major, minor)`, e.g. `(9, 0)` for an H100.
    pub compute_capability: (i32, i32),
}

impl GpuInfo {
    /// The NVRTC architecture of this GPU (`sm_90`).
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Everything `meshrun doctor` reports about CUDA; each part is present
/// (with its version) or absent with the reason.
#[derive(Debug, Clone)]
pub struct CudaReport {
    /// The CUDA version the driver supports, `(major, minor)`.
    pub driver: Result<(i32, i32), String>,
    pub gpus: Result<Vec<GpuInfo>, String>,
    pub nvrtc: Result<(i32, i32), String>,
    pub cublas: Result<(i32, i32, i32), String>,
    pub nccl: Result<(i32, i32, i32), String>,
    /// Where `cuda_fp16.h` is (NVRTC needs it for the kernels).
    pub headers: Result<PathBuf, String>,
}

#[cfg(feature = "cuda")]
mod imp {
    use super::*;
    use crate::cuda::ffi::{self, Library};
    use crate::cuda::nvrtc;

    fn missing(lib: &str, hint: &str) -> String {
        format!("{lib} cannot be loaded: {hint}")
    }

    pub fn driver() -> Result<(i32, i32), String> {
        if !ffi::library_present(Library::Driver) {
            return Err(missing("libcuda.so", "no NVIDIA driver installed"));
        }
        ffi::driver_version().map_err(|e| format!("cuDriverGetVersion: {e}"))
    }

    pub fn gpus() -> Result<Vec<GpuInfo>, String> {
        (0..gpu_count()?)
            .map(|ordinal| {
                let ctx = cudarc::driver::CudaContext::new(ordinal)
                    .map_err(|e| format!("GPU {ordinal}: cannot create a context: {e}"))?;
                let err = |what: &str, e: cudarc::driver::DriverError| {
                    format!("GPU {ordinal}: {what}: {e}")
                };
                Ok(GpuInfo {
                    ordinal,
                    name: ctx.name().map_err(|e| err("name", e))?,
                    memory_bytes: ctx.total_mem().map_err(|e| err("memory", e))?,
                    compute_capability: ctx
                        .compute_capability()
                        .map_err(|e| err("compute capability", e))?,
                })
            })
            .collect()
    }

    pub fn gpu_count() -> Result<usize, String> {
        driver()?;
        let count = cudarc::driver::CudaContext::device_count()
            .map_err(|e| format!("the driver sees no GPU (cuInit/cuDeviceGetCount: {e})"))?;
        usize::try_from(count)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| "the driver is installed but sees no GPU".to_string())
    }

    pub fn nccl() -> Result<(i32, i32, i32), String> {
        if !ffi::library_present(Library::Nccl) {
            return Err(missing(
                "libnccl.so.2",
                "`pip install nvidia-nccl-cu12` or install NCCL",
            ));
        }
        cudarc::nccl::result::get_nccl_version()
            .map(|v| (v / 10000, (v / 100) % 100, v % 100))
            .map_err(|e| format!("ncclGetVersion: {e:?}"))
    }

    pub fn report() -> CudaReport {
        let nvrtc = nvrtc::version().map_err(|e| e.to_string());
        let cublas = if ffi::library_present(Library::Cublas) {
            ffi::cublas_version()
        } else {
            Err(missing(
                "libcublas.so.12",
                "install the CUDA toolkit or `pip install nvidia-cublas-cu12`",
            ))
        };
        let nccl = nccl();
        let headers = nvrtc::include_dirs().into_iter().next().ok_or_else(|| {
            format!(
                "cuda_fp16.h not found (set {} or CUDA_HOME)",
                nvrtc::INCLUDE_ENV
            )
        });
        CudaReport {
            driver: driver(),
            gpus: gpus(),
            nvrtc,
            cublas,
            nccl,
            headers,
        }
    }
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use super::*;

    const OFF: &str = "meshrun was built without the `cuda` feature";

    pub fn gpus() -> Result<Vec<GpuInfo>, String> {
        Err(OFF.into())
    }

    pub fn gpu_count() -> Result<usize, String> {
        Err(OFF.into())
    }

    pub fn nccl() -> Result<(i32, i32, i32), String> {
        Err(OFF.into())
    }

    pub fn report() -> CudaReport {
        CudaReport {
            driver: Err(OFF.into()),
            gpus: Err(OFF.into()),
            nvrtc: Err(OFF.into()),
            cublas: Err(OFF.into()),
            nccl: Err(OFF.into()),
            headers: Err(OFF.into()),
        }
    }
}

/// The GPUs the driver sees, or why there are none. Creates a context
/// on each.
pub fn gpus() -> Result<Vec<GpuInfo>, String> {
    imp::gpus()
}

/// How many GPUs the driver sees (no context is created), or why none.
pub fn gpu_count() -> Result<usize, String> {
    imp::gpu_count()
}

/// NCCL's version, or why it cannot be loaded (cudarc panics on the first
/// NCCL call when it cannot: ask this first).
pub fn nccl() -> Result<(i32, i32, i32), String> {
    imp::nccl()
}

/// Probe everything (never panics, whatever is installed).
pub fn report() -> CudaReport {
    imp::report()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probing_never_panics_and_absence_has_a_reason() {
        let r = report();
        for (what, res) in [
            ("driver", r.driver.as_ref().map(drop)),
            ("gpus", r.gpus.as_ref().map(drop)),
            ("nvrtc", r.nvrtc.as_ref().map(drop)),
            ("cublas", r.cublas.as_ref().map(drop)),
            ("nccl", r.nccl.as_ref().map(drop)),
        ] {
            if let Err(why) = res {
                assert!(!why.is_empty(), "{what} absent without a reason");
            }
        }
        for (what, res) in [
            ("gpu_count", gpu_count().map(drop)),
            ("nccl", nccl().map(drop)),
        ] {
            if let Err(why) = res {
                assert!(!why.is_empty(), "{what} absent without a reason");
            }
        }
        let info = GpuInfo {
            ordinal: 0,
            name: "H100".into(),
            memory_bytes: 80 << 30,
            compute_capability: (9, 0),
        };
        assert_eq!(info.arch(), "sm_90");
    }
}
