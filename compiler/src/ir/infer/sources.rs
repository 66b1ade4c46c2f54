//! `constant`, an op without operands whose result type is written in the
//! program: its rule checks the given type against the literal (`iota`
//! is defined in `crate::ops`).

use super::common::{check_static_shape, checked_num_elements};
use crate::ir::literal::{DenseLiteral, Scalar};
use crate::ir::types::{ElemType, TensorType};

/// `stablehlo.constant dense<...> : ty`: the literal is a splat or has one
/// value per element, and every value suits the element type (floats for
/// float types, booleans for i1, integers in range for integer types).
pub fn infer_constant(literal: &DenseLiteral, ty: &TensorType) -> Result<TensorType, String> {
    check_static_shape(ty, "result")?;
    let n = checked_num_elements(&ty.shape)
        .ok_or_else(|| format!("result type {ty} has too many elements"))?;
    let stored = literal.stored_len();
    if let DenseLiteral::Elements(_) = literal {
        if i64::try_from(stored).ok() != Some(n) {
            return Err(format!(
                "literal has {stored} values but {ty} has {n} elements \
                 (a literal is either one splat value or one value per element)"
            ));
        }
    }
    let values: &[Scalar] = match literal {
        DenseLiteral::Splat(s) => std::slice::from_ref(s),
        DenseLiteral::Elements(v) => v,
    };
    for (i, v) in values.iter().enumerate() {
        check_scalar(*v, ty.elem).map_err(|why| format!("literal value {i} {why}"))?;
    }
    Ok(ty.clone())
}

/// Why `v` cannot be an element of type `elem`, if it cannot.
fn check_scalar(v: Scalar, elem: ElemType) -> Result<(), String> {
    match v {
        Scalar::Float(_) if elem.is_float() => Ok(()),
        Scalar::Bool(_) if elem.is_bool() => Ok(()),
        Scalar::Int(i) if elem.is_integer() => match int_range(elem) {
            Some((lo, hi)) if i < lo || i > hi => Err(format!("({i}) is out of range for {elem}")),
            _ => Ok(()),
        },
        Scalar::Float(x) => Err(format!("({x}) is a float but the element type is {elem}")),
        Scalar::Bool(b) => Err(format!("({b}) is a boolean but the element type is {elem}")),
        Scalar::Int(i) => Err(format!(
            "({i}) is an integer but the element type is {elem}"
        )),
    }
}

/// Inclusive value range of an integer type narrower than 64 bits (i64 and
/// ui64 literals are stored as i64, so any stored value is in range).
fn int_range(elem: ElemType) -> Option<(i64, i64)> {
    match elem {
        ElemType::I8 => Some((i8::MIN.into(), i8::MAX.into())),
        ElemType::I16 => Some((i16::MIN.into(), i16::MAX.into())),
        ElemType::I32 => Some((i32::MIN.into(), i32::MAX.into())),
        ElemType::U8 => Some((0, u8::MAX.into())),
        ElemType::U16 => Some((0, u16::MAX.into())),
        ElemType::U32 => Some((0, u32::MAX.into())),
        _ => None,
    }
}
