//! Basic factor propagation (Shardy's `BasicFactorPropagation`): for each
//! factor in index order, the *longest compatible major axes* of all tensors
//! that have it, cut at the first conflict, then every tensor whose axes are
//! a strict prefix is extended. Each factor's result is applied before the
//! next factor is looked at (SPEC §5).
//!
//! The conflict helpers here are shared with aggressive propagation, which
//! resolves conflicts per tensor instead of per op.

use crate::rules::axis_algebra::{axis_size, contains, is_prefix_of, UnknownAxis};
use crate::rules::{FactorSharding, ShardingProjection, TensorFactorShardings, UpdatedTensors};
use crate::sharding::{AxisRef, Mesh};

use super::axes::{gcd, prefix_without_overlap_all};
use super::direction::Direction;

pub type AxisResult<T> = Result<T, UnknownAxis>;

/// Merges `new` into the compatible axes found so far (`old`), major to
/// minor (Shardy's `getCompatibleMajorAxesInternal`). Returns the merged
/// list and whether it may still be extended by later tensors.
pub fn merge_compatible(
    old: &[AxisRef],
    new: &[AxisRef],
    can_expand: bool,
) -> (Vec<AxisRef>, bool) {
    let mut result = Vec::with_capacity(old.len().max(new.len()));
    let mut i = 0;
    while i < old.len() && i < new.len() {
        let (o, n) = (&old[i], &new[i]);
        i += 1;
        if o.name != n.name {
            return (result, false);
        }
        if o.sub == n.sub {
            result.push(n.clone());
            continue;
        }
        if is_prefix_of(n, o) {
            // The new list stops inside the old axis: another new axis
            // after it would conflict.
            if i < new.len() {
                result.push(n.clone());
                return (result, false);
            }
            result.push(o.clone());
        } else if is_prefix_of(o, n) {
            if !can_expand || i < old.len() {
                result.push(o.clone());
                return (result, false);
            }
            result.push(n.clone());
        } else {
            return (result, false);
        }
    }
    result.extend(old[i.min(old.len())..].iter().cloned());
    if can_expand {
        result.extend(new[i.min(new.len())..].iter().cloned());
    }
    (result, can_expand)
}

/// The compatible major axes of `factor` over all tensors, ignoring
/// conflicts (Shardy's `getCompatibleMajorAxes`). In one direction only the
/// source side may extend the list; the other side can only shorten it.
pub fn compatible_major_axes(
    projection: &ShardingProjection,
    factor: usize,
    direction: Direction,
) -> Vec<AxisRef> {
    let (first, second) = match direction {
        Direction::None => return Vec::new(),
        Direction::Both | Direction::Forward => (&projection.operands, &projection.results),
        Direction::Backward => (&projection.results, &projection.operands),
    };
    let mut axes = Vec::new();
    let mut can_expand = true;
    let mut merge_all = |tensors: &[TensorFactorShardings], can_expand: &mut bool| {
        for t in tensors {
            if let Some(fs) = t.factors.get(&factor) {
                let (merged, expand) = merge_compatible(&axes, &fs.axes, *can_expand);
                axes = merged;
                *can_expand = expand;
            }
        }
    };
    merge_all(first, &mut can_expand);
    if direction != Direction::Both {
        can_expand = false;
    }
    merge_all(second, &mut can_expand);
    axes
}

/// The largest prefix of `axis` that no *other* factor of `tensor` uses
/// (its axes or overflow axes).
pub fn prefix_no_conflicts_across_factors(
    axis: &AxisRef,
    tensor: &TensorFactorShardings,
    factor: usize,
    mesh: &Mesh,
) -> AxisResult<Option<AxisRef>> {
    let mut result = axis.clone();
    for (&other, fs) in &tensor.factors {
        if other == factor {
            continue;
        }
        match prefix_without_overlap_all(&result, fs.overflow_axes.iter().chain(&fs.axes), mesh)? {
            Some(r) => result = r,
            None => return Ok(None),
        }
    }
    Ok(Some(result))
}

/// The largest prefix of `axis` that `factor` of one tensor can take
/// (Shardy's `compatiblePrefixNoConflictsWithinFactor`): not explicitly
/// replicated or unreduced, and, unless the tensor already has it, the
/// factor must be open, without overflow, and stay divisible unless it is
/// the minor-most factor of its dimension (then a gcd-sized sub-axis may
/// still fit). `prev_sharded` is the size of the axes before `axis`.
pub fn prefix_no_conflicts_within_factor(
    axis: &AxisRef,
    tensor: &TensorFactorShardings,
    fs: &FactorSharding,
    prev_sharded: i64,
    factor_size: i64,
    mesh: &Mesh,
) -> AxisResult<Option<AxisRef>> {
    let Some(result) = prefix_without_overlap_all(
        axis,
        tensor.replicated.iter().chain(&tensor.unreduced),
        mesh,
    )?
    else {
        return Ok(None);
    };
    if fs.axes.iter().any(|a| contains(a, &result)) {
        return Ok(Some(result));
    }
    if !fs.is_closed && fs.overflow_axes.is_empty() {
        if fs.is_minor_most {
            return Ok(Some(result));
        }
        if prev_sharded > 0 && factor_size % prev_sharded == 0 {
            let size = axis_size(&result, mesh)?;
            let common = gcd(factor_size / prev_sharded, size);
            if common == size {
                return Ok(Some(result));
            }
            if common != 1 {
                return Ok(Some(AxisRef::sub(
                    result.name.clone(),
                    result.pre_size(),
                    common,
                )));
            }
        }
    }
    match fs.axes.last() {
        Some(last) if is_prefix_of(last, &result) => Ok(Some(last.clone())),
        _ => Ok(None),
    }
}

