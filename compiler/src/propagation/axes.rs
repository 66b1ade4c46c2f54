//! Axis helpers that factor propagation needs on top of
//! [`crate::rules::axis_algebra`]: the largest prefix of an axis that avoids
//! other axes, sub-axis splitting by gcd, and total sizes.
//!
//! Every size lookup goes through the mesh and reports an unknown axis
//! instead of assuming one; propagation validates shardings first, so these
//! errors only surface for programs built in Rust with broken shardings.

use crate::rules::axis_algebra::{axis_size, can_coexist, overlaps, UnknownAxis};
use crate::sharding::{AxisRef, Mesh};

/// The largest prefix of `axis` that does not overlap `other` (Shardy's
/// `AxisRefAttr::getPrefixWithoutOverlap`): `axis` itself when they are
/// disjoint, `None` when `other` covers the start of `axis` or the two
/// cannot coexist in one sharding ([`can_coexist`]).
///
/// Overlap is decided as Shardy's `AxisRefAttr::overlaps` does: two
/// references to one axis overlap whenever either is the full axis. This
/// matters for axes of size 1, whose pre-size range `[1, 1)` is empty: as
/// a range it would overlap nothing, and the same axis could be handed to
/// two dimensions of one tensor.
pub fn prefix_without_overlap(
    axis: &AxisRef,
    other: &AxisRef,
    mesh: &Mesh,
) -> Result<Option<AxisRef>, UnknownAxis> {
    if !can_coexist(axis, other) {
        return Ok(None);
    }
    if !overlaps(axis, other) {
        return Ok(Some(axis.clone()));
    }
    // Both sizes must be known even where the answer does not need them,
    // so that a reference to an axis the mesh lacks is reported.
    axis_size(axis, mesh)?;
    axis_size(other, mesh)?;
    let start = axis.pre_size();
    let other_start = other.pre_size();
    if other_start <= start || other_start % start != 0 {
        return Ok(None);
    }
    Ok(Some(AxisRef::sub(
        axis.name.clone(),
        start,
        other_start / start,
    )))
}

/// The largest prefix of `axis` that overlaps none of `others`.
pub fn prefix_without_overlap_all<'a>(
    axis: &AxisRef,
    others: impl IntoIterator<Item = &'a AxisRef>,
    mesh: &Mesh,
) -> Result<Option<AxisRef>, UnknownAxis> {
    let mut result = axis.clone();
    for other in others {
        match prefix_without_overlap(&result, other, mesh)? {
            Some(r) => result = r,
            None => return Ok(None),
        }
    }
    Ok(Some(result))
}

/// The product of the sizes of `axes` (1 for none).
pub fn total_size(axes: &[AxisRef], mesh: &Mesh) -> Result<i64, UnknownAxis> {
    axes.iter()
        .try_fold(1i64, |acc, a| Ok(acc.saturating_mul(axis_size(a, mesh)?)))
}

/// The leading sub-axis of size `size` of `axis` (`"x":(m)size` for
/// `"x":(m)k`); `axis` itself when `size` is its whole size.
pub fn leading_sub_axis(axis: &AxisRef, size: i64, mesh: &Mesh) -> Result<AxisRef, UnknownAxis> {
    if axis_size(axis, mesh)? == size {
        return Ok(axis.clone());
    }
    Ok(AxisRef::sub(axis.name.clone(), axis.pre_size(), size))
}

pub fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Mesh {
        Mesh::new(&[("x", 8), ("y", 2)])
    }

    #[test]
    fn prefix_without_overlap_cuts_at_the_other_axis() {
        let m = mesh();
        let x = AxisRef::full("x");
        // "x":(4)2 starts at pre-size 4: "x" keeps its first 4.
        assert_eq!(
            prefix_without_overlap(&x, &AxisRef::sub("x", 4, 2), &m),
            Ok(Some(AxisRef::sub("x", 1, 4)))
        );
        // "x":(1)2 covers the start of "x": nothing is left.
        assert_eq!(
            prefix_without_overlap(&x, &AxisRef::sub("x", 1, 2), &m),
            Ok(None)
        );
        // Disjoint sub-axes and other names are untouched.
        let x12 = AxisRef::sub("x", 1, 2);
        assert_eq!(
            prefix_without_overlap(&x12, &AxisRef::sub("x", 2, 4), &m),
            Ok(Some(x12.clone()))
        );
        assert_eq!(
            prefix_without_overlap(&x12, &AxisRef::full("y"), &m),
            Ok(Some(x12))
        );
    }

    #[test]
    fn sub_axes_from_different_splits_block_each_other() {
        // On "a"=6, (1)2 is the major 2 of 2x3, (3)2 the minor 2 of 3x2.
        let m = Mesh::new(&[("a", 6)]);
        let major = AxisRef::sub("a", 1, 2);
        let minor = AxisRef::sub("a", 3, 2);
        assert_eq!(prefix_without_overlap(&minor, &major, &m), Ok(None));
        assert_eq!(prefix_without_overlap(&major, &minor, &m), Ok(None));
        // (1)2 and (2)3 are the two parts of 2x3.
        let rest = AxisRef::sub("a", 2, 3);
        assert_eq!(
            prefix_without_overlap(&rest, &major, &m),
            Ok(Some(rest.clone()))
        );
    }

    #[test]
    fn a_size_one_axis_overlaps_itself() {
        // Its pre-size range [1, 1) is empty, but it is still one axis.
        let m = Mesh::new(&[("a", 1), ("b", 2)]);
        let a = AxisRef::full("a");
        assert_eq!(prefix_without_overlap(&a, &a, &m), Ok(None));
        assert_eq!(
            prefix_without_overlap(&a, &AxisRef::full("b"), &m),
            Ok(Some(a.clone()))
        );
        assert_eq!(prefix_without_overlap_all(&a, [&a], &m), Ok(None));
    }

    #[test]
    fn sizes_and_gcd() {
        let m = mesh();
        assert_eq!(
            total_size(&[AxisRef::full("x"), AxisRef::full("y")], &m),
            Ok(16)
        );
        assert_eq!(gcd(12, 8), 4);
        assert_eq!(
            leading_sub_axis(&AxisRef::full("x"), 4, &m),
            Ok(AxisRef::sub("x", 1, 4))
        );
        assert!(total_size(&[AxisRef::full("q")], &m).is_err());
    }
}
