//! A `stablehlo.convolution` on local blocks (the factors it keeps sharded
//! are chosen by `conv_factors`): the padding of a sharded input-feature
//! dimension zeroed on both operands (padded features must add nothing to
//! the partial sums), and the group counts of the blocks: a device holding
//! `G / s` whole feature groups runs the op with `feature_group_count =
//! G / s` (its lhs block has `G / s` times the kernel's input features), one
//! holding `B / s` batch groups with `batch_group_count = B / s` (its lhs
//! batch block is `B / s` times its output batch block).

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ops::convolution::Convolution;
use crate::ir::ops::decode::I64Rows;
use crate::ir::ReduceKind;
use crate::partition::global::GValueId;
use crate::partition::local::builder::DeviceBuilder;
use crate::partition::local::padding::identity_of;
use crate::partition::program::LocalId;

impl DeviceBuilder<'_> {
    pub(super) fn local_convolution(
        &mut self,
        i: usize,
        c: &Convolution,
        operands: &[GValueId],
        mut locals: Vec<LocalId>,
        results: &[GValueId],
    ) -> Result<(), Diagnostic> {
        let dims = &c.dimension_numbers;
        let pos = self.prog.steps[i].cause.pos;
        let fail = |what: String| {
            Diagnostic::new(
                DiagKind::Sharding,
                pos,
                format!("stablehlo.convolution: {what}"),
            )
        };
        let [lhs_g, rhs_g] = operands else {
            return Err(fail("expects two operands".into()));
        };
        let rhs_shape = self.prog.values[*rhs_g].ty.shape.clone();
        let window = c.window(&rhs_shape).map_err(fail)?;
        let mut c = c.clone();
        for (s, (&ld, &od)) in dims
            .input_spatial
            .iter()
            .zip(&dims.output_spatial)
            .enumerate()
        {
            let Some(at) = self.halo_at(i, &window, (s, ld), *lhs_g, (results[0], od))? else {
                continue;
            };
            // Zero outside the input: the convolution's padding value.
            locals[0] = self.exchange_halo(i, locals[0], *lhs_g, &at, None, results[0])?;
            let n = dims.input_spatial.len();
            let mut pad = c
                .padding
                .clone()
                .map_or_else(|| vec![vec![0, 0]; n], |p| p.rows);
            pad[s] = vec![at.plan.padding.0, at.plan.padding.1];
            c.padding = Some(I64Rows {
                rows: pad,
                width: 2,
            });
            let mut bd = c.lhs_dilation.clone().unwrap_or_else(|| vec![1; n]);
            bd[s] = at.plan.base_dilation;
            c.lhs_dilation = Some(bd);
        }
        let c = &c;
        if c.groups() == 1 {
            let zero = |l: LocalId, b: &Self| identity_of(ReduceKind::Add, b.local_ty(l).elem);
            let fill = zero(locals[0], self);
            locals[0] = self.mask_if_padded(i, locals[0], *lhs_g, dims.input_feature, fill)?;
            let fill = zero(locals[1], self);
            locals[1] =
                self.mask_if_padded(i, locals[1], *rhs_g, dims.kernel_input_feature, fill)?;
            return self.op(
                i,
                crate::ir::OpKind::Convolution(c.clone()),
                locals,
                results,
            );
        }
        let out = self.local(results[0])?;
        let (lhs, rhs) = (self.local_ty(locals[0]), self.local_ty(locals[1]));
        let out = self.local_ty(out);
        let (fg, bg) = if c.feature_group_count > 1 {
            let (f, k) = (
                lhs.shape[dims.input_feature],
                rhs.shape[dims.kernel_input_feature],
            );
            if k == 0 || f % k != 0 {
                return Err(fail(format!(
                    "local blocks {lhs} and {rhs} do not hold whole feature groups"
                )));
            }
            (f / k, 1)
        } else {
            let (b, o) = (lhs.shape[dims.input_batch], out.shape[dims.output_batch]);
            if o == 0 || b % o != 0 {
                return Err(fail(format!(
                    "local blocks {lhs} and {out} do not hold whole batch groups"
                )));
            }
            (1, b / o)
        };
        let local = c.with_groups(fg, bg);
        self.op(i, crate::ir::OpKind::Convolution(local), locals, results)
    }
}
