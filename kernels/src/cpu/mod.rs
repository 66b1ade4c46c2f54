//! CPU kernels, one file per op family, and [`eval_op`], which dispatches an
//! `OpKind` to them.

pub mod alloc;
pub mod bitcast;
pub mod body_laws;
pub mod computation;
#[doc(hidden)]
pub mod conv_cases;
pub mod convert;
pub mod convolution;
pub mod dot;
pub mod dot_chain;
pub mod dynamic_slice;
pub mod elementwise;
pub mod fusion;
pub mod gather;
pub mod in_place;
mod int;
mod map;
pub mod packed_gemm;
mod permute;
pub mod pieces;
pub mod ragged_dot;
mod real;
pub mod reduce;
pub mod reduce_body;
pub mod reduce_precision;
pub mod reverse;
pub mod rng;
pub mod shape_ops;
pub mod sort;
mod special;
pub mod top_k;
pub mod vmath;
pub mod window;

use gemm::Parallelism;
use meshrun_compiler::ir::ops::compare::Compare;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{OpKind, TensorType};

use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

fn arity(kind: &OpKind, what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(KernelError::Arity {
            op: kind.name(),
            what,
            expected,
            got,
        })
    }
}

/// Compute one op on host tensors. `result_types` are the op's declared
/// result types: kernels that create data (constant, iota, broadcast,
/// reshape, convert, dot) take their shape or element type from them, and
/// every result is checked against them. `par` is how many threads the
/// kernel may use (`dot_general`, `convolution`, and element-wise work cut
/// into pieces: see [`pieces`]).
///
/// `func.call` and the `sdy` ops are not local computations and give
/// `KernelError::NotAKernel`; the interpreter handles them.
pub fn eval_op(
    kind: &OpKind,
    operands: &[&HostTensor],
    result_types: &[TensorType],
    par: Parallelism,
) -> Result<Vec<HostTensor>> {
    let n_results = match kind {
        OpKind::Reduce(_) => operands.len() / 2,
        // Defined ops say their result count in their spec (a variable
        // one is as many as the types, which the verifier checked).
        _ if kind.def().is_some() => match kind.def().map(|d| d.spec().results) {
            Some(meshrun_compiler::ir::ops::Arity::Exactly(n)) => n,
            _ => result_types.len(),
        },
        _ => 1,
    };
    arity(kind, "result types", n_results, result_types.len())?;
    let results = pieces::with_parallelism(par, || compute(kind, operands, result_types, par))?;
    for (i, (got, want)) in results.iter().zip(result_types).enumerate() {
        let got_ty = got.tensor_type();
        if &got_ty != want {
            return Err(KernelError::Invalid {
                op: kind.name(),
                message: format!("result {i} is {got_ty} but the op declares {want}"),
            });
        }
    }
    Ok(results)
}

