//! Choosing one sharding per factor for an op whose operands and results
//! disagree (Shardy's `findCommonAxes`, SPEC §6).
//!
//! An op is *compatible* when every pass-through and reduction factor is
//! sharded the same way in every tensor that has it, no reduction axis also
//! shards a result, and no axis shards two factors. meshrun relaxes one
//! rule for *remap* factors (permutation: sliced/padded dims; need
//! replication: the concatenated dim): an operand may leave such a factor
//! unsharded while the result shards it, because the partitioner rebuilds
//! the result block from the operand (locally when the operand is
//! replicated along it, with collective-permutes of the needed slabs when
//! both are sharded alike) instead of replicating it.
//!
//! When the op is not compatible, the heuristic picks, over and over, the
//! (factor, axes) pair that keeps the most tensors in place (as in the
//! seed-003 example, where the lhs and the result outvote the larger rhs),
//! then the largest total size of those tensors, then the factor kind
//! (pass-through > reduction > permutation > need-replication), then the
//! largest local tensor, then the most shards. The picked axes are removed
//! from every other candidate. A unary op (two non-scalar tensors) simply
//! keeps the sharding of its preferred tensor: the one without sharded
//! permutation factors, then the larger, then the more sharded.

use std::cmp::Ordering;

use crate::rules::axis_algebra::{is_prefix_of, overlaps};
use crate::rules::{FactorKind, OpShardingRule, ShardingProjection, TensorFactorShardings};
use crate::sharding::{AxisRef, Mesh};

/// Axes per factor.
pub type AxesPerFactor = Vec<Vec<AxisRef>>;

/// Whether `kind` is a factor the partitioner rebuilds with a remap
/// (an operand may keep it unsharded while the result shards it).
pub fn is_remap_kind(kind: FactorKind) -> bool {
    matches!(kind, FactorKind::Permutation | FactorKind::NeedReplication)
}

fn size_of(axes: &[AxisRef], mesh: &Mesh) -> i64 {
    axes.iter().map(|a| a.size(mesh).unwrap_or(1)).product()
}

fn lists_overlap(a: &[AxisRef], b: &[AxisRef]) -> bool {
    a.iter().any(|x| b.iter().any(|y| overlaps(x, y)))
}

/// The operands, then the results, of a projection.
fn tensors(p: &ShardingProjection) -> impl Iterator<Item = (bool, &TensorFactorShardings)> {
    p.operands
        .iter()
        .map(|t| (true, t))
        .chain(p.results.iter().map(|t| (false, t)))
}

/// The common axes if the op is already compatible (see the module doc).
pub fn compatible_axes(rule: &OpShardingRule, p: &ShardingProjection) -> Option<AxesPerFactor> {
    let n = rule.num_factors();
    let mut common: Vec<Option<Vec<AxisRef>>> = vec![None; n];
    // Results first: they fix a remap factor's axes.
    for (is_operand, t) in tensors(p)
        .filter(|(o, _)| !o)
        .chain(tensors(p).filter(|(o, _)| *o))
    {
        for (&f, fs) in &t.factors {
            if f >= n {
                return None;
            }
            if !fs.overflow_axes.is_empty() {
                return None;
            }
            let remap = is_remap_kind(rule.kind(f));
            match &common[f] {
                None => common[f] = Some(fs.axes.clone()),
                Some(c) if *c == fs.axes => {}
                Some(_) if remap && is_operand && fs.axes.is_empty() => {}
                Some(_) => return None,
            }
        }
    }
    let common: AxesPerFactor = common.into_iter().map(Option::unwrap_or_default).collect();
    if axes_conflict(rule, p, &common) {
        return None;
    }
    Some(common)
}

/// Whether an axis shards two factors, or a reduction axis also shards a
/// result.
fn axes_conflict(rule: &OpShardingRule, p: &ShardingProjection, common: &AxesPerFactor) -> bool {
    for f in 0..common.len() {
        for g in f + 1..common.len() {
            if lists_overlap(&common[f], &common[g]) {
                return true;
            }
        }
    }
    for f in rule.factors_of_kind(FactorKind::Reduction) {
        for t in &p.results {
            if t.factors
                .values()
                .any(|fs| lists_overlap(&common[f], &fs.axes))
            {
                return true;
            }
        }
    }
    false
}

