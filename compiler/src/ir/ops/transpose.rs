//! `stablehlo.transpose`: the operand with its dimensions reordered;
//! result dimension `i` is operand dimension `permutation[i]`
//! (`jnp.transpose`).
//!
//! `%r = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::{expect_operands, unique_dim_indices};
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions, TensorId};

define_attrs! {
    /// Where each result dimension comes from.
    pub struct Transpose {
        perm: Vec<i64> = "permutation",
    }
}

impl DecodeOp for Transpose {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("dims", "permutation"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.transpose")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Transpose::decode_attrs(d)
    }
}

impl Transpose {
    /// The operand dimension of every result dimension, if `perm` is a
    /// permutation of `0..rank`.
    fn permutation(&self, rank: usize) -> Result<Vec<usize>, String> {
        let perm = &self.perm;
        let not_one = || format!("{perm:?} is not a permutation of 0..{rank}");
        let mut seen = vec![false; rank];
        let mut dims = Vec::with_capacity(rank);
        for &p in perm {
            let d = usize::try_from(p).ok().filter(|&d| d < rank && !seen[d]);
            let d = d.ok_or_else(not_one)?;
            seen[d] = true;
            dims.push(d);
        }
        if dims.len() != rank {
            return Err(not_one());
        }
        Ok(dims)
    }
}

impl OpDef for Transpose {
    fn preserves_zero_padding(&self) -> bool {
        true
    }

    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        expect_operands(operands, 1)?;
        let (perm, x) = (&self.perm, &operands[0]);
        if perm.len() != x.rank() {
            return Err(format!(
                "permutation {perm:?} has {} entries but the operand {x} has rank {}",
                perm.len(),
                x.rank()
            ));
        }
        let idx = unique_dim_indices(perm, x.rank(), "permutation entry")?;
        Ok(vec![x.with_shape(
            idx.iter().map(|&i| x.shape[i]).collect::<Vec<_>>(),
        )])
    }

    /// One factor per result dimension, in result order, of the size of
    /// the operand dimension it comes from.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        shapes.expect_counts(1, 1)?;
        let (in_shape, out_shape) = (shapes.operands[0], shapes.results[0]);
        let in_dims = self.permutation(in_shape.len())?;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (out_dim, in_dim) in in_dims.into_iter().enumerate() {
            let size = in_shape[in_dim];
            if out_shape.get(out_dim) != Some(&size) {
                return Err(format!(
                    "result dimension {out_dim} must have size {size} (operand dimension {in_dim})"
                ));
            }
            b.add_factor(
                size,
                FactorKind::PassThrough,
                &[
                    (TensorId::Operand(0), in_dim),
                    (TensorId::Result(0), out_dim),
                ],
            );
        }
        b.build_rule()
    }
}
