//! Shape rules of the ops that move data without arithmetic:
//! `broadcast_in_dim`, `reshape`, `transpose`, `concatenate`, `slice`, `pad`.

use super::common::{
    check_static_shape, checked_num_elements, dim_index, expect_len, expect_operands,
    unique_dim_indices,
};
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

/// `stablehlo.transpose`: result dimension `i` is operand dimension
/// `perm[i]`.
pub(crate) fn infer_transpose(perm: &[i64], operands: &[TensorType]) -> Result<TensorType, String> {
    expect_operands(operands, 1)?;
    let x = &operands[0];
    if perm.len() != x.rank() {
        return Err(format!(
            "permutation {perm:?} has {} entries but the operand {x} has rank {}",
            perm.len(),
            x.rank()
        ));
    }
    let idx = unique_dim_indices(perm, x.rank(), "permutation entry")?;
    Ok(x.with_shape(idx.iter().map(|&i| x.shape[i]).collect::<Vec<_>>()))
}

/// `stablehlo.concatenate` along `dim`: equal ranks and element types,
/// equal sizes except along `dim`, where sizes add up.
pub(crate) fn infer_concatenate(dim: i64, operands: &[TensorType]) -> Result<TensorType, String> {
    let Some(first) = operands.first() else {
        return Err("expects at least 1 operand, got 0".into());
    };
    let d = dim_index(dim, first.rank(), "concatenate dimension")?;
    let mut total: i64 = 0;
    for (k, ty) in operands.iter().enumerate() {
        if ty.elem != first.elem {
            return Err(format!(
                "operand {k} has element type {} but operand 0 has {}",
                ty.elem, first.elem
            ));
        }
        if ty.rank() != first.rank() {
            return Err(format!(
                "operand {k} {ty} has rank {} but operand 0 {first} has rank {}",
                ty.rank(),
                first.rank()
            ));
        }
        if let Some(i) = (0..ty.rank()).find(|&i| i != d && ty.shape[i] != first.shape[i]) {
            return Err(format!(
                "operand {k} has size {} in dimension {i} but operand 0 has size {}; \
                 only dimension {d} may differ",
                ty.shape[i], first.shape[i]
            ));
        }
        total = total
            .checked_add(ty.shape[d])
            .ok_or("concatenated dimension size overflows")?;
    }
    let mut shape = first.shape.clone();
    shape[d] = total;
    Ok(first.with_shape(shape))
}

/// `stablehlo.slice`: per dimension `0 <= start <= limit <= size`,
/// `stride >= 1`, result size `ceil((limit - start) / stride)`.
pub(crate) fn infer_slice(
    start: &[i64],
    limit: &[i64],
    strides: &[i64],
    operands: &[TensorType],
) -> Result<TensorType, String> {
    expect_operands(operands, 1)?;
    let x = &operands[0];
    expect_len(start, x.rank(), "start_indices")?;
    expect_len(limit, x.rank(), "limit_indices")?;
    expect_len(strides, x.rank(), "strides")?;
    let mut shape = Vec::with_capacity(x.rank());
    for i in 0..x.rank() {
        let (s, l, st, size) = (start[i], limit[i], strides[i], x.shape[i]);
        if s < 0 {
            return Err(format!("dimension {i}: start {s} is negative"));
        }
        if s > l {
            return Err(format!(
                "dimension {i}: start {s} is greater than limit {l}"
            ));
        }
        if l > size {
            return Err(format!(
                "dimension {i}: limit {l} exceeds the dimension size {size}"
            ));
        }
        if st < 1 {
            return Err(format!("dimension {i}: stride {st} must be at least 1"));
        }
        // (l - s) + st - 1 cannot overflow: 0 <= l - s <= size and st >= 1
        // both fit in i64, but their sum might, so divide first.
        let len = l - s;
        shape.push(len / st + i64::from(len % st != 0));
    }
    Ok(x.with_shape(shape))
}

/// `stablehlo.pad(operand, padding_value)`: dimension size becomes
/// `low + size + max(size - 1, 0) * interior + high`; `low`/`high` may be
/// negative (cropping), `interior` may not.
pub(crate) fn infer_pad(
    low: &[i64],
    high: &[i64],
    interior: &[i64],
    operands: &[TensorType],
) -> Result<TensorType, String> {
    expect_operands(operands, 2)?;
    let (x, pad) = (&operands[0], &operands[1]);
    if pad.rank() != 0 {
        return Err(format!("padding value must be a scalar, got {pad}"));
    }
    if pad.elem != x.elem {
        return Err(format!(
            "padding value has element type {} but the operand has {}",
            pad.elem, x.elem
        ));
    }
    expect_len(low, x.rank(), "edge_padding_low")?;
    expect_len(high, x.rank(), "edge_padding_high")?;
    expect_len(interior, x.rank(), "interior_padding")?;
    let mut shape = Vec::with_capacity(x.rank());
    for i in 0..x.rank() {
        let (lo, hi, inner, size) = (low[i], high[i], interior[i], x.shape[i]);
        if inner < 0 {
            return Err(format!(
                "dimension {i}: interior padding {inner} is negative"
            ));
        }
        let new = (size - 1)
            .max(0)
            .checked_mul(inner)
            .and_then(|n| n.checked_add(size))
            .and_then(|n| n.checked_add(lo))
            .and_then(|n| n.checked_add(hi))
            .ok_or_else(|| format!("dimension {i}: padded size overflows"))?;
        if new < 0 {
            return Err(format!(
                "dimension {i}: padding low {lo}, high {hi} leaves a negative size {new}"
            ));
        }
        shape.push(new);
    }
    Ok(x.with_shape(shape))
}
