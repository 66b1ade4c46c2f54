//! Halo exchange for windowed ops sharded along a window dimension
//! (`convolution`, `reduce_window`; the plan is `halo`'s): every device
//! builds its local input from its own block and the boundary rows of its
//! neighbours' blocks (a cut and a collective-permute per neighbour, as
//! XLA's SPMD partitioner does), with the op's padding value where the
//! windows read the global padding (only the edge devices do, so the
//! program fills there by a per-device table rather than padding), and
//! runs the op with the plan's local padding and base dilation. When the
//! sharded input was just cut from a value every device holds whole along
//! that dimension (a reshard that only slices, as `sdy.all_slice` of a
//! replicated argument), the halos are read from that value instead: no
//! message at all, as XLA.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ops::decode::I64Rows;
use crate::ir::ops::reduce_window::ReduceWindow;
use crate::ir::ops::window::Window;
use crate::ir::{OpKind, TensorType};
use crate::partition::global::{Cause, GStepKind, GValueId};
use crate::partition::local::builder::DeviceBuilder;
use crate::partition::local::remap::emit_remap;
use crate::partition::program::LocalId;
use crate::partition::reshard::remap_plan::{plan_remap, RemapSource};
use crate::partition::window::halo::{plan_halo, HaloDim, HaloPlan};
use crate::sharding::layout::TensorLayout;

/// A window dimension whose input is exchanged: `d` in the input, its
/// plan.
pub(super) struct HaloAt {
    pub dim: usize,
    pub plan: HaloPlan,
}

