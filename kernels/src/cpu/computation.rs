//! Evaluating a scalar body (`ir::Computation`: a reduce's combiner, a
//! sort comparator, a scatter's update) element-wise over whole tensors.
//!
//! A body computes on rank-0 values with element-wise ops only (the
//! verifier checks this: `ops::body`). So binding each block argument to a
//! tensor of one shape `S` instead of a scalar, and running every op of the
//! body with the existing element-wise kernels on shape `S`, computes the
//! body for all `|S|` element tuples at once: one kernel call per body op,
//! not one interpreter step per element. Rank-0 values inside (constants)
//! stay rank-0 until an op combines them with a shaped one, where they are
//! broadcast. Binding scalars evaluates the body once, on scalars.
//!
//! Element-wise semantics are exactly the kernels' (NaN rules, integer
//! wrapping, f16/bf16 computed in f32 and rounded per op), so a body gives
//! the same results whatever the shape it is evaluated on.

use gemm::Parallelism;
use meshrun_compiler::ir::{Computation, OpKind, TensorType, Value};

use crate::cpu::eval_op;
use crate::cpu::shape_ops::broadcast_in_dim;
use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

/// Evaluate `body` with block argument `k` bound to `args[k]`. The
/// arguments are all of one shape `S` or rank-0 (broadcast to `S`); the
/// results have shape `S` and the body's result element types.
pub fn eval_computation(body: &Computation, args: &[&HostTensor]) -> Result<Vec<HostTensor>> {
    let f = body.func();
    let op = "scalar body";
    if args.len() != f.args.len() {
        return Err(KernelError::invalid(
            op,
            format!("takes {} arguments, got {}", f.args.len(), args.len()),
        ));
    }
    let shape: Vec<usize> = args
        .iter()
        .map(|a| a.shape())
        .find(|s| !s.is_empty())
        .unwrap_or(&[])
        .to_vec();
    if let Some(a) = args
        .iter()
        .find(|a| !a.shape().is_empty() && a.shape() != shape.as_slice())
    {
        return Err(KernelError::invalid(
            op,
            format!(
                "arguments of shapes {shape:?} and {:?}: they must share one shape",
                a.shape()
            ),
        ));
    }
    let mut env: Vec<Option<HostTensor>> = vec![None; f.values.len()];
    let set = |env: &mut Vec<Option<HostTensor>>, v: Value, t: HostTensor| {
        if let Some(slot) = env.get_mut(v.index()) {
            *slot = Some(t);
        }
    };
    for (&v, a) in f.args.iter().zip(args) {
        set(&mut env, v, (*a).clone());
    }
    let get = |env: &Vec<Option<HostTensor>>, v: Value| -> Result<HostTensor> {
        env.get(v.index())
            .and_then(|t| t.clone())
            .ok_or_else(|| KernelError::invalid(op, format!("value %{} is not defined", v.0)))
    };
    for (_, data) in f.ops_in_order() {
        let operands: Vec<HostTensor> = data
            .operands
            .iter()
            .map(|&v| get(&env, v))
            .collect::<Result<_>>()?;
        // A rank-0 reshape or broadcast of a value is that value.
        if matches!(data.kind, OpKind::Reshape | OpKind::BroadcastInDim { .. }) {
            if let ([x], [r]) = (operands.as_slice(), data.results.as_slice()) {
                set(&mut env, *r, x.clone());
                continue;
            }
        }
        let shaped = operands.iter().any(|t| !t.shape().is_empty());
        let operands: Vec<HostTensor> = if shaped {
            operands
                .into_iter()
                .map(|t| widen(t, &shape))
                .collect::<Result<_>>()?
        } else {
            operands
        };
        let out_shape: Vec<i64> = if shaped {
            shape.iter().map(|&d| d as i64).collect()
        } else {
            Vec::new()
        };
        let result_types: Vec<TensorType> = data
            .results
            .iter()
            .map(|&r| f.ty(r).with_shape(out_shape.clone()))
            .collect();
        let refs: Vec<&HostTensor> = operands.iter().collect();
        let results = eval_op(&data.kind, &refs, &result_types, Parallelism::None)?;
        for (&r, t) in data.results.iter().zip(results) {
            set(&mut env, r, t);
        }
    }
    f.returns
        .iter()
        .map(|&v| widen(get(&env, v)?, &shape))
        .collect()
}

/// `t` broadcast to `shape` if it is rank-0 (and `shape` is not).
fn widen(t: HostTensor, shape: &[usize]) -> Result<HostTensor> {
    if t.shape().is_empty() && !shape.is_empty() {
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let ty = TensorType::new(dims, t.elem_type());
        broadcast_in_dim(&t, &[], &ty)
    } else {
        Ok(t)
    }
}
