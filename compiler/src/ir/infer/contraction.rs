//! Shape rules of the ops that combine elements along dimensions:
//! `dot_general` and `reduce`.

use super::common::{expect_operands, plural, unique_dim_indices};
use crate::ir::ops::DotDims;
use crate::ir::types::{ElemType, TensorType};

/// `stablehlo.dot_general` (and `stablehlo.dot` when `is_dot`): result
/// shape is batch dims ++ lhs free dims ++ rhs free dims, each group in
/// order. The element type inferred here is the operands'; a verifier
/// accepts another result element type of the same kind (JAX's
/// `preferred_element_type`, see [`dot_result_elem_ok`]).
pub(crate) fn infer_dot_general(
    dims: &DotDims,
    is_dot: bool,
    operands: &[TensorType],
) -> Result<TensorType, String> {
    expect_operands(operands, 2)?;
    let (lhs, rhs) = (&operands[0], &operands[1]);
    if is_dot {
        for (ty, side) in [(lhs, "lhs"), (rhs, "rhs")] {
            if !(1..=2).contains(&ty.rank()) {
                return Err(format!("{side} must have rank 1 or 2, got {ty}"));
            }
        }
    }
    if lhs.elem != rhs.elem {
        return Err(format!(
            "operand element types differ: lhs is {}, rhs is {}",
            lhs.elem, rhs.elem
        ));
    }
    let (lb, rb, lc, rc) = (
        &dims.lhs_batch,
        &dims.rhs_batch,
        &dims.lhs_contract,
        &dims.rhs_contract,
    );
    if lb.len() != rb.len() {
        return Err(format!(
            "lhs has {} batching dimension{} but rhs has {}",
            lb.len(),
            plural(lb.len()),
            rb.len()
        ));
    }
    if lc.len() != rc.len() {
        return Err(format!(
            "lhs has {} contracting dimension{} but rhs has {}",
            lc.len(),
            plural(lc.len()),
            rc.len()
        ));
    }
    let lhs_used = side_dims(lb, lc, lhs, "lhs")?;
    let rhs_used = side_dims(rb, rc, rhs, "rhs")?;
    let n_batch = lb.len();
    for (k, (&l, &r)) in lhs_used.iter().zip(&rhs_used).enumerate() {
        if lhs.shape[l] != rhs.shape[r] {
            let what = if k < n_batch {
                "batching"
            } else {
                "contracting"
            };
            return Err(format!(
                "{what} dimension sizes differ: lhs dim {l} has size {}, rhs dim {r} has size {}",
                lhs.shape[l], rhs.shape[r]
            ));
        }
    }
    let batch = lhs_used[..n_batch].iter().map(|&d| lhs.shape[d]);
    let lhs_free = free_dims(lhs, &lhs_used);
    let rhs_free = free_dims(rhs, &rhs_used);
    let shape: Vec<i64> = batch.chain(lhs_free).chain(rhs_free).collect();
    Ok(lhs.with_shape(shape))
}

/// Batching then contracting dimension indices of one side, each in range
/// and used once.
fn side_dims(
    batch: &[i64],
    contract: &[i64],
    ty: &TensorType,
    side: &str,
) -> Result<Vec<usize>, String> {
    let all: Vec<i64> = batch.iter().chain(contract).copied().collect();
    // Range errors name the list the bad entry is in; repeats span both.
    unique_dim_indices(batch, ty.rank(), &format!("{side} batching dimension"))?;
    unique_dim_indices(
        contract,
        ty.rank(),
        &format!("{side} contracting dimension"),
    )?;
    unique_dim_indices(
        &all,
        ty.rank(),
        &format!("{side} dimension (batching or contracting)"),
    )
}

/// Sizes of the dimensions of `ty` not in `used`, in order.
fn free_dims<'a>(ty: &'a TensorType, used: &'a [usize]) -> impl Iterator<Item = i64> + 'a {
    (0..ty.rank())
        .filter(move |d| !used.contains(d))
        .map(move |d| ty.shape[d])
}

/// Whether a `dot_general` over `operand` elements may produce `result`
/// elements: the same type, or another of the same kind (float→float,
/// integer→integer), as JAX emits for `preferred_element_type`.
pub fn dot_result_elem_ok(operand: ElemType, result: ElemType) -> bool {
    operand == result
        || (operand.is_float() && result.is_float())
        || (operand.is_integer() && result.is_integer())
}
