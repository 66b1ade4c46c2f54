//! Axis pieces: the unit the reshard planner moves around.
//!
//! A piece is a contiguous part of one mesh axis, `[pre, pre*size)` in the
//! axis's "pre-size" scale (SPEC §2: `"x":(m)k` is pre `m`, size `k`; a full
//! axis of size n is pre 1, size n). Two shardings are compared by first
//! splitting both into pieces cut at every boundary either of them uses
//! ([`align`]), so that any two pieces are either equal or disjoint; the
//! planner may split a piece further when it must fit a capacity. Adjacent
//! pieces of one axis are merged back ([`merged`]) when a sharding or a
//! collective is written out, which keeps every written sharding canonical.

use std::collections::{BTreeMap, BTreeSet};

use crate::sharding::{AxisRef, Mesh, ValidSharding};

/// `[pre, pre*size)` of mesh axis number `axis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Piece {
    pub axis: usize,
    pub pre: i64,
    pub size: i64,
}

impl Piece {
    pub fn end(self) -> i64 {
        self.pre * self.size
    }

    /// The major part of size `major` and the minor rest. `major` must
    /// divide `size`.
    pub fn split(self, major: i64) -> (Piece, Piece) {
        (
            Piece {
                size: major,
                ..self
            },
            Piece {
                pre: self.pre * major,
                size: self.size / major,
                ..self
            },
        )
    }
}

/// Pieces per tensor dimension, major to minor.
pub(crate) type DimPieces = Vec<Vec<Piece>>;

/// The piece of `a`, or `None` if the mesh has no such axis.
pub(crate) fn piece_of(mesh: &Mesh, a: &AxisRef) -> Option<Piece> {
    let axis = mesh.axis_index(&a.name)?;
    let n = mesh.axes[axis].size;
    Some(match a.sub {
        Some(s) => Piece {
            axis,
            pre: s.pre_size,
            size: s.size,
        },
        None => Piece {
            axis,
            pre: 1,
            size: n,
        },
    })
}

/// The pieces of every dimension of `s` (a rank-`rank` tensor; missing dims,
/// as on a maximal mesh, are unsharded). Size-1 pieces carry no data
/// placement and are dropped unless `keep_trivial`. `s` is checked, so
/// every axis it names is in its mesh.
pub(crate) fn pieces_of(s: ValidSharding<'_>, rank: usize, keep_trivial: bool) -> DimPieces {
    let mesh = s.mesh();
    (0..rank)
        .map(|d| {
            s.dims.get(d).map_or_else(Vec::new, |dim| {
                dim.axes
                    .iter()
                    .filter_map(|a| piece_of(mesh, a))
                    .filter(|p| keep_trivial || p.size > 1)
                    .collect()
            })
        })
        .collect()
}

/// The axis reference of a piece: the full axis if it covers it.
pub(crate) fn axis_ref(mesh: &Mesh, p: Piece) -> AxisRef {
    let a = &mesh.axes[p.axis];
    if p.pre == 1 && p.size == a.size {
        AxisRef::full(a.name.clone())
    } else {
        AxisRef::sub(a.name.clone(), p.pre, p.size)
    }
}

/// `pieces` as axis references, adjacent parts of one axis merged
/// (`"x":(1)2, "x":(2)2` on `"x"=4` becomes `"x"`).
pub(crate) fn merged(mesh: &Mesh, pieces: &[Piece]) -> Vec<AxisRef> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    for &p in pieces {
        if let Some(last) = out.last_mut() {
            if last.axis == p.axis && last.end() == p.pre {
                last.size *= p.size;
                continue;
            }
        }
        out.push(p);
    }
    out.into_iter().map(|p| axis_ref(mesh, p)).collect()
}

/// Product of the piece sizes: the number of shards they make.
pub(crate) fn product(pieces: &[Piece]) -> i64 {
    pieces.iter().map(|p| p.size).product()
}

