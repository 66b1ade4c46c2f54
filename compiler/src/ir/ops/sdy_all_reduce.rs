//! `sdy.all_reduce`: the value, its partial results along `reduction_axes`
//! combined, so that it is no longer unreduced along them.
//!
//! ```text
//! %1 = sdy.all_reduce {"b"} %0 out_sharding=<@mesh, [{"a"}, {}]> : tensor<8x16xf32>
//! ```
//!
//! Shardy's pipeline writes one before an op that reads an unreduced value
//! in full (its `insert-explicit-reshards` step; meshrun's
//! `propagation::export::explicit_all_reduces`). The result's sharding is
//! `out_sharding` (Shardy's collective ops carry it there rather than in
//! `sdy.sharding`); the reduction combines the partial results as the
//! operand's sharding says (`unreduced=max{...}`: a maximum), so the
//! optional reduction keyword of Shardy's form is not read. Propagation
//! does not pass through it (it has no sharding rule); the partitioner
//! lowers it to the all-reduce itself.

use crate::ir::attr::Attr;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};
use crate::sharding::{AxisRef, MeshRef, TensorSharding};

#[derive(Debug, Clone, PartialEq)]
pub struct SdyAllReduce {
    /// The axes whose partial results are combined.
    pub reduction_axes: Vec<AxisRef>,
    /// The result's sharding: the operand's, less those unreduced axes.
    pub out_sharding: TensorSharding,
}

impl DecodeOp for SdyAllReduce {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[
            Fmt::AxisRefs("reduction_axes"),
            Fmt::Operands,
            Fmt::Sharding("out_sharding", "out_sharding"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::SameType),
        ]),
        ..OpSpec::new("sdy.all_reduce")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        let reduction_axes = match d.take("reduction_axes") {
            Some(Attr::AxisRefs(axes)) => axes,
            Some(other) => {
                return Err(DecodeError::attr(
                    "reduction_axes",
                    format!("expected {{\"x\", ...}}, found {}", other.kind_name()),
                ))
            }
            None => return Err(DecodeError::op("needs attribute 'reduction_axes'")),
        };
        let out_sharding = match d.take("out_sharding") {
            Some(Attr::Sharding(s)) => s,
            Some(other) => {
                return Err(DecodeError::attr(
                    "out_sharding",
                    format!("expected #sdy.sharding<...>, found {}", other.kind_name()),
                ))
            }
            None => return Err(DecodeError::op("needs attribute 'out_sharding'")),
        };
        Ok(SdyAllReduce {
            reduction_axes,
            out_sharding,
        })
    }
}

impl OpDef for SdyAllReduce {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        vec![
            ("out_sharding", Attr::Sharding(self.out_sharding.clone())),
            (
                "reduction_axes",
                Attr::AxisRefs(self.reduction_axes.clone()),
            ),
        ]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let x = operands.first().ok_or("expects one operand")?;
        if self.reduction_axes.is_empty() {
            return Err("reduces along no axes".into());
        }
        if let Some(a) = self
            .reduction_axes
            .iter()
            .find(|a| self.out_sharding.unreduced.contains(a))
        {
            return Err(format!(
                "reduces along {a}, which out_sharding still has unreduced"
            ));
        }
        if self.out_sharding.dims.len() != x.rank() {
            return Err(format!(
                "out_sharding has {} dimensions but the operand has rank {}",
                self.out_sharding.dims.len(),
                x.rank()
            ));
        }
        Ok(vec![x.clone()])
    }

    /// On the global value (the unsharded program, where every value is
    /// whole) the reduction has nothing left to combine.
    fn runs_as_identity(&self) -> bool {
        true
    }

    fn mesh_symbols_mut(&mut self) -> Vec<&mut String> {
        match &mut self.out_sharding.mesh {
            MeshRef::Symbol(name) => vec![name],
            MeshRef::Inline(_) => Vec::new(),
        }
    }

    fn rule(
        &self,
        _shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}
