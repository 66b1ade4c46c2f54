//! `stablehlo.reverse`: the operand with the order of elements along each
//! of `dimensions` reversed (`jnp.flip`).
//!
//! `%r = stablehlo.reverse %x, dims = [1] : tensor<16x32xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// The reversed dimensions.
    pub struct Reverse {
        dimensions: Vec<i64> = "dimensions",
    }
}

impl DecodeOp for Reverse {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("dims", "dimensions"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::SameType),
        ]),
        ..OpSpec::new("stablehlo.reverse")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Reverse::decode_attrs(d)
    }
}

impl Reverse {
    /// Whether dimension `d` is reversed.
    pub fn reverses(&self, d: usize) -> bool {
        self.dimensions.contains(&(d as i64))
    }
}

impl OpDef for Reverse {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let x = operands.first().ok_or("expects one operand")?;
        check_static_shape(x, "operand")?;
        for (i, &d) in self.dimensions.iter().enumerate() {
            if d < 0 || d >= x.rank() as i64 {
                return Err(format!(
                    "dimension {d} is out of range for rank {}",
                    x.rank()
                ));
            }
            if self.dimensions[..i].contains(&d) {
                return Err(format!("dimension {d} is repeated in dims"));
            }
        }
        Ok(vec![x.clone()])
    }

    /// Shardy: element-wise, a reversed dimension's factor a permutation
    /// factor (a sharded one moves whole blocks between devices).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise_with_kind(shapes.results[0], |d| {
            if self.reverses(d) {
                FactorKind::Permutation
            } else {
                FactorKind::PassThrough
            }
        });
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
