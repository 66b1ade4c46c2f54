//! Padding rules (SPEC §6): what a padded element must hold before it is
//! reduced, and which ops keep zero padding zero.
//!
//! A block that is padded along a dimension that a `reduce` or a
//! `dot_general` contraction runs over is masked first: its padding is set
//! to the identity of the reduction (0 for sums and contractions, -inf for
//! max, +inf for min, 1 for products). Padding that is known to be zero
//! needs no mask before a sum; element-wise ops that map 0 to 0 (negate,
//! tanh, sin, multiply, ...) keep it so, others (exp, cos, adding a
//! constant, ...) do not, which forces a new mask before the next sum.

use crate::diag::SrcPos;
use crate::ir::ops::constant::Constant;
use crate::ir::{ElemType, Function, OpKind, ReduceKind, Scalar, ValueDef};

/// The identity of `kind` in element type `elem`.
pub fn identity_of(kind: ReduceKind, elem: ElemType) -> Scalar {
    let float = elem.is_float();
    match kind {
        ReduceKind::Add | ReduceKind::Or if elem.is_bool() => Scalar::Bool(false),
        ReduceKind::Add | ReduceKind::Or => {
            if float {
                Scalar::Float(0.0)
            } else {
                Scalar::Int(0)
            }
        }
        ReduceKind::Multiply | ReduceKind::And if elem.is_bool() => Scalar::Bool(true),
        ReduceKind::Multiply => {
            if float {
                Scalar::Float(1.0)
            } else {
                Scalar::Int(1)
            }
        }
        ReduceKind::And => Scalar::Int(-1),
        ReduceKind::Maximum if elem.is_bool() => Scalar::Bool(false),
        ReduceKind::Minimum if elem.is_bool() => Scalar::Bool(true),
        ReduceKind::Maximum => {
            if float {
                Scalar::Float(f64::NEG_INFINITY)
            } else {
                Scalar::Int(int_min(elem))
            }
        }
        ReduceKind::Minimum => {
            if float {
                Scalar::Float(f64::INFINITY)
            } else {
                Scalar::Int(int_max(elem))
            }
        }
    }
}

/// The position of the first `reduce` in `f` (its regions included) whose
/// init value is not a constant equal to its reduction's identity. StableHLO
/// leaves how many times such an init is applied to the implementation
/// ("interspersed with an implementation-defined amount of init values"):
/// XLA and meshrun apply it once per device that holds a part of a sharded
/// reduced dimension, the unsharded reference once, so their results differ
/// by design.
pub fn non_identity_init(f: &Function) -> Option<SrcPos> {
    f.ops.iter().find_map(|op| {
        let OpKind::Reduce(reduce) = &op.kind else {
            return None;
        };
        // Bodies other than one add/max/... per input (argmax's
        // comparator) have no identity to compare with.
        let kinds = reduce.kinds()?;
        let inits = op.operands.get(op.operands.len() / 2..).unwrap_or(&[]);
        let is_identity = |(v, kind): (&crate::ir::Value, &ReduceKind)| {
            let elem = f.ty(*v).elem;
            match f.values.get(v.index()).map(|d| d.def) {
                Some(ValueDef::Result { op: def, .. }) => match &f.op(def).kind {
                    OpKind::Constant(Constant { value: lit, .. }) => {
                        lit.get(0) == identity_of(*kind, elem)
                    }
                    _ => false,
                },
                _ => false,
            }
        };
        (!inits.iter().zip(&kinds).all(is_identity)).then_some(op.pos)
    })
}

fn int_min(elem: ElemType) -> i64 {
    match elem {
        ElemType::I8 => i8::MIN as i64,
        ElemType::I16 => i16::MIN as i64,
        ElemType::I32 => i32::MIN as i64,
        ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64 => 0,
        _ => i64::MIN,
    }
}

fn int_max(elem: ElemType) -> i64 {
    match elem {
        ElemType::I8 => i8::MAX as i64,
        ElemType::I16 => i16::MAX as i64,
        ElemType::I32 => i32::MAX as i64,
        ElemType::U8 => u8::MAX as i64,
        ElemType::U16 => u16::MAX as i64,
        ElemType::U32 => u32::MAX as i64,
        // ui64's maximum, as the i64 with the same bits (how literals hold it).
        ElemType::U64 => -1,
        _ => i64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinaryOp, UnaryOp};

    #[test]
    fn reduces_whose_init_is_not_the_identity_are_found() {
        let program = |init: &str, body: &str| {
            format!(
                "func.func @main(%x: tensor<8xf32>) -> tensor<f32> {{\n  %c = stablehlo.constant dense<{init}> : tensor<f32>\n  %r = stablehlo.reduce(%x init: %c) applies stablehlo.{body} across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>\n  return %r : tensor<f32>\n}}\n"
            )
        };
        let find = |init: &str, body: &str| {
            let m = crate::text::parse_module(&program(init, body)).unwrap();
            non_identity_init(&m.funcs[0]).map(|p| p.line)
        };
        assert_eq!(find("0.0", "add"), None);
        assert_eq!(find("0xFF800000", "maximum"), None);
        assert_eq!(find("1.0", "multiply"), None);
        assert_eq!(find("2.0", "add"), Some(3));
        assert_eq!(find("0.0", "maximum"), Some(3));
    }

    #[test]
    fn identities() {
        assert_eq!(
            identity_of(ReduceKind::Add, ElemType::F32),
            Scalar::Float(0.0)
        );
        assert_eq!(
            identity_of(ReduceKind::Maximum, ElemType::F16),
            Scalar::Float(f64::NEG_INFINITY)
        );
        assert_eq!(
            identity_of(ReduceKind::Minimum, ElemType::I32),
            Scalar::Int(i32::MAX as i64)
        );
        assert_eq!(
            identity_of(ReduceKind::Multiply, ElemType::F32),
            Scalar::Float(1.0)
        );
        assert_eq!(
            identity_of(ReduceKind::Or, ElemType::I1),
            Scalar::Bool(false)
        );
    }

    #[test]
    fn exp_breaks_zero_padding_tanh_keeps_it() {
        assert!(!OpKind::Unary(UnaryOp::Exp).preserves_zero_padding());
        assert!(!OpKind::Unary(UnaryOp::Cosine).preserves_zero_padding());
        assert!(OpKind::Unary(UnaryOp::Tanh).preserves_zero_padding());
        assert!(!OpKind::Binary(BinaryOp::Divide).preserves_zero_padding());
    }
}
