//! Shape rules of the element-wise ops: unary, binary, `compare`, `select`
//! and `clamp` (`convert` is defined in `crate::ops`). StableHLO has no implicit broadcasting: operands
//! have equal shapes, except that `select`'s predicate and `clamp`'s bounds
//! may be scalars.

use super::common::{expect_operands, expect_same_types};
use crate::ir::ops::{BinaryOp, CompareType, UnaryOp};
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

/// `stablehlo.compare`: operands of one type, an i1 result of their shape.
/// A given comparison type must suit the element type (SIGNED for signed
/// integers, UNSIGNED for unsigned integers and i1, FLOAT or TOTALORDER for
/// floats).
pub(crate) fn infer_compare(
    compare_type: Option<CompareType>,
    operands: &[TensorType],
) -> Result<TensorType, String> {
    expect_operands(operands, 2)?;
    expect_same_types(operands, &["lhs", "rhs"])?;
    let elem = operands[0].elem;
    if let Some(ct) = compare_type {
        let ok = match ct {
            CompareType::Signed => elem.is_integer() && !elem.is_unsigned(),
            CompareType::Unsigned => elem.is_unsigned() || elem.is_bool(),
            CompareType::Float | CompareType::TotalOrder => elem.is_float(),
        };
        if !ok {
            return Err(format!(
                "comparison type {} does not apply to {elem} operands",
                ct.name()
            ));
        }
    }
    Ok(operands[0].with_elem(ElemType::I1))
}

/// `stablehlo.select(pred, on_true, on_false)`.
pub(crate) fn infer_select(operands: &[TensorType]) -> Result<TensorType, String> {
    expect_operands(operands, 3)?;
    let (pred, on_true, on_false) = (&operands[0], &operands[1], &operands[2]);
    if pred.elem != ElemType::I1 {
        return Err(format!("predicate must have element type i1, got {pred}"));
    }
    if on_true != on_false {
        return Err(format!(
            "on_false has type {on_false} but on_true has type {on_true}; they must be equal"
        ));
    }
    if pred.rank() != 0 && pred.shape != on_true.shape {
        return Err(format!(
            "predicate {pred} must be a scalar or have the shape of on_true {on_true}"
        ));
    }
    Ok(on_true.clone())
}

/// `stablehlo.clamp(min, operand, max)`: bounds are scalars or of the
/// operand's shape, all of one element type.
pub(crate) fn infer_clamp(operands: &[TensorType]) -> Result<TensorType, String> {
    expect_operands(operands, 3)?;
    let x = &operands[1];
    for (bound, name) in [(&operands[0], "min"), (&operands[2], "max")] {
        if bound.elem != x.elem {
            return Err(format!(
                "{name} has element type {} but the operand has {}",
                bound.elem, x.elem
            ));
        }
        if bound.rank() != 0 && bound.shape != x.shape {
            return Err(format!(
                "{name} {bound} must be a scalar or have the shape of the operand {x}"
            ));
        }
    }
    Ok(x.clone())
}
