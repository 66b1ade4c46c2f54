//! The shape rule of `reshape`, an op that moves data without arithmetic
//! (`broadcast_in_dim`, `transpose`, `concatenate`, `slice` and `pad` are
//! defined in `crate::ops`).

use super::common::{check_static_shape, checked_num_elements};
use crate::ir::types::TensorType;

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
