//! From a module to results in one call: propagate, partition, run on a
//! backend, and (optionally) compare with the unsharded reference. The CLI,
//! the examples and the tests share it.

use meshrun_compiler::partition::device_program::{partition, PartitionedProgram};
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
    let propagated = propagate(module, &PropagationOptions::default())?;
    partition(&propagated)
}

/// Run `program` sharded on `backend`.
pub fn run_sharded<B: Backend>(
    backend: &B,
    program: &PartitionedProgram,
    inputs: &[HostTensor],
) -> Result<Vec<HostTensor>, RuntimeError> {
    Executor::new(&program.device)?.run_global(backend, inputs, &ExecOptions::default())
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