/// Splits the pieces of `a` and `b` at every boundary any piece of the same
/// axis uses, so that afterwards two pieces are equal or disjoint. Fails if
/// the boundaries of one axis do not divide each other (`"x":(1)2` and
/// `"x":(1)3` on `"x"=6` share no common refinement into sub-axes).
pub(crate) fn align(a: &mut DimPieces, b: &mut DimPieces) -> bool {
    let mut cuts: BTreeMap<usize, BTreeSet<i64>> = BTreeMap::new();
    for p in a.iter().chain(b.iter()).flatten() {
        let c = cuts.entry(p.axis).or_default();
        c.insert(p.pre);
        c.insert(p.end());
    }
    for c in cuts.values() {
        let v: Vec<i64> = c.iter().copied().collect();
        if v.windows(2).any(|w| w[1] % w[0] != 0) {
            return false;
        }
    }
    for list in [a, b] {
        for dim in list.iter_mut() {
            *dim = dim
                .iter()
                .flat_map(|&p| split_at_cuts(p, &cuts[&p.axis]))
                .collect();
        }
    }
    true
}

fn split_at_cuts(p: Piece, cuts: &BTreeSet<i64>) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut start = p.pre;
    for &c in cuts.range(p.pre + 1..p.end()) {
        out.push(Piece {
            axis: p.axis,
            pre: start,
            size: c / start,
        });
        start = c;
    }
    out.push(Piece {
        axis: p.axis,
        pre: start,
        size: p.end() / start,
    });
    out
}

/// The parts of each mesh axis no piece of `used` covers, as pieces cut at
/// the boundaries `used` has; `None` if those boundaries do not divide each
/// other.
pub(crate) fn complement(mesh: &Mesh, used: &DimPieces) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    for (axis, a) in mesh.axes.iter().enumerate() {
        let mine: Vec<Piece> = used
            .iter()
            .flatten()
            .filter(|p| p.axis == axis)
            .copied()
            .collect();
        let mut cuts: BTreeSet<i64> = [1, a.size].into_iter().collect();
        for p in &mine {
            cuts.insert(p.pre);
            cuts.insert(p.end());
        }
        let v: Vec<i64> = cuts.into_iter().collect();
        if v.windows(2).any(|w| w[1] % w[0] != 0) {
            return None;
        }
        for w in v.windows(2) {
            let covered = mine.iter().any(|p| p.pre <= w[0] && w[1] <= p.end());
            if !covered && w[1] > w[0] {
                out.push(Piece {
                    axis,
                    pre: w[0],
                    size: w[1] / w[0],
                });
            }
        }
    }
    Some(out)
}

/// The block index per dimension that `device` holds when the tensor is
/// split by `pieces` on `mesh` (SPEC §2 shard index), or `None` if the mesh
/// has no such device.
pub(crate) fn block_index(mesh: &Mesh, pieces: &DimPieces, device: i64) -> Option<Vec<i64>> {
    let coords = mesh.coords_of_device(device)?;
    Some(
        pieces
            .iter()
            .map(|dim| {
                dim.iter().fold(0, |acc, p| {
                    let stride = mesh.axes[p.axis].size / p.end();
                    acc * p.size + (coords[p.axis] / stride) % p.size
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(axis: usize, pre: i64, size: i64) -> Piece {
        Piece { axis, pre, size }
    }

    #[test]
    fn align_splits_at_shared_boundaries() {
        let mut a = vec![vec![p(0, 1, 4)]];
        let mut b = vec![vec![p(0, 2, 4)]];
        assert!(align(&mut a, &mut b));
        assert_eq!(a, vec![vec![p(0, 1, 2), p(0, 2, 2)]]);
        assert_eq!(b, vec![vec![p(0, 2, 2), p(0, 4, 2)]]);
        let mut a = vec![vec![p(0, 1, 2)]];
        let mut b = vec![vec![p(0, 1, 3)]];
        assert!(!align(&mut a, &mut b));
    }

    #[test]
    fn merge_and_complement() {
        let m = Mesh::new(&[("x", 8), ("y", 2)]);
        assert_eq!(
            merged(&m, &[p(0, 1, 2), p(0, 2, 4), p(1, 1, 2)]),
            vec![AxisRef::full("x"), AxisRef::full("y")]
        );
        assert_eq!(
            merged(&m, &[p(0, 2, 2), p(0, 1, 2)]),
            vec![AxisRef::sub("x", 2, 2), AxisRef::sub("x", 1, 2)]
        );
        let used = vec![vec![p(0, 2, 2)]];
        assert_eq!(
            complement(&m, &used),
            Some(vec![p(0, 1, 2), p(0, 4, 2), p(1, 1, 2)])
        );
    }
}
