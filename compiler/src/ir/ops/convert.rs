//! `stablehlo.convert`: every element converted to another element type
//! (`x.astype(...)`); the shape is kept. The program states the result
//! element type.
//!
//! `%r = stablehlo.convert %x : (tensor<4x3xi32>) -> tensor<4x3xf32>`

use crate::ir::ops::checks::not_inferable;
use crate::ir::ops::checks::{check_static_shape, expect_operands, expect_results, single_result};
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// No attributes: the result type says the element type.
#[derive(Debug, Clone, PartialEq)]
pub struct Convert;

impl DecodeOp for Convert {
    const SPEC: OpSpec = OpSpec {
        elementwise: true,
        pretty: Some(&[Fmt::Operands, Fmt::AttrDict, Fmt::Sig(SigForm::SameType)]),
        ..OpSpec::new("stablehlo.convert")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Convert)
    }
}

/// `stablehlo.convert` to element type `elem`: the shape is kept, any
/// element type converts to any other.
pub fn infer_convert(operand: &TensorType, elem: ElemType) -> Result<TensorType, String> {
    check_static_shape(operand, "operand")?;
    Ok(operand.with_elem(elem))
}

impl OpDef for Convert {
    fn preserves_zero_padding(&self) -> bool {
        true
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err(not_inferable("infer_convert"))
    }

    fn inferable(&self) -> bool {
        false
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        expect_operands(operands, 1)?;
        let want = infer_convert(&operands[0], single_result(results)?.elem)?;
        expect_results(&[want], results)
    }

    /// Element-wise: one factor per dimension, shared by operand and
    /// result.
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
