//! Sharding and mesh invariants (SPEC §1-§2), checked the way Shardy's
//! verifier checks them, with messages that say what to write instead.
//!
//! A sharding is checked in phases so that the most fundamental problem is
//! the one reported: first each axis reference on its own (known axis, sane
//! sub-axis sizes, not used twice), then sub-axes of one axis against each
//! other (no overlap), then each list's canonical form (adjacent sub-axes
//! merged, `replicated`/`unreduced` in mesh order).
//!
//! Following Shardy, `replicated={...}` and `unreduced={...}` written out of
//! mesh order are *rejected* rather than silently sorted: the text is the
//! program, and a printer must be able to reproduce it. [`sort_in_mesh_order`]
//! is the normalizer for code that builds these lists.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::sharding::mesh::Mesh;
use crate::sharding::tensor::{AxisRef, MeshRef, SubAxis, TensorSharding};

/// Where in a sharding an axis reference was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisPlace {
    /// The dimension sharding of tensor dimension `n`.
    Dim(usize),
    /// `replicated={...}`.
    Replicated,
    /// `unreduced={...}`.
    Unreduced,
}

impl fmt::Display for AxisPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisPlace::Dim(d) => write!(f, "dim {d}"),
            AxisPlace::Replicated => f.write_str("replicated"),
            AxisPlace::Unreduced => f.write_str("unreduced"),
        }
    }
}

/// `dims 0 and 1`, `twice in dim 0`, `dim 0 and replicated`.
fn two_places(a: AxisPlace, b: AxisPlace) -> String {
    match (a, b) {
        (AxisPlace::Dim(x), AxisPlace::Dim(y)) if x != y => format!("dims {x} and {y}"),
        _ if a == b => format!("twice in {a}"),
        _ => format!("{a} and {b}"),
    }
}

/// Which axis list must be in mesh order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisList {
    Replicated,
    Unreduced,
}

impl fmt::Display for AxisList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AxisList::Replicated => "replicated",
            AxisList::Unreduced => "unreduced",
        })
    }
}

