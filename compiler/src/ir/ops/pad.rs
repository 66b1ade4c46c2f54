//! `stablehlo.pad(operand, padding_value)`: the operand with `low` and
//! `high` copies of the padding value before and after every dimension
//! (negative: elements cropped) and `interior` copies between elements.
//!
//! `%r = stablehlo.pad %x, %zero, low = [0, 1], high = [2, 0], interior = [0, 1]
//! : (tensor<4x4xf32>, tensor<f32>) -> tensor<6x8xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::{expect_len, expect_operands};
use crate::ir::ops::slice::slice_or_pad_rule;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    /// The padding of every dimension.
    pub struct Pad {
        low: Vec<i64> = "edge_padding_low",
        high: Vec<i64> = "edge_padding_high",
        interior: Vec<i64> = "interior_padding",
    }
}

impl DecodeOp for Pad {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(2),
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("low", "edge_padding_low"),
            Fmt::Punct(","),
            Fmt::Keyed("high", "edge_padding_high"),
            Fmt::Punct(","),
            Fmt::Keyed("interior", "interior_padding"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.pad")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Pad::decode_attrs(d)
    }
}

impl OpDef for Pad {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// Dimension size becomes `low + size + max(size - 1, 0) * interior +
    /// high`; `low`/`high` may be negative (cropping), `interior` may not.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        expect_operands(operands, 2)?;
        let (x, pad) = (&operands[0], &operands[1]);
        if pad.rank() != 0 {
            return Err(format!("padding value must be a scalar, got {pad}"));
        }
        if pad.elem != x.elem {
            return Err(format!(
                "padding value has element type {} but the operand has {}",
                pad.elem, x.elem
            ));
        }
        let (low, high, interior) = (&self.low, &self.high, &self.interior);
        expect_len(low, x.rank(), "edge_padding_low")?;
        expect_len(high, x.rank(), "edge_padding_high")?;
        expect_len(interior, x.rank(), "interior_padding")?;
        let mut shape = Vec::with_capacity(x.rank());
        for i in 0..x.rank() {
            let (lo, hi, inner, size) = (low[i], high[i], interior[i], x.shape[i]);
            if inner < 0 {
                return Err(format!(
                    "dimension {i}: interior padding {inner} is negative"
                ));
            }
            let new = (size - 1)
                .max(0)
                .checked_mul(inner)
                .and_then(|n| n.checked_add(size))
                .and_then(|n| n.checked_add(lo))
                .and_then(|n| n.checked_add(hi))
                .ok_or_else(|| format!("dimension {i}: padded size overflows"))?;
            if new < 0 {
                return Err(format!(
                    "dimension {i}: padding low {lo}, high {hi} leaves a negative size {new}"
                ));
            }
            shape.push(new);
        }
        Ok(vec![x.with_shape(shape)])
    }

    /// As `slice`'s: padded dimensions are permutation factors.
    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        slice_or_pad_rule(shapes, 2, options)
    }
}
