//! `stablehlo.scatter`: `inputs` with slices at indices read from
//! `scatter_indices` combined with `updates` by the update region. An
//! update element whose target lies outside the inputs is skipped (spec:
//! per element). meshrun runs the update regions JAX emits, recognized
//! from the body ([`ScatterUpdate`]): replace (`.at[].set`), add, multiply,
//! maximum, minimum (and `and` / `or` on `i1`); any other body is a
//! verifier error.
//!
//! JAX prints it in the generic form only:
//! `%r = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false,
//! scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
//! inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
//! index_vector_dim = 1>, unique_indices = false}> ({ ^bb0(%a: tensor<f32>,
//! %b: tensor<f32>): ... }) : (...) -> ...`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::body::check_signature;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::index_dims::{
    add_index_factors, gather_scatter_factors, FactorsFor, ScatterDims, SCATTER_SYNTAX,
};
use crate::ir::ops::{Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::{ElemType, TensorType};
use crate::ir::Computation;
use crate::ir::{OpKind, ReduceKind};
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{OpShardingRule, RuleOptions, TensorId};

define_attrs! {
    /// The attributes in the order JAX prints them (alphabetical).
    pub struct ScatterAttrs {
        /// Optimization hints (meshrun applies updates in order either way).
        indices_are_sorted: bool = "indices_are_sorted" default false,
        scatter_dimension_numbers: ScatterDims = "scatter_dimension_numbers",
        unique_indices: bool = "unique_indices" default false,
    }
}

/// What the update region does with the current value `a` and the update
/// `b` of each input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterUpdate {
    /// Returns `b` (`.at[].set`).
    Replace,
    /// `a op b` (or `b op a`) for an associative, commutative `op`.
    Combine(ReduceKind),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scatter {
    pub attrs: ScatterAttrs,
    pub update: Computation,
}

impl DecodeOp for Scatter {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(3),
        results: Arity::AtLeast(1),
        computations: 1,
        ..OpSpec::new("stablehlo.scatter")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Scatter {
            attrs: ScatterAttrs::decode_attrs(d)?,
            update: d.computation()?,
        })
    }
}

impl Scatter {
    pub fn dims(&self) -> &ScatterDims {
        &self.attrs.scatter_dimension_numbers
    }

    /// The number of inputs (and of updates and results) for `operands`
    /// operands: `N` inputs, the indices, `N` updates.
    pub fn num_inputs(operands: usize) -> usize {
        operands.saturating_sub(1) / 2
    }

    /// The update the region computes, or why it is not one meshrun runs.
    pub fn update_kind(&self) -> Result<ScatterUpdate, String> {
        let f = self.update.func();
        let n = f.returns.len();
        if n == 0 || f.args.len() != 2 * n {
            return Err(format!(
                "the update region takes {} argument(s) and returns {n}: it must take two \
                 scalars per input and return one",
                f.args.len()
            ));
        }
        let unsupported = || {
            "the update region must return the update (replace) or combine the current value \
             and the update with one add, multiply, maximum or minimum (and, or on i1)"
                .to_string()
        };
        let mut kind: Option<ScatterUpdate> = None;
        for (i, &r) in f.returns.iter().enumerate() {
            let (a, b) = (f.args[i], f.args[n + i]);
            let this = if r == b {
                ScatterUpdate::Replace
            } else {
                let op = f
                    .body
                    .iter()
                    .map(|&id| f.op(id))
                    .find(|op| op.results.contains(&r))
                    .ok_or_else(unsupported)?;
                let OpKind::Binary(bin) = op.kind else {
                    return Err(unsupported());
                };
                let rk = ReduceKind::from_binary_op(bin).ok_or_else(unsupported)?;
                let ops = op.operands.as_slice();
                if ops != [a, b] && ops != [b, a] {
                    return Err(unsupported());
                }
                if matches!(rk, ReduceKind::And | ReduceKind::Or) && f.ty(r).elem != ElemType::I1 {
                    return Err(format!(
                        "the update region's {} is only supported on i1, not {}",
                        bin.name(),
                        f.ty(r).elem
                    ));
                }
                ScatterUpdate::Combine(rk)
            };
            match kind {
                None => kind = Some(this),
                Some(k) if k == this => {}
                Some(_) => {
                    return Err("the update region must update every input the same way".to_string())
                }
            }
        }
        kind.ok_or_else(unsupported)
    }
}

