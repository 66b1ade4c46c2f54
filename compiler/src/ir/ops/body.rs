//! Checks shared by the ops that carry scalar bodies (reduce, reduce_window,
//! select_and_scatter, sort): the body's signature, and that it is built
//! from element-wise ops only, which is what lets every backend evaluate it
//! over whole tensors at once (see `meshrun_kernels::cpu::computation`).
//! Scatter's update region and the collectives' reduction bodies share the
//! signature check only (they are matched against one binary op instead).
//!
//! That a body is a well-typed function is the verifier's check: it checks
//! the bodies an op lists in [`crate::ir::ops::OpDef::bodies_checked_as_functions`]
//! as functions of their own before the op's checks (MLIR verifies nested
//! ops before their parent), so nothing here calls back into the verifier.

use crate::ir::ops::checks::type_list as list;
use crate::ir::ops::checks::{check_static_shape, plural};
use crate::ir::ops::OpKind;
use crate::ir::types::TensorType;
use crate::ir::Computation;

/// The body of `what` must take `args` and return `results` (rank-0
/// types), and compute element-wise.
pub(crate) fn check_body(
    body: &Computation,
    what: &str,
    args: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    check_signature(body, what, args, results)?;
    check_elementwise(body, what)
}

/// The operands of an op with N inputs of one shape, then their N scalar
/// init values, and a `body` combining two element tuples into one
/// (reduce, reduce_window): split into inputs and inits after checking
/// them and the body.
pub(crate) fn check_inputs_inits_body<'a>(
    operands: &'a [TensorType],
    body: &Computation,
) -> Result<(&'a [TensorType], &'a [TensorType]), String> {
    let n = operands.len() / 2;
    if n == 0 || 2 * n != operands.len() {
        return Err(format!(
            "expects N inputs followed by N init values (N >= 1), got {} operand{}",
            operands.len(),
            plural(operands.len())
        ));
    }
    let (inputs, inits) = operands.split_at(n);
    let first = &inputs[0];
    for (k, input) in inputs.iter().enumerate() {
        check_static_shape(input, &format!("input {k}"))?;
        if input.shape != first.shape {
            return Err(format!(
                "input {k} {input} has a different shape than input 0 {first}"
            ));
        }
    }
    for (k, (input, init)) in inputs.iter().zip(inits).enumerate() {
        if init.rank() != 0 {
            return Err(format!("init value {k} must be a scalar, got {init}"));
        }
        if init.elem != input.elem {
            return Err(format!(
                "init value {k} has element type {} but input {k} has {}",
                init.elem, input.elem
            ));
        }
    }
    check_body(body, "body", &[inits, inits].concat(), inits)?;
    Ok((inputs, inits))
}

/// The body of `what` takes `args` and returns `results`.
pub(crate) fn check_signature(
    body: &Computation,
    what: &str,
    args: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    let got = body.arg_types();
    if got != args {
        return Err(format!(
            "the {what} takes ({}) but must take ({})",
            list(&got),
            list(args)
        ));
    }
    let got = body.return_types();
    if got != results {
        return Err(format!(
            "the {what} returns ({}) but must return ({})",
            list(&got),
            list(results)
        ));
    }
    Ok(())
}

/// Every op of the body maps rank-0 values to rank-0 values element by
/// element: element-wise ops, constants, and rank-0 broadcasts/reshapes.
pub(crate) fn check_elementwise(body: &Computation, what: &str) -> Result<(), String> {
    let f = body.func();
    for (_, op) in f.ops_in_order() {
        let scalar = op
            .operands
            .iter()
            .chain(&op.results)
            .all(|&v| f.ty(v).rank() == 0);
        let ok = match &op.kind {
            OpKind::Constant(_) => scalar,
            OpKind::BroadcastInDim(_) | OpKind::Reshape(_) => scalar,
            k => k.is_elementwise() && scalar,
        };
        if !ok {
            return Err(format!(
                "the {what} uses '{}', which is not an element-wise op on rank-0 values \
                 (bodies are evaluated element-wise)",
                op.kind.name()
            ));
        }
    }
    Ok(())
}
