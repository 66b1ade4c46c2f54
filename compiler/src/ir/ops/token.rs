//! The token ops: `stablehlo.after_all` (a token that follows every
//! operand token: `%2 = stablehlo.after_all %0, %1 : !stablehlo.token`)
//! and the deprecated `stablehlo.create_token` (a fresh token). Tokens
//! order side effects (callbacks, send/recv) and hold no data; meshrun
//! parses, propagates (a token has no dimensions, so no factors),
//! partitions, shows and costs them, and `run` refuses them.

use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

/// `stablehlo.after_all`.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterAll;

/// `stablehlo.create_token`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateToken;

/// The one token result, after checking every operand is a token.
fn token_of(operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
    if let Some((i, t)) = operands.iter().enumerate().find(|(_, t)| !t.is_token()) {
        return Err(format!("operand {i} must be a !stablehlo.token, not {t}"));
    }
    Ok(vec![TensorType::token()])
}

/// No factors: tokens have no dimensions.
fn no_factors(shapes: &RuleShapes) -> Result<Option<OpShardingRule>, String> {
    let b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
    b.build().map(Some).map_err(|e| e.to_string())
}

impl DecodeOp for AfterAll {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(0),
        pretty: Some(&[Fmt::Operands, Fmt::AttrDict, Fmt::Sig(SigForm::SameType)]),
        ..OpSpec::new("stablehlo.after_all")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(AfterAll)
    }
}

impl OpDef for AfterAll {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        token_of(operands)
    }

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        no_factors(shapes)
    }
}

impl DecodeOp for CreateToken {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(0),
        pretty: Some(&[Fmt::AttrDict, Fmt::Sig(SigForm::Results)]),
        ..OpSpec::new("stablehlo.create_token")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(CreateToken)
    }
}

impl OpDef for CreateToken {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        token_of(operands)
    }

    fn rule(&self, shapes: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        no_factors(shapes)
    }
}
