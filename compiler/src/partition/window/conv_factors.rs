//! The factor shardings a `stablehlo.convolution` can be computed with on
//! local blocks (Shardy's rule, `ir/ops/convolution`, names the factors).
//!
//! Local with the global attributes: the batch, the output features, the
//! input features (each device's partial sums, all-reduced after the op),
//! and the groups (each device holds whole groups and runs the op with
//! `count / shards` groups, see `local_conv`). A factor that is minor in a
//! dimension it shares with a group factor stays local only where the
//! group factor is fully sharded (else a block would cut across groups),
//! and with groups every sharded factor must divide evenly (a padded block
//! would shift the groups).
//!
//! Spatial dimensions: a window reads its neighbours' elements. A sharded
//! spatial dimension stays sharded (its windows factor, the lhs
//! dimension's major one) where each block holds whole windows (a
//! one-element window with stride 1 and no padding or base dilation, or
//! windows that tile the dimension split evenly), or where `halo` has a
//! plan: input and output split into even blocks and every device's
//! windows read no further than its neighbours' blocks. Then
//! `local_window` exchanges the halos (collective-permutes of the boundary
//! rows, as XLA's SPMD partitioner does) and runs the op with local
//! padding. Otherwise (uneven blocks, halos of more than one hop) the
//! dimension is gathered whole, and the reason says so.

use crate::ir::OpKind;
use crate::partition::window::halo::{plan_halo, HaloDim};
use crate::rules::{FactorKind, OpShardingRule};
use crate::sharding::{AxisRef, Mesh};

fn shards(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| a.size(mesh).unwrap_or(1)).product()
}

/// Clear (replicate) in `common` every factor of a convolution's `rule`
/// that the op cannot compute on local blocks. Returns why, when it
/// clears a sharded spatial factor (the reason of the gathers it causes);
/// other ops are left alone.
pub(crate) fn fit_conv_factors(
    kind: &OpKind,
    rule: &OpShardingRule,
    shapes: (&[i64], &[i64]),
    common: &mut [Vec<AxisRef>],
    mesh: &Mesh,
) -> Option<String> {
    let OpKind::Convolution(c) = kind else {
        return None;
    };
    let (lhs, rhs) = shapes;
    let dims = &c.dimension_numbers;
    let window = c.window(rhs).ok()?;
    let factors_of = |tensor: usize, d: usize| -> Vec<usize> {
        rule.operands
            .get(tensor)
            .and_then(|m| m.dims.get(d))
            .map(|m| m.factors.clone())
            .unwrap_or_default()
    };
    let out_factors = |d: usize| -> Vec<usize> {
        rule.results
            .first()
            .and_then(|m| m.dims.get(d))
            .map(|m| m.factors.clone())
            .unwrap_or_default()
    };
    let mut note = None;
    for (s, &ld) in dims.input_spatial.iter().enumerate() {
        // Every factor of the three spatial dimensions, the size-1 ones
        // the rule gives a dimension it leaves out included.
        let mut fs = factors_of(0, ld);
        fs.extend(factors_of(1, dims.kernel_spatial[s]));
        fs.extend(out_factors(dims.output_spatial[s]));
        fs.sort_unstable();
        fs.dedup();
        if fs.iter().all(|&f| common[f].is_empty()) {
            continue;
        }
        let size = lhs[ld];
        let one_to_one = window.is_one_to_one(s);
        let tiled = window.dims[s] == window.strides[s]
            && window.padding[s] == (0, 0)
            && window.base_dilations[s] == 1
            && window.window_dilations[s] == 1
            && size % window.strides[s] == 0;
        let lhs_factors = factors_of(0, ld);
        let major = lhs_factors.first().copied();
        let windows = size / window.strides[s].max(1);
        let spatial: Vec<i64> = dims.input_spatial.iter().map(|&d| lhs[d]).collect();
        let out_size = window
            .num_windows(&spatial)
            .ok()
            .and_then(|w| w.get(s).copied());
        let halo = |n: i64| {
            out_size
                .is_some_and(|o| plan_halo(HaloDim::of_window(&window, s, size, o, n)).is_some())
        };
        for &f in &fs {
            let n = shards(&common[f], mesh);
            let keeps = Some(f) == major
                && rule.kind(f) == FactorKind::Permutation
                && (one_to_one || (tiled && windows % n == 0) || halo(n));
            if !common[f].is_empty() && !keeps {
                common[f].clear();
                note = Some(format!(
                    "the convolution's windows along lhs dimension {ld} read beyond the neighbouring blocks (or its blocks are uneven), so it is gathered whole"
                ));
            }
        }
    }
    // Groups: whole groups per device, every sharded factor dividing.
    if c.groups() > 1 {
        for (f, axes) in common.iter_mut().enumerate() {
            let n = shards(axes, mesh);
            if n > 1 && rule.factor_size(f) % n != 0 {
                axes.clear();
            }
        }
        let tensors = rule.operands.iter().chain(&rule.results);
        for mapping in tensors {
            for dim in &mapping.dims {
                for (k, &f) in dim.factors.iter().enumerate().skip(1) {
                    let whole = dim.factors[..k]
                        .iter()
                        .all(|&g| shards(&common[g], mesh) == rule.factor_size(g));
                    // Sub-axes of one axis on both would need merging
                    // back into the axis (the projection keeps them apart).
                    let shares_axis = dim.factors[..k].iter().any(|&g| {
                        common[g]
                            .iter()
                            .any(|a| common[f].iter().any(|b| a.name == b.name))
                    });
                    if !whole || shares_axis {
                        common[f].clear();
                    }
                }
            }
        }
    }
    note
}
