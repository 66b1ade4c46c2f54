//! `stablehlo.reduce_window`: reduces windows of N same-shaped inputs
//! (window sizes, strides, base and window dilations, edge padding per
//! dimension; see [`Window`]) with a body that combines two element tuples
//! into one, starting from N scalar init values (which also fill the
//! padding). `jnp.cumsum` is a window as long as the axis with that much
//! low padding; max / avg pooling are 2x2 windows with stride 2.
//!
//! JAX prints it in the generic form only:
//! `%r = "stablehlo.reduce_window"(%x, %c) <{base_dilations = array<i64: 1, 1>,
//! padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = ...,
//! window_dimensions = array<i64: 1, 4>, window_strides = ...}> ({ ^bb0(%a:
//! tensor<f32>, %b: tensor<f32>): ... }) : (...) -> ...`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::body::check_inputs_inits_body;
use crate::ir::ops::decode::I64Rows;
use crate::ir::ops::window::Window;
use crate::ir::ops::{Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::TensorType;
use crate::ir::Computation;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// The attributes in the order JAX prints them (alphabetical); absent
    /// lists mean 1 in every dimension, absent padding 0.
    pub struct ReduceWindowAttrs {
        base_dilations: Option<Vec<i64>> = "base_dilations",
        padding: Option<I64Rows> = "padding",
        window_dilations: Option<Vec<i64>> = "window_dilations",
        window_dimensions: Vec<i64> = "window_dimensions",
        window_strides: Option<Vec<i64>> = "window_strides",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReduceWindow {
    pub attrs: ReduceWindowAttrs,
    pub body: Computation,
}

impl ReduceWindow {
    /// The window for inputs of `rank`, or why the attributes do not fit.
    pub fn window(&self, rank: usize) -> Result<Window, String> {
        let a = &self.attrs;
        Window::from_attrs(
            rank,
            Some(&a.window_dimensions),
            a.window_strides.as_deref(),
            a.base_dilations.as_deref(),
            a.window_dilations.as_deref(),
            a.padding.as_ref(),
        )
    }
}

impl DecodeOp for ReduceWindow {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(2),
        results: Arity::AtLeast(1),
        computations: 1,
        ..OpSpec::new("stablehlo.reduce_window")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(ReduceWindow {
            attrs: ReduceWindowAttrs::decode_attrs(d)?,
            body: d.computation()?,
        })
    }
}

impl OpDef for ReduceWindow {
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
        let shape = self.window(first.rank())?.num_windows(&first.shape)?;
        Ok(inits.iter().map(|t| t.with_shape(shape.clone())).collect())
    }

    /// Shardy: one factor per result dimension (the number of windows),
    /// on every input and result; pass-through where a window is one
    /// element with stride 1 and no padding, a permutation factor (blocked
    /// under conservative propagation) where windows mix input elements.
    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let out = shapes.results.first().ok_or("has no results")?;
        let window = self.window(out.len())?;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (d, &size) in out.iter().enumerate() {
            let kind = if window.is_passthrough(d) {
                FactorKind::PassThrough
            } else {
                FactorKind::Permutation
            };
            let f = b.add_factor_all(d, size, kind);
            if options.conservative && kind == FactorKind::Permutation {
                b.block(f);
            }
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