fn compute(
    kind: &OpKind,
    x: &[&HostTensor],
    result_types: &[TensorType],
    par: Parallelism,
) -> Result<Vec<HostTensor>> {
    let n = |expected: usize| arity(kind, "operands", expected, x.len());
    // Identities (`OpDef::runs_as_identity`): barriers and the custom_call
    // targets meshrun runs (`@Sharding`, host placements); `run` refuses
    // the other targets before any device starts, and so does this.
    if let OpKind::CustomCall(c) = kind {
        if let Some(e) = c.run_error() {
            return Err(KernelError::invalid(&kind.name(), e));
        }
    }
    if kind.def().is_some_and(|d| d.runs_as_identity()) {
        return Ok(x.iter().map(|t| (*t).clone()).collect());
    }
    let Some(out) = result_types.first() else {
        return Err(KernelError::invalid(&kind.name(), "has no result type"));
    };
    let one = |t: HostTensor| Ok(vec![t]);
    match kind {
        OpKind::Unary(op) => {
            n(1)?;
            one(elementwise::unary(*op, x[0])?)
        }
        OpKind::Binary(op) => {
            n(2)?;
            one(elementwise::binary(*op, x[0], x[1])?)
        }
        OpKind::Compare(Compare {
            direction,
            compare_type,
        }) => {
            n(2)?;
            one(elementwise::compare(*direction, *compare_type, x[0], x[1])?)
        }
        OpKind::Select(_) => {
            n(3)?;
            one(elementwise::select(x[0], x[1], x[2])?)
        }
        OpKind::Clamp(_) => {
            n(3)?;
            one(elementwise::clamp(x[0], x[1], x[2])?)
        }
        OpKind::Convert(_) => {
            n(1)?;
            one(convert::convert(x[0], out.elem)?)
        }
        OpKind::Constant(Constant { value: lit, .. }) => {
            n(0)?;
            one(HostTensor::from_literal(lit, out)?)
        }
        OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim }) => {
            n(0)?;
            one(shape_ops::iota(out, *dim)?)
        }
        OpKind::BroadcastInDim(meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim {
            dims,
        }) => {
            n(1)?;
            one(shape_ops::broadcast_in_dim(x[0], dims, out)?)
        }
        OpKind::Reshape(_) => {
            n(1)?;
            one(shape_ops::reshape(x[0], out)?)
        }
        OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm }) => {
            n(1)?;
            one(shape_ops::transpose(x[0], perm)?)
        }
        OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
            start,
            limit,
            strides,
        }) => {
            n(1)?;
            one(shape_ops::slice(x[0], start, limit, strides)?)
        }
        OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
            low,
            high,
            interior,
        }) => {
            n(2)?;
            one(shape_ops::pad(x[0], x[1], low, high, interior)?)
        }
        OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim }) => {
            one(shape_ops::concatenate(x, *dim)?)
        }
        OpKind::DotGeneral(DotGeneral { dims, .. }) => {
            n(2)?;
            one(dot::dot_general(x[0], x[1], dims, out, par)?)
        }
        OpKind::Reduce(r) => {
            let (inputs, inits) = x.split_at(x.len() / 2);
            if inputs.is_empty() || inputs.len() != inits.len() {
                return Err(KernelError::invalid(
                    "stablehlo.reduce",
                    format!("needs N inputs and N init values, got {} operands", x.len()),
                ));
            }
            match r.kinds() {
                // Each input on its own with a known reduction: the fast,
                // exact kernel.
                Some(kinds) if kinds.len() == inputs.len() => {
                    let mut out = Vec::with_capacity(inputs.len());
                    for ((k, input), init) in kinds.iter().zip(inputs).zip(inits) {
                        out.extend(reduce::reduce(*k, r.dims(), &[input], &[init])?);
                    }
                    Ok(out)
                }
                _ => reduce_body::reduce_with_body(&r.body, r.dims(), inputs, inits),
            }
        }
        OpKind::Gather(g) => {
            n(2)?;
            one(gather::gather(g, x[0], x[1])?)
        }
        OpKind::Scatter(s) => gather::scatter(s, x),
        OpKind::DynamicSlice(d) => match x.split_first() {
            Some((operand, starts)) => one(dynamic_slice::dynamic_slice(
                operand,
                starts,
                &d.slice_sizes,
            )?),
            None => Err(KernelError::invalid(&kind.name(), "needs an operand")),
        },
        OpKind::DynamicUpdateSlice(_) => match x {
            [operand, update, starts @ ..] => one(dynamic_slice::dynamic_update_slice(
                operand, update, starts,
            )?),
            _ => Err(KernelError::invalid(
                &kind.name(),
                "needs an operand and an update",
            )),
        },
        OpKind::ReduceWindow(rw) => {
            let (inputs, inits) = x.split_at(x.len() / 2);
            window::reduce_window(rw, inputs, inits)
        }
        OpKind::SelectAndScatter(ss) => {
            n(3)?;
            one(window::select_and_scatter(ss, x[0], x[1], x[2])?)
        }
        OpKind::RngBitGenerator(r) => {
            n(1)?;
            let bits_type = result_types.get(1).ok_or_else(|| {
                KernelError::invalid(&kind.name(), "needs a state and a bits result type")
            })?;
            let (state, bits) = rng::rng_bit_generator(r.algorithm, x[0], bits_type)?;
            Ok(vec![state, bits])
        }
        OpKind::Convolution(c) => {
            n(2).and_then(|_| one(convolution::convolution(c, x[0], x[1], out, par)?))
        }
        OpKind::BitcastConvert(_) => {
            n(1)?;
            one(bitcast::bitcast_convert(x[0], out)?)
        }
        OpKind::Sort(s) => sort::sort(s, x),
        OpKind::RaggedDot(r) => {
            let starts = match x.len() {
                5 => Some((x[3], x[4])),
                _ => {
                    n(3)?;
                    None
                }
            };
            one(ragged_dot::ragged_dot(
                r, x[0], x[1], x[2], starts, out, par,
            )?)
        }
        OpKind::TopK(t) => {
            n(1)?;
            top_k::top_k(x[0], t.k)
        }
        OpKind::ReducePrecision(r) => {
            n(1)?;
            let f = reduce_precision::Format::new(r.exponent_bits, r.mantissa_bits)?;
            one(reduce_precision::reduce_precision(x[0], f)?)
        }
        OpKind::Reverse(r) => {
            n(1)?;
            one(reverse::reverse(x[0], &r.dimensions)?)
        }
        OpKind::Call(_)
        | OpKind::ShardingConstraint(_)
        | OpKind::Reshard(_)
        | OpKind::ShardingGroup(_) => Err(KernelError::NotAKernel { op: kind.name() }),
        _ => Err(KernelError::invalid(&kind.name(), "has no CPU kernel")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshrun_compiler::ir::ops::reduce::Reduce;
    use meshrun_compiler::ir::ops::reshard::Reshard;
    use meshrun_compiler::ir::{BinaryOp, DenseLiteral, ElemType, ReduceKind, Scalar};
    use meshrun_compiler::sharding::TensorSharding;

    fn f32t(shape: &[usize], v: &[f32]) -> HostTensor {
        HostTensor::from_vec(shape, v.to_vec()).unwrap()
    }

    #[test]
    fn dispatches_and_checks_result_types() {
        let a = f32t(&[2], &[1.0, 2.0]);
        let ty = TensorType::new(vec![2], ElemType::F32);
        let add = OpKind::Binary(BinaryOp::Add);
        let got = eval_op(
            &add,
            &[&a, &a],
            std::slice::from_ref(&ty),
            Parallelism::None,
        )
        .unwrap();
        assert_eq!(got, vec![f32t(&[2], &[2.0, 4.0])]);
        let wrong = TensorType::new(vec![2], ElemType::F16);
        let err = eval_op(&add, &[&a, &a], &[wrong], Parallelism::None).unwrap_err();
        assert!(err.to_string().contains("declares tensor<2xf16>"), "{err}");
        let err = eval_op(&add, &[&a], std::slice::from_ref(&ty), Parallelism::None).unwrap_err();
        assert_eq!(err.to_string(), "stablehlo.add: expected 2 operands, got 1");
        let c = OpKind::Constant(Constant::new(DenseLiteral::Splat(Scalar::Float(0.5))));
        let got = eval_op(&c, &[], std::slice::from_ref(&ty), Parallelism::None).unwrap();
        assert_eq!(got, vec![f32t(&[2], &[0.5, 0.5])]);
    }

    #[test]
    fn reduce_splits_inputs_and_inits() {
        let a = f32t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let z = f32t(&[], &[0.0]);
        let r = OpKind::Reduce(Reduce::with_kind(
            vec![0],
            ReduceKind::Add,
            &[ElemType::F32],
        ));
        let ty = TensorType::new(vec![2], ElemType::F32);
        let got = eval_op(&r, &[&a, &z], &[ty], Parallelism::None).unwrap();
        assert_eq!(got, vec![f32t(&[2], &[4.0, 6.0])]);
    }

    #[test]
    fn non_local_ops_are_typed_errors() {
        let a = f32t(&[2], &[1.0, 2.0]);
        let ty = vec![a.tensor_type()];
        let call = OpKind::Call(meshrun_compiler::ir::ops::call::Call::new("f"));
        let err = eval_op(&call, &[&a], &ty, Parallelism::None).unwrap_err();
        assert!(matches!(err, KernelError::NotAKernel { .. }), "{err}");
        let rs = OpKind::Reshard(Reshard {
            sharding: TensorSharding::replicated("m", 1),
        });
        assert!(eval_op(&rs, &[&a], &ty, Parallelism::None).is_err());
    }
}
