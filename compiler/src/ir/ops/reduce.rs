//! `stablehlo.reduce`: reduces N same-shaped inputs over `dimensions`,
//! starting from N scalar init values, with a body that combines two
//! element tuples `(a_0..a_N, b_0..b_N)` into one (`a` the accumulated
//! values, `b` the next ones). `jnp.sum` is one input with an `add` body;
//! `jnp.argmax` is two (values and an iota of indices) with a comparator
//! that keeps the larger value and, on ties, the smaller index.
//!
//! JAX prints it in two pretty forms:
//! `stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : ...`
//! when the body is one binary op of its two arguments, else
//! `stablehlo.reduce(%x init: %c), (%i init: %d) across dimensions = [1] : ...
//!  reducer(%a: t, %b: t) (%c: u, %d: u) { ... }` with one argument pair
//! per input; the generic form has the body as a region.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::body::check_inputs_inits_body;
use crate::ir::ops::checks::unique_dim_indices;
use crate::ir::ops::ReduceKind;
use crate::ir::ops::{
    Arity, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes, SigForm,
};
use crate::ir::types::{ElemType, TensorType};
use crate::ir::Computation;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    pub struct ReduceAttrs {
        /// The reduced dimensions of the inputs.
        dimensions: Vec<i64> = "dimensions",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reduce {
    pub attrs: ReduceAttrs,
    pub body: Computation,
}

impl Reduce {
    /// A reduce of inputs of element types `elems` over `dims` that
    /// combines each input on its own with `kind` (`jnp.sum`, `jnp.max`).
    pub fn with_kind(dims: Vec<i64>, kind: ReduceKind, elems: &[ElemType]) -> Reduce {
        Reduce {
            attrs: ReduceAttrs { dimensions: dims },
            body: Computation::per_input(kind.binary_op(), elems),
        }
    }

    pub fn dims(&self) -> &[i64] {
        &self.attrs.dimensions
    }

    /// The reduction of each input when the body combines every input on
    /// its own with an add / multiply / maximum / minimum / and / or: the
    /// fast path of kernels and of the partitioner (partial results
    /// all-reduced with that op, padding masked with its identity).
    pub fn kinds(&self) -> Option<Vec<ReduceKind>> {
        self.body
            .per_input_binary_ops()?
            .into_iter()
            .map(ReduceKind::from_binary_op)
            .collect()
    }

    /// The one reduction of every input, if the body is [`Reduce::kinds`]
    /// with a single kind.
    pub fn kind(&self) -> Option<ReduceKind> {
        let kinds = self.kinds()?;
        let first = *kinds.first()?;
        kinds.iter().all(|&k| k == first).then_some(first)
    }
}

impl DecodeOp for Reduce {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(2),
        results: Arity::AtLeast(1),
        computations: 1,
        pretty: Some(&[
            Fmt::InitPairs,
            Fmt::AppliesBody,
            Fmt::Word("across"),
            Fmt::Keyed("dimensions", "dimensions"),
            Fmt::AttrDict,
            Fmt::Sig(SigForm::Functional),
            Fmt::ReducerBody,
        ]),
        ..OpSpec::new("stablehlo.reduce")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(Reduce {
            attrs: ReduceAttrs::decode_attrs(d)?,
            body: d.computation()?,
        })
    }
}

impl OpDef for Reduce {
    fn preserves_zero_padding(&self) -> bool {
        self.kind() == Some(ReduceKind::Add)
    }

    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn computations(&self) -> Vec<&Computation> {
        vec![&self.body]
    }

    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        vec![&mut self.body]
    }

    fn bodies_checked_as_functions(&self) -> Vec<(&'static str, &Computation)> {
        vec![("body", &self.body)]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let (inputs, inits) = check_inputs_inits_body(operands, &self.body)?;
        let first = &inputs[0];
        let reduced = unique_dim_indices(self.dims(), first.rank(), "reduce dimension")?;
        let shape: Vec<i64> = (0..first.rank())
            .filter(|d| !reduced.contains(d))
            .map(|d| first.shape[d])
            .collect();
        Ok(inits
            .iter()
            .map(|init| init.with_shape(shape.clone()))
            .collect())
    }

    /// One factor per input dimension, shared by all inputs; a kept
    /// dimension is shared with the results, a reduced one is a reduction
    /// factor. Init values are scalars without factors (Shardy).
    fn rule(
        &self,
        shapes: &RuleShapes,
        _options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let n = shapes.results.len();
        if n == 0 || shapes.operands.len() != 2 * n {
            return Err(format!(
                "expected 2N operands (N inputs, N inits) for N = {n} results, got {}",
                shapes.operands.len()
            ));
        }
        let in_shape = shapes.operands[0];
        let reduced = unique_dim_indices(self.dims(), in_shape.len(), "reduced dimension")?;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let mut out_dim = 0;
        for (in_dim, &size) in in_shape.iter().enumerate() {
            let mut operand_dims = vec![None; 2 * n];
            operand_dims[..n].fill(Some(in_dim));
            if reduced.contains(&in_dim) {
                b.add_factor_per_tensor(size, FactorKind::Reduction, &operand_dims, &vec![None; n]);
            } else {
                b.add_factor_per_tensor(
                    size,
                    FactorKind::PassThrough,
                    &operand_dims,
                    &vec![Some(out_dim); n],
                );
                out_dim += 1;
            }
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
