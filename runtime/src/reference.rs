//! The reference interpreter: runs a function of a module unsharded, on one
//! device, op by op through the CPU kernels. Every sharded run is checked
//! against it, so it favours plainness over speed (but frees each value
//! after its last use and lets `dot_general` use threads via `par`).
//!
//! The ops run in `reference_walk`, here in the mode of one device
//! (`OneDevice`): sharding ops (`sdy.sharding_constraint`, `sdy.reshard`,
//! `sdy.sharding_group`) do not change values and are the identity;
//! `func.call` runs the callee; `while` and `case` run their regions;
//! `sdy.manual_computation` (`jax.shard_map`) runs its body on every device
//! of its mesh, collectives included, in the walk's mode of many devices
//! (`reference_manual`).

use meshrun_compiler::ir::{Function, Module, OpKind};
use meshrun_kernels::{HostTensor, Parallelism};

use crate::capacity::{self, host_memory_bytes};
use crate::error::RuntimeError;
use crate::reference_manual;
pub use crate::reference_scope::MAX_CALL_DEPTH;
use crate::reference_value::{matches_type, Lanes, Slot};
use crate::reference_walk::{Env, LastUses, Mode, Site, Walk};

/// Run `func` of `module` on `inputs` and return its results. Inputs must
/// match the function's argument types exactly (shape and element type).
pub fn run_function(
    module: &Module,
    func: &str,
    inputs: &[HostTensor],
    par: Parallelism,
) -> Result<Vec<HostTensor>, RuntimeError> {
    run_function_limited(module, func, inputs, par, None)
}

/// [`run_function`], stopping with an error a `while` loop that has run
/// `max_loop_iterations` iterations (see `ExecOptions::max_loop_iterations`).
pub fn run_function_limited(
    module: &Module,
    func: &str,
    inputs: &[HostTensor],
    par: Parallelism,
    max_loop_iterations: Option<u64>,
) -> Result<Vec<HostTensor>, RuntimeError> {
    let f = module
        .func(func)
        .ok_or_else(|| RuntimeError::UnknownFunction(func.to_string()))?;
    check_inputs(f, inputs)?;
    // Every value is held whole: refuse what this machine cannot hold
    // before allocating any of it.
    capacity::module_fits(module, "reference", usize::MAX, host_memory_bytes(), true).map_err(
        |d| RuntimeError::TooLarge {
            pos: d.pos,
            message: d.message,
        },
    )?;
    let last_uses = LastUses::default();
    let walk = Walk {
        module,
        par,
        max_loop_iterations,
        mode: &OneDevice,
        last_uses: &last_uses,
    };
    let args = inputs.iter().map(|t| vec![Some(Slot::Input(t))]).collect();
    let results = walk.run_function(f, args, &walk.all_devices(), 0)?;
    results
        .into_iter()
        .map(|lanes| {
            let one = lanes.into_iter().next().flatten();
            one.map(Slot::into_owned)
                .ok_or_else(|| RuntimeError::Malformed {
                    func: f.name.clone(),
                    op_index: f.body.len(),
                    pos: f.return_pos,
                    message: "a result has no value".into(),
                })
        })
        .collect()
}

/// Check count, shapes and element types of `inputs` against `f`'s args.
pub fn check_inputs(f: &Function, inputs: &[HostTensor]) -> Result<(), RuntimeError> {
    if inputs.len() != f.args.len() {
        return Err(RuntimeError::InputCount {
            func: f.name.clone(),
            expected: f.args.len(),
            got: inputs.len(),
        });
    }
    for (index, (&arg, input)) in f.args.iter().zip(inputs).enumerate() {
        let expected = f.ty(arg);
        if !matches_type(input, expected) {
            return Err(RuntimeError::InputMismatch {
                index,
                expected: expected.clone(),
                got_shape: input.shape().to_vec(),
                got_elem: input.elem_type(),
            });
        }
    }
    Ok(())
}

/// The unsharded program: one device, holding whole tensors. Collectives
/// and `partition_id` mean nothing here (the kernels refuse them); a
/// manual computation runs its body on every device of its mesh.
struct OneDevice;

impl Mode for OneDevice {
    fn lanes(&self) -> usize {
        1
    }

    fn device_op<'a>(
        &self,
        walk: &Walk<'_>,
        at: &Site<'_>,
        _env: &mut Env<'a>,
        operands: &[Lanes<'a>],
        _active: &[bool],
        depth: usize,
    ) -> Option<Result<Vec<Lanes<'a>>, RuntimeError>> {
        match (&at.op.kind, at.op.regions.as_slice()) {
            (OpKind::ManualComputation(_), [_]) => {
                Some(reference_manual::enter(walk, at, operands, depth))
            }
            _ => None,
        }
    }
}
