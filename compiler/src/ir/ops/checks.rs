//! Checks shared by the per-op shape rules: operand counts, dimension
//! indices, and comparing given result types with
//! expected ones. Messages are phrased for users and never name the op (the
//! verifier prefixes the op name).

use crate::ir::types::TensorType;

/// `Err` unless exactly `n` operands were given.
pub(crate) fn expect_operands(operands: &[TensorType], n: usize) -> Result<(), String> {
    if operands.len() == n {
        Ok(())
    } else {
        Err(format!(
            "expects {} operand{}, got {}",
            n,
            plural(n),
            operands.len()
        ))
    }
}

/// `"s"` unless `n == 1`, for messages that count things.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Convert a dimension number attribute to an index into a shape of rank
/// `rank`, or say that `what` (e.g. "lhs contracting dimension") is out of
/// range.
pub(crate) fn dim_index(d: i64, rank: usize, what: &str) -> Result<usize, String> {
    match usize::try_from(d) {
        Ok(i) if i < rank => Ok(i),
        _ => Err(format!("{what} {d} is out of range for rank {rank}")),
    }
}

/// Convert every dimension number of `dims` with [`dim_index`] and reject
/// one that appears twice.
pub(crate) fn unique_dim_indices(
    dims: &[i64],
    rank: usize,
    what: &str,
) -> Result<Vec<usize>, String> {
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let i = dim_index(d, rank, what)?;
        if seen[i] {
            return Err(format!("{what} {d} appears more than once"));
        }
        seen[i] = true;
        out.push(i);
    }
    Ok(out)
}

/// Require `list` to have one entry per operand dimension.
pub(crate) fn expect_len(list: &[i64], rank: usize, what: &str) -> Result<(), String> {
    if list.len() == rank {
        Ok(())
    } else {
        Err(format!(
            "{what} has {} entr{} but the operand has rank {rank}",
            list.len(),
            if list.len() == 1 { "y" } else { "ies" }
        ))
    }
}

/// Number of elements of a shape, `None` if it overflows i64 or a
/// dimension is negative.
pub(crate) fn checked_num_elements(shape: &[i64]) -> Option<i64> {
    shape.iter().try_fold(
        1i64,
        |acc, &d| {
            if d < 0 {
                None
            } else {
                acc.checked_mul(d)
            }
        },
    )
}

/// Reject a type with a negative dimension (only possible for types built in
/// memory, the text format cannot spell one).
pub(crate) fn check_static_shape(ty: &TensorType, what: &str) -> Result<(), String> {
    match ty.shape.iter().position(|&d| d < 0) {
        Some(i) => Err(format!(
            "{what} type {ty} has negative size {} in dimension {i}",
            ty.shape[i]
        )),
        None => Ok(()),
    }
}

/// Require every operand to have exactly the type of operand 0 (element-wise
/// ops have no implicit broadcasting or promotion).
pub(crate) fn expect_same_types(operands: &[TensorType], names: &[&str]) -> Result<(), String> {
    let Some(first) = operands.first() else {
        return Ok(());
    };
    for (i, ty) in operands.iter().enumerate().skip(1) {
        if ty != first {
            let name = |k: usize| names.get(k).copied().unwrap_or("operand");
            return Err(format!(
                "{} has type {ty} but {} has type {first}; they must be equal",
                name(i),
                name(0)
            ));
        }
    }
    Ok(())
}

/// Compare given result types with the expected ones.
pub(crate) fn expect_results(
    expected: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    if expected.len() != results.len() {
        return Err(format!(
            "expects {} result{}, got {}",
            expected.len(),
            plural(expected.len()),
            results.len()
        ));
    }
    for (i, (want, got)) in expected.iter().zip(results).enumerate() {
        if want != got {
            let which = if results.len() == 1 {
                "result".to_string()
            } else {
                format!("result {i}")
            };
            return Err(format!(
                "{which} has type {got} but the operands and attributes give {want}"
            ));
        }
    }
    Ok(())
}

/// The verifier's check of an op whose results follow from its operands
/// (`infer`): every operand of a static shape, then the given results
/// compared with the inferred ones.
pub(crate) fn check_inferred(
    operands: &[TensorType],
    results: &[TensorType],
    infer: impl FnOnce(&[TensorType]) -> Result<Vec<TensorType>, String>,
) -> Result<(), String> {
    for (i, ty) in operands.iter().enumerate() {
        check_static_shape(ty, &format!("operand {i}"))?;
    }
    expect_results(&infer(operands)?, results)
}

/// The single result of an op whose result type is given rather than
/// inferred (`reshape`, `iota`, ...).
pub(crate) fn single_result(results: &[TensorType]) -> Result<&TensorType, String> {
    match results {
        [r] => Ok(r),
        _ => Err(format!("expects 1 result, got {}", results.len())),
    }
}

pub(crate) fn not_inferable(instead: &str) -> String {
    format!(
        "the result type is given by the program, not inferred from the operands (use {instead})"
    )
}

/// `t1, t2, ...`: types as error messages list them.
pub(crate) fn type_list(ts: &[TensorType]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
