//! Shape inference: the result types StableHLO's spec requires of every op,
//! computed from operand types and attributes alone (no `Function` needed),
//! so that both the verifier and a Rust builder API can use it.
//!
//! Ops fall in two groups:
//! - *inferable*: the results follow from operands + attributes
//!   ([`infer_result_types`]): element-wise ops, `dot_general`,
//!   `reduce`, the `sdy` ops;
//! - *typed*: the program states part of the result type, which is then
//!   checked: `constant` and `iota` (the whole type), `convert` (the element
//!   type), `broadcast_in_dim` and `reshape` (the shape), `call` (the
//!   callee's signature). Builders use the per-op functions
//!   ([`infer_convert`], [`infer_reshape`], [`infer_broadcast_in_dim`],
//!   [`infer_iota`], [`infer_constant`], [`check_call`]).
//!
//! [`check_result_types`] validates given result types for every op but
//! `call`, whichever group it is in. Error messages say what is wrong
//! without naming the op; callers prefix the op name.

mod elementwise;

pub use crate::ir::ops::broadcast_in_dim::infer_broadcast_in_dim;
pub use crate::ir::ops::constant::infer_constant;
pub use crate::ir::ops::convert::infer_convert;
pub use crate::ir::ops::dot_general::dot_result_elem_ok;
pub use crate::ir::ops::iota::infer_iota;
pub use crate::ir::ops::reshape::infer_reshape;

use crate::ir::ops::checks::{check_static_shape, expect_results};
use elementwise::{infer_binary, infer_unary};

use crate::ir::ops::OpKind;
use crate::ir::types::TensorType;

/// Whether [`infer_result_types`] determines `kind`'s results from its
/// operands and attributes. `false` for `constant`, `iota`, `convert`,
/// `broadcast_in_dim`, `reshape` and `call`, whose result types are
/// (partly) given by the program.
pub fn is_inferable(kind: &OpKind) -> bool {
    if let Some(def) = kind.def() {
        return def.inferable();
    }
    true
}

/// The result types of an op of `kind` applied to operands of
/// `operand_types`, or why those operands are invalid for it.
///
/// For a kind that is not [inferable](is_inferable) this returns an error
/// that names the function to use instead.
pub fn infer_result_types(
    kind: &OpKind,
    operand_types: &[TensorType],
) -> Result<Vec<TensorType>, String> {
    for (i, ty) in operand_types.iter().enumerate() {
        check_static_shape(ty, &format!("operand {i}"))?;
    }
    let one = |t: Result<TensorType, String>| t.map(|t| vec![t]);
    if let Some(def) = kind.def() {
        return def.infer(operand_types);
    }
    match kind {
        OpKind::Unary(op) => one(infer_unary(*op, operand_types)),
        OpKind::Binary(op) => one(infer_binary(*op, operand_types)),
        _ => Err("op kind without shape rules".into()),
    }
}

/// Check that `results` are the result types an op of `kind` must have on
/// operands of `operands`. Covers every kind but `call` (see
/// [`check_call`]): inferable kinds compare with [`infer_result_types`],
/// the others check the given type against operands and attributes.
pub fn check_result_types(
    kind: &OpKind,
    operands: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    for (i, ty) in results.iter().enumerate() {
        check_static_shape(ty, &format!("result {i}"))?;
    }
    if let Some(def) = kind.def() {
        return def.check(operands, results);
    }
    expect_results(&infer_result_types(kind, operands)?, results)
}

/// Check a call of `@callee` whose signature is `params -> returns`:
/// operand and result counts and types equal the callee's.
pub fn check_call(
    callee: &str,
    params: &[TensorType],
    returns: &[TensorType],
    operands: &[TensorType],
    results: &[TensorType],
) -> Result<(), String> {
    check_signature_part(callee, "argument", params, operands, "passes")?;
    check_signature_part(callee, "result", returns, results, "expects")
}

/// Compare one side (arguments or results) of a call with the callee's.
fn check_signature_part(
    callee: &str,
    what: &str,
    declared: &[TensorType],
    actual: &[TensorType],
    verb: &str,
) -> Result<(), String> {
    if declared.len() != actual.len() {
        return Err(format!(
            "@{callee} has {} {what}{} but the call {verb} {}",
            declared.len(),
            crate::ir::ops::checks::plural(declared.len()),
            actual.len()
        ));
    }
    for (i, (d, a)) in declared.iter().zip(actual).enumerate() {
        if d != a {
            return Err(format!(
                "{what} {i} of @{callee} has type {d} but the call {verb} {a}"
            ));
        }
    }
    Ok(())
}
