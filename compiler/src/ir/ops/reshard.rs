//! `sdy.reshard`: the operand, moved to another sharding. Shardy's export
//! writes one where propagation leaves a value sharded otherwise than its
//! user needs (and for every `sdy.sharding_constraint`); the partitioner
//! lowers it to the collectives the move takes. Propagation does not pass
//! through it (it has no sharding rule).
//!
//! `%r = sdy.reshard %x <@mesh, [{"x"}, {}]> : tensor<8x16xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::sharding_constraint::{sharded_identity, SHARDED_VALUE_FORM};
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};
use crate::sharding::TensorSharding;

define_attrs! {
    pub struct Reshard {
        /// The sharding the value moves to.
        sharding: TensorSharding = "sharding",
    }
}

impl DecodeOp for Reshard {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(SHARDED_VALUE_FORM),
        ..OpSpec::new("sdy.reshard")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Reshard::decode_attrs(d)
    }
}

impl OpDef for Reshard {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        sharded_identity(&self.sharding, operands)
    }

    fn value_sharding(&self) -> Option<&TensorSharding> {
        Some(&self.sharding)
    }

    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}
