//! `chlo.top_k`: the `k` largest elements of each row (along the last
//! dimension) in descending order, and their indices (i32), the lower
//! index first among equal elements. JAX's `lax.top_k` lowers to it:
//! `%values, %indices = chlo.top_k(%x, k = 4) : tensor<16x32xf32> ->
//! (tensor<16x4xf32>, tensor<16x4xi32>)`. XLA's propagated dumps print it
//! as `mhlo.topk` (an alias here), with Shardy's rule for that op.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::{ElemType, TensorType};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// How many elements of each row to keep.
    pub struct TopK {
        k: i64 = "k",
    }
}

impl DecodeOp for TopK {
    const SPEC: OpSpec = OpSpec {
        aliases: &["mhlo.topk"],
        results: Arity::Exactly(2),
        pretty: Some(&[
            Fmt::Punct("("),
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("k", "k"),
            Fmt::Punct(")"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::BareFunctional),
        ]),
        ..OpSpec::new("chlo.top_k")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        TopK::decode_attrs(d)
    }
}

impl OpDef for TopK {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let x = operands.first().ok_or("expects one operand")?;
        check_static_shape(x, "operand")?;
        let Some(&n) = x.shape.last() else {
            return Err(format!("operand must have rank at least 1, not {x}"));
        };
        if self.k < 0 || self.k > n {
            return Err(format!(
                "k = {} is outside [0, {n}] (the size of the last dimension)",
                self.k
            ));
        }
        let mut shape = x.shape.clone();
        *shape
            .last_mut()
            .unwrap_or_else(|| unreachable!("rank >= 1")) = self.k;
        Ok(vec![
            x.with_shape(shape.clone()),
            TensorType::new(shape, ElemType::I32),
        ])
    }

    /// Shardy's rule for `mhlo.topk`: every dimension one factor of the
    /// operand and both results; the last one, when `k` is less than its
    /// size, needs replication and is blocked.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let (operand, result) = (shapes.operands[0], shapes.results[0]);
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise_with_mismatch_blocked(operand, result, FactorKind::NeedReplication, true);
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