/// The axes every factor gets: the compatible ones if the op already is,
/// else the heuristic's choice; then made valid for every tensor (see
/// [`make_valid`]).
pub fn choose_common_axes(
    rule: &OpShardingRule,
    p: &ShardingProjection,
    tensor_sizes: &[i64],
    mesh: &Mesh,
) -> AxesPerFactor {
    let mut common = match compatible_axes(rule, p) {
        Some(c) => c,
        None if is_unary(rule) => unary_axes(rule, p, tensor_sizes, mesh),
        None => heuristic_axes(rule, p, tensor_sizes, mesh),
    };
    make_valid(rule, &mut common, mesh);
    common
}

/// Two non-scalar tensors, no need-replication factor, no compound
/// dimension: Shardy's unary special case.
fn is_unary(rule: &OpShardingRule) -> bool {
    let non_scalar = rule.tensors().filter(|(_, m)| !m.is_scalar()).count();
    non_scalar == 2
        && rule.factors_of_kind(FactorKind::NeedReplication).is_empty()
        && !rule.has_compound_dims()
}

fn unary_axes(
    rule: &OpShardingRule,
    p: &ShardingProjection,
    sizes: &[i64],
    mesh: &Mesh,
) -> AxesPerFactor {
    let non_scalar: Vec<(usize, &TensorFactorShardings)> = tensors(p)
        .enumerate()
        .filter(|(i, _)| rule.tensor(*i).is_some_and(|m| !m.is_scalar()))
        .map(|(i, (_, t))| (i, t))
        .collect();
    let key = |&(i, t): &(usize, &TensorFactorShardings)| {
        let sharded_perm = t
            .factors
            .iter()
            .any(|(&f, fs)| rule.kind(f) == FactorKind::Permutation && !fs.axes.is_empty());
        let shards: i64 = t
            .factors
            .values()
            .map(|fs| size_of(&fs.axes, mesh))
            .product();
        (!sharded_perm, sizes.get(i).copied().unwrap_or(0), shards)
    };
    let (preferred, other) = if key(&non_scalar[0]) >= key(&non_scalar[1]) {
        (non_scalar[0].1, non_scalar[1].1)
    } else {
        (non_scalar[1].1, non_scalar[0].1)
    };
    let mut common: AxesPerFactor = vec![Vec::new(); rule.num_factors()];
    let mut used: Vec<AxisRef> = Vec::new();
    for (&f, fs) in &preferred.factors {
        common[f] = fs.axes.clone();
        used.extend(fs.axes.iter().cloned());
    }
    for (&f, fs) in &other.factors {
        if !preferred.factors.contains_key(&f) {
            let mut axes = fs.axes.clone();
            truncate_without_overlap(&mut axes, &used, mesh);
            common[f] = axes;
        }
    }
    common
}

/// One (factor, axes) candidate of the heuristic.
#[derive(Debug, Clone)]
struct Candidate {
    factor: usize,
    axes: Vec<AxisRef>,
    /// How many tensors shard the factor this way (or with these axes as
    /// a prefix).
    count: usize,
    /// Total global size of the tensors that shard the factor this way
    /// (or with these axes as a prefix).
    total: i64,
    precedence: i64,
    /// The largest local size of a tensor that has the factor.
    local: i64,
    /// Shards this candidate adds to the factor's current assignment.
    shards: i64,
}

impl Candidate {
    fn key(&self) -> (usize, i64, i64, i64, i64, usize, usize) {
        (
            self.count,
            self.total,
            self.precedence,
            self.local,
            self.shards,
            self.factor,
            self.axes.len(),
        )
    }
}

fn precedence(kind: FactorKind) -> i64 {
    match kind {
        FactorKind::PassThrough => 3,
        FactorKind::Reduction => 2,
        FactorKind::Permutation => 1,
        FactorKind::NeedReplication => 0,
    }
}

