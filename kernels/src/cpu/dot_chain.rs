//! A `dot_general` whose result feeds a fused element-wise chain: the
//! chain runs on each tile of the product right after `gemm` wrote it, on
//! the thread that wrote it, while the tile is in that core's cache.
//!
//! Every weight update of a training step has this form, `w - lr · (xᵀ ·
//! dy)`: unfused, the 1024×1024 gradient is written out, then read back
//! with `w` and the update written (three passes over memory for one
//! element-wise op); here the gradient's tile is updated in place. The
//! same holds for a layer's `tanh(x · W + b)`.
//!
//! The bits are those of the dot, then the chain: the tiles are the ones
//! the dot is computed in anyway ([`dot::TileHook`]), and each element of
//! the chain is computed by the same element functions as
//! [`fusion::eval`] (block by block along each tile row).

use gemm::Parallelism;
use meshrun_compiler::ir::{DotDims, ElemType, TensorType};
use ndarray::ArrayViewMut2;

use crate::cpu::dot::{self, DotPlan, TileAt};
use crate::cpu::fusion::{self, Chain, Window, Workspace};
use crate::error::{KernelError, Result};
use crate::tensor::{dims_of, HostTensor};

const OP: &str = "dot_general with a fused chain";

/// `chain` with operand `slot` = `dot_general(lhs, rhs)` (of type
/// `dot_ty`); `operands` are the chain's others, `operands[slot]` is
/// `None`. f32 only: the dot's operands and result and the chain.
pub fn dot_then_chain(
    lhs: &HostTensor,
    rhs: &HostTensor,
    dims: &DotDims,
    dot_ty: &TensorType,
    chain: &Chain,
    operands: &[Option<&HostTensor>],
    par: Parallelism,
) -> Result<HostTensor> {
    let slot = match operands.iter().position(Option::is_none) {
        Some(s) if operands.iter().filter(|o| o.is_none()).count() == 1 => s,
        _ => {
            return Err(KernelError::invalid(
                OP,
                "exactly one operand of the chain must be the dot's result",
            ))
        }
    };
    let plan = DotPlan::new(lhs.shape(), rhs.shape(), dims)?;
    if dims_of(dot_ty)? != plan.out_shape || plan.out_shape != chain.shape {
        return Err(KernelError::invalid(
            OP,
            format!(
                "the dot makes {:?} ({dot_ty}), the chain computes {:?}",
                plan.out_shape, chain.shape
            ),
        ));
    }
    let (HostTensor::F32(a), HostTensor::F32(b), ElemType::F32) = (lhs, rhs, dot_ty.elem) else {
        return Err(KernelError::invalid(
            OP,
            format!(
                "{} x {} -> {}: only f32",
                lhs.elem_type(),
                rhs.elem_type(),
                dot_ty.elem
            ),
        ));
    };
    let data = fusion::operand_data(chain, operands)?;
    let failed = std::sync::Mutex::new(None);
    let (m, n) = (plan.m, plan.n);
    let hook = |at: TileAt, mut tile: ArrayViewMut2<'_, f32>| {
        let width = tile.ncols();
        let mut ws = Workspace::new(chain);
        let mut copy = vec![0.0f32; width];
        for (i, mut row) in tile.rows_mut().into_iter().enumerate() {
            let start = (at.batch * m + at.row + i) * n + at.col;
            let Some(row) = row.as_slice_mut() else {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(KernelError::invalid(
                    OP,
                    "a tile row that is not contiguous",
                ));
                return;
            };
            // The chain writes the row it reads the dot from: read a copy.
            copy.copy_from_slice(row);
            let window = Window {
                slot,
                base: start,
                data: &copy,
            };
            if let Err(e) = fusion::eval_piece(chain, &data, Some(window), start, row, &mut ws) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                return;
            }
        }
    };
    let out = dot::gemm_dot_then(a, b, &plan, par, Some(&hook))?;
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(HostTensor::F32(out)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::fusion::tests::{bits, f32s};
    use crate::cpu::fusion::{Arg, Step, StepOp};
    use meshrun_compiler::ir::{BinaryOp, UnaryOp};

    fn dims(lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]) -> DotDims {
        DotDims {
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
        }
    }

    /// `tanh(w - lr · d)` with `d` the dot (operand 1), `w` operand 0, `lr`
    /// a scalar (operand 2).
    fn update(shape: &[usize]) -> Chain {
        Chain {
            steps: vec![
                Step {
                    op: StepOp::Binary(BinaryOp::Multiply),
                    args: vec![Arg::Repeated(2), Arg::Operand(1)],
                },
                Step {
                    op: StepOp::Binary(BinaryOp::Subtract),
                    args: vec![Arg::Operand(0), Arg::Step(0)],
                },
                Step {
                    op: StepOp::Unary(UnaryOp::Tanh),
                    args: vec![Arg::Step(1)],
                },
            ],
            shape: shape.to_vec(),
        }
    }

    #[test]
    fn gives_the_bits_of_the_dot_then_the_chain() {
        // Short and wide (cut by columns on several threads), tall (cut by
        // rows), a weight gradient (`[0]x[0]`: the lhs contiguous down its
        // columns), `dy · Wᵀ` (`[1]x[1]`: the rhs copied or the product
        // computed column-major), batched, and tiny.
        let cases: Vec<(Vec<usize>, Vec<usize>, DotDims)> = vec![
            (vec![64, 100], vec![100, 300], dims(&[], &[], &[1], &[0])),
            (vec![700, 40], vec![40, 200], dims(&[], &[], &[1], &[0])),
            (vec![40, 600], vec![40, 130], dims(&[], &[], &[0], &[0])),
            (vec![64, 128], vec![300, 128], dims(&[], &[], &[1], &[1])),
            (
                vec![3, 20, 30],
                vec![3, 30, 150],
                dims(&[0], &[0], &[2], &[1]),
            ),
            (vec![1, 7], vec![7, 5], dims(&[], &[], &[1], &[0])),
        ];
        for (i, (ls, rs, d)) in cases.into_iter().enumerate() {
            let (lhs, rhs) = (f32s(&ls, 10 + i as u32), f32s(&rs, 20 + i as u32));
            let plan = DotPlan::new(&ls, &rs, &d).unwrap();
            let ty = TensorType::new(
                plan.out_shape
                    .iter()
                    .map(|&x| x as i64)
                    .collect::<Vec<i64>>(),
                ElemType::F32,
            );
            let chain = update(&plan.out_shape);
            let w = f32s(&plan.out_shape, 30 + i as u32);
            let lr = HostTensor::from_vec(&[], vec![0.01f32]).unwrap();
            for par in [
                Parallelism::None,
                Parallelism::Rayon(2),
                Parallelism::Rayon(3),
            ] {
                let product = dot::dot_general(&lhs, &rhs, &d, &ty, par).unwrap();
                let want = fusion::eval(&chain, &[&w, &product, &lr], par).unwrap();
                let got = dot_then_chain(
                    &lhs,
                    &rhs,
                    &d,
                    &ty,
                    &chain,
                    &[Some(&w), None, Some(&lr)],
                    par,
                )
                .unwrap();
                assert_eq!(got.shape(), want.shape(), "case {i} {par:?}");
                assert!(bits(&got) == bits(&want), "case {i} {par:?}: bits differ");
            }
        }
    }

    #[test]
    fn malformed_uses_are_one_line_errors() {
        let d = dims(&[], &[], &[1], &[0]);
        let (lhs, rhs) = (f32s(&[4, 3], 1), f32s(&[3, 5], 2));
        let ty = TensorType::new(vec![4, 5], ElemType::F32);
        let w = f32s(&[4, 5], 3);
        let lr = HostTensor::from_vec(&[], vec![0.5f32]).unwrap();
        let par = Parallelism::None;
        let chain = update(&[4, 5]);
        let err = |r: Result<HostTensor>| {
            let e = r.expect_err("must fail").to_string();
            assert!(!e.contains('\n'), "{e}");
            e
        };
        // No operand, or two, left for the dot.
        err(dot_then_chain(
            &lhs,
            &rhs,
            &d,
            &ty,
            &chain,
            &[Some(&w), Some(&w), Some(&lr)],
            par,
        ));
        err(dot_then_chain(
            &lhs,
            &rhs,
            &d,
            &ty,
            &chain,
            &[None, None, Some(&lr)],
            par,
        ));
        // The dot's result broadcast: it is only there piece by piece.
        let e = err(dot_then_chain(
            &lhs,
            &rhs,
            &d,
            &ty,
            &chain,
            &[Some(&w), Some(&w), None],
            par,
        ));
        assert!(e.contains("broadcast"), "{e}");
        // A chain of another shape, a result type of another shape.
        let other = update(&[5, 4]);
        err(dot_then_chain(
            &lhs,
            &rhs,
            &d,
            &ty,
            &other,
            &[Some(&w), None, Some(&lr)],
            par,
        ));
        let wrong = TensorType::new(vec![4, 6], ElemType::F32);
        err(dot_then_chain(
            &lhs,
            &rhs,
            &d,
            &wrong,
            &chain,
            &[Some(&w), None, Some(&lr)],
            par,
        ));
        // Not f32.
        let f64s = HostTensor::from_vec(&[4, 3], vec![0.5f64; 12]).unwrap();
        let e = err(dot_then_chain(
            &f64s,
            &rhs,
            &d,
            &ty,
            &chain,
            &[Some(&w), None, Some(&lr)],
            par,
        ));
        assert!(e.contains("f32"), "{e}");
    }
}
