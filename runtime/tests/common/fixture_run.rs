//! Running a JAX fixture directory's program on the simulated CPU devices
//! and comparing its outputs (include with
//! `#[path = "common/fixture_run.rs"] mod fixture_run;` next to
//! `fixture_files`). Shared by the fixture tests of `fixtures/jax_regions`
//! and `fixtures/jax_models`.

// Each test file that includes this uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use meshrun_compiler::partition::DeviceProgram;
use meshrun_kernels::HostTensor;
use meshrun_runtime::compare::mismatch;
use meshrun_runtime::{CpuBackend, ExecOptions, Executor};

/// `fixtures/FOLDER/NAME` of the repository.
pub fn fixture(folder: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(folder)
        .join(name)
}

/// Run `program` on `inputs` on the CPU backend; its gathered outputs, or
/// the first error as text.
pub fn execute(program: &DeviceProgram, inputs: &[HostTensor]) -> Result<Vec<HostTensor>, String> {
    let exec = Executor::new(program).map_err(|e| e.to_string())?;
    let backend = CpuBackend::new();
    let placed = exec.place(&backend, inputs).map_err(|e| e.to_string())?;
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .map_err(|e| e.to_string())?;
    exec.gather(&backend, outs, true).map_err(|e| e.to_string())
}

/// `got` against `want` output by output (`what` names `want` in the
/// error): the same count, each within `rtol` (`compare`'s rule).
pub fn compare_outputs(
    got: &[HostTensor],
    want: &[HostTensor],
    rtol: f64,
    what: &str,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} outputs, {what} has {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if let Some(m) = mismatch(g, w, rtol) {
            return Err(format!("output {i} vs {what}: {m}"));
        }
    }
    Ok(())
}
