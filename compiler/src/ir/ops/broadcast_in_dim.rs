//! `stablehlo.broadcast_in_dim`: the operand copied along new dimensions
//! (and along its own size-1 ones); operand dimension `i` becomes result
//! dimension `broadcast_dimensions[i]`. The program states the result
//! shape.
//!
//! `%r = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::not_inferable;
use crate::ir::ops::checks::{
    check_static_shape, expect_operands, expect_results, single_result, unique_dim_indices,
};
use crate::ir::ops::{DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions, TensorId};

define_attrs! {
    /// The result dimension of every operand dimension.
    pub struct BroadcastInDim {
        dims: Vec<i64> = "broadcast_dimensions",
    }
}

impl DecodeOp for BroadcastInDim {
    const SPEC: OpSpec = OpSpec {
        pretty: Some(&[
            Fmt::Operands,
            Fmt::Punct(","),
            Fmt::Keyed("dims", "broadcast_dimensions"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.broadcast_in_dim")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        BroadcastInDim::decode_attrs(d)
    }
}

/// `stablehlo.broadcast_in_dim` of `operand` to `shape`: operand dimension
/// `i` becomes result dimension `dims[i]` (any order, no repeats) and has
/// size 1 or the result's size there.
pub fn infer_broadcast_in_dim(
    operand: &TensorType,
    dims: &[i64],
    shape: &[i64],
) -> Result<TensorType, String> {
    let result = operand.with_shape(shape);
    check_static_shape(&result, "result")?;
    if dims.len() != operand.rank() {
        return Err(format!(
            "dims has {} entries but the operand {operand} has rank {}",
            dims.len(),
            operand.rank()
        ));
    }
    let targets = unique_dim_indices(dims, shape.len(), "broadcast dimension")?;
    for (i, &t) in targets.iter().enumerate() {
        let (from, to) = (operand.shape[i], shape[t]);
        if from != 1 && from != to {
            return Err(format!(
                "operand dimension {i} has size {from} but result dimension {t} has size \
                 {to}; a broadcast dimension must have size 1 or the result's size"
            ));
        }
    }
    Ok(result)
}

impl OpDef for BroadcastInDim {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err(not_inferable("infer_broadcast_in_dim"))
    }

    fn inferable(&self) -> bool {
        false
    }

    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        expect_operands(operands, 1)?;
        let want =
            infer_broadcast_in_dim(&operands[0], &self.dims, &single_result(results)?.shape)?;
        expect_results(&[want], results)
    }

    /// Every mapped dimension shares a factor with its result dimension,
    /// except an operand dimension of size 1 expanded to a larger one:
    /// that gets its own size-1 factor, and the result dimension a new
    /// one.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        shapes.expect_counts(1, 1)?;
        let dims = &self.dims;
        let (in_shape, out_shape) = (shapes.operands[0], shapes.results[0]);
        if dims.len() != in_shape.len() {
            return Err(format!(
                "{} broadcast dimensions for an operand of rank {}",
                dims.len(),
                in_shape.len()
            ));
        }
        let mut out_to_in = vec![None; out_shape.len()];
        for (in_dim, &out_dim) in dims.iter().enumerate() {
            let slot = usize::try_from(out_dim)
                .ok()
                .and_then(|d| out_to_in.get_mut(d))
                .ok_or_else(|| {
                    format!(
                        "broadcast dimension {out_dim} is out of range for a result of rank {}",
                        out_shape.len()
                    )
                })?;
            *slot = Some(in_dim);
        }
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (out_dim, &out_size) in out_shape.iter().enumerate() {
            let mut in_dim = out_to_in[out_dim];
            if let Some(d) = in_dim {
                let in_size = in_shape[d];
                if in_size == 1 && out_size != 1 {
                    b.add_factor(1, FactorKind::PassThrough, &[(TensorId::Operand(0), d)]);
                    in_dim = None;
                } else if in_size != out_size {
                    return Err(format!(
                        "operand dimension {d} of size {in_size} cannot broadcast to result dimension {out_dim} of size {out_size}"
                    ));
                }
            }
            b.add_factor_per_tensor(
                out_size,
                FactorKind::PassThrough,
                &[in_dim],
                &[Some(out_dim)],
            );
        }
        b.build_rule()
    }
}