fn heuristic_axes(
    rule: &OpShardingRule,
    p: &ShardingProjection,
    sizes: &[i64],
    mesh: &Mesh,
) -> AxesPerFactor {
    let n = rule.num_factors();
    let mut candidates: Vec<Candidate> = Vec::new();
    for (i, (_, t)) in tensors(p).enumerate() {
        let size = sizes.get(i).copied().unwrap_or(0);
        for (&f, fs) in &t.factors {
            if f >= n {
                continue;
            }
            let mut axes = fs.axes.clone();
            while !axes.is_empty() {
                match candidates
                    .iter_mut()
                    .find(|c| c.factor == f && c.axes == axes)
                {
                    Some(c) => {
                        c.count += 1;
                        c.total += size;
                        c.local = c.local.max(size);
                    }
                    None => candidates.push(Candidate {
                        factor: f,
                        shards: size_of(&axes, mesh),
                        axes: axes.clone(),
                        count: 1,
                        total: size,
                        precedence: precedence(rule.kind(f)),
                        local: size,
                    }),
                }
                axes.pop();
            }
        }
    }
    // A factor may only be sharded once the factors before it in every
    // dimension are fully sharded (else its shards would be strided).
    let mut depends: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (_, m) in rule.tensors() {
        for d in &m.dims {
            for w in d.factors.windows(2) {
                if !depends[w[1]].contains(&w[0]) {
                    depends[w[1]].push(w[0]);
                }
            }
        }
    }
    let mut common: AxesPerFactor = vec![Vec::new(); n];
    loop {
        let best = candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| depends[c.factor].is_empty())
            .max_by(|(_, a), (_, b)| a.key().cmp(&b.key()).then(Ordering::Equal))
            .map(|(i, _)| i);
        let Some(best) = best else { break };
        let picked = candidates.swap_remove(best);
        let f = picked.factor;
        common[f] = picked.axes.clone();
        if size_of(&picked.axes, mesh) >= rule.factor_size(f) {
            for d in depends.iter_mut() {
                d.retain(|&g| g != f);
            }
        }
        candidates.retain_mut(|c| {
            if c.factor == f {
                if is_strict_prefix(&picked.axes, &c.axes) {
                    c.shards = size_of(&c.axes, mesh) / size_of(&picked.axes, mesh).max(1);
                    return true;
                }
                return false;
            }
            if truncate_without_overlap(&mut c.axes, &picked.axes, mesh) {
                if c.axes.is_empty() || c.axes == common[c.factor] {
                    return false;
                }
                let prefix = size_of(&common[c.factor], mesh).max(1);
                c.shards = size_of(&c.axes, mesh) / prefix;
            }
            true
        });
        // Local sizes shrink as factors get sharded.
        let shards: Vec<i64> = common.iter().map(|a| size_of(a, mesh)).collect();
        for c in candidates.iter_mut() {
            c.local = 0;
        }
        for (i, (_, t)) in tensors(p).enumerate() {
            let mut local = sizes.get(i).copied().unwrap_or(0);
            for &g in t.factors.keys() {
                local /= shards.get(g).copied().unwrap_or(1).max(1);
            }
            for c in candidates.iter_mut() {
                if t.factors.contains_key(&c.factor) {
                    c.local = c.local.max(local);
                }
            }
        }
    }
    common
}

fn is_strict_prefix(a: &[AxisRef], b: &[AxisRef]) -> bool {
    if a.len() > b.len() || a == b {
        return false;
    }
    match a.split_last() {
        None => !b.is_empty(),
        Some((last, init)) => {
            init.iter().zip(b).all(|(x, y)| x == y)
                && (a.len() < b.len() && *last == b[init.len()]
                    || is_prefix_of(last, &b[init.len()]))
        }
    }
}

/// Cut `axes` before the first axis that overlaps `taken`, keeping the
/// part of that axis before the overlap when it is a proper sub-axis.
/// Returns whether anything was cut.
pub fn truncate_without_overlap(axes: &mut Vec<AxisRef>, taken: &[AxisRef], mesh: &Mesh) -> bool {
    let Some(i) = axes
        .iter()
        .position(|a| taken.iter().any(|t| overlaps(a, t)))
    else {
        return false;
    };
    let a = axes[i].clone();
    axes.truncate(i);
    let n = mesh.axis_size(&a.name).unwrap_or(1);
    let (start, end) = match a.sub {
        Some(s) => (s.pre_size, s.pre_size * s.size),
        None => (1, n),
    };
    // The first overlapping boundary of `taken` inside `a`.
    let cut = taken
        .iter()
        .filter(|t| t.name == a.name)
        .map(|t| t.pre_size())
        .filter(|&p| p > start && p < end)
        .min();
    let first_overlap_starts_inside = taken
        .iter()
        .filter(|t| t.name == a.name && overlaps(&a, t))
        .all(|t| t.pre_size() > start);
    if let Some(cut) = cut.filter(|_| first_overlap_starts_inside) {
        if cut % start == 0 && cut / start > 1 {
            let size = cut / start;
            axes.push(if start == 1 && size == n {
                AxisRef::full(a.name.clone())
            } else {
                AxisRef::sub(a.name.clone(), start, size)
            });
        }
    }
    true
}

