//! `stablehlo.optimization_barrier`: its results are its operands,
//! unchanged; it only stops XLA from moving computation across it (JAX's
//! `jax.checkpoint` puts the residuals of the backward pass through one).
//! meshrun does not reorder across ops, so it computes nothing.
//!
//! `%0:3 = stablehlo.optimization_barrier %a, %b, %c : tensor<16x8xf32>,
//! tensor<4x16xf32>, tensor<f32>`; its attributes (shardings) come before
//! the operands, as StableHLO's assembly format (`attr-dict $operand`) and
//! XLA print them.

use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

/// No attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizationBarrier;

impl DecodeOp for OptimizationBarrier {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(0),
        results: Arity::AtLeast(0),
        pretty: Some(&[Fmt::AttrDict, Fmt::Operands, Fmt::Sig(SigForm::TypeList)]),
        ..OpSpec::new("stablehlo.optimization_barrier")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(OptimizationBarrier)
    }
}

impl OpDef for OptimizationBarrier {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(operands.to_vec())
    }

    fn runs_as_identity(&self) -> bool {
        true
    }

    /// Shardy gives it no rule but treats it as a data-flow edge: result
    /// `k` takes the sharding of operand `k`. The same as a rule with one
    /// pass-through factor per dimension of each (operand `k`, result `k`)
    /// pair and nothing shared between pairs.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let n = shapes.operands.len();
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (k, shape) in shapes.operands.iter().enumerate() {
            for (d, &size) in shape.iter().enumerate() {
                let mut ops = vec![None; n];
                let mut res = vec![None; n];
                ops[k] = Some(d);
                res[k] = Some(d);
                b.add_factor_per_tensor(size, FactorKind::PassThrough, &ops, &res);
            }
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
