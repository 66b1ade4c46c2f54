//! A strided view copied into row-major order, tile by tile: a transpose's
//! result walked in order reads its source across rows (ndarray's
//! `as_standard_layout` does: a cache miss per element once the source
//! outgrows the cache, ~20% of an MLP training step). Copying tiles of
//! [`TILE`] x [`TILE`] keeps both the source lines and the result lines in
//! L1. A view contiguous along its last axis (a slice, a transpose that
//! keeps the last axis) is copied row by row.

use crate::tensor::HostElem;
use ndarray::{ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, ArrayViewMutD, Axis, Ix2};

/// Side of a tile, in elements: 16 source column pieces and 16 result row
/// pieces (a cache line of f32 each).
const TILE: usize = 16;

/// `src` (any strides) as a row-major array.
pub fn to_row_major<T: HostElem>(src: ArrayViewD<'_, T>) -> ArrayD<T> {
    let n = src.ndim();
    // The axis along which the source is contiguous, if the result walks
    // another one innermost.
    let inner = (0..n).find(|&d| src.strides()[d] == 1 && src.shape()[d] > 1);
    let (Some(j), false) = (inner, src.is_empty()) else {
        return src.as_standard_layout().into_owned();
    };
    if j + 1 == n {
        return copy_rows(src);
    }
    if src.shape()[n - 1] < 2 {
        return src.as_standard_layout().into_owned();
    }
    let mut out = crate::cpu::alloc::array::<T>(src.shape());
    // Both views with the source's contiguous axis and the result's
    // contiguous axis last, the other axes in order before them.
    let order: Vec<usize> = (0..n)
        .filter(|&d| d != j && d != n - 1)
        .chain([j, n - 1])
        .collect();
    let src = src.permuted_axes(order.clone());
    let dst = out.view_mut().permuted_axes(order);
    copy_nd(src, dst);
    out
}

/// The shortest contiguous source row worth a copy of its own; shorter
/// rows go element by element.
const MIN_ROW: usize = 8;

/// `src`, contiguous along its last axis (a slice, a transpose that keeps
/// the last axis), as a row-major array: one copy per row. Walking the
/// result element by element (`as_standard_layout` over a view of any
/// rank) spent a few nanoseconds on the index of each element, several
/// times the copy.
fn copy_rows<T: HostElem>(src: ArrayViewD<'_, T>) -> ArrayD<T> {
    let n = src.ndim();
    if src.shape()[n - 1] < MIN_ROW {
        return src.as_standard_layout().into_owned();
    }
    let mut out = crate::cpu::alloc::array::<T>(src.shape());
    // `Zip` steps over the rows by strides; the lanes' own iterator built
    // a dynamic index per row, which cost as much as a short row's copy.
    ndarray::Zip::from(out.lanes_mut(Axis(n - 1)))
        .and(src.lanes(Axis(n - 1)))
        .for_each(|mut o, row| match (o.as_slice_mut(), row.to_slice()) {
            (Some(o), Some(r)) => o.copy_from_slice(r),
            _ => o.assign(&row),
        });
    out
}

/// Copy `src` into `dst` (same shape, at least 2-D), the last two axes by
/// bands.
fn copy_nd<T: Copy>(src: ArrayViewD<'_, T>, mut dst: ArrayViewMutD<'_, T>) {
    if src.ndim() == 2 {
        match (
            src.into_dimensionality::<Ix2>(),
            dst.into_dimensionality::<Ix2>(),
        ) {
            (Ok(s2), Ok(d2)) => copy_tiles(s2, d2),
            _ => unreachable!("2-D views are 2-D"),
        }
        return;
    }
    for i in 0..src.shape()[0] {
        copy_nd(src.index_axis(Axis(0), i), dst.index_axis_mut(Axis(0), i));
    }
}

