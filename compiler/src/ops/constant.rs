//! `stablehlo.constant` (and `sdy.constant`, which Shardy's import writes
//! for every constant so that nothing folds or deduplicates it while
//! shardings propagate; both run the same): a dense literal whose type is
//! the op's one result type, which the program states.
//!
//! `%c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>`

use crate::ir::attr::Attr;
use crate::ir::infer::common::{expect_operands, single_result};
use crate::ir::infer::{infer_constant, not_inferable};
use crate::ir::literal::{DenseLiteral, Scalar};
use crate::ir::ops::ConstantDialect;
use crate::ir::types::TensorType;
use crate::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes};
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
        operands: crate::ops::Arity::Exactly(0),
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
