//! `sdy.propagation_barrier`: the identity on its operand, through which
//! shardings propagate only in the allowed direction (`FORWARD`: operand
//! to result, `BACKWARD`: result to operand, `NONE`: neither).
//!
//! `%1 = sdy.propagation_barrier %0 allowed_direction=BACKWARD :
//! tensor<8x8xf32>`
//!
//! Shardy propagates through it with an identity rule and its own
//! direction, whatever the propagation strategy's schedule says
//! (`PropagatePropagationBarrier`), and counts it as element-wise for
//! op-priority scheduling. `BOTH` is refused, as Shardy's verifier does:
//! such a barrier would block nothing. Partitioned and run, it is the
//! identity.

use crate::attr_enum;
use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

attr_enum! {
    /// Shardy's `PropagationDirection` (`#sdy<propagation_direction
    /// BACKWARD>`).
    pub enum AllowedDirection = "#sdy" "propagation_direction" {
        None => "NONE",
        Forward => "FORWARD",
        Backward => "BACKWARD",
        Both => "BOTH",
    }
}

define_attrs! {
    /// The direction shardings may flow through the barrier.
    pub struct PropagationBarrier {
        allowed_direction: AllowedDirection = "allowed_direction",
    }
}

impl DecodeOp for PropagationBarrier {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Assigned("allowed_direction", "allowed_direction"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::SameType),
        ]),
        ..OpSpec::new("sdy.propagation_barrier")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        PropagationBarrier::decode_attrs(d)
    }
}

impl OpDef for PropagationBarrier {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        if self.allowed_direction == AllowedDirection::Both {
            return Err(
                "cannot specify `BOTH` as the direction: a barrier that blocks nothing is redundant"
                    .into(),
            );
        }
        let x = operands.first().ok_or("expects one operand")?;
        Ok(vec![x.clone()])
    }

    fn runs_as_identity(&self) -> bool {
        true
    }

    /// Shardy's `createIdentityShardingRule`: one pass-through factor per
    /// dimension, shared by the operand and the result.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (d, &size) in shapes.operands[0].iter().enumerate() {
            b.add_factor_per_tensor(size, FactorKind::PassThrough, &[Some(d)], &[Some(d)]);
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
