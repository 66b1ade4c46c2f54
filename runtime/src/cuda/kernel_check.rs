//! Compile every CUDA kernel module for a list of architectures and check
//! that each cubin defines every kernel the runtime launches: what CI's
//! `cuda_kernels_compile` test and `meshrun doctor --compile-kernels` do.
//! Needs NVRTC, not a GPU.

use std::time::Instant;

/// The outcome of one (module, architecture) compilation.
#[derive(Debug, Clone)]
pub struct ModuleBuild {
    pub module: &'static str,
    pub arch: String,
    /// Kernels the module defines.
    pub kernels: usize,
    /// Size of the cubin in bytes (0 on failure).
    pub bytes: usize,
    pub seconds: f64,
    /// Why it failed: NVRTC's error and log, or kernels missing from the
    /// cubin.
    pub error: Option<String>,
}

/// Why nothing could be compiled at all (NVRTC or the CUDA headers are
/// missing, or the `cuda` feature is off).
pub fn unavailable() -> Option<String> {
    imp::unavailable()
}

/// Every module the runtime may compile: the fixed ones, then reduce-body
/// modules generated for sample bodies that use every op kind the
/// generator translates, and sort / top_k modules for sample comparators
/// and every element type (a program's own are generated the same way).
pub fn all_modules() -> Vec<meshrun_kernels::cuda::KernelModule> {
    let mut all = meshrun_kernels::cuda::modules();
    all.extend(meshrun_kernels::cuda::body::sample_modules());
    all.extend(meshrun_kernels::cuda::sort::sample_modules());
    all
}

/// Compile every module of [`all_modules`] for every architecture of
/// `archs`, on up to `threads` threads. Call only when [`unavailable`] is
/// `None`.
pub fn compile_all(archs: &[String], threads: usize) -> Vec<ModuleBuild> {
    let jobs: Vec<(meshrun_kernels::cuda::KernelModule, String)> = all_modules()
        .into_iter()
        .flat_map(|m| archs.iter().map(move |a| (m.clone(), a.clone())))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((module, arch)) = jobs.get(i) else {
                    break;
                };
                let start = Instant::now();
                let (bytes, error) = match imp::compile(module, arch) {
                    Ok(cubin) => (cubin.len(), imp::missing(&cubin, module)),
                    Err(e) => (0, Some(e)),
                };
                let build = ModuleBuild {
                    module: module.name,
                    arch: arch.clone(),
                    kernels: module.functions.len(),
                    bytes,
                    seconds: start.elapsed().as_secs_f64(),
                    error,
                };
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, build));
            });
        }
    });
    let mut out = results.into_inner().unwrap_or_else(|e| e.into_inner());
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, b)| b).collect()
}

#[cfg(feature = "cuda")]
mod imp {
    use crate::cuda::nvrtc;
    use meshrun_kernels::cuda::KernelModule;

    pub fn unavailable() -> Option<String> {
        if let Err(e) = nvrtc::version() {
            return Some(e.to_string());
        }
        if nvrtc::include_dirs().is_empty() {
            return Some(format!(
                "cuda_fp16.h not found: set {} (or CUDA_HOME) to the CUDA headers",
                nvrtc::INCLUDE_ENV
            ));
        }
        None
    }

    pub fn compile(m: &KernelModule, arch: &str) -> Result<Vec<u8>, String> {
        nvrtc::compile(m, arch).map_err(|e| e.to_string())
    }

    pub fn missing(cubin: &[u8], m: &KernelModule) -> Option<String> {
        let missing: Vec<&String> = m
            .functions
            .iter()
            .filter(|f| !nvrtc::cubin_defines(cubin, f))
            .collect();
        (!missing.is_empty()).then(|| format!("kernels missing from the cubin: {missing:?}"))
    }
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use meshrun_kernels::cuda::KernelModule;

    const OFF: &str = "meshrun was built without the `cuda` feature";

    pub fn unavailable() -> Option<String> {
        Some(OFF.into())
    }

    pub fn compile(_: &KernelModule, _: &str) -> Result<Vec<u8>, String> {
        Err(OFF.into())
    }

    pub fn missing(_: &[u8], _: &KernelModule) -> Option<String> {
        None
    }
}