/// A violated sharding or mesh invariant. Axes are carried as written
/// (`"x":(2)2`), so the message can be acted on without the source at hand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardingError {
    #[error("mesh {mesh} is not defined (meshes: {available})")]
    UnknownMesh { mesh: String, available: String },

    #[error("axis {axis} is not in mesh {mesh} (axes: {available})")]
    UnknownAxis {
        axis: String,
        mesh: String,
        available: String,
    },

    #[error("axis {axis} is used twice ({})", two_places(*.first, *.second))]
    DuplicateAxis {
        axis: String,
        first: AxisPlace,
        second: AxisPlace,
    },

    #[error(
        "{first} ({first_place}) and {second} ({second_place}) overlap: \
         they use the same part of axis \"{axis_name}\""
    )]
    OverlappingSubAxes {
        axis_name: String,
        first: String,
        first_place: AxisPlace,
        second: String,
        second_place: AxisPlace,
    },

    /// Sub-axes of one axis must be factors of one split of it: sorted by
    /// pre-size, each one's `pre_size*size` divides the next one's pre-size.
    /// Shardy's verifier does not check this, but without it the blocks do
    /// not tile the tensor (e.g. `"x":(1)2` and `"x":(3)2` on `"x"=6` give
    /// some block pairs 4 devices and others 2).
    #[error(
        "{first} and {second} are not parts of one split of axis \"{axis_name}\" \
         (size {axis_size}): {end} (where {first} ends) does not divide {start} \
         (where {second} starts)"
    )]
    IncompatibleSubAxes {
        axis_name: String,
        axis_size: i64,
        first: String,
        second: String,
        end: i64,
        start: i64,
    },

    #[error("adjacent sub-axes {first}, {second} in {place} must be merged: write {merged}")]
    NonMaximalSubAxes {
        first: String,
        second: String,
        place: AxisPlace,
        merged: String,
    },

    #[error("sub-axis {axis} has size {size}; a sub-axis must have size > 1")]
    SubAxisTooSmall { axis: String, size: i64 },

    #[error("sub-axis {axis} has pre-size {pre_size}; the pre-size must be at least 1")]
    SubAxisPreSizeTooSmall { axis: String, pre_size: i64 },

    #[error(
        "sub-axis {axis} does not fit axis \"{axis_name}\" of size {axis_size}: \
         pre-size * size = {next_pre_size} must divide {axis_size}"
    )]
    SubAxisNotDividing {
        axis: String,
        axis_name: String,
        axis_size: i64,
        next_pre_size: String,
    },

    #[error("sub-axis {axis} covers all of axis \"{axis_name}\" (size {axis_size}): write \"{axis_name}\"")]
    SubAxisIsFullAxis {
        axis: String,
        axis_name: String,
        axis_size: i64,
    },

    #[error("sharding has {dims} dimension shardings but the tensor has rank {rank}")]
    RankMismatch { dims: usize, rank: usize },

    #[error("dim {dim} is empty and closed but has priority p{priority}; a priority on {{}} has no effect, remove it")]
    PriorityOnEmptyClosedDim { dim: usize, priority: i64 },

    #[error("dim {dim} has negative priority p{priority}; priorities start at p0")]
    NegativePriority { dim: usize, priority: i64 },

    #[error("{list} axes {written} are not in mesh order: write {expected}")]
    NotInMeshOrder {
        list: AxisList,
        written: String,
        expected: String,
    },

    #[error(
        "mesh {mesh} is a single-device (maximal) mesh: its shardings must be \
         empty (`[]`, no replicated or unreduced axes)"
    )]
    MaximalShardingNotEmpty { mesh: String },

    #[error("axis \"{axis}\" appears twice in the mesh")]
    DuplicateMeshAxis { axis: String },

    #[error("mesh axis \"{axis}\" has size {size}; axis sizes must be at least 1")]
    MeshAxisSize { axis: String, size: i64 },

    #[error("the mesh has more devices than meshrun can count (product of axis sizes overflows)")]
    MeshTooLarge,

    #[error(
        "device_ids has {got} entries but the mesh has {expected} devices (product of axis sizes)"
    )]
    DeviceIdsLength { expected: i64, got: usize },

    #[error("device id {id} is negative; device ids must be non-negative")]
    NegativeDeviceId { id: i64 },

    #[error("device_ids must be a permutation of 0..{count}; sorted they are {sorted}")]
    DeviceIdsNotPermutation { count: usize, sorted: String },

    #[error("device_ids {ids} is the default order: omit device_ids")]
    DeviceIdsAreDefault { ids: String },

    #[error("dimension {dim} has size {size}; tensor dimensions cannot be negative")]
    NegativeDimSize { dim: usize, size: i64 },
}

impl ShardingError {
    /// A `Sharding` diagnostic at `pos` saying which tensor (`what`, e.g.
    /// `argument 0 (%arg0) of @main`) carries the invalid sharding.
    pub fn to_diagnostic(&self, pos: SrcPos, what: &str) -> Diagnostic {
        Diagnostic::new(
            DiagKind::Sharding,
            pos,
            format!("invalid sharding on {what}: {self}"),
        )
    }
}

impl From<ShardingError> for Diagnostic {
    /// Without context: position unknown, message as is. Prefer
    /// [`ShardingError::to_diagnostic`] where the tensor is known.
    fn from(e: ShardingError) -> Diagnostic {
        Diagnostic::new(DiagKind::Sharding, SrcPos::UNKNOWN, e.to_string())
    }
}

pub(crate) fn join<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `{"x", "y":(1)2}` as written in the text.
fn braced(axes: &[AxisRef]) -> String {
    format!("{{{}}}", join(axes))
}

