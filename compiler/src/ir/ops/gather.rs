//! `stablehlo.gather`: slices of `operand` at start indices read from
//! `start_indices`, each start clamped so its slice stays inside the
//! operand (spec: `clamp(start, 0, dim - slice_size)`).
//!
//! JAX prints it in the generic form only:
//! `%r = "stablehlo.gather"(%x, %i) <{dimension_numbers =
//! #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
//! start_index_map = [0], index_vector_dim = 1>, indices_are_sorted =
//! false, slice_sizes = array<i64: 1, 8>}> : (...) -> ...`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::index_dims::{
    add_index_factors, gather_scatter_factors, FactorsFor, GatherDims, GATHER_SYNTAX,
};
use crate::ir::ops::{Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::TensorType;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions, TensorId};

define_attrs! {
    /// The attributes in the order JAX prints them (alphabetical).
    pub struct Gather {
        dimension_numbers: GatherDims = "dimension_numbers",
        /// A promise that start indices are sorted (an optimization hint;
        /// meshrun ignores it).
        indices_are_sorted: bool = "indices_are_sorted" default false,
        slice_sizes: Vec<i64> = "slice_sizes",
    }
}

impl DecodeOp for Gather {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(2),
        ..OpSpec::new("stablehlo.gather")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Gather::decode_attrs(d)
    }
}

impl Gather {
    /// The result shape (spec C22): the indices' batch dims where the
    /// result has no offset dim, the slice sizes of the operand's window
    /// dims at the offset dims.
    pub fn result_shape(&self, operand: &TensorType, indices: &TensorType) -> Vec<i64> {
        let dims = &self.dimension_numbers;
        let batch: Vec<i64> = dims
            .indices_batch_dims(indices.rank())
            .iter()
            .map(|&d| indices.shape[d])
            .collect();
        let window: Vec<i64> = dims
            .operand_window_dims(operand.rank())
            .iter()
            .map(|&d| self.slice_sizes.get(d).copied().unwrap_or(0))
            .collect();
        let rank = batch.len() + window.len();
        let (mut b, mut w) = (batch.into_iter(), window.into_iter());
        (0..rank)
            .map(|d| {
                if dims.window_dims.contains(&(d as i64)) {
                    w.next().unwrap_or(0)
                } else {
                    b.next().unwrap_or(0)
                }
            })
            .collect()
    }
}

impl OpDef for Gather {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let [operand, indices] = operands else {
            return Err("expects an operand and start indices".into());
        };
        check_static_shape(operand, "operand")?;
        check_static_shape(indices, "start_indices")?;
        if !indices.elem.is_integer() {
            return Err(format!("start_indices must be integers, not {indices}"));
        }
        let dims = &self.dimension_numbers;
        let rank = operand.rank();
        if self.slice_sizes.len() != rank {
            return Err(format!(
                "slice_sizes has {} entries for an operand of rank {rank}",
                self.slice_sizes.len()
            ));
        }
        let batch = indices.rank() - usize::from(dims.index_vector_dim < indices.rank() as i64);
        let result_rank = batch + dims.window_dims.len();
        dims.check(&GATHER_SYNTAX, rank, &indices.shape, result_rank)?;
        for (d, (&size, &dim)) in self.slice_sizes.iter().zip(&operand.shape).enumerate() {
            if size < 0 || size > dim {
                return Err(format!(
                    "slice size {size} of dimension {d} is outside [0, {dim}]"
                ));
            }
        }
        for (what, list) in [
            ("collapsed_slice_dims", &dims.collapsed_dims),
            ("operand_batching_dims", &dims.operand_batching_dims),
        ] {
            if let Some(&d) = list.iter().find(|&&d| self.slice_sizes[d as usize] > 1) {
                return Err(format!(
                    "dimension {d} is in {what} but its slice size is {}, not at most 1",
                    self.slice_sizes[d as usize]
                ));
            }
        }
        for (&od, &id) in dims
            .operand_batching_dims
            .iter()
            .zip(&dims.indices_batching_dims)
        {
            let (a, b) = (operand.shape[od as usize], indices.shape[id as usize]);
            if a != b {
                return Err(format!(
                    "operand batching dimension {od} has size {a} but start_indices batching dimension {id} has {b}"
                ));
            }
        }
        Ok(vec![operand.with_shape(self.result_shape(operand, indices))])
    }

    /// Shardy's `addGatherScatterFactors` for a gather.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let (operand, indices, result) =
            (shapes.operands[0], shapes.operands[1], shapes.results[0]);
        let factors = gather_scatter_factors(
            &self.dimension_numbers,
            FactorsFor::Gather,
            operand,
            indices,
            result,
        );
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        add_index_factors(
            &mut b,
            &factors,
            &[TensorId::Operand(0)],
            TensorId::Operand(1),
            &[TensorId::Result(0)],
            &[],
        );
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
