//! From a module to results in one call: propagate, partition, run on a
//! backend, and (optionally) compare with the unsharded reference. The CLI,
//! the examples and the tests share it.

use meshrun_compiler::partition::{partition, PartitionedProgram};
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::{Diagnostic, Module};
use meshrun_kernels::{HostTensor, Parallelism};

use crate::backend::Backend;
use crate::error::RuntimeError;
use crate::executor::{ExecOptions, Executor};
use crate::reference::run_function;

/// Propagate shardings (Shardy's full pipeline) and partition the entry
/// function.
pub fn compile(module: &Module) -> Result<PartitionedProgram, Diagnostic> {
    compile_with(module, &PropagationOptions::default())
}

/// [`compile`] with the given propagation options.
pub fn compile_with(
    module: &Module,
    propagation: &PropagationOptions,
) -> Result<PartitionedProgram, Diagnostic> {
    let propagated = propagate(module, propagation)?;
    partition(&propagated)
}

/// `e` with the source op of the failing instruction added (a device
/// program only knows the global step an instruction implements).
pub fn with_source(program: &PartitionedProgram, e: RuntimeError) -> RuntimeError {
    match e {
        RuntimeError::Instruction {
            device,
            instr,
            step,
            what,
            message,
        } => {
            let what = match program.global.steps.get(step) {
                Some(s) if !s.cause.op.is_empty() => format!("{what}, from {}", s.cause.op),
                _ => what,
            };
            RuntimeError::Instruction {
                device,
                instr,
                step,
                what,
                message,
            }
        }
        e => e,
    }
}

/// Run `program` sharded on `backend`.
pub fn run_sharded<B: Backend>(
    backend: &B,
    program: &PartitionedProgram,
    inputs: &[HostTensor],
) -> Result<Vec<HostTensor>, RuntimeError> {
    Executor::new(&program.device)?
        .run_global(backend, inputs, &ExecOptions::default())
        .map_err(|e| with_source(program, e))
}

/// Run the entry function of `module` unsharded on one device (all cores).
pub fn run_reference(
    module: &Module,
    inputs: &[HostTensor],
) -> Result<Vec<HostTensor>, RuntimeError> {
    let name = module
        .entry()
        .map(|f| f.name.clone())
        .ok_or_else(|| RuntimeError::UnknownFunction("main".into()))?;
    run_function(module, &name, inputs, Parallelism::Rayon(0))
}

/// [`run_reference`] computed in f64 (see [`crate::wide_reference`]); an
/// error saying why when the program cannot be.
pub fn run_reference_in_f64(
    module: &Module,
    inputs: &[HostTensor],
) -> Result<Vec<HostTensor>, String> {
    let name = module
        .entry()
        .map(|f| f.name.clone())
        .ok_or("the module has no entry function")?;
    crate::wide_reference::run_in_f64(module, &name, inputs, Parallelism::Rayon(0), None)
}