/// `@mesh` for a module mesh, `the inline mesh` for one written in place.
pub(crate) fn mesh_label(r: &MeshRef) -> String {
    match r {
        MeshRef::Symbol(s) => format!("@{s}"),
        MeshRef::Inline(_) => "the inline mesh".into(),
    }
}

/// A mesh with no axes and exactly one explicit device id: Shardy's
/// "maximal" mesh (the value lives on that one device).
pub fn is_maximal_mesh(mesh: &Mesh) -> bool {
    mesh.is_maximal()
}

/// Shardy's mesh order on axis references: by the axis's position in the
/// mesh, then (sub-axes of one axis) by pre-size and size. Unknown axes sort
/// last, by name.
pub fn mesh_order(mesh: &Mesh, a: &AxisRef, b: &AxisRef) -> Ordering {
    let pos = |r: &AxisRef| mesh.axis_index(&r.name).unwrap_or(usize::MAX);
    pos(a)
        .cmp(&pos(b))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| match (a.sub, b.sub) {
            (None, None) => Ordering::Equal,
            // A sub-axis and its full axis never coexist in a valid sharding;
            // Shardy puts the sub-axis first.
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => (x.pre_size, x.size).cmp(&(y.pre_size, y.size)),
        })
}

/// Sort `replicated`/`unreduced` axes into the order [`validate_sharding`]
/// requires.
pub fn sort_in_mesh_order(mesh: &Mesh, axes: &mut [AxisRef]) {
    axes.sort_by(|a, b| mesh_order(mesh, a, b));
}

/// Checks everything data placement relies on: distinct axis names, sizes
/// ≥ 1, a device count that fits in `i64`, and `device_ids` (if given) a
/// permutation of `0..N` (or one non-negative id for an axis-less mesh).
/// [`validate_mesh`] additionally rejects non-canonical text.
pub fn validate_mesh_structure(mesh: &Mesh) -> Result<(), ShardingError> {
    let mut seen = std::collections::HashSet::new();
    let mut count: i64 = 1;
    for a in &mesh.axes {
        if !seen.insert(a.name.as_str()) {
            return Err(ShardingError::DuplicateMeshAxis {
                axis: a.name.clone(),
            });
        }
        if a.size < 1 {
            return Err(ShardingError::MeshAxisSize {
                axis: a.name.clone(),
                size: a.size,
            });
        }
        count = count
            .checked_mul(a.size)
            .ok_or(ShardingError::MeshTooLarge)?;
    }
    let Some(ids) = &mesh.device_ids else {
        return Ok(());
    };
    if let Some(&id) = ids.iter().find(|&&id| id < 0) {
        return Err(ShardingError::NegativeDeviceId { id });
    }
    if ids.len() as i64 != count {
        return Err(ShardingError::DeviceIdsLength {
            expected: count,
            got: ids.len(),
        });
    }
    if mesh.axes.is_empty() {
        // A maximal mesh may name any one device.
        return Ok(());
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, &d)| d != i as i64) {
        return Err(ShardingError::DeviceIdsNotPermutation {
            count: ids.len(),
            sorted: format!("[{}]", join(&sorted)),
        });
    }
    Ok(())
}

/// All mesh invariants Shardy's verifier enforces: those of
/// [`validate_mesh_structure`], and `device_ids` must not spell out the
/// default order `0..N` (write no `device_ids` instead).
pub fn validate_mesh(mesh: &Mesh) -> Result<(), ShardingError> {
    validate_mesh_structure(mesh)?;
    if let Some(ids) = &mesh.device_ids {
        if !mesh.axes.is_empty() && ids.windows(2).all(|w| w[0] < w[1]) {
            return Err(ShardingError::DeviceIdsAreDefault {
                ids: format!("[{}]", join(ids)),
            });
        }
    }
    Ok(())
}

