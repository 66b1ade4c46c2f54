//! Element-wise loops shared by the kernels. Row-major contiguous inputs take
//! a plain slice loop (which LLVM vectorizes); other layouts iterate in
//! logical order. Outputs are always row-major.

use ndarray::{ArrayD, IxDyn};

/// Build a row-major array of `shape` from `data` (whose length the callers
/// guarantee: it comes from iterating an array of that shape).
fn from_row_major<T>(shape: &[usize], data: Vec<T>) -> ArrayD<T> {
    match ArrayD::from_shape_vec(IxDyn(shape), data) {
        Ok(a) => a,
        Err(e) => unreachable!("element count matches shape by construction: {e}"),
    }
}

/// `f` applied to every element of `a`.
pub(crate) fn map<A: Copy, B>(a: &ArrayD<A>, f: impl Fn(A) -> B) -> ArrayD<B> {
    let data: Vec<B> = match a.as_slice() {
        Some(s) => s.iter().map(|&x| f(x)).collect(),
        None => a.iter().map(|&x| f(x)).collect(),
    };
    from_row_major(a.shape(), data)
}

/// `f` applied to corresponding elements of `a` and `b`, which must have the
/// same shape (callers check; see `same_shape`).
pub(crate) fn zip_map<A: Copy, B: Copy, C>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    f: impl Fn(A, B) -> C,
) -> ArrayD<C> {
    debug_assert_eq!(a.shape(), b.shape());
    let data: Vec<C> = match (a.as_slice(), b.as_slice()) {
        (Some(x), Some(y)) => x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect(),
        _ => a.iter().zip(b.iter()).map(|(&p, &q)| f(p, q)).collect(),
    };
    from_row_major(a.shape(), data)
}

/// `a` in row-major layout, without copying when it already is.
pub(crate) fn into_standard<T: Clone>(a: ArrayD<T>) -> ArrayD<T> {
    if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    }
}