/// Shortens `axes` at the first axis that `remove_conflicts` cuts
/// (Shardy's `truncateAxesByRemovingConflicts`): an axis it drops ends the
/// list there, an axis it shortens is the new last one. With
/// `conservative`, the list also ends at the first sub-axis: a sharding
/// never moves through a dimension that a reshape splits or merges.
pub fn truncate_at_conflict(
    axes: &mut Vec<AxisRef>,
    mesh: &Mesh,
    conservative: bool,
    mut remove_conflicts: impl FnMut(&AxisRef, i64) -> AxisResult<Option<AxisRef>>,
) -> AxisResult<()> {
    let mut prev_sharded = 1i64;
    for i in 0..axes.len() {
        match remove_conflicts(&axes[i], prev_sharded)? {
            Some(new_axis) if conservative && new_axis.sub.is_some() => {
                axes.truncate(i);
                return Ok(());
            }
            None => {
                axes.truncate(i);
                return Ok(());
            }
            Some(new_axis) if new_axis != axes[i] => {
                axes[i] = new_axis;
                axes.truncate(i + 1);
                return Ok(());
            }
            Some(_) => prev_sharded = prev_sharded.saturating_mul(axis_size(&axes[i], mesh)?),
        }
    }
    Ok(())
}

/// The axes `factor` can be sharded on in every tensor of the op (Shardy's
/// `getCompatibleMajorShardingAxes`).
pub fn compatible_major_sharding_axes(
    projection: &ShardingProjection,
    factor: usize,
    direction: Direction,
    factor_size: i64,
    mesh: &Mesh,
    conservative: bool,
) -> AxisResult<Vec<AxisRef>> {
    let mut axes = compatible_major_axes(projection, factor, direction);
    truncate_at_conflict(&mut axes, mesh, conservative, |axis, prev| {
        let mut result = axis.clone();
        for (_, tensor) in projection.tensors() {
            let Some(r) = prefix_no_conflicts_across_factors(&result, tensor, factor, mesh)? else {
                return Ok(None);
            };
            result = r;
            if let Some(fs) = tensor.factors.get(&factor) {
                match prefix_no_conflicts_within_factor(
                    &result,
                    tensor,
                    fs,
                    prev,
                    factor_size,
                    mesh,
                )? {
                    Some(r) => result = r,
                    None => return Ok(None),
                }
            }
        }
        Ok(Some(result))
    })?;
    Ok(axes)
}

/// Basic propagation of one op's projection: factor by factor, each
/// extension applied before the next factor. `direction(f)` is the
/// direction for factor `f`; `conservative` as in [`truncate_at_conflict`].
pub fn propagate_basic(
    projection: &mut ShardingProjection,
    direction: &dyn Fn(usize) -> Direction,
    factor_sizes: &[i64],
    mesh: &Mesh,
    conservative: bool,
) -> AxisResult<UpdatedTensors> {
    let mut updated = UpdatedTensors {
        operands: vec![false; projection.operands.len()],
        results: vec![false; projection.results.len()],
    };
    for (factor, &size) in factor_sizes.iter().enumerate() {
        let axes = compatible_major_sharding_axes(
            projection,
            factor,
            direction(factor),
            size,
            mesh,
            conservative,
        )?;
        let changed = projection.expand_sharding(factor, &axes);
        updated.merge(&changed);
    }
    Ok(updated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(n: &str) -> AxisRef {
        AxisRef::full(n)
    }

    #[test]
    fn merge_compatible_examples_from_shardy() {
        let x12 = AxisRef::sub("a", 1, 2);
        let x14 = AxisRef::sub("a", 1, 4);
        assert_eq!(
            merge_compatible(&[a("a")], &[a("a"), a("b")], true),
            (vec![a("a"), a("b")], true)
        );
        assert_eq!(
            merge_compatible(&[a("a"), a("b")], &[a("a"), a("c")], true),
            (vec![a("a")], false)
        );
        assert_eq!(
            merge_compatible(std::slice::from_ref(&x12), std::slice::from_ref(&x14), true),
            (vec![x14.clone()], true)
        );
        assert_eq!(
            merge_compatible(&[x12.clone(), a("b")], &[x14.clone(), a("b")], true),
            (vec![x12.clone()], false)
        );
        assert_eq!(
            merge_compatible(&[a("a")], &[a("a"), a("b")], false),
            (vec![a("a")], false)
        );
        assert_eq!(
            merge_compatible(&[a("a"), a("b")], &[a("a")], false),
            (vec![a("a"), a("b")], false)
        );
        assert_eq!(
            merge_compatible(std::slice::from_ref(&x12), &[x14], false),
            (vec![x12], false)
        );
    }
}
