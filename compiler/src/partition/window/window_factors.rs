//! The factor shardings a windowed op (`reduce_window`,
//! `select_and_scatter`) can be computed with on local blocks.
//!
//! Along a dimension where a result element reads exactly its own input
//! element (pass-through: window 1, stride 1, no padding or base dilation)
//! any sharding stays local. Along a dimension tiled by its windows (window
//! = stride, no padding or dilation, the input exactly `windows x stride`
//! long) a sharding that splits the windows evenly also stays local: each
//! device's block holds whole windows, and the op runs on it with its
//! global attributes. A `reduce_window` dimension whose windows overlap the
//! blocks stays sharded where `halo` has a plan (even blocks, halos from
//! the neighbours only): `local_window` exchanges the halos (filled with
//! the init value outside the input) and runs the op with local padding,
//! as XLA's SPMD partitioner does. Any other sharded window dimension is
//! gathered whole (correct, the bytes counted and explained in the
//! listing); so is every overlapping `select_and_scatter` dimension (its
//! windows scatter into the neighbours' positions as well, which XLA
//! handles with a second, reverse halo; not done here).

//! `select_and_scatter` has two factors per window dimension (Shardy): the
//! source's windows (need-replication) and the operand's / result's
//! positions (permutation). A tiled dimension keeps them sharded on the
//! same axes, so source windows and operand blocks line up.

use crate::ir::ops::window::Window;
use crate::ir::OpKind;
use crate::partition::window::halo::{plan_halo, HaloDim};
use crate::rules::OpShardingRule;
use crate::sharding::{AxisRef, Mesh};

/// Whether windows tile dimension `d` of an input of `size`: window =
/// stride, no padding or dilation, no leftover elements.
fn tiles(window: &Window, d: usize, size: i64) -> bool {
    window.dims[d] == window.strides[d]
        && window.padding[d] == (0, 0)
        && window.base_dilations[d] == 1
        && window.window_dilations[d] == 1
        && size % window.strides[d] == 0
}

fn shards(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| a.size(mesh).unwrap_or(1)).product()
}

/// Whether `kind` is a windowed op (see the module doc).
pub(crate) fn is_window_op(kind: &OpKind) -> bool {
    matches!(kind, OpKind::ReduceWindow(_) | OpKind::SelectAndScatter(_))
}

/// Clear (replicate) in `common` every factor of `kind`'s `rule` that the
/// op cannot compute on local blocks; `input` is the shape of its first
/// operand. Other ops are left alone.
pub(crate) fn fit_window_factors(
    kind: &OpKind,
    rule: &OpShardingRule,
    input: &[i64],
    common: &mut [Vec<AxisRef>],
    mesh: &Mesh,
) {
    let window = match kind {
        OpKind::ReduceWindow(rw) => rw.window(input.len()),
        OpKind::SelectAndScatter(ss) => ss.window(input.len()),
        _ => return,
    };
    let Ok(window) = window else { return };
    // The factors of dimension d of operand 0 and, for select_and_scatter,
    // of the source (operand 1).
    let factors_of = |tensor: usize, d: usize| -> Vec<usize> {
        rule.operands
            .get(tensor)
            .and_then(|m| m.dims.get(d))
            .map(|m| m.factors.clone())
            .unwrap_or_default()
    };
    let is_sas = matches!(kind, OpKind::SelectAndScatter(_));
    for (d, &size) in input.iter().enumerate() {
        let mut fs = factors_of(0, d);
        if is_sas {
            fs.extend(factors_of(1, d));
            fs.dedup();
        }
        if window.is_one_to_one(d) {
            continue;
        }
        let windows = size / window.strides[d].max(1);
        let axes = fs
            .iter()
            .map(|&f| common[f].clone())
            .find(|a| !a.is_empty())
            .unwrap_or_default();
        let n = shards(&axes, mesh);
        let out = window.num_windows(input).ok().map(|w| w[d]);
        // select_and_scatter scatters into its neighbours' positions too:
        // no halo exchange (gathered).
        let halo = !is_sas
            && n > 1
            && out.is_some_and(|o| plan_halo(HaloDim::of_window(&window, d, size, o, n)).is_some());
        let local = (tiles(&window, d, size) && windows % n == 0) || halo;
        for &f in &fs {
            common[f] = if local { axes.clone() } else { Vec::new() };
        }
    }
}
