//! `stablehlo.compare`: element-wise comparison of two operands of one
//! type in a direction (`EQ`, `LT`, ...), optionally of a stated kind
//! (`FLOAT`, `SIGNED`, ...); the result is `i1` of the operands' shape.
//!
//! `%r = stablehlo.compare LT, %a, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::{expect_operands, expect_same_types};
use crate::ir::ops::{
    AttrCodec, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::ops::{CompareDirection, CompareType};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    /// The direction, and the comparison type if the text gives one.
    pub struct Compare {
        direction: CompareDirection = "comparison_direction",
        compare_type: Option<CompareType> = "compare_type",
    }
}

/// The value of an enum attribute, written `#stablehlo<keyword VALUE>` in
/// the generic form and `VALUE` in the pretty one.
fn enum_value<'a>(a: &'a Attr, keyword: &str) -> Result<&'a str, String> {
    match a {
        Attr::Enum { value, .. } | Attr::Ident(value) => Ok(value),
        other => Err(format!(
            "expected #stablehlo<{keyword} ...>, found {}",
            other.kind_name()
        )),
    }
}

fn encode_enum(keyword: &str, value: &str) -> Option<Attr> {
    Some(Attr::Enum {
        dialect: "#stablehlo".into(),
        keyword: keyword.into(),
        value: value.into(),
    })
}

impl AttrCodec for CompareDirection {
    fn decode(a: &Attr) -> Result<Self, String> {
        let d = enum_value(a, "comparison_direction")?;
        CompareDirection::from_name(d).ok_or_else(|| format!("unknown comparison direction '{d}'"))
    }

    fn encode(&self) -> Option<Attr> {
        encode_enum("comparison_direction", self.name())
    }
}

impl AttrCodec for CompareType {
    fn decode(a: &Attr) -> Result<Self, String> {
        let t = enum_value(a, "comparison_type")?;
        CompareType::from_name(t).ok_or_else(|| format!("unknown comparison type '{t}'"))
    }

    fn encode(&self) -> Option<Attr> {
        encode_enum("comparison_type", self.name())
    }
}

impl DecodeOp for Compare {
    const SPEC: OpSpec = OpSpec {
        operands: crate::ir::ops::Arity::Exactly(2),
        elementwise: true,
        pretty: Some(&[
            Fmt::Enum(
                "comparison_direction",
                "a comparison direction",
                CompareDirection::NAMES,
            ),
            Fmt::Punct(","),
            Fmt::Operands,
            Fmt::OptionalEnum("compare_type", "a comparison type", CompareType::NAMES),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.compare")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Compare::decode_attrs(d)
    }
}

impl OpDef for Compare {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// Operands of one type, an i1 result of their shape. A given
    /// comparison type must suit the element type (SIGNED for signed
    /// integers, UNSIGNED for unsigned integers and i1, FLOAT or
    /// TOTALORDER for floats).
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        expect_operands(operands, 2)?;
        expect_same_types(operands, &["lhs", "rhs"])?;
        let elem = operands[0].elem;
        if let Some(ct) = self.compare_type {
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
        Ok(vec![operands[0].with_elem(ElemType::I1)])
    }

    /// Element-wise: one factor per dimension, shared by both operands
    /// and the result.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let shape = shapes.single_result()?;
        shapes.expect_operands_of_shape(shape, false)?;
        RuleBuilder::for_shapes(shapes.operands, shapes.results)
            .pointwise(shape)
            .build_rule()
    }
}
