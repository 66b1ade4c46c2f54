//! `sdy.sharding_group`: puts its operand in the group `group_id`; every
//! value of a group gets one sharding (Shardy's import pass syncs them,
//! `propagation::import::groups`). It has no results and computes
//! nothing; the export drops it.
//!
//! `sdy.sharding_group %x group_id=0 : tensor<8x16xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::expect_operands;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    pub struct ShardingGroup {
        /// The group the operand joins.
        group_id: i64 = "group_id",
    }
}

impl DecodeOp for ShardingGroup {
    const SPEC: OpSpec = OpSpec {
        results: Arity::Exactly(0),
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Assigned("group_id", "group_id"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::OperandTypes),
        ]),
        ..OpSpec::new("sdy.sharding_group")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        ShardingGroup::decode_attrs(d)
    }
}

impl OpDef for ShardingGroup {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        expect_operands(operands, 1)?;
        Ok(Vec::new())
    }

    /// None: propagation reads the groups themselves.
    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}
