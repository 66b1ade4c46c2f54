//! `stablehlo.reduce_precision`: every float element rounded to a format of
//! `exponent_bits` and `mantissa_bits` (round to nearest even on the
//! mantissa, then the exponent range clamped: overflow to ±inf, values at
//! or below the format's smallest normal exponent to ±0), and kept in its
//! own type. JAX's `lax.reduce_precision` lowers to it, to emulate bf16 or
//! fp8 numerics in f32:
//! `%r = stablehlo.reduce_precision %x, format = e8m7 : tensor<16xf32>`;
//! the generic form holds two i32 attributes
//! `<{exponent_bits = 8 : i32, mantissa_bits = 7 : i32}>`.
//! Element-wise (Shardy's rule: every dimension passes through).

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    /// The reduced format.
    pub struct ReducePrecision {
        exponent_bits: i32 = "exponent_bits",
        mantissa_bits: i32 = "mantissa_bits",
    }
}

impl DecodeOp for ReducePrecision {
    const SPEC: OpSpec = OpSpec {
        elementwise: true,
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::ExpMantissa("format", "exponent_bits", "mantissa_bits"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::SameType),
        ]),
        ..OpSpec::new("stablehlo.reduce_precision")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        ReducePrecision::decode_attrs(d)
    }
}

impl OpDef for ReducePrecision {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// StableHLO's constraints: a float operand, `exponent_bits >= 1`,
    /// `mantissa_bits >= 0`; the result has the operand's type.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let x = match operands {
            [x] => x,
            _ => return Err("expects one operand".into()),
        };
        check_static_shape(x, "operand")?;
        if !x.elem.is_float() {
            return Err(format!("operand must be a float tensor, not {x}"));
        }
        if self.exponent_bits < 1 {
            return Err(format!(
                "exponent_bits must be at least 1, not {}",
                self.exponent_bits
            ));
        }
        if self.mantissa_bits < 0 {
            return Err(format!(
                "mantissa_bits must be at least 0, not {}",
                self.mantissa_bits
            ));
        }
        Ok(vec![x.clone()])
    }

    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise(shapes.operands[0]);
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
