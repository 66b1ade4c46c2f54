//! `stablehlo.select(pred, on_true, on_false)`: element `i` of `on_true`
//! where `pred` (`i1`, a scalar or of the values' shape) holds, else of
//! `on_false` (`jnp.where`).
//!
//! `%r = stablehlo.select %p, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>`

use crate::ir::ops::checks::expect_operands;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// No attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct Select;

impl DecodeOp for Select {
    const SPEC: OpSpec = OpSpec {
        operands: crate::ir::ops::Arity::Exactly(3),
        elementwise: true,
        pretty: Some(&[
            Fmt::Operands,
            Fmt::AttrDict,
            Fmt::Sig(SigForm::PredicateAndValue),
        ]),
        ..OpSpec::new("stablehlo.select")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Select)
    }
}

impl OpDef for Select {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
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
        Ok(vec![on_true.clone()])
    }

    /// Element-wise; a scalar predicate has no factors.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        shapes.expect_counts(3, 1)?;
        let shape = shapes.single_result()?;
        shapes.expect_operands_of_shape(shape, true)?;
        if shapes.operands[1] != shape || shapes.operands[2] != shape {
            return Err("on_true and on_false must have the result's shape".into());
        }
        RuleBuilder::for_shapes(shapes.operands, shapes.results)
            .pointwise(shape)
            .build_rule()
    }
}
