//! Shape rules of the element-wise ops: unary and binary
//! (`convert`, `compare`, `select` and `clamp` are defined in `crate::ir::ops`). StableHLO has no implicit broadcasting: operands
//! have equal shapes, except that `select`'s predicate and `clamp`'s bounds
//! may be scalars.

use crate::ir::ops::checks::{expect_operands, expect_same_types};
use crate::ir::ops::{BinaryOp, UnaryOp};
use crate::ir::types::{ElemType, TensorType};

/// `stablehlo.<unary>`: same type as the operand (`is_finite` gives i1).
pub(crate) fn infer_unary(op: UnaryOp, operands: &[TensorType]) -> Result<TensorType, String> {
    expect_operands(operands, 1)?;
    let x = &operands[0];
    op.class().check(x, "operand")?;
    Ok(match op {
        UnaryOp::IsFinite => x.with_elem(ElemType::I1),
        _ => x.clone(),
    })
}

/// `stablehlo.<binary>`: both operands and the result have one type.
pub(crate) fn infer_binary(op: BinaryOp, operands: &[TensorType]) -> Result<TensorType, String> {
    expect_operands(operands, 2)?;
    expect_same_types(operands, &["lhs", "rhs"])?;
    op.class().check(&operands[0], "operands")?;
    Ok(operands[0].clone())
}
