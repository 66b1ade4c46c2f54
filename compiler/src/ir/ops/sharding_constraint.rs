//! `sdy.sharding_constraint`: the operand, with the sharding it must have
//! at this point of the program (`jax.lax.with_sharding_constraint`).
//! Propagation passes through it element-wise and keeps the sharding on
//! its result; it computes nothing.
//!
//! `%r = sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : tensor<8x16xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::expect_operands;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};
use crate::sharding::TensorSharding;

define_attrs! {
    pub struct ShardingConstraint {
        /// The sharding the value must have.
        sharding: TensorSharding = "sharding",
    }
}

/// The pretty form of an op that gives its one operand a sharding
/// (`sdy.sharding_constraint`, `sdy.reshard`).
pub(crate) const SHARDED_VALUE_FORM: &[Fmt] = &[
    Fmt::Operands,
    Fmt::BareSharding("sharding"),
    Fmt::AttrDict,
    Fmt::Sig(SigForm::ResultType),
];

impl DecodeOp for ShardingConstraint {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(SHARDED_VALUE_FORM),
        ..OpSpec::new("sdy.sharding_constraint")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        ShardingConstraint::decode_attrs(d)
    }
}

/// The result of an op that gives its one operand `sharding`: the
/// operand's type, once the sharding has one dimension sharding per
/// dimension of it.
pub(crate) fn sharded_identity(
    sharding: &TensorSharding,
    operands: &[TensorType],
) -> Result<Vec<TensorType>, String> {
    expect_operands(operands, 1)?;
    let x = &operands[0];
    if sharding.dims.len() != x.rank() {
        return Err(format!(
            "sharding {sharding} has {} dimension shardings but the operand {x} has rank {}",
            sharding.dims.len(),
            x.rank()
        ));
    }
    Ok(vec![x.clone()])
}

impl OpDef for ShardingConstraint {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        sharded_identity(&self.sharding, operands)
    }

    fn value_sharding(&self) -> Option<&TensorSharding> {
        Some(&self.sharding)
    }

    /// Element-wise (Shardy's rule for the op).
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
