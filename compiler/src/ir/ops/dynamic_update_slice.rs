//! `stablehlo.dynamic_update_slice`: `operand` with the block `update`
//! written at run-time start indices, each clamped so the block stays
//! inside (`clamp(start, 0, dim - update_dim)`).
//!
//! `%r = stablehlo.dynamic_update_slice %x, %u, %i, %j : (tensor<16x8xf32>,
//! tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<16x8xf32>`

use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::dynamic_slice::check_start_indices;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions, TensorId};

/// No attributes: the update's shape is the block's.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicUpdateSlice;

impl DecodeOp for DynamicUpdateSlice {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(2),
        pretty: Some(&[Fmt::Operands, Fmt::AttrDict, Fmt::Sig(SigForm::Functional)]),
        ..OpSpec::new("stablehlo.dynamic_update_slice")
    };

    fn decode(_d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(DynamicUpdateSlice)
    }
}

impl OpDef for DynamicUpdateSlice {
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let [operand, update, starts @ ..] = operands else {
            return Err("expects an operand, an update and start indices".into());
        };
        check_static_shape(operand, "operand")?;
        check_static_shape(update, "update")?;
        if update.elem != operand.elem {
            return Err(format!(
                "update has element type {} but the operand has {}",
                update.elem, operand.elem
            ));
        }
        if update.rank() != operand.rank() {
            return Err(format!(
                "update {update} must have the operand's rank {}",
                operand.rank()
            ));
        }
        for (d, (&u, &o)) in update.shape.iter().zip(&operand.shape).enumerate() {
            if u > o {
                return Err(format!(
                    "update dimension {d} has size {u}, larger than the operand's {o}"
                ));
            }
        }
        check_start_indices(operand, starts)?;
        Ok(vec![operand.clone()])
    }

    /// Shardy's rule: a dimension the update covers whole is one
    /// pass-through factor; a smaller one is a pass-through factor of the
    /// operand and result (each device writes what falls in its block) and
    /// a need-replication factor of the update (pass-through when every
    /// start index is a constant).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let (operand, update) = (shapes.operands[0], shapes.operands[1]);
        let constant_starts = shapes.constant_operands.len() == shapes.operands.len()
            && shapes.constant_operands[2..].iter().all(|&c| c);
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let (x, u, r) = (
            TensorId::Operand(0),
            TensorId::Operand(1),
            TensorId::Result(0),
        );
        for (d, (&o, &s)) in operand.iter().zip(update).enumerate() {
            if o == s {
                b.add_factor(o, FactorKind::PassThrough, &[(x, d), (u, d), (r, d)]);
            } else {
                b.add_factor(o, FactorKind::PassThrough, &[(x, d), (r, d)]);
                let kind = if constant_starts {
                    FactorKind::PassThrough
                } else {
                    FactorKind::NeedReplication
                };
                b.add_factor(s, kind, &[(u, d)]);
            }
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
