//! `stablehlo.reshape`: the operand's elements, in order, in another shape
//! with as many elements. The program states the result shape.
//!
//! `%r = stablehlo.reshape %x : (tensor<4x3xf32>) -> tensor<12xf32>`

use crate::ir::ops::checks::not_inferable;
use crate::ir::ops::checks::{
    check_static_shape, checked_num_elements, expect_operands, expect_results, single_result,
};
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::reshape::reshape_rule;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// No attributes: the result type says the shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Reshape;

impl DecodeOp for Reshape {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[Fmt::Operands, Fmt::AttrDict, Fmt::Sig(SigForm::Functional)]),
        ..OpSpec::new("stablehlo.reshape")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Reshape)
    }
}

/// `stablehlo.reshape` of `operand` to `shape`: same element count.
pub fn infer_reshape(operand: &TensorType, shape: &[i64]) -> Result<TensorType, String> {
    let result = operand.with_shape(shape);
    check_static_shape(&result, "result")?;
    let from = checked_num_elements(&operand.shape);
    let to = checked_num_elements(shape);
    if from.is_none() || from != to {
        return Err(format!(
            "cannot reshape {operand} ({} elements) to {result} ({} elements)",
            fmt_count(from),
            fmt_count(to)
        ));
    }
    Ok(result)
}

fn fmt_count(n: Option<i64>) -> String {
    n.map_or_else(|| "too many".to_string(), |n| n.to_string())
}

impl OpDef for Reshape {
    fn preserves_zero_padding(&self) -> bool {
        true
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err(not_inferable("infer_reshape"))
    }

    fn inferable(&self) -> bool {
        false
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        expect_operands(operands, 1)?;
        let want = infer_reshape(&operands[0], &single_result(results)?.shape)?;
        expect_results(&[want], results)
    }

    /// Shardy's reshape rule (`rules::reshape`): factors from splitting
    /// and merging dimensions.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        shapes.expect_counts(1, 1)?;
        reshape_rule(shapes.operands[0], shapes.results[0]).map_err(|e| e.to_string())
    }
}
