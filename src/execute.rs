//! Running a loaded module on a backend's devices: check that it fits,
//! propagate, partition, place the inputs, run (`repeat` times, timing
//! each run of the sharded program alone) and gather the outputs. What
//! `meshrun run` and the Python package's `run` do alike.

use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, bail};

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::propagation::PropagationOptions;
use meshrun_compiler::{DiagKind, Diagnostic, Module, SrcPos};
use meshrun_kernels::HostTensor;
use meshrun_runtime::capacity::{module_fits_backend, program_fits_backend};
use meshrun_runtime::pipeline::{compile_with, with_source};
use meshrun_runtime::{Backend, ExecOptions, Executor};

use crate::load::LoadError;

/// What a run gave.
#[derive(Debug)]
pub struct Ran {
    pub outputs: Vec<HostTensor>,
    /// Each run of the sharded program, in milliseconds, in run order.
    pub times_ms: Vec<f64>,
    pub devices: usize,
}

/// The types of `@main`'s arguments; errors name `file`.
pub fn main_input_types(file: &Path, module: &Module) -> anyhow::Result<Vec<TensorType>> {
    let main = module
        .func("main")
        .ok_or_else(|| anyhow!("{}: the module has no function @main", file.display()))?;
    Ok(main.args.iter().map(|&a| main.ty(a).clone()).collect())
}

/// Whether `inputs` are what `@main` takes: as many, each of its type.
pub fn check_inputs(types: &[TensorType], inputs: &[HostTensor]) -> anyhow::Result<()> {
    if inputs.len() != types.len() {
        bail!("@main takes {} inputs, got {}", types.len(), inputs.len());
    }
    for (k, (t, ty)) in inputs.iter().zip(types).enumerate() {
        if t.tensor_type() != *ty {
            bail!(
                "input {k}: @main takes {ty}, got shape {:?} {}",
                t.shape(),
                t.elem_type()
            );
        }
    }
    Ok(())
}

/// Run `module` (read from `file`, which errors name) on `backend`:
/// sizes are checked before anything is allocated, then `inputs` gives
/// the inputs. `check_replicas`: every device holding a copy of a block
/// must hold the same values.
pub fn run_sharded<B: Backend>(
    backend: &B,
    file: &Path,
    module: &Module,
    propagation: &PropagationOptions,
    repeat: usize,
    check_replicas: bool,
    inputs: impl FnOnce(&Module) -> anyhow::Result<Vec<HostTensor>>,
) -> anyhow::Result<(Ran, Vec<HostTensor>)> {
    if repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let invalid = |diag| LoadError::Invalid {
        path: file.to_path_buf(),
        diag,
    };
    // Sizes first: nothing is allocated for a program that cannot fit.
    module_fits_backend(module, backend, check_replicas).map_err(invalid)?;
    let program = compile_with(module, propagation).map_err(invalid)?;
    program_fits_backend(&program.device, backend).map_err(|e| {
        let pos = e
            .step
            .and_then(|s| program.global.steps.get(s))
            .map_or(SrcPos::UNKNOWN, |s| s.cause.pos);
        invalid(Diagnostic::new(DiagKind::Unsupported, pos, e.message))
    })?;
    let inputs = inputs(module)?;
    let exec = Executor::new(&program.device)?;
    let placed = exec.place(backend, &inputs)?;
    let opts = ExecOptions::default();
    let mut times_ms = Vec::with_capacity(repeat);
    let mut last = None;
    for _ in 0..repeat {
        let start = Instant::now();
        let outs = exec
            .run(backend, &placed, &opts)
            .map_err(|e| with_source(&program, e))?;
        times_ms.push(start.elapsed().as_secs_f64() * 1e3);
        if let Some(earlier) = last.replace(outs) {
            exec.discard(backend, earlier);
        }
    }
    drop(placed);
    let outs = last.ok_or_else(|| anyhow!("the program did not run"))?;
    let outputs = exec.gather(backend, outs, check_replicas)?;
    let ran = Ran {
        outputs,
        times_ms,
        devices: program.device.num_devices(),
    };
    Ok((ran, inputs))
}