/// `dst = src` where `src` is contiguous down its columns and `dst` along
/// its rows, tile by tile: a [`TILE`] x [`TILE`] tile reads [`TILE`]
/// source columns (one or two cache lines each) and writes [`TILE`] result
/// row pieces, all in L1. Plain slice indexing: going through ndarray's
/// views per row piece cost more than the copy.
pub fn copy_tiles<T: Copy>(src: ArrayView2<'_, T>, mut dst: ArrayViewMut2<'_, T>) {
    let columns: Option<Vec<&[T]>> = src.columns().into_iter().map(|c| c.to_slice()).collect();
    let rows: Option<Vec<&mut [T]>> = dst.rows_mut().into_iter().map(|r| r.into_slice()).collect();
    let (Some(columns), Some(mut rows)) = (columns, rows) else {
        dst.assign(&src);
        return;
    };
    let (nr, nc) = (rows.len(), columns.len());
    for r0 in (0..nr).step_by(TILE) {
        let r1 = (r0 + TILE).min(nr);
        for c0 in (0..nc).step_by(TILE) {
            let c1 = (c0 + TILE).min(nc);
            if r1 - r0 == TILE && c1 - c0 == TILE {
                for rb in (r0..r1).step_by(BLOCK) {
                    for cb in (c0..c1).step_by(BLOCK) {
                        copy_block(&columns[cb..cb + BLOCK], &mut rows[rb..rb + BLOCK], rb, cb);
                    }
                }
                continue;
            }
            let band = &columns[c0..c1];
            for (r, row) in rows[r0..r1].iter_mut().enumerate() {
                for (o, col) in row[c0..c1].iter_mut().zip(band) {
                    *o = col[r0 + r];
                }
            }
        }
    }
}

/// Side of the blocks a whole tile is copied by.
const BLOCK: usize = 8;

/// One [`BLOCK`] x [`BLOCK`] block: `rows[j][cb + i] = columns[i][rb + j]`.
/// Whole rows of the block in and out through a local array, which the
/// compiler turns into vector loads, shuffles and stores; one element at a
/// time from [`BLOCK`] columns it could not.
fn copy_block<T: Copy>(columns: &[&[T]], rows: &mut [&mut [T]], rb: usize, cb: usize) {
    let mut block = [[columns[0][rb]; BLOCK]; BLOCK];
    for (b, col) in block.iter_mut().zip(columns) {
        b.copy_from_slice(&col[rb..rb + BLOCK]);
    }
    for (j, row) in rows.iter_mut().enumerate() {
        let out = &mut row[cb..cb + BLOCK];
        for (i, o) in out.iter_mut().enumerate() {
            *o = block[i][j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::IxDyn;

    fn numbered(shape: &[usize]) -> ArrayD<i64> {
        let n: usize = shape.iter().product();
        ArrayD::from_shape_vec(IxDyn(shape), (0..n as i64).collect()).unwrap()
    }

    #[test]
    fn every_permutation_matches_ndarrays_standard_layout() {
        let perms: &[&[usize]] = &[
            &[1, 0],
            &[0, 1],
            &[2, 1, 0],
            &[1, 0, 2],
            &[0, 2, 1],
            &[2, 0, 1],
            &[1, 2, 0],
            &[3, 1, 0, 2],
            &[0, 3, 2, 1],
            &[0, 2, 1, 3],
            &[2, 1, 0, 3],
        ];
        for perm in perms {
            // Sides that are not multiples of the tile, size-1 axes, and
            // sides that are.
            for shape in [
                vec![37, 70, 5, 3],
                vec![1, 65, 33, 2],
                vec![40, 1, 1, 64],
                vec![3, 9, 2, 12],
                // Whole tiles only (copied by blocks).
                vec![32, 48, 16, 16],
            ] {
                let a = numbered(&shape[..perm.len()]);
                let view = a.view().permuted_axes(perm.to_vec());
                let got = to_row_major(view.clone());
                assert_eq!(
                    got,
                    view.as_standard_layout().into_owned(),
                    "{perm:?} {shape:?}"
                );
                assert!(got.is_standard_layout());
            }
        }
    }

    #[test]
    fn strided_slices_copy_row_by_row() {
        let a = numbered(&[5, 7, 20]);
        for (rows, cols) in [(1..4, 3..15), (0..5, 0..20), (2..3, 5..9)] {
            let view = a.slice(ndarray::s![rows, ..;2, cols]).into_dyn();
            let got = to_row_major(view.clone());
            assert_eq!(got, view.as_standard_layout().into_owned());
            assert!(got.is_standard_layout());
        }
    }

    #[test]
    fn empty_and_scalar_views() {
        let e = numbered(&[0, 4]);
        assert_eq!(to_row_major(e.view().reversed_axes()).shape(), &[4, 0]);
        let s = numbered(&[]);
        assert_eq!(to_row_major(s.view()), s);
    }
}
