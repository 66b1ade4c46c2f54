//! `stablehlo.slice`: the elements of the operand from `start` (inclusive)
//! to `limit` (exclusive) along every dimension, every `strides`-th one
//! (`x[0:4, 2:8:2]`).
//!
//! `%r = stablehlo.slice %x [0:4, 2:8:2] : (tensor<8x8xf32>) -> tensor<4x3xf32>`
//!
//! Older printings give the ranges as attributes instead:
//! `stablehlo.slice %x {start_indices = ..., limit_indices = ..., strides = ...}`.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::{expect_len, expect_operands};
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// The range of every dimension: `start[i]..limit[i]` in steps of
    /// `strides[i]`.
    pub struct Slice {
        start: Vec<i64> = "start_indices",
        limit: Vec<i64> = "limit_indices",
        strides: Vec<i64> = "strides",
    }
}

impl DecodeOp for Slice {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[
            Fmt::Operands,
            Fmt::SliceRanges("start_indices", "limit_indices", "strides"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.slice")
    };

    /// Strides default to 1.
    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        let start: Option<Vec<i64>> = d.required("start_indices")?;
        let limit: Option<Vec<i64>> = d.required("limit_indices")?;
        let strides: Option<Vec<i64>> = d.required("strides")?;
        match (start, limit) {
            (Some(start), Some(limit)) => {
                let strides = strides.unwrap_or_else(|| vec![1; start.len()]);
                Ok(Slice {
                    start,
                    limit,
                    strides,
                })
            }
            _ => Err(DecodeError::op(
                "needs slice ranges `[start:limit:stride, ...]` or attributes 'start_indices' and 'limit_indices'",
            )),
        }
    }
}

impl OpDef for Slice {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// Per dimension `0 <= start <= limit <= size`, `stride >= 1`, result
    /// size `ceil((limit - start) / stride)`.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        expect_operands(operands, 1)?;
        let x = &operands[0];
        let (start, limit, strides) = (&self.start, &self.limit, &self.strides);
        expect_len(start, x.rank(), "start_indices")?;
        expect_len(limit, x.rank(), "limit_indices")?;
        expect_len(strides, x.rank(), "strides")?;
        let mut shape = Vec::with_capacity(x.rank());
        for i in 0..x.rank() {
            let (s, l, st, size) = (start[i], limit[i], strides[i], x.shape[i]);
            if s < 0 {
                return Err(format!("dimension {i}: start {s} is negative"));
            }
            if s > l {
                return Err(format!(
                    "dimension {i}: start {s} is greater than limit {l}"
                ));
            }
            if l > size {
                return Err(format!(
                    "dimension {i}: limit {l} exceeds the dimension size {size}"
                ));
            }
            if st < 1 {
                return Err(format!("dimension {i}: stride {st} must be at least 1"));
            }
            // (l - s) + st - 1 cannot overflow: 0 <= l - s <= size and st >= 1
            // both fit in i64, but their sum might, so divide first.
            let len = l - s;
            shape.push(len / st + i64::from(len % st != 0));
        }
        Ok(vec![x.with_shape(shape)])
    }

    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        slice_or_pad_rule(shapes, 1, options)
    }
}

/// Shardy's rule of `slice(operand)` and `pad(operand, value)`: a factor
/// of the operand's size per dimension, shared with the result;
/// dimensions whose size changes are permutation factors (sharding one
/// moves data between devices), blocked when conservative.
pub(crate) fn slice_or_pad_rule(
    shapes: &RuleShapes,
    num_operands: usize,
    options: RuleOptions,
) -> Result<Option<OpShardingRule>, String> {
    shapes.expect_counts(num_operands, 1)?;
    let (in_shape, out_shape) = (shapes.operands[0], shapes.results[0]);
    if in_shape.len() != out_shape.len() {
        return Err(format!(
            "operand rank {} differs from result rank {}",
            in_shape.len(),
            out_shape.len()
        ));
    }
    if num_operands == 2 && !shapes.operands[1].is_empty() {
        return Err("the padding value must be a scalar".into());
    }
    let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
    b.pointwise_with_mismatch_blocked(
        in_shape,
        out_shape,
        FactorKind::Permutation,
        options.conservative,
    );
    b.build_rule()
}
