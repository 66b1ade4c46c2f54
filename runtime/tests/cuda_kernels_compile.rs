//! Every CUDA kernel compiles with NVRTC to a cubin for sm_80 (A100) and
//! sm_90 (H100), and every kernel the runtime launches is in it. NVRTC
//! needs no GPU, so this runs in CI: `.ci/run` installs NVRTC and the CUDA
//! headers from PyPI (`ci/nvrtc-env.sh`) and sets `MESHRUN_NVRTC_REQUIRED=1`,
//! which turns a missing NVRTC into a failure. Without that variable (a
//! developer machine without CUDA) the test prints why it skipped.

use meshrun_runtime::cuda::kernel_check::{all_modules, compile_all, unavailable};

const REQUIRED_ENV: &str = "MESHRUN_NVRTC_REQUIRED";

#[test]
fn every_kernel_compiles_for_sm80_and_sm90() {
    let required = std::env::var(REQUIRED_ENV).is_ok_and(|v| v == "1");
    if let Some(why) = unavailable() {
        assert!(
            !required,
            "{REQUIRED_ENV}=1 but NVRTC cannot compile: {why}"
        );
        eprintln!("skipped: {why} (set {REQUIRED_ENV}=1 to make this a failure)");
        return;
    }
    let archs = vec!["sm_80".to_string(), "sm_90".to_string()];
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let builds = compile_all(&archs, threads);
    // The fixed modules and the reduce-body modules of sample bodies.
    let modules = all_modules().len();
    assert!(modules > meshrun_kernels::cuda::modules().len());
    assert_eq!(builds.len(), modules * archs.len());
    let failures: Vec<String> = builds
        .iter()
        .filter_map(|b| {
            b.error
                .as_ref()
                .map(|e| format!("{} for {}: {e}", b.module, b.arch))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "kernels that do not compile:\n{}",
        failures.join("\n")
    );
    for b in &builds {
        assert!(
            b.bytes > 0 && b.kernels > 0,
            "{} for {}: an empty cubin",
            b.module,
            b.arch
        );
        eprintln!(
            "{} for {}: {} kernels, {} KiB, {:.1} s",
            b.module,
            b.arch,
            b.kernels,
            b.bytes / 1024,
            b.seconds
        );
    }
}

/// For a GPU newer than NVRTC knows, the kernels load as PTX for
/// `compute_90` instead (checked on the smallest module).
#[cfg(feature = "cuda")]
#[test]
fn kernels_also_compile_to_fallback_ptx() {
    use meshrun_runtime::cuda::nvrtc;
    let required = std::env::var(REQUIRED_ENV).is_ok_and(|v| v == "1");
    if let Some(why) = unavailable() {
        assert!(
            !required,
            "{REQUIRED_ENV}=1 but NVRTC cannot compile: {why}"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let module = meshrun_kernels::cuda::modules()
        .into_iter()
        .find(|m| m.name == "movement")
        .unwrap();
    let ptx = nvrtc::fallback_ptx(&module).unwrap().to_src();
    for f in &module.functions {
        assert!(
            ptx.contains(&format!(".entry {f}(")),
            "{f} missing from the PTX"
        );
    }
}