/// Drop axes that no tensor could hold, so that every tensor's blocks are
/// the blocks of its factors and the op can run on local blocks:
/// - a factor may be sharded only if the factors before it in each
///   dimension are fully sharded (else its blocks would be strided);
/// - a factor sharded non-divisibly (padded) must, in every tensor, be
///   the minor-most factor of its dimension *and* the only factor of size
///   greater than 1 there. A dimension pads at its end (`6` rows on 4
///   devices: blocks of 2, the last one padding), while a padded factor
///   after a sharded major one pads every major index (`2x3` rows on
///   `[{"a":(1)2}, {"a":(2)2}]`: each row of 3 padded to 4), so a local
///   reshape between the two would put elements on the wrong devices.
///   Shardy propagates such shardings (XLA then moves data for the
///   reshape); the partitioner computes with the padded factor unsharded
///   and reshards around the op;
/// - a factor that no result has and that is not a reduction (the size-1
///   dimension a reshape drops or a broadcast expands) stays unsharded:
///   sharded, some devices would hold only padding, and nothing would
///   bring the real element to them;
/// - an axis that a later factor repeats is dropped.
pub fn make_valid(rule: &OpShardingRule, common: &mut AxesPerFactor, mesh: &Mesh) {
    // Disjointness: keep the first use of an axis.
    let mut used: Vec<AxisRef> = Vec::new();
    for axes in common.iter_mut() {
        if let Some(i) = axes
            .iter()
            .position(|a| used.iter().any(|u| overlaps(a, u)))
        {
            axes.truncate(i);
        }
        used.extend(axes.iter().cloned());
    }
    for (f, axes) in common.iter_mut().enumerate() {
        if f < rule.num_factors()
            && !rule.is_reduction(f)
            && !rule.results.iter().any(|m| m.contains_factor(f))
        {
            axes.clear();
        }
    }
    loop {
        let mut changed = false;
        for (_, m) in rule.tensors() {
            for d in &m.dims {
                let mut blocked = false;
                for (position, &f) in d.factors.iter().enumerate() {
                    let alone = d.factors[..position]
                        .iter()
                        .all(|&g| rule.factor_size(g) == 1);
                    let Some(axes) = common.get_mut(f) else {
                        continue;
                    };
                    if blocked {
                        if !axes.is_empty() {
                            axes.clear();
                            changed = true;
                        }
                        continue;
                    }
                    let size = rule.factor_size(f);
                    let shards = size_of(axes, mesh);
                    let may_pad = d.is_minor_most(f) && alone;
                    if !may_pad && size % shards.max(1) != 0 {
                        // Keep the longest prefix that divides.
                        while !axes.is_empty() && size % size_of(axes, mesh).max(1) != 0 {
                            axes.pop();
                        }
                        changed = true;
                    }
                    if size_of(axes, mesh) < size {
                        blocked = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_the_free_major_part() {
        let mesh = Mesh::new(&[("x", 8), ("y", 2)]);
        let mut axes = vec![AxisRef::full("y"), AxisRef::full("x")];
        assert!(truncate_without_overlap(
            &mut axes,
            &[AxisRef::sub("x", 4, 2)],
            &mesh
        ));
        assert_eq!(axes, vec![AxisRef::full("y"), AxisRef::sub("x", 1, 4)]);
        let mut axes = vec![AxisRef::full("x")];
        assert!(truncate_without_overlap(
            &mut axes,
            &[AxisRef::full("x")],
            &mesh
        ));
        assert!(axes.is_empty());
        let mut axes = vec![AxisRef::full("y")];
        assert!(!truncate_without_overlap(
            &mut axes,
            &[AxisRef::full("x")],
            &mesh
        ));
    }

    #[test]
    fn strict_prefixes() {
        let x = AxisRef::full("x");
        let y = AxisRef::full("y");
        assert!(is_strict_prefix(&[], std::slice::from_ref(&x)));
        assert!(is_strict_prefix(
            std::slice::from_ref(&x),
            &[x.clone(), y.clone()]
        ));
        assert!(is_strict_prefix(
            &[AxisRef::sub("x", 1, 2)],
            std::slice::from_ref(&x)
        ));
        assert!(!is_strict_prefix(
            std::slice::from_ref(&x),
            std::slice::from_ref(&x)
        ));
        assert!(!is_strict_prefix(std::slice::from_ref(&y), &[x, y.clone()]));
    }
}
