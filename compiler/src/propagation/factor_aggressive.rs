//! Aggressive factor propagation (Shardy's `AggressiveFactorPropagation`):
//! collect the compatible major axes of every factor first, ignoring
//! conflicts, then resolve conflicts *per tensor*, so one conflicting
//! tensor no longer blocks the others (SPEC §5).
//!
//! Factors are tried in this order: the factor whose source tensor (a
//! tensor that already has the wanted axes) is largest first; for
//! element-wise ops the most sharded factor first; then the lower source
//! tensor index, then the lower factor index. Results are updated before
//! operands, and each tensor checks conflicts against its own state as
//! updated by the factors before.

use crate::rules::axis_algebra::{prefix_status, PrefixStatus};
use crate::rules::{ShardingProjection, TensorFactorShardings, TensorId, UpdatedTensors};
use crate::sharding::{AxisRef, Mesh};

use super::axes::total_size;
use super::direction::Direction;
use super::factor_basic::{
    compatible_major_axes, prefix_no_conflicts_across_factors, prefix_no_conflicts_within_factor,
    truncate_at_conflict, AxisResult,
};

/// The tensor a factor's wanted axes come from: the largest tensor (by the
/// product of its factor sizes) that already has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactorSource {
    /// Flat tensor index (operands, then results); `None` if no tensor has
    /// the axes yet.
    pub tensor: Option<usize>,
    pub size: i64,
}

/// The source tensor of every factor (Shardy's `getFactorToSourceTensor`).
pub fn factor_sources(
    projection: &ShardingProjection,
    factor_sizes: &[i64],
    axes_per_factor: &[Vec<AxisRef>],
) -> Vec<FactorSource> {
    let mut sources = vec![
        FactorSource {
            tensor: None,
            size: -1
        };
        factor_sizes.len()
    ];
    for (index, (_, tensor)) in projection.tensors().enumerate() {
        let size = tensor
            .factors
            .keys()
            .map(|&f| factor_sizes.get(f).copied().unwrap_or(1))
            .fold(1i64, i64::saturating_mul);
        for (&f, fs) in &tensor.factors {
            let Some(wanted) = axes_per_factor.get(f) else {
                continue;
            };
            let is_source =
                !wanted.is_empty() && prefix_status(wanted, &fs.axes) != PrefixStatus::NotAPrefix;
            if is_source && size > sources[f].size {
                sources[f] = FactorSource {
                    tensor: Some(index),
                    size,
                };
            }
        }
    }
    sources
}

/// The factor order of aggressive propagation.
pub fn factor_order(
    sources: &[FactorSource],
    axes_per_factor: &[Vec<AxisRef>],
    is_elementwise: bool,
    mesh: &Mesh,
) -> AxisResult<Vec<usize>> {
    let mut keys = Vec::with_capacity(sources.len());
    for (f, source) in sources.iter().enumerate() {
        let sharded = if is_elementwise {
            total_size(&axes_per_factor[f], mesh)?
        } else {
            0
        };
        let index = source.tensor.map_or(-1, |t| t as i64);
        keys.push(((-source.size, -sharded, index, f), f));
    }
    keys.sort();
    Ok(keys.into_iter().map(|(_, f)| f).collect())
}

/// The axes `factor` of `tensor` can be extended to (Shardy's
/// `getPropagatedFactorSharding`); empty if none.
fn propagated_factor_axes(
    factor: usize,
    tensor: &TensorFactorShardings,
    wanted: &[AxisRef],
    factor_size: i64,
    mesh: &Mesh,
    conservative: bool,
) -> AxisResult<Vec<AxisRef>> {
    let Some(fs) = tensor.factors.get(&factor) else {
        return Ok(Vec::new());
    };
    // Truncating `wanted` only shortens it, so a tensor whose axes are not
    // a strict prefix of `wanted` cannot be extended (the common case; it
    // saves copying the axes).
    if wanted.is_empty() || prefix_status(&fs.axes, wanted) != PrefixStatus::StrictPrefix {
        return Ok(Vec::new());
    }
    let mut axes = wanted.to_vec();
    truncate_at_conflict(&mut axes, mesh, conservative, |axis, prev| {
        prefix_no_conflicts_within_factor(axis, tensor, fs, prev, factor_size, mesh)
    })?;
    if prefix_status(&fs.axes, &axes) != PrefixStatus::StrictPrefix {
        return Ok(Vec::new());
    }
    truncate_at_conflict(&mut axes, mesh, conservative, |axis, _| {
        prefix_no_conflicts_across_factors(axis, tensor, factor, mesh)
    })?;
    Ok(axes)
}

/// Aggressive propagation of one op's projection. `is_elementwise` turns on
/// the "most sharded factor first" order and stops operands of an
/// element-wise op from getting more than its results have; `conservative`
/// stops at sub-axes (see `factor_basic::truncate_at_conflict`).
pub fn propagate_aggressive(
    projection: &mut ShardingProjection,
    direction: &dyn Fn(usize) -> Direction,
    factor_sizes: &[i64],
    mesh: &Mesh,
    is_elementwise: bool,
    conservative: bool,
) -> AxisResult<UpdatedTensors> {
    let mut updated = UpdatedTensors {
        operands: vec![false; projection.operands.len()],
        results: vec![false; projection.results.len()],
    };
    let wanted: Vec<Vec<AxisRef>> = (0..factor_sizes.len())
        .map(|f| compatible_major_axes(projection, f, direction(f)))
        .collect();
    if wanted.iter().all(Vec::is_empty) {
        return Ok(updated);
    }
    let sources = factor_sources(projection, factor_sizes, &wanted);
    let order = factor_order(&sources, &wanted, is_elementwise, mesh)?;

    for k in 0..projection.results.len() {
        let mut changed = false;
        for &f in &order {
            let axes = propagated_factor_axes(
                f,
                &projection.results[k],
                &wanted[f],
                factor_sizes[f],
                mesh,
                conservative,
            )?;
            if !axes.is_empty() {
                changed |= projection.results[k].expand_sharding_axes(f, &axes);
            }
        }
        updated.results[k] = changed;
    }
    for k in 0..projection.operands.len() {
        let mut changed = false;
        for &f in &order {
            let mut axes = propagated_factor_axes(
                f,
                &projection.operands[k],
                &wanted[f],
                factor_sizes[f],
                mesh,
                conservative,
            )?;
            if axes.is_empty() {
                continue;
            }
            if is_elementwise {
                // No sideways propagation between operands beyond what a
                // result has: an operand gets at most a result's axes.
                for result in &projection.results {
                    if let Some(fs) = result.factors.get(&f) {
                        if prefix_status(&fs.axes, &axes) == PrefixStatus::StrictPrefix {
                            axes = fs.axes.clone();
                        }
                    }
                }
            }
            changed |= projection.operands[k].expand_sharding_axes(f, &axes);
        }
        updated.operands[k] = changed;
    }
    Ok(updated)
}

/// The flat index of a tensor id (operands first).
pub fn flat_index(id: TensorId, num_operands: usize) -> usize {
    match id {
        TensorId::Operand(k) => k,
        TensorId::Result(k) => num_operands + k,
    }
}