impl OpDef for Scatter {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn computations(&self) -> Vec<&Computation> {
        vec![&self.update]
    }

    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        vec![&mut self.update]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        if operands.len() < 3 || operands.len().is_multiple_of(2) {
            return Err(format!(
                "takes N inputs, the scatter indices and N updates, got {} operand(s)",
                operands.len()
            ));
        }
        let n = Scatter::num_inputs(operands.len());
        let (inputs, rest) = operands.split_at(n);
        let (indices, updates) = (&rest[0], &rest[1..]);
        for (i, t) in inputs.iter().enumerate() {
            check_static_shape(t, &format!("input {i}"))?;
            if t.shape != inputs[0].shape {
                return Err(format!(
                    "input {i} has shape {t} but input 0 has {}: inputs must have one shape",
                    inputs[0]
                ));
            }
        }
        check_static_shape(indices, "scatter_indices")?;
        if !indices.elem.is_integer() {
            return Err(format!("scatter_indices must be integers, not {indices}"));
        }
        for (i, (u, x)) in updates.iter().zip(inputs).enumerate() {
            check_static_shape(u, &format!("update {i}"))?;
            if u.shape != updates[0].shape {
                return Err(format!(
                    "update {i} has shape {u} but update 0 has {}: updates must have one shape",
                    updates[0]
                ));
            }
            if u.elem != x.elem {
                return Err(format!(
                    "update {i} has element type {} but input {i} has {}",
                    u.elem, x.elem
                ));
            }
        }
        let dims = self.dims();
        let (operand, update) = (&inputs[0], &updates[0]);
        dims.check(
            &SCATTER_SYNTAX,
            operand.rank(),
            &indices.shape,
            update.rank(),
        )?;
        let batch: Vec<i64> = dims
            .indices_batch_dims(indices.rank())
            .iter()
            .map(|&d| indices.shape[d])
            .collect();
        let scatter_dims = dims.slices_batch_dims(update.rank());
        for (k, (&ud, &size)) in scatter_dims.iter().zip(&batch).enumerate() {
            if update.shape[ud] != size {
                return Err(format!(
                    "updates dimension {ud} has size {} but scatter_indices batch dimension {k} has {size}",
                    update.shape[ud]
                ));
            }
        }
        let window = dims.operand_window_dims(operand.rank());
        for (&ud, &od) in dims.window_dims.iter().zip(&window) {
            let (u, o) = (update.shape[ud as usize], operand.shape[od]);
            if u > o {
                return Err(format!(
                    "update window dimension {ud} has size {u}, larger than input dimension {od} ({o})"
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
                    "input batching dimension {od} has size {a} but scatter_indices batching dimension {id} has {b}"
                ));
            }
        }
        let want: Vec<TensorType> = inputs
            .iter()
            .chain(inputs)
            .map(|t| TensorType::scalar(t.elem))
            .collect();
        check_signature(&self.update, "update region", &want, &want[..n])?;
        self.update_kind()?;
        Ok(inputs.to_vec())
    }

    /// Shardy's `addGatherScatterFactors` for a scatter: implicit batch
    /// dims are reduction factors when the update is a reduction Shardy
    /// supports, need-replication otherwise.
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let n = Scatter::num_inputs(shapes.operands.len());
        let reduces = matches!(self.update_kind(), Ok(ScatterUpdate::Combine(_)));
        let factors = gather_scatter_factors(
            self.dims(),
            FactorsFor::Scatter { reduces },
            shapes.operands[0],
            shapes.operands[n],
            shapes.operands[n + 1],
        );
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let inputs: Vec<TensorId> = (0..n).map(TensorId::Operand).collect();
        let updates: Vec<TensorId> = (n + 1..=2 * n).map(TensorId::Operand).collect();
        let results: Vec<TensorId> = (0..n).map(TensorId::Result).collect();
        add_index_factors(
            &mut b,
            &factors,
            &inputs,
            TensorId::Operand(n),
            &updates,
            &results,
        );
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