/// Checks one axis reference on its own: the axis exists and, for a
/// sub-axis, `"x":(m)k` has `m ≥ 1`, `k > 1`, `m*k | n` and `k < n`.
fn check_axis_ref(axis: &AxisRef, mesh: &Mesh, mesh_ref: &MeshRef) -> Result<(), ShardingError> {
    let Some(n) = mesh.axis_size(&axis.name) else {
        return Err(ShardingError::UnknownAxis {
            axis: axis.to_string(),
            mesh: mesh_label(mesh_ref),
            available: if mesh.axes.is_empty() {
                "none".into()
            } else {
                join(mesh.axes.iter().map(|a| format!("\"{}\"", a.name)))
            },
        });
    };
    let Some(SubAxis { pre_size, size }) = axis.sub else {
        return Ok(());
    };
    if pre_size < 1 {
        return Err(ShardingError::SubAxisPreSizeTooSmall {
            axis: axis.to_string(),
            pre_size,
        });
    }
    if size <= 1 {
        return Err(ShardingError::SubAxisTooSmall {
            axis: axis.to_string(),
            size,
        });
    }
    let next = pre_size.checked_mul(size);
    let divides = matches!(next, Some(next) if n % next == 0);
    if !divides {
        return Err(ShardingError::SubAxisNotDividing {
            axis: axis.to_string(),
            axis_name: axis.name.clone(),
            axis_size: n,
            next_pre_size: next.map_or_else(|| format!("{pre_size}*{size}"), |v| v.to_string()),
        });
    }
    if size == n {
        return Err(ShardingError::SubAxisIsFullAxis {
            axis: axis.to_string(),
            axis_name: axis.name.clone(),
            axis_size: n,
        });
    }
    Ok(())
}

/// Every list of the sharding with its place, in checking order.
fn lists(sharding: &TensorSharding) -> Vec<(AxisPlace, &[AxisRef])> {
    let mut out: Vec<(AxisPlace, &[AxisRef])> = sharding
        .dims
        .iter()
        .enumerate()
        .map(|(i, d)| (AxisPlace::Dim(i), d.axes.as_slice()))
        .collect();
    out.push((AxisPlace::Replicated, &sharding.replicated));
    out.push((AxisPlace::Unreduced, &sharding.unreduced));
    out
}

/// The interval `[pre_size, pre_size*size)` of an axis of size `n` that a
/// reference covers, in "pre-size" units.
fn span(axis: &AxisRef, n: i64) -> (i64, i64) {
    match axis.sub {
        Some(s) => (s.pre_size, s.pre_size * s.size),
        None => (1, n),
    }
}

/// `"x":(m)k` followed by `"x":(m*k)l` in one list: Shardy requires them to be
/// written as one (sub-)axis.
fn merged(a: &AxisRef, b: &AxisRef, mesh: &Mesh) -> Option<AxisRef> {
    let (sa, sb) = (a.sub?, b.sub?);
    if a.name != b.name || sa.pre_size * sa.size != sb.pre_size {
        return None;
    }
    let size = sa.size * sb.size;
    if sa.pre_size == 1 && mesh.axis_size(&a.name) == Some(size) {
        Some(AxisRef::full(a.name.clone()))
    } else {
        Some(AxisRef::sub(a.name.clone(), sa.pre_size, size))
    }
}

