//! `stablehlo.concatenate`: the operands one after the other along
//! `dimension` (`jnp.concatenate`); they agree in every other dimension.
//!
//! `%r = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4x3xf32>,
//! tensor<2x3xf32>) -> tensor<6x3xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::dim_index;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// The dimension the operands are joined along.
    pub struct Concatenate {
        dim: i64 = "dimension",
    }
}

impl DecodeOp for Concatenate {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(1),
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("dim", "dimension"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.concatenate")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Concatenate::decode_attrs(d)
    }
}

impl OpDef for Concatenate {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// Equal ranks and element types, equal sizes except along `dim`,
    /// where sizes add up.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let Some(first) = operands.first() else {
            return Err("expects at least 1 operand, got 0".into());
        };
        let d = dim_index(self.dim, first.rank(), "concatenate dimension")?;
        let mut total: i64 = 0;
        for (k, ty) in operands.iter().enumerate() {
            if ty.elem != first.elem {
                return Err(format!(
                    "operand {k} has element type {} but operand 0 has {}",
                    ty.elem, first.elem
                ));
            }
            if ty.rank() != first.rank() {
                return Err(format!(
                    "operand {k} {ty} has rank {} but operand 0 {first} has rank {}",
                    ty.rank(),
                    first.rank()
                ));
            }
            if let Some(i) = (0..ty.rank()).find(|&i| i != d && ty.shape[i] != first.shape[i]) {
                return Err(format!(
                    "operand {k} has size {} in dimension {i} but operand 0 has size {}; \
                     only dimension {d} may differ",
                    ty.shape[i], first.shape[i]
                ));
            }
            total = total
                .checked_add(ty.shape[d])
                .ok_or("concatenated dimension size overflows")?;
        }
        let mut shape = first.shape.clone();
        shape[d] = total;
        Ok(vec![first.with_shape(shape)])
    }

    /// One factor per result dimension shared by all operands; the
    /// concatenated dimension is need-replication (absent when
    /// conservative).
    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let out = shapes.single_result()?;
        if shapes.operands.is_empty() {
            return Err("needs at least one operand".into());
        }
        let dim = self.dim;
        let dim = usize::try_from(dim)
            .ok()
            .filter(|&d| d < out.len())
            .ok_or_else(|| format!("dimension {dim} is out of range for rank {}", out.len()))?;
        for (k, s) in shapes.operands.iter().enumerate() {
            let same_elsewhere = s.len() == out.len()
                && s.iter()
                    .zip(out)
                    .enumerate()
                    .all(|(d, (a, b))| d == dim || a == b);
            if !same_elsewhere {
                return Err(format!(
                    "operand {k} of shape {s:?} does not fit result shape {out:?} outside dimension {dim}"
                ));
            }
        }
        let conservative = options.conservative;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        b.pointwise_if(
            out,
            |d| !conservative || d != dim,
            |d| {
                if d == dim {
                    FactorKind::NeedReplication
                } else {
                    FactorKind::PassThrough
                }
            },
        );
        b.build_rule()
    }
}
