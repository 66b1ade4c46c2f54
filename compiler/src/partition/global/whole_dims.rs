//! Ops whose local computation needs some dimensions whole: `sort` its
//! sorted dimension (a need-replication factor) and `chlo.top_k` its last
//! one (need-replication when `k` is less than its size, pass-through in
//! Shardy's rule when `k` equals it — a full sort all the same). Unlike
//! slice, pad and concatenate, they have no remap that rebuilds a sharded
//! dimension afterwards, so such a factor gets no axes even where the
//! operand and result shardings agree on it.
//!
//! The axes taken off it move, where they fit, to a pass-through factor
//! that no axis shards and whose size they divide: the operand is then
//! resharded by an all-to-all (each device sends all but `1/n` of its
//! block) instead of an all-gather (each device receives `n - 1` blocks),
//! and the result comes back to its annotation by another all-to-all, as
//! XLA partitions a sort along a sharded dimension.

use crate::ir::OpKind;
use crate::partition::global::compat::AxesPerFactor;
use crate::rules::{FactorKind, OpShardingRule};
use crate::sharding::Mesh;

/// The factors of `kind`'s rule that must stay unsharded (none for ops
/// that compute any sharded dimension locally or by a remap).
pub(crate) fn whole_factors(kind: &OpKind, rule: &OpShardingRule) -> Vec<usize> {
    match kind {
        OpKind::Sort(_) => rule.factors_of_kind(FactorKind::NeedReplication),
        OpKind::TopK(_) => rule
            .operands
            .first()
            .and_then(|m| m.dims.last())
            .map(|d| d.factors.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Take the axes off every factor of `whole`, moving them to a free
/// pass-through factor where one fits (see the module doc).
pub(crate) fn make_whole(
    rule: &OpShardingRule,
    whole: &[usize],
    common: &mut AxesPerFactor,
    mesh: &Mesh,
) {
    for &f in whole {
        let Some(axes) = common.get_mut(f).map(std::mem::take) else {
            continue;
        };
        if axes.is_empty() {
            continue;
        }
        let shards: i64 = axes.iter().map(|a| a.size(mesh).unwrap_or(1)).product();
        let free = rule
            .factors_of_kind(FactorKind::PassThrough)
            .into_iter()
            .find(|&g| {
                !whole.contains(&g)
                    && common.get(g).is_some_and(|c| c.is_empty())
                    && rule.factor_sizes[g] % shards == 0
                    && rule.factor_sizes[g] >= shards
            });
        if let Some(g) = free {
            common[g] = axes;
        }
    }
}
