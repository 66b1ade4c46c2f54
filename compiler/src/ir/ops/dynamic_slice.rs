//! `stablehlo.dynamic_slice`: the `slice_sizes` block of `operand` at
//! run-time start indices, each clamped so the block stays inside
//! (`clamp(start, 0, dim - size)`).
//!
//! `%r = stablehlo.dynamic_slice %x, %i, %j, sizes = [1, 4] : (tensor<8x4xf32>,
//! tensor<i32>, tensor<i32>) -> tensor<1x4xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::{check_static_shape, expect_len};
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// The size of the block along every dimension.
    pub struct DynamicSlice {
        slice_sizes: Vec<i64> = "slice_sizes",
    }
}

impl DecodeOp for DynamicSlice {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(1),
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("sizes", "slice_sizes"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.dynamic_slice")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        DynamicSlice::decode_attrs(d)
    }
}

/// The start indices of `dynamic_slice` / `dynamic_update_slice`: one
/// rank-0 integer per operand dimension, all of one type.
pub(crate) fn check_start_indices(
    operand: &TensorType,
    starts: &[TensorType],
) -> Result<(), String> {
    if starts.len() != operand.rank() {
        return Err(format!(
            "has {} start indices for an operand of rank {}",
            starts.len(),
            operand.rank()
        ));
    }
    for (i, s) in starts.iter().enumerate() {
        if s.rank() != 0 || !s.elem.is_integer() {
            return Err(format!(
                "start index {i} must be an integer scalar, not {s}"
            ));
        }
        if s.elem != starts[0].elem {
            return Err(format!(
                "start indices must have one type: {} and {}",
                starts[0].elem, s.elem
            ));
        }
    }
    Ok(())
}

impl OpDef for DynamicSlice {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let (operand, starts) = operands
            .split_first()
            .ok_or_else(|| "expects an operand and start indices".to_string())?;
        check_static_shape(operand, "operand")?;
        check_start_indices(operand, starts)?;
        expect_len(&self.slice_sizes, operand.rank(), "slice_sizes")?;
        for (d, (&size, &dim)) in self.slice_sizes.iter().zip(&operand.shape).enumerate() {
            if size < 0 || size > dim {
                return Err(format!(
                    "slice size {size} of dimension {d} is outside [0, {dim}]"
                ));
            }
        }
        Ok(vec![operand.with_shape(self.slice_sizes.clone())])
    }

    /// Every dimension is one factor of operand and result; a sliced one
    /// needs replication and is blocked (the start is only known at run
    /// time, so the data cannot be shifted into place in advance).
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
