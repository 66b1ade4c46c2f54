//! Relations between axis references that projection and propagation need:
//! containment, prefixes, overlap and merging of sub-axes (Shardy's
//! `AxisRefAttr` helpers).
//!
//! A full axis `"x"` of size `n` is the sub-axis `"x":(1)n`; sub-axis
//! `"x":(m)k` covers the pre-size range `[m, m*k)`. Sizes of full axes come
//! from the mesh; an axis the mesh lacks is reported, never assumed.

use crate::sharding::validate::sort_in_mesh_order;
use crate::sharding::{AxisRef, Mesh, SubAxis};

/// An axis name that the mesh does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("axis \"{0}\" is not in the mesh")]
pub struct UnknownAxis(pub String);

/// The size of `axis` in `mesh`.
pub fn axis_size(axis: &AxisRef, mesh: &Mesh) -> Result<i64, UnknownAxis> {
    axis.size(mesh)
        .ok_or_else(|| UnknownAxis(axis.name.clone()))
}

/// The pre-size after `axis`: `m*k` for `"x":(m)k`, the axis size for a
/// full axis.
pub fn next_pre_size(axis: &AxisRef, mesh: &Mesh) -> Result<i64, UnknownAxis> {
    Ok(axis.pre_size() * axis_size(axis, mesh)?)
}

/// Whether `outer` covers all of `inner` (same axis, range included).
pub fn contains(outer: &AxisRef, inner: &AxisRef) -> bool {
    if outer.name != inner.name {
        return false;
    }
    match (outer.sub, inner.sub) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(o), Some(i)) => {
            o.pre_size <= i.pre_size && o.pre_size * o.size >= i.pre_size * i.size
        }
    }
}

/// Whether `first` is a prefix of `second`: contained in it and starting
/// at the same place (`"x":(1)2` is a prefix of `"x"`).
pub fn is_prefix_of(first: &AxisRef, second: &AxisRef) -> bool {
    contains(second, first) && first.pre_size() == second.pre_size()
}

/// Whether the two references share any part of an axis.
pub fn overlaps(a: &AxisRef, b: &AxisRef) -> bool {
    if a.name != b.name {
        return false;
    }
    match (a.sub, b.sub) {
        (Some(a), Some(b)) => a.pre_size < b.pre_size * b.size && b.pre_size < a.pre_size * a.size,
        _ => true,
    }
}

/// Whether the two references can appear in one sharding (Shardy's
/// `AxisRefAttr::canCoexist`): other axes and full axes always can; two
/// sub-axes of one axis can when both come from one way of splitting it
/// into a mixed radix, e.g. on `"a"=6` `"a":(1)2` (the major 2 of 2x3)
/// and `"a":(3)2` (the minor 2 of 3x2) cannot: no split of 6 has both.
pub fn can_coexist(a: &AxisRef, b: &AxisRef) -> bool {
    let (Some(x), Some(y)) = (a.sub, b.sub) else {
        return true;
    };
    if a.name != b.name {
        return true;
    }
    let (min_pre, max_pre) = (x.pre_size.min(y.pre_size), x.pre_size.max(y.pre_size));
    let (x_next, y_next) = (x.pre_size * x.size, y.pre_size * y.size);
    let (min_next, max_next) = (x_next.min(y_next), x_next.max(y_next));
    if min_next > max_pre {
        // They overlap: the shared part and both rests must be pieces of
        // one split.
        min_next % max_pre == 0 && max_pre % min_pre == 0 && max_next % min_next == 0
    } else {
        // Disjoint: the gap between them must be a piece too.
        max_pre % min_next == 0
    }
}

/// Whether `major` is immediately followed by `minor` within one axis, so
/// that the two can be written as a single sub-axis.
pub fn can_merge(major: &AxisRef, minor: &AxisRef) -> bool {
    match (major.sub, minor.sub) {
        (Some(a), Some(b)) => major.name == minor.name && a.pre_size * a.size == b.pre_size,
        _ => false,
    }
}

