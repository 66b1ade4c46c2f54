//! Shape rules of the ops that move data without arithmetic:
//! `broadcast_in_dim` and `reshape` (`transpose`, `concatenate`, `slice`
//! and `pad` are defined in `crate::ops`).

use super::common::{check_static_shape, checked_num_elements, unique_dim_indices};
use crate::ir::types::TensorType;

/// `stablehlo.broadcast_in_dim` of `operand` to `shape`: operand dimension
/// `i` becomes result dimension `dims[i]` (any order, no repeats) and has
/// size 1 or the result's size there.
pub fn infer_broadcast_in_dim(
    operand: &TensorType,
    dims: &[i64],
    shape: &[i64],
) -> Result<TensorType, String> {
    let result = operand.with_shape(shape);
    check_static_shape(&result, "result")?;
    if dims.len() != operand.rank() {
        return Err(format!(
            "dims has {} entries but the operand {operand} has rank {}",
            dims.len(),
            operand.rank()
        ));
    }
    let targets = unique_dim_indices(dims, shape.len(), "broadcast dimension")?;
    for (i, &t) in targets.iter().enumerate() {
        let (from, to) = (operand.shape[i], shape[t]);
        if from != 1 && from != to {
            return Err(format!(
                "operand dimension {i} has size {from} but result dimension {t} has size \
                 {to}; a broadcast dimension must have size 1 or the result's size"
            ));
        }
    }
    Ok(result)
}

/// `stablehlo.reshape` of `operand` to `shape`: same element count.
pub fn infer_reshape(operand: &TensorType, shape: &[i64]) -> Result<TensorType, String> {
    let result = operand.with_shape(shape);
    check_static_shape(&result, "result")?;
    let from = checked_num_elements(&operand.shape);
    let to = checked_num_elements(shape);
    if from.is_none() || from != to {
        return Err(format!(
            "cannot reshape {operand} ({} elements) to {result} ({} elements)",
            fmt_count(from),
            fmt_count(to)
        ));
    }
    Ok(result)
}

fn fmt_count(n: Option<i64>) -> String {
    n.map_or_else(|| "too many".to_string(), |n| n.to_string())
}
