//! `stablehlo.sort`: sorts one or several same-shaped tensors together
//! along `dimension`, ordered by a comparator body that sees one element
//! pair per input (`(a0, b0, a1, b1, ...)`) and returns whether `a` goes
//! before `b`; `is_stable` keeps equal elements in their order.
//!
//! JAX prints it in the generic form only:
//! `%0 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
//! ^bb0(%a: tensor<f32>, %b: tensor<f32>): ... }) : (...) -> ...`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::body::check_body;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::{Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::{ElemType, TensorType};
use crate::ir::Computation;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    pub struct SortAttrs {
        /// The sorted dimension; negative counts from the end.
        dimension: i64 = "dimension" default -1,
        is_stable: bool = "is_stable" default false,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sort {
    pub attrs: SortAttrs,
    pub comparator: Computation,
}

impl Sort {
    /// The sorted dimension as an index into a shape of `rank`.
    pub fn dim(&self, rank: usize) -> Option<usize> {
        let d = self.attrs.dimension;
        let d = if d < 0 { d + rank as i64 } else { d };
        usize::try_from(d).ok().filter(|&d| d < rank)
    }
}

impl DecodeOp for Sort {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(1),
        results: Arity::AtLeast(1),
        computations: 1,
        ..OpSpec::new("stablehlo.sort")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Sort {
            attrs: SortAttrs::decode_attrs(d)?,
            comparator: d.computation()?,
        })
    }
}

impl OpDef for Sort {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn computations(&self) -> Vec<&Computation> {
        vec![&self.comparator]
    }

    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        vec![&mut self.comparator]
    }

    fn bodies_checked_as_functions(&self) -> Vec<(&'static str, &Computation)> {
        vec![("comparator", &self.comparator)]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let first = operands.first().ok_or("expects at least one input")?;
        for (i, t) in operands.iter().enumerate() {
            check_static_shape(t, &format!("input {i}"))?;
            if t.shape != first.shape {
                return Err(format!(
                    "input {i} has shape {t} but input 0 has {first}: inputs must have one shape"
                ));
            }
        }
        if self.dim(first.rank()).is_none() {
            return Err(format!(
                "dimension {} is out of range for rank {}",
                self.attrs.dimension,
                first.rank()
            ));
        }
        let want: Vec<TensorType> = operands
            .iter()
            .flat_map(|t| [TensorType::scalar(t.elem), TensorType::scalar(t.elem)])
            .collect();
        // Evaluated element-wise over all pairs of a stage at once (the
        // CPU and CUDA kernels), so element-wise ops only.
        check_body(
            &self.comparator,
            "comparator",
            &want,
            &[TensorType::scalar(ElemType::I1)],
        )?;
        Ok(operands.to_vec())
    }

    /// Batch dimensions pass through; the sorted one needs replication,
    /// blocked when no other dimension could carry the sharding (Shardy).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let shape = shapes.operands[0];
        let sort_dim = self.dim(shape.len()).ok_or("bad sort dimension")?;
        let block = shape
            .iter()
            .enumerate()
            .all(|(d, &size)| d == sort_dim || size == 1);
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (d, &size) in shape.iter().enumerate() {
            if d == sort_dim {
                let f = b.add_factor_all(d, size, FactorKind::NeedReplication);
                if block {
                    b.block(f);
                }
            } else {
                b.add_factor_all(d, size, FactorKind::PassThrough);
            }
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