/// `major` and `minor` as one reference (the full axis when they cover
/// it). Callers check `can_merge` first.
pub fn merge(major: &AxisRef, minor: &AxisRef, mesh: &Mesh) -> Result<AxisRef, UnknownAxis> {
    let pre_size = major.pre_size();
    let size = axis_size(major, mesh)? * axis_size(minor, mesh)?;
    if pre_size == 1 && axis_size(&AxisRef::full(major.name.clone()), mesh)? == size {
        Ok(AxisRef::full(major.name.clone()))
    } else {
        Ok(AxisRef {
            name: major.name.clone(),
            sub: Some(SubAxis { pre_size, size }),
        })
    }
}

/// Append `axis` to `axes`, merging it into the last one when they are
/// consecutive parts of one axis.
pub fn push_or_merge(
    axes: &mut Vec<AxisRef>,
    axis: AxisRef,
    mesh: &Mesh,
) -> Result<(), UnknownAxis> {
    if let Some(last) = axes.last_mut() {
        if can_merge(last, &axis) {
            *last = merge(last, &axis, mesh)?;
            return Ok(());
        }
    }
    axes.push(axis);
    Ok(())
}

/// `axes` as a set in canonical form: in mesh order, with consecutive
/// parts of one axis merged (`"a":(1)2, "a":(2)2` on an axis of 4 is
/// `"a"`), as a sharding's `replicated` and `unreduced` must be written.
/// Axes collected from several factors (a reduction over two dimensions
/// sharded on sub-axes of one axis) come in any order and split.
pub fn sorted_and_merged(axes: &[AxisRef], mesh: &Mesh) -> Result<Vec<AxisRef>, UnknownAxis> {
    let mut sorted = axes.to_vec();
    sort_in_mesh_order(mesh, &mut sorted);
    let mut out: Vec<AxisRef> = Vec::with_capacity(sorted.len());
    for a in sorted {
        push_or_merge(&mut out, a, mesh)?;
    }
    Ok(out)
}

/// The greatest common prefix of two references: the shorter one when it
/// is a prefix of the other, `None` when neither is a prefix of the other.
pub fn greatest_common_prefix(a: &AxisRef, b: &AxisRef) -> Option<AxisRef> {
    if is_prefix_of(a, b) {
        Some(a.clone())
    } else if is_prefix_of(b, a) {
        Some(b.clone())
    } else {
        None
    }
}

/// The greatest common prefix of two axis lists: equal axes, then possibly
/// a common prefix of the first differing pair.
pub fn greatest_common_prefix_of_lists(a: &[AxisRef], b: &[AxisRef]) -> Vec<AxisRef> {
    let mut out = Vec::new();
    for (x, y) in a.iter().zip(b) {
        if x == y {
            out.push(x.clone());
            continue;
        }
        if let Some(p) = greatest_common_prefix(x, y) {
            out.push(p);
        }
        break;
    }
    out
}

/// How one axis list relates to another (Shardy's `PrefixStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixStatus {
    Equal,
    /// The first list is a strict prefix of the second (its last axis may
    /// be a prefix of the second's axis at that position).
    StrictPrefix,
    NotAPrefix,
}

