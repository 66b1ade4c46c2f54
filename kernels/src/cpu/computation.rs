//! Evaluating a scalar body (`ir::Computation`: a reduce's combiner, a
//! sort comparator, a scatter's update) element-wise over whole tensors.
//!
//! A body computes on rank-0 values with element-wise ops only (the
//! verifier checks this: `ir::ops::body`). So binding each block argument to a
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
        if matches!(data.kind, OpKind::Reshape(_) | OpKind::BroadcastInDim(_)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::HostElem;
    use meshrun_compiler::ir::{BinaryOp, ElemType};
    use meshrun_compiler::text::parse_module;
    use meshrun_compiler::OpKind as K;

    /// The body of the first reduce in `src`.
    fn body_of(src: &str) -> Computation {
        let m = parse_module(src).unwrap();
        let f = m.func("f").unwrap();
        let (_, op) = f
            .ops_in_order()
            .find(|(_, op)| matches!(op.kind, K::Reduce(_)))
            .unwrap();
        let K::Reduce(r) = &op.kind else {
            unreachable!()
        };
        r.body.clone()
    }

    const ARGMAX_BODY: &str = r#"func.func @f(%x: tensor<8xf32>, %i: tensor<8xi32>, %c: tensor<f32>, %d: tensor<i32>) -> tensor<i32> {
    %r:2 = stablehlo.reduce(%x init: %c), (%i init: %d) across dimensions = [0] : (tensor<8xf32>, tensor<8xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
      %2 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %ai, %bi, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %r#1 : tensor<i32>
}
"#;

    #[test]
    fn argmax_body_over_tensors_equals_it_on_each_scalar() {
        let body = body_of(ARGMAX_BODY);
        let a = HostTensor::from_vec(&[5], vec![1.0f32, 3.0, 2.0, f32::NAN, 2.0]).unwrap();
        let b = HostTensor::from_vec(&[5], vec![2.0f32, 1.0, 2.0, 1.0, f32::NAN]).unwrap();
        let ai = HostTensor::from_vec(&[5], vec![0i32, 1, 5, 3, 4]).unwrap();
        let bi = HostTensor::from_vec(&[5], vec![7i32, 6, 2, 8, 9]).unwrap();
        let got = eval_computation(&body, &[&a, &ai, &b, &bi]).unwrap();
        // Larger value wins; ties take the smaller index; NaN (in `a`) wins.
        assert_eq!(
            got[1],
            HostTensor::from_vec(&[5], vec![7i32, 1, 2, 3, 9]).unwrap()
        );
        let v = got[0].to_f64_vec();
        assert_eq!(v[..3], [2.0, 3.0, 2.0]);
        assert!(v[3].is_nan() && v[4].is_nan());
        for k in 0..5 {
            let s = |t: &HostTensor| crate::with_array!(t, x: T => T::wrap(ndarray::arr0(x[[k]]).into_dyn()));
            let one = eval_computation(&body, &[&s(&a), &s(&ai), &s(&b), &s(&bi)]).unwrap();
            assert!(one[0].shape().is_empty());
            assert_eq!(one[1], s(&got[1]), "element {k}");
        }
    }

    #[test]
    fn constants_broadcast_and_arity_is_checked() {
        // max(a, b) + 1 with the constant inside the body.
        let src = r#"func.func @f(%x: tensor<3xf32>, %c: tensor<f32>) -> tensor<f32> {
    %r = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %m = stablehlo.maximum %a, %b : tensor<f32>
      %s = stablehlo.add %m, %one : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
    return %r : tensor<f32>
}
"#;
        let body = body_of(src);
        let a = HostTensor::from_vec(&[3], vec![1.0f32, 5.0, -2.0]).unwrap();
        let b = HostTensor::from_vec(&[], vec![0.0f32]).unwrap();
        let got = eval_computation(&body, &[&a, &b]).unwrap();
        assert_eq!(
            got[0],
            HostTensor::from_vec(&[3], vec![2.0f32, 6.0, 1.0]).unwrap()
        );
        assert!(eval_computation(&body, &[&a]).is_err());
        let c = HostTensor::from_vec(&[2], vec![1.0f32, 5.0]).unwrap();
        let e = eval_computation(&body, &[&a, &c]).unwrap_err();
        assert!(e.to_string().contains("one shape"), "{e}");
        let add = Computation::per_input(BinaryOp::Add, &[ElemType::I32]);
        let x = HostTensor::from_vec(&[2], vec![i32::MAX, 1]).unwrap();
        let got = eval_computation(&add, &[&x, &x]).unwrap();
        assert_eq!(got[0], HostTensor::from_vec(&[2], vec![-2i32, 2]).unwrap());
    }
}