/// Checks `sharding` against `mesh` for a tensor of rank `rank`. The mesh
/// itself is not checked (see [`validate_mesh`]).
pub fn validate_sharding(
    sharding: &TensorSharding,
    mesh: &Mesh,
    rank: usize,
) -> Result<(), ShardingError> {
    if is_maximal_mesh(mesh) {
        // Shardy: a sharding on a single-device mesh says "run there"; it has
        // no dimension shardings whatever the tensor's rank.
        if !sharding.dims.is_empty()
            || !sharding.replicated.is_empty()
            || !sharding.unreduced.is_empty()
        {
            return Err(ShardingError::MaximalShardingNotEmpty {
                mesh: mesh_label(&sharding.mesh),
            });
        }
        return Ok(());
    }
    if sharding.dims.len() != rank {
        return Err(ShardingError::RankMismatch {
            dims: sharding.dims.len(),
            rank,
        });
    }
    for (i, d) in sharding.dims.iter().enumerate() {
        if let Some(p) = d.priority {
            if p < 0 {
                return Err(ShardingError::NegativePriority {
                    dim: i,
                    priority: p,
                });
            }
            if d.is_closed && d.axes.is_empty() {
                return Err(ShardingError::PriorityOnEmptyClosedDim {
                    dim: i,
                    priority: p,
                });
            }
        }
    }

    let lists = lists(sharding);

    // Phase 1: each reference on its own, and no reference twice.
    let mut first_seen: HashMap<&AxisRef, AxisPlace> = HashMap::new();
    for &(place, axes) in &lists {
        for axis in axes {
            check_axis_ref(axis, mesh, &sharding.mesh)?;
            if let Some(&first) = first_seen.get(axis) {
                return Err(ShardingError::DuplicateAxis {
                    axis: axis.to_string(),
                    first,
                    second: place,
                });
            }
            first_seen.insert(axis, place);
        }
    }

    // Phase 2: references to one axis cover disjoint parts of one split of
    // it (see `IncompatibleSubAxes`).
    let mut by_axis: HashMap<&str, Vec<(&AxisRef, AxisPlace)>> = HashMap::new();
    for &(place, axes) in &lists {
        for axis in axes {
            by_axis.entry(&axis.name).or_default().push((axis, place));
        }
    }
    let mut names: Vec<&str> = by_axis.keys().copied().collect();
    names.sort_by_key(|n| mesh.axis_index(n));
    for name in names {
        let n = mesh.axis_size(name).unwrap_or(1);
        let Some(refs) = by_axis.get_mut(name) else {
            continue;
        };
        refs.sort_by_key(|(a, _)| span(a, n));
        for w in refs.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            if span(a, n).1 > span(b, n).0 {
                return Err(ShardingError::OverlappingSubAxes {
                    axis_name: name.to_string(),
                    first: a.to_string(),
                    first_place: pa,
                    second: b.to_string(),
                    second_place: pb,
                });
            }
            let (end, start) = (span(a, n).1, span(b, n).0);
            if start % end != 0 {
                return Err(ShardingError::IncompatibleSubAxes {
                    axis_name: name.to_string(),
                    axis_size: n,
                    first: a.to_string(),
                    second: b.to_string(),
                    end,
                    start,
                });
            }
        }
    }

    // Phase 3: canonical form of each list.
    for &(place, axes) in &lists {
        for w in axes.windows(2) {
            if let Some(m) = merged(&w[0], &w[1], mesh) {
                return Err(ShardingError::NonMaximalSubAxes {
                    first: w[0].to_string(),
                    second: w[1].to_string(),
                    place,
                    merged: m.to_string(),
                });
            }
        }
    }
    for (list, axes) in [
        (AxisList::Replicated, &sharding.replicated),
        (AxisList::Unreduced, &sharding.unreduced),
    ] {
        let in_order = axes
            .windows(2)
            .all(|w| mesh_order(mesh, &w[0], &w[1]) == Ordering::Less);
        if !in_order {
            let mut expected = axes.clone();
            sort_in_mesh_order(mesh, &mut expected);
            return Err(ShardingError::NotInMeshOrder {
                list,
                written: braced(axes),
                expected: braced(&expected),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharding::tensor::DimSharding;

    fn full(n: &str) -> AxisRef {
        AxisRef::full(n)
    }

    fn sub(n: &str, m: i64, k: i64) -> AxisRef {
        AxisRef::sub(n, m, k)
    }

    fn sharding(dims: Vec<Vec<AxisRef>>) -> TensorSharding {
        TensorSharding::new("mesh", dims.into_iter().map(DimSharding::closed).collect())
    }

    fn mesh() -> Mesh {
        Mesh::new(&[("x", 8), ("y", 4), ("z", 2)])
    }

    fn check(s: &TensorSharding) -> Result<(), ShardingError> {
        validate_sharding(s, &mesh(), s.dims.len())
    }

    #[test]
    fn seed_examples_are_valid() {
        let m = Mesh::new(&[("x", 2), ("y", 8), ("z", 2)]);
        let mut s = sharding(vec![vec![full("x")], vec![sub("y", 2, 2)]]);
        s.replicated = vec![sub("y", 1, 2)];
        assert_eq!(validate_sharding(&s, &m, 2), Ok(()));
        let s = sharding(vec![vec![full("x")], vec![full("z"), full("y")]]);
        assert_eq!(validate_sharding(&s, &m, 2), Ok(()));
        // Minor-then-major sub-axes of one axis are a valid (transposed) order.
        let s = sharding(vec![vec![sub("y", 4, 2), sub("y", 1, 2)]]);
        assert_eq!(validate_sharding(&s, &m, 1), Ok(()));
    }

    #[test]
    fn unknown_axis_names_the_mesh_and_its_axes() {
        let e = check(&sharding(vec![vec![full("q")]])).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"axis "q" is not in mesh @mesh (axes: "x", "y", "z")"#
        );
    }

    #[test]
    fn axis_used_twice_says_where() {
        let e = check(&sharding(vec![vec![full("x")], vec![full("x")]])).unwrap_err();
        assert_eq!(e.to_string(), r#"axis "x" is used twice (dims 0 and 1)"#);
        let e = check(&sharding(vec![vec![full("y"), full("y")]])).unwrap_err();
        assert_eq!(e.to_string(), r#"axis "y" is used twice (twice in dim 0)"#);
        let mut s = sharding(vec![vec![sub("x", 2, 2)]]);
        s.unreduced = vec![sub("x", 2, 2)];
        assert_eq!(
            check(&s).unwrap_err().to_string(),
            r#"axis "x":(2)2 is used twice (dim 0 and unreduced)"#
        );
    }

    #[test]
    fn overlapping_sub_axes_and_full_axis_with_sub_axis() {
        let e = check(&sharding(vec![vec![sub("x", 1, 4)], vec![sub("x", 2, 4)]])).unwrap_err();
        assert!(matches!(e, ShardingError::OverlappingSubAxes { .. }), "{e}");
        assert!(e
            .to_string()
            .contains(r#""x":(1)4 (dim 0) and "x":(2)4 (dim 1) overlap"#));
        let mut s = sharding(vec![vec![full("y")]]);
        s.replicated = vec![sub("y", 2, 2)];
        assert!(matches!(
            check(&s),
            Err(ShardingError::OverlappingSubAxes { .. })
        ));
    }

    #[test]
    fn sub_axes_of_one_axis_come_from_one_split() {
        let m = Mesh::new(&[("x", 6), ("y", 12)]);
        let s = sharding(vec![vec![sub("x", 1, 2)], vec![sub("x", 3, 2)]]);
        let e = validate_sharding(&s, &m, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#""x":(1)2 and "x":(3)2 are not parts of one split of axis "x" (size 6): 2 (where "x":(1)2 ends) does not divide 3 (where "x":(3)2 starts)"#
        );
        // 12 = 2 * 3 * 2: "y":(1)2 and "y":(6)2 leave "y":(2)3 unused.
        let s = sharding(vec![vec![sub("y", 1, 2)], vec![sub("y", 6, 2)]]);
        assert_eq!(validate_sharding(&s, &m, 2), Ok(()));
        let s = sharding(vec![vec![sub("y", 1, 3)], vec![sub("y", 6, 2)]]);
        assert_eq!(validate_sharding(&s, &m, 2), Ok(()));
        // 12 = 4 * ? * 2 has no solution.
        let s = sharding(vec![vec![sub("y", 1, 4)], vec![sub("y", 6, 2)]]);
        assert!(matches!(
            validate_sharding(&s, &m, 2),
            Err(ShardingError::IncompatibleSubAxes {
                end: 4,
                start: 6,
                ..
            })
        ));
    }

    #[test]
    fn adjacent_sub_axes_must_be_merged() {
        let e = check(&sharding(vec![vec![sub("x", 1, 2), sub("x", 2, 2)]])).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"adjacent sub-axes "x":(1)2, "x":(2)2 in dim 0 must be merged: write "x":(1)4"#
        );
        let e = check(&sharding(vec![vec![sub("x", 1, 2), sub("x", 2, 4)]])).unwrap_err();
        assert!(e.to_string().ends_with(r#"write "x""#), "{e}");
        let mut s = sharding(vec![vec![]]);
        s.replicated = vec![sub("x", 1, 2), sub("x", 2, 2)];
        assert!(matches!(
            check(&s),
            Err(ShardingError::NonMaximalSubAxes {
                place: AxisPlace::Replicated,
                ..
            })
        ));
        // Not adjacent: fine.
        let s = sharding(vec![vec![sub("x", 1, 2), full("y"), sub("x", 2, 2)]]);
        assert_eq!(check(&s), Ok(()));
    }

    #[test]
    fn sub_axis_sizes() {
        let bad = |a: AxisRef| check(&sharding(vec![vec![a]])).unwrap_err();
        assert!(matches!(
            bad(sub("x", 1, 1)),
            ShardingError::SubAxisTooSmall { size: 1, .. }
        ));
        assert!(matches!(
            bad(sub("x", 0, 2)),
            ShardingError::SubAxisPreSizeTooSmall { .. }
        ));
        let e = bad(sub("x", 3, 2));
        assert_eq!(
            e.to_string(),
            r#"sub-axis "x":(3)2 does not fit axis "x" of size 8: pre-size * size = 6 must divide 8"#
        );
        assert!(matches!(
            bad(sub("x", 4, 4)),
            ShardingError::SubAxisNotDividing { .. }
        ));
        assert!(matches!(
            bad(sub("x", i64::MAX, 2)),
            ShardingError::SubAxisNotDividing { .. }
        ));
        assert_eq!(
            bad(sub("x", 1, 8)).to_string(),
            r#"sub-axis "x":(1)8 covers all of axis "x" (size 8): write "x""#
        );
    }

    #[test]
    fn rank_and_priorities() {
        let s = sharding(vec![vec![full("x")]]);
        assert_eq!(
            validate_sharding(&s, &mesh(), 2),
            Err(ShardingError::RankMismatch { dims: 1, rank: 2 })
        );
        let mut s = sharding(vec![vec![], vec![full("x")]]);
        s.dims[1].priority = Some(1);
        assert_eq!(check(&s), Ok(()));
        s.dims[0].priority = Some(0);
        assert_eq!(
            check(&s),
            Err(ShardingError::PriorityOnEmptyClosedDim {
                dim: 0,
                priority: 0
            })
        );
        // An open empty dim may carry a priority.
        s.dims[0].is_closed = false;
        assert_eq!(check(&s), Ok(()));
        s.dims[1].priority = Some(-1);
        assert!(matches!(
            check(&s),
            Err(ShardingError::NegativePriority { dim: 1, .. })
        ));
    }

    #[test]
    fn replicated_and_unreduced_must_be_in_mesh_order() {
        let mut s = sharding(vec![vec![]]);
        s.replicated = vec![sub("y", 2, 2), full("x"), sub("z", 1, 1)];
        // The bad sub-axis is reported before the order.
        assert!(matches!(
            check(&s),
            Err(ShardingError::SubAxisTooSmall { .. })
        ));
        s.replicated = vec![full("z"), full("x")];
        assert_eq!(
            check(&s).unwrap_err().to_string(),
            r#"replicated axes {"z", "x"} are not in mesh order: write {"x", "z"}"#
        );
        s.replicated = vec![full("x"), sub("y", 2, 2), sub("y", 1, 2)];
        let e = check(&s).unwrap_err();
        assert!(
            e.to_string().contains(r#"write {"x", "y":(1)2, "y":(2)2}"#),
            "{e}"
        );
        s.replicated = vec![];
        s.unreduced = vec![full("y"), full("x")];
        assert!(matches!(
            check(&s),
            Err(ShardingError::NotInMeshOrder {
                list: AxisList::Unreduced,
                ..
            })
        ));
        let mut axes = vec![full("z"), sub("y", 2, 2), full("x"), sub("y", 1, 2)];
        sort_in_mesh_order(&mesh(), &mut axes);
        assert_eq!(
            axes,
            vec![full("x"), sub("y", 1, 2), sub("y", 2, 2), full("z")]
        );
    }

    #[test]
    fn maximal_mesh_shardings_are_empty() {
        let m = Mesh::new(&[]).with_device_ids(vec![3]);
        assert_eq!(validate_mesh(&m), Ok(()));
        assert_eq!(validate_sharding(&sharding(vec![]), &m, 2), Ok(()));
        assert!(matches!(
            validate_sharding(&sharding(vec![vec![], vec![]]), &m, 2),
            Err(ShardingError::MaximalShardingNotEmpty { .. })
        ));
    }

    #[test]
    fn mesh_invariants() {
        let dup = Mesh::new(&[("a", 2), ("b", 2), ("a", 4)]);
        assert_eq!(
            validate_mesh(&dup),
            Err(ShardingError::DuplicateMeshAxis { axis: "a".into() })
        );
        assert!(matches!(
            validate_mesh(&Mesh::new(&[("a", 2), ("b", 0)])),
            Err(ShardingError::MeshAxisSize { size: 0, .. })
        ));
        assert_eq!(validate_mesh(&Mesh::new(&[("a", 1)])), Ok(()));
        assert!(matches!(
            validate_mesh(&Mesh::new(&[("a", i64::MAX), ("b", 2)])),
            Err(ShardingError::MeshTooLarge)
        ));
        let m = Mesh::new(&[("a", 2), ("b", 2)]);
        assert_eq!(
            validate_mesh(&m.clone().with_device_ids(vec![0, 2, 1, 3, 4, 5])),
            Err(ShardingError::DeviceIdsLength {
                expected: 4,
                got: 6
            })
        );
        assert_eq!(
            validate_mesh(&m.clone().with_device_ids(vec![1, 1, 2, 3]))
                .unwrap_err()
                .to_string(),
            "device_ids must be a permutation of 0..4; sorted they are [1, 1, 2, 3]"
        );
        assert!(matches!(
            validate_mesh(&m.clone().with_device_ids(vec![0, -1, 2, 3])),
            Err(ShardingError::NegativeDeviceId { id: -1 })
        ));
        let iota = m.clone().with_device_ids(vec![0, 1, 2, 3]);
        assert!(matches!(
            validate_mesh(&iota),
            Err(ShardingError::DeviceIdsAreDefault { .. })
        ));
        assert_eq!(validate_mesh_structure(&iota), Ok(()));
        assert_eq!(validate_mesh(&m.with_device_ids(vec![3, 2, 1, 0])), Ok(()));
        assert!(matches!(
            validate_mesh(&Mesh::new(&[]).with_device_ids(vec![1, 0])),
            Err(ShardingError::DeviceIdsLength {
                expected: 1,
                got: 2
            })
        ));
    }

    #[test]
    fn diagnostic_carries_position_and_tensor() {
        let e = ShardingError::RankMismatch { dims: 1, rank: 2 };
        let d = e.to_diagnostic(SrcPos::new(3, 7), "result 0 of stablehlo.add");
        assert_eq!(d.kind, DiagKind::Sharding);
        assert_eq!((d.pos.line, d.pos.col), (3, 7));
        assert_eq!(
            d.message,
            "invalid sharding on result 0 of stablehlo.add: sharding has 1 dimension shardings but the tensor has rank 2"
        );
        let d: Diagnostic = e.into();
        assert!(!d.pos.is_known());
    }
}