/// Compare `first` with `second` as prefixes.
pub fn prefix_status(first: &[AxisRef], second: &[AxisRef]) -> PrefixStatus {
    let Some((last, init)) = first.split_last() else {
        return if second.is_empty() {
            PrefixStatus::Equal
        } else {
            PrefixStatus::StrictPrefix
        };
    };
    if first.len() > second.len() || init.iter().zip(second).any(|(a, b)| a != b) {
        return PrefixStatus::NotAPrefix;
    }
    let other = &second[init.len()];
    if first.len() == second.len() && last == other {
        PrefixStatus::Equal
    } else if is_prefix_of(last, other) {
        PrefixStatus::StrictPrefix
    } else {
        PrefixStatus::NotAPrefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Mesh {
        Mesh::new(&[("x", 8), ("y", 2)])
    }

    #[test]
    fn axis_sets_sort_and_merge_sub_axes() {
        let m = mesh();
        let axes = [
            AxisRef::full("y"),
            AxisRef::sub("x", 2, 2),
            AxisRef::sub("x", 1, 2),
        ];
        assert_eq!(
            sorted_and_merged(&axes, &m).expect("known axes"),
            vec![AxisRef::sub("x", 1, 4), AxisRef::full("y")]
        );
        let whole = [
            AxisRef::sub("x", 4, 2),
            AxisRef::sub("x", 1, 2),
            AxisRef::sub("x", 2, 2),
        ];
        assert_eq!(
            sorted_and_merged(&whole, &m).expect("known axes"),
            vec![AxisRef::full("x")]
        );
        // Parts that do not touch stay apart.
        let apart = [AxisRef::sub("x", 4, 2), AxisRef::sub("x", 1, 2)];
        assert_eq!(
            sorted_and_merged(&apart, &m).expect("known axes"),
            vec![AxisRef::sub("x", 1, 2), AxisRef::sub("x", 4, 2)]
        );
    }

    #[test]
    fn sub_axes_merge_into_the_full_axis() {
        let m = mesh();
        let mut axes = vec![AxisRef::sub("x", 1, 2)];
        push_or_merge(&mut axes, AxisRef::sub("x", 2, 2), &m).expect("known axis");
        assert_eq!(axes, vec![AxisRef::sub("x", 1, 4)]);
        push_or_merge(&mut axes, AxisRef::sub("x", 4, 2), &m).expect("known axis");
        assert_eq!(axes, vec![AxisRef::full("x")]);
        push_or_merge(&mut axes, AxisRef::full("y"), &m).expect("known axis");
        assert_eq!(axes.len(), 2);
    }

    #[test]
    fn prefixes_and_overlap() {
        let x = AxisRef::full("x");
        let x12 = AxisRef::sub("x", 1, 2);
        let x22 = AxisRef::sub("x", 2, 2);
        assert!(is_prefix_of(&x12, &x));
        assert!(!is_prefix_of(&x22, &x));
        assert!(contains(&x, &x22));
        assert!(!overlaps(&x12, &x22));
        assert!(overlaps(&AxisRef::sub("x", 1, 4), &x22));
        assert_eq!(
            greatest_common_prefix(&x, &AxisRef::sub("x", 1, 4)),
            Some(AxisRef::sub("x", 1, 4))
        );
        assert_eq!(
            prefix_status(std::slice::from_ref(&x12), &[x.clone(), AxisRef::full("y")]),
            PrefixStatus::StrictPrefix
        );
        assert_eq!(
            prefix_status(&[x22], std::slice::from_ref(&x)),
            PrefixStatus::NotAPrefix
        );
        assert_eq!(prefix_status(&[], &[]), PrefixStatus::Equal);
        assert_eq!(
            greatest_common_prefix_of_lists(
                &[x.clone(), AxisRef::full("y")],
                std::slice::from_ref(&x)
            ),
            vec![x]
        );
    }

    #[test]
    fn coexistence_of_sub_axes() {
        let sub = |m, k| AxisRef::sub("a", m, k);
        // "a"=12: (1)2 and (2)3 split 12 as 2x3x2; (1)3 and (3)2 as 3x2x2.
        assert!(can_coexist(&sub(1, 2), &sub(2, 3)));
        assert!(can_coexist(&sub(1, 3), &sub(3, 2)));
        // (1)2 and (3)2: the gap [2, 3) is no piece of a split.
        assert!(!can_coexist(&sub(1, 2), &sub(3, 2)));
        // Overlapping (1)4 and (2)6: shared (2)2 and rests (1)2, (4)3 fit.
        assert!(can_coexist(&sub(1, 4), &sub(2, 6)));
        // (1)4 and (2)3: 4 is not a multiple of the shared start's split.
        assert!(!can_coexist(&sub(1, 4), &sub(2, 3)));
        // Full axes and other axes always coexist.
        assert!(can_coexist(&AxisRef::full("a"), &sub(3, 2)));
        assert!(can_coexist(&AxisRef::sub("b", 1, 2), &sub(3, 2)));
    }

    #[test]
    fn unknown_axis_is_an_error() {
        assert_eq!(
            axis_size(&AxisRef::full("q"), &mesh()),
            Err(UnknownAxis("q".into()))
        );
    }
}
