//! `stablehlo.select_and_scatter`: the gradient of max pooling. For each
//! window of `operand` (sizes, strides, padding; no dilations) the
//! `select` body picks one element (`select(a, b)` true keeps `a`, the
//! element chosen so far; padding is never chosen), and the matching
//! `source` element is combined into the result at that position with
//! the `scatter` body; positions never chosen keep `init_value`.
//!
//! JAX prints it in the generic form only:
//! `%r = "stablehlo.select_and_scatter"(%x, %s, %c) <{padding = dense<0> :
//! tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>,
//! window_strides = array<i64: 1, 2, 2, 1>}> ({ select }, { scatter }) :
//! (...) -> ...`

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::body::check_body;
use crate::ir::ops::checks::{check_static_shape, expect_operands};
use crate::ir::ops::decode::I64Rows;
use crate::ir::ops::window::Window;
use crate::ir::ops::{Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::{ElemType, TensorType};
use crate::ir::Computation;
use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};

define_attrs! {
    /// The attributes in the order JAX prints them (alphabetical); absent
    /// lists mean 1 in every dimension, absent padding 0.
    pub struct SelectAndScatterAttrs {
        padding: Option<I64Rows> = "padding",
        window_dimensions: Option<Vec<i64>> = "window_dimensions",
        window_strides: Option<Vec<i64>> = "window_strides",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectAndScatter {
    pub attrs: SelectAndScatterAttrs,
    pub select: Computation,
    pub scatter: Computation,
}

impl SelectAndScatter {
    /// The window for an operand of `rank`, or why the attributes do not
    /// fit.
    pub fn window(&self, rank: usize) -> Result<Window, String> {
        let a = &self.attrs;
        Window::from_attrs(
            rank,
            a.window_dimensions.as_deref(),
            a.window_strides.as_deref(),
            None,
            None,
            a.padding.as_ref(),
        )
    }
}

impl DecodeOp for SelectAndScatter {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(3),
        computations: 2,
        ..OpSpec::new("stablehlo.select_and_scatter")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Ok(SelectAndScatter {
            attrs: SelectAndScatterAttrs::decode_attrs(d)?,
            select: d.computation()?,
            scatter: d.computation()?,
        })
    }
}

impl OpDef for SelectAndScatter {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.attrs.encode_attrs()
    }

    fn computations(&self) -> Vec<&Computation> {
        vec![&self.select, &self.scatter]
    }

    fn computations_mut(&mut self) -> Vec<&mut Computation> {
        vec![&mut self.select, &mut self.scatter]
    }

    fn bodies_checked_as_functions(&self) -> Vec<(&'static str, &Computation)> {
        vec![
            ("select body", &self.select),
            ("scatter body", &self.scatter),
        ]
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        expect_operands(operands, 3)?;
        let (operand, source, init) = (&operands[0], &operands[1], &operands[2]);
        check_static_shape(operand, "operand")?;
        check_static_shape(source, "source")?;
        if source.elem != operand.elem {
            return Err(format!(
                "source has element type {} but operand has {}",
                source.elem, operand.elem
            ));
        }
        if init.rank() != 0 || init.elem != operand.elem {
            return Err(format!(
                "init value must be a tensor<{}>, got {init}",
                operand.elem
            ));
        }
        let windows = self.window(operand.rank())?.num_windows(&operand.shape)?;
        if source.shape != windows {
            return Err(format!(
                "source has shape {source} but the operand has {windows:?} windows"
            ));
        }
        let scalar = TensorType::scalar(operand.elem);
        check_body(
            &self.select,
            "select body",
            &[scalar.clone(), scalar.clone()],
            &[TensorType::scalar(ElemType::I1)],
        )?;
        check_body(
            &self.scatter,
            "scatter body",
            &[scalar.clone(), scalar.clone()],
            std::slice::from_ref(&scalar),
        )?;
        Ok(vec![operand.clone()])
    }

    /// Shardy: a pass-through dimension is one factor on operand, source
    /// and result; any other gives two factors: the source's windows
    /// (need-replication) and the operand's / result's positions
    /// (permutation), both blocked under conservative propagation.
    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let out = shapes.results.first().ok_or("has no results")?;
        let source = shapes.operands.get(1).ok_or("has no source")?;
        let window = self.window(out.len())?;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        for (d, &size) in out.iter().enumerate() {
            if window.is_passthrough(d) {
                b.add_factor_all(d, size, FactorKind::PassThrough);
                continue;
            }
            let windows = b.add_factor_per_tensor(
                source[d],
                FactorKind::NeedReplication,
                &[None, Some(d), None],
                &[None],
            );
            let positions = b.add_factor_per_tensor(
                size,
                FactorKind::Permutation,
                &[Some(d), None, None],
                &[Some(d)],
            );
            if options.conservative {
                b.block(windows);
                b.block(positions);
            }
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}
