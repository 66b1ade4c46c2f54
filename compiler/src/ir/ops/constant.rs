//! `stablehlo.constant` (and `sdy.constant`, which Shardy's import writes
//! for every constant so that nothing folds or deduplicates it while
//! shardings propagate; both run the same): a dense literal whose type is
//! the op's one result type, which the program states.
//!
//! `%c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>`

use crate::ir::attr::Attr;
use crate::ir::literal::{DenseLiteral, Scalar};
use crate::ir::ops::checks::{
    check_static_shape, checked_num_elements, expect_operands, not_inferable, single_result,
};
use crate::ir::ops::ConstantDialect;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// The literal, and how the text spells the op (the value is the same).
/// The literal's type is the op's result type, kept on the result only.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    pub value: DenseLiteral,
    pub dialect: ConstantDialect,
}

impl Constant {
    /// A `stablehlo.constant` of `value`.
    pub fn new(value: DenseLiteral) -> Constant {
        Constant {
            value,
            dialect: ConstantDialect::default(),
        }
    }

    /// A `stablehlo.constant` with every element `value`.
    pub fn splat(value: Scalar) -> Constant {
        Constant::new(DenseLiteral::Splat(value))
    }
}

impl DecodeOp for Constant {
    const SPEC: OpSpec = OpSpec {
        aliases: &["sdy.constant"],
        operands: crate::ir::ops::Arity::Exactly(0),
        pretty: Some(&[Fmt::AttrDict, Fmt::TypedLiteral("value")]),
        ..OpSpec::new("stablehlo.constant")
    };

    /// The `value` attribute, `dense<...> : t`, whose type must be the
    /// result type.
    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        let dialect = match d.name.as_str() {
            "sdy.constant" => ConstantDialect::Sdy,
            _ => ConstantDialect::Stablehlo,
        };
        let (value, ty) = match d.take("value") {
            Some(Attr::Dense { literal, ty }) => (literal, ty),
            Some(other) => {
                return Err(DecodeError::attr(
                    "value",
                    format!("expected a dense<...> literal, found {}", other.kind_name()),
                ))
            }
            None => return Err(DecodeError::op("needs attribute 'value'")),
        };
        if let [result] = d.result_types.as_slice() {
            if *result != ty {
                return Err(DecodeError::attr_type(
                    "value",
                    format!(
                        "constant value has type {ty} but '{}' returns {result}",
                        d.name
                    ),
                ));
            }
        }
        Ok(Constant { value, dialect })
    }
}

impl OpDef for Constant {
    fn printed_name(&self) -> &'static str {
        match self.dialect {
            ConstantDialect::Stablehlo => Self::SPEC.name,
            ConstantDialect::Sdy => "sdy.constant",
        }
    }

    fn literal(&self) -> Option<&DenseLiteral> {
        Some(&self.value)
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err(not_inferable("infer_constant"))
    }

    fn inferable(&self) -> bool {
        false
    }

    /// No operands; the literal fits the result type (a splat or one
    /// value per element, every value of the element type).
    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        expect_operands(operands, 0)?;
        infer_constant(&self.value, single_result(results)?).map(drop)
    }

    /// None: propagation gives constants no sharding of their own (Shardy
    /// registers no rule for them either).
    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}

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