impl DeviceBuilder<'_> {
    /// The halo plan of input dimension `dim` (window dimension `w` of
    /// `window`) of `input`, when `input` is sharded there and its windows
    /// read other blocks; an error when the factor choice kept a dimension
    /// sharded that has no plan (`conv_factors`/`window_factors` check the
    /// same).
    pub(super) fn halo_at(
        &self,
        step: usize,
        window: &Window,
        (w, dim): (usize, usize),
        input: GValueId,
        output: (GValueId, usize),
    ) -> Result<Option<HaloAt>, Diagnostic> {
        if self.dim_axes(input, dim).is_empty() || window.is_one_to_one(w) {
            return Ok(None);
        }
        let layout = self.layout(input)?;
        let n = layout.dims()[dim].shards;
        let size = self.prog.values[input].ty.shape[dim];
        let out = self.prog.values[output.0].ty.shape[output.1];
        let d = HaloDim::of_window(window, w, size, out, n);
        let Some(plan) = plan_halo(d) else {
            let cause = &self.prog.steps[step].cause;
            return Err(Diagnostic::new(
                DiagKind::Sharding,
                cause.pos,
                format!(
                    "internal error: {}: dimension {dim} is sharded {n} ways but its windows cannot be computed from halos",
                    cause.op
                ),
            ));
        };
        Ok((!plan.is_identity()).then_some(HaloAt { dim, plan }))
    }

    /// The value `g` was resharded from, with its local block, when that
    /// value is unsharded along `dim`, sharded as `g` along every other
    /// dimension and not partial: each device then already holds every
    /// row its windows read.
    fn whole_along(&self, g: GValueId, dim: usize) -> Option<(GValueId, LocalId)> {
        let step = self
            .prog
            .steps
            .iter()
            .find(|s| s.results.first() == Some(&g))?;
        let src = *step.operands.first()?;
        if !matches!(step.kind, GStepKind::Reshard) || self.deferred.contains(&src) {
            return None;
        }
        let (a, b) = (
            &self.prog.values[src].sharding,
            &self.prog.values[g].sharding,
        );
        let same_elsewhere = a.mesh == b.mesh
            && a.dims.len() == b.dims.len()
            && a.unreduced.is_empty()
            && a.dims[dim].axes.is_empty()
            && (0..a.dims.len()).all(|k| k == dim || a.dims[k].axes == b.dims[k].axes);
        if !same_elsewhere {
            return None;
        }
        Some((src, self.map[src]?))
    }

    /// `local` (the block of `g`) extended along `at.dim` by the halos its
    /// windows read, `fill` (a scalar, `None`: zero) outside the input.
    pub(super) fn exchange_halo(
        &mut self,
        step: usize,
        local: LocalId,
        g: GValueId,
        at: &HaloAt,
        fill: Option<LocalId>,
        result: GValueId,
    ) -> Result<LocalId, Diagnostic> {
        let d = at.dim;
        let cause0 = self.prog.steps[step].cause.clone();
        let err = |msg: String| {
            Diagnostic::new(
                DiagKind::Sharding,
                cause0.pos,
                format!("{}: {msg}", cause0.op),
            )
        };
        let layout = self.layout(g)?;
        let mesh = self.mesh_of(g)?;
        let axes = self.dim_axes(g, d);
        let n = layout.dims()[d].shards;
        // Where the rows come from: `g`'s blocks, or the whole value it
        // was cut from.
        let (source_g, source_local, source_axes) = match self.whole_along(g, d) {
            Some((src, l)) => (src, l, Vec::new()),
            None => (g, local, axes),
        };
        let source = self.layout(source_g)?;
        let len = at.plan.len;
        let mut shape = self.prog.values[g].ty.shape.clone();
        shape[d] = len * n;
        // The local inputs of all devices side by side: a tensor with
        // `g`'s sharding whose block k is device k's local input.
        let extended = TensorLayout::new(mesh, &self.prog.values[g].sharding, &shape)
            .map_err(|e| err(e.to_string()))?;
        let specs = [RemapSource {
            layout: &source,
            axes: &source_axes,
        }];
        let plan = &at.plan;
        let map = |o: i64| {
            plan.source((o / len) as usize, o % len)
                .map(|i| (0usize, i))
        };
        let remap = plan_remap(mesh, &self.devices, &extended, d, &specs, &map).map_err(err)?;
        let mut ty: TensorType = self.local_ty(local).clone();
        ty.shape[d] = len;
        let what = format!("{} {}", cause0.op, self.name_of(result));
        let cause = |shift: i64| {
            Cause {
            reason: format!(
                "halo of {what} along dimension {d}: its windows read rows of the block {} shard(s) {}",
                shift.abs(),
                if shift > 0 { "later" } else { "earlier" }
            ),
            ..cause0.clone()
        }
        };
        let name = format!("{}.halo{d}", self.name_of(g));
        Ok(emit_remap(
            self,
            step,
            &remap,
            &[source_local],
            &[source_g],
            fill,
            ty,
            name,
            &cause,
        ))
    }

    /// A `reduce_window` on local blocks: halos exchanged along every
    /// sharded window dimension whose windows read other blocks, the
    /// padding value being each input's init value.
    pub(super) fn local_reduce_window(
        &mut self,
        i: usize,
        rw: &ReduceWindow,
        operands: &[GValueId],
        mut locals: Vec<LocalId>,
        results: &[GValueId],
    ) -> Result<(), Diagnostic> {
        let n = results.len();
        let rank = self.prog.values[operands[0]].ty.rank();
        let window = rw.window(rank).map_err(|e| {
            let c = &self.prog.steps[i].cause;
            Diagnostic::new(DiagKind::Sharding, c.pos, format!("{}: {e}", c.op))
        })?;
        let mut local = rw.clone();
        for d in 0..rank {
            let Some(at) = self.halo_at(i, &window, (d, d), operands[0], (results[0], d))? else {
                continue;
            };
            for k in 0..n {
                let fill = locals[n + k];
                locals[k] =
                    self.exchange_halo(i, locals[k], operands[k], &at, Some(fill), results[k])?;
            }
            let a = &mut local.attrs;
            let mut pad = a
                .padding
                .clone()
                .map_or_else(|| vec![vec![0, 0]; rank], |p| p.rows);
            pad[d] = vec![at.plan.padding.0, at.plan.padding.1];
            a.padding = Some(I64Rows {
                rows: pad,
                width: 2,
            });
            let mut bd = a.base_dilations.clone().unwrap_or_else(|| vec![1; rank]);
            bd[d] = at.plan.base_dilation;
            a.base_dilations = Some(bd);
        }
        self.op(i, OpKind::ReduceWindow(local), locals, results)
    }
}
