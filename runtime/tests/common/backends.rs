//! One test body, every backend (like candle's `test_device!`).
//!
//! ```ignore
//! mod common;
//! fn adds_blocks<B: Backend>(backend: &B) { ... }
//! backend_tests!(adds_blocks);
//! ```
//!
//! makes a module `adds_blocks` with `#[test] fn cpu()` and `#[test] fn
//! cuda()`, each calling the generic body with that backend. The `cuda`
//! instance skips, printing why, only when this machine has no GPU (the
//! driver or the GPU is missing: `probe::gpus()` fails). When there is a
//! GPU, a CUDA backend that does not open is a failure, and so is a skip
//! under `MESHRUN_REQUIRE_GPU=1` (what `ci/gpu-check.sh` sets).

use meshrun_runtime::CpuBackend;

/// Set to 1 to make the CUDA instances fail instead of skipping.
#[cfg(feature = "cuda")]
pub const REQUIRE_GPU_ENV: &str = "MESHRUN_REQUIRE_GPU";

pub fn cpu() -> CpuBackend {
    CpuBackend::new()
}

/// A CUDA backend on every GPU, or `None` (after printing why) when this
/// machine has no GPU.
#[cfg(feature = "cuda")]
pub fn cuda() -> Option<meshrun_runtime::cuda::CudaBackend> {
    let required = std::env::var(REQUIRE_GPU_ENV).is_ok_and(|v| v == "1");
    if let Err(why) = meshrun_runtime::cuda::probe::gpus() {
        assert!(!required, "{REQUIRE_GPU_ENV}=1 but there is no GPU: {why}");
        eprintln!("skipped on cuda: no GPU: {why}");
        return None;
    }
    match meshrun_runtime::cuda::open_backend() {
        Ok(b) => Some(b),
        Err(e) => panic!("this machine has a GPU but {e}"),
    }
}

/// `backend_tests!(body, ...)`: for each generic `fn body<B: Backend>(&B)`,
/// a module `body` with one `#[test]` per backend.
#[macro_export]
macro_rules! backend_tests {
    ($($body:ident),* $(,)?) => {
        $(
            mod $body {
                #[test]
                fn cpu() {
                    super::$body(&$crate::common::backends::cpu());
                }

                #[cfg(feature = "cuda")]
                #[test]
                fn cuda() {
                    if let Some(backend) = $crate::common::backends::cuda() {
                        super::$body(&backend);
                    }
                }
            }
        )*
    };
}
