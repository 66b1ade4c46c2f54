//! Element-wise loops shared by the kernels. Row-major contiguous inputs take
//! a plain slice loop (which LLVM vectorizes) into a block from the reuse
//! pool (`alloc`), cut into pieces for several cores when the op may use
//! them (`pieces`); other layouts iterate in logical order. Outputs are
//! always row-major.

use ndarray::{ArrayD, IxDyn};

use crate::cpu::{alloc, pieces};
use crate::tensor::HostElem;

/// Build a row-major array of `shape` from `data` (whose length the callers
/// guarantee: it comes from iterating an array of that shape).
fn from_row_major<T>(shape: &[usize], data: Vec<T>) -> ArrayD<T> {
    match ArrayD::from_shape_vec(IxDyn(shape), data) {
        Ok(a) => a,
        Err(e) => unreachable!("element count matches shape by construction: {e}"),
    }
}

/// A pooled row-major array of `shape` filled by `fill(start, piece)`,
/// pieces a multiple of `align` elements (see `pieces::fill_pieces`).
pub(crate) fn filled<T: HostElem>(
    shape: &[usize],
    align: usize,
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> ArrayD<T> {
    let mut out = alloc::array::<T>(shape);
    match out.as_slice_mut() {
        Some(dst) => pieces::fill_pieces(dst, align, fill),
        None => unreachable!("pooled blocks are row-major"),
    }
    out
}

/// `f` applied to every element of `a`.
pub(crate) fn map<A: Copy + Sync, B: HostElem>(
    a: &ArrayD<A>,
    f: impl Fn(A) -> B + Sync,
) -> ArrayD<B> {
    match a.as_slice() {
        Some(s) => filled(a.shape(), 1, |start, piece: &mut [B]| {
            for (o, &x) in piece.iter_mut().zip(&s[start..]) {
                *o = f(x);
            }
        }),
        None => from_row_major(a.shape(), a.iter().map(|&x| f(x)).collect()),
    }
}

/// `f` applied to corresponding elements of `a` and `b`, which must have the
/// same shape (callers check; see `same_shape`).
pub(crate) fn zip_map<A: Copy + Sync, B: Copy + Sync, C: HostElem>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    f: impl Fn(A, B) -> C + Sync,
) -> ArrayD<C> {
    debug_assert_eq!(a.shape(), b.shape());
    match (a.as_slice(), b.as_slice()) {
        (Some(x), Some(y)) => filled(a.shape(), 1, |start, piece: &mut [C]| {
            for ((o, &p), &q) in piece.iter_mut().zip(&x[start..]).zip(&y[start..]) {
                *o = f(p, q);
            }
        }),
        _ => from_row_major(
            a.shape(),
            a.iter().zip(b.iter()).map(|(&p, &q)| f(p, q)).collect(),
        ),
    }
}

/// `a` in row-major layout, without copying when it already is.
pub(crate) fn into_standard<T: Clone>(a: ArrayD<T>) -> ArrayD<T> {
    if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    }
}
