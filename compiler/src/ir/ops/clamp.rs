//! `stablehlo.clamp(min, operand, max)`: every element of `operand`
//! bounded to `[min, max]`; the bounds are scalars or of the operand's
//! shape, all of one element type (`jnp.clip`).
//!
//! `%r = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>`

use crate::ir::ops::checks::expect_operands;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// No attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct Clamp;

impl DecodeOp for Clamp {
    const SPEC: OpSpec = OpSpec {
        operands: crate::ir::ops::Arity::Exactly(3),
        elementwise: true,
        pretty: Some(&[Fmt::Operands, Fmt::AttrDict, Fmt::Sig(SigForm::SameType)]),
        ..OpSpec::new("stablehlo.clamp")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Clamp)
    }
}

impl OpDef for Clamp {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
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
        Ok(vec![x.clone()])
    }

    /// Element-wise; scalar bounds have no factors.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        shapes.expect_counts(3, 1)?;
        let shape = shapes.operands[1];
        if shapes.single_result()? != shape {
            return Err("the result must have the operand's shape".into());
        }
        shapes.expect_operands_of_shape(shape, true)?;
        RuleBuilder::for_shapes(shapes.operands, shapes.results)
            .pointwise(shape)
            .build_rule()
    }
}
