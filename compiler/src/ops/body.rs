//! Checks shared by the ops that carry scalar bodies (reduce, reduce_window,
//! select_and_scatter, sort): the body's signature, and that it is built
//! from element-wise ops only, which is what lets every backend evaluate it
//! over whole tensors at once (see `meshrun_kernels::cpu::computation`).

use crate::ir::module::{Computation, Module};
use crate::ir::ops::OpKind;
use crate::ir::types::TensorType;
use crate::ir::verify::function_errors;

fn list(ts: &[TensorType]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The body of `what` must be a well-typed function (checked like any
/// function), take `args` and return `results` (rank-0 types), and compute
/// element-wise.
pub(crate) fn check_body(
    body: &Computation,
    what: &str,
    args: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    if let Some(e) = function_errors(&Module::default(), body.func())
        .into_iter()
        .next()
    {
        return Err(if e.pos.is_known() {
            format!("in its {what} at {}: {}", e.pos, e.message)
        } else {
            format!("in its {what}: {}", e.message)
        });
    }
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
    check_elementwise(body, what)
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
            OpKind::BroadcastInDim { .. } | OpKind::Reshape => scalar,
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
