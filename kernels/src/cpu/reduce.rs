//! `stablehlo.reduce` with an add / multiply / maximum / minimum / and / or
//! body, over any set of dimensions, with an init value.
//!
//! The input is viewed as a matrix of kept × reduced elements (a view when
//! strides allow). When the reduced elements of one output are contiguous,
//! each output folds its row with 8 independent accumulators (which
//! vectorizes and sums more accurately than one running total); when the
//! kept elements are contiguous instead (reducing leading dims, e.g. a bias
//! gradient over the batch), whole rows are combined into an accumulator
//! row. Either way the init value enters each output exactly once. f16/bf16
//! accumulate in f32 and round once at the end.

use meshrun_compiler::ir::ReduceKind;
use ndarray::{Array1, ArrayD, ArrayView1, IxDyn};

use crate::cpu::elementwise::Int;
use crate::cpu::map::map;
use crate::cpu::real::{max_nan, min_nan, HalfFloat, Real};
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

const OP: &str = "stablehlo.reduce";

/// Reduce each of `inputs` over `dims`, starting from the matching scalar of
/// `inits`; one result per input.
pub fn reduce(
    kind: ReduceKind,
    dims: &[i64],
    inputs: &[&HostTensor],
    inits: &[&HostTensor],
) -> Result<Vec<HostTensor>> {
    if inputs.len() != inits.len() {
        return Err(KernelError::invalid(
            OP,
            format!("{} inputs but {} init values", inputs.len(), inits.len()),
        ));
    }
    inputs
        .iter()
        .zip(inits)
        .map(|(x, init)| reduce_one(kind, dims, x, init))
        .collect()
}

fn reduce_one(
    kind: ReduceKind,
    dims: &[i64],
    x: &HostTensor,
    init: &HostTensor,
) -> Result<HostTensor> {
    if !init.shape().is_empty() || init.elem_type() != x.elem_type() {
        return Err(KernelError::invalid(
            OP,
            format!(
                "init value must be a {} scalar, got {}",
                x.elem_type(),
                init.tensor_type()
            ),
        ));
    }
    let rank = x.shape().len();
    let mut reduced = vec![false; rank];
    for &d in dims {
        let slot = usize::try_from(d).ok().and_then(|d| reduced.get_mut(d));
        match slot {
            Some(seen) if !*seen => *seen = true,
            Some(_) => {
                return Err(KernelError::invalid(
                    OP,
                    format!("dimension {d} is listed twice"),
                ));
            }
            None => {
                return Err(KernelError::invalid(
                    OP,
                    format!("dimension {d} is out of range for rank {rank}"),
                ));
            }
        }
    }
    Ok(match (x, init) {
        (HostTensor::F64(a), HostTensor::F64(i)) => {
            HostTensor::F64(reduce_real(kind, a, first(i), &reduced)?)
        }
        (HostTensor::F32(a), HostTensor::F32(i)) => {
            HostTensor::F32(reduce_real(kind, a, first(i), &reduced)?)
        }
        (HostTensor::F16(a), HostTensor::F16(i)) => {
            HostTensor::F16(reduce_half(kind, a, first(i), &reduced)?)
        }
        (HostTensor::BF16(a), HostTensor::BF16(i)) => {
            HostTensor::BF16(reduce_half(kind, a, first(i), &reduced)?)
        }
        (HostTensor::I32(a), HostTensor::I32(i)) => {
            HostTensor::I32(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::I64(a), HostTensor::I64(i)) => {
            HostTensor::I64(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::I8(a), HostTensor::I8(i)) => {
            HostTensor::I8(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::I16(a), HostTensor::I16(i)) => {
            HostTensor::I16(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::U8(a), HostTensor::U8(i)) => {
            HostTensor::U8(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::U16(a), HostTensor::U16(i)) => {
            HostTensor::U16(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::U32(a), HostTensor::U32(i)) => {
            HostTensor::U32(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::U64(a), HostTensor::U64(i)) => {
            HostTensor::U64(reduce_int(kind, a, first(i), &reduced)?)
        }
        (HostTensor::Pred(a), HostTensor::Pred(i)) => {
            HostTensor::Pred(reduce_bool(kind, a, first(i), &reduced)?)
        }
        _ => return Err(unsupported(kind, x.elem_type())),
    })
}

fn unsupported(kind: ReduceKind, elem: meshrun_compiler::ir::ElemType) -> KernelError {
    KernelError::unsupported(&format!("{OP} ({})", kind.name()), elem)
}

/// The element of a rank-0 array (checked by the caller).
fn first<T: HostElem>(a: &ArrayD<T>) -> T {
    a.iter().next().copied().unwrap_or_else(T::zero_value)
}

fn reduce_real<F: Real>(
    kind: ReduceKind,
    a: &ArrayD<F>,
    init: F,
    reduced: &[bool],
) -> Result<ArrayD<F>> {
    match kind {
        ReduceKind::Add => reduce_with(a, init, reduced, |x, y| x + y),
        ReduceKind::Multiply => reduce_with(a, init, reduced, |x, y| x * y),
        ReduceKind::Maximum => reduce_with(a, init, reduced, max_nan),
        ReduceKind::Minimum => reduce_with(a, init, reduced, min_nan),
        ReduceKind::And | ReduceKind::Or => Err(unsupported(kind, F::ELEM)),
    }
}

fn reduce_half<H: HalfFloat>(
    kind: ReduceKind,
    a: &ArrayD<H>,
    init: H,
    reduced: &[bool],
) -> Result<ArrayD<H>> {
    let wide = reduce_real(kind, &map(a, H::widen), init.widen(), reduced)?;
    Ok(map(&wide, H::narrow))
}

fn reduce_int<I: Int>(
    kind: ReduceKind,
    a: &ArrayD<I>,
    init: I,
    reduced: &[bool],
) -> Result<ArrayD<I>> {
    match kind {
        ReduceKind::Add => reduce_with(a, init, reduced, |x, y| x.wrapping_add(&y)),
        ReduceKind::Multiply => reduce_with(a, init, reduced, |x, y| x.wrapping_mul(&y)),
        ReduceKind::Maximum => reduce_with(a, init, reduced, |x, y| x.max(y)),
        ReduceKind::Minimum => reduce_with(a, init, reduced, |x, y| x.min(y)),
        ReduceKind::And => reduce_with(a, init, reduced, |x, y| x & y),
        ReduceKind::Or => reduce_with(a, init, reduced, |x, y| x | y),
    }
}

fn reduce_bool(
    kind: ReduceKind,
    a: &ArrayD<bool>,
    init: bool,
    reduced: &[bool],
) -> Result<ArrayD<bool>> {
    match kind {
        ReduceKind::And | ReduceKind::Minimum | ReduceKind::Multiply => {
            reduce_with(a, init, reduced, |x, y| x & y)
        }
        ReduceKind::Or | ReduceKind::Maximum | ReduceKind::Add => {
            reduce_with(a, init, reduced, |x, y| x | y)
        }
    }
}

/// Reduce the axes flagged in `reduced` with the associative, commutative
/// `f`, each output starting from `init`.
fn reduce_with<T: HostElem>(
    a: &ArrayD<T>,
    init: T,
    reduced: &[bool],
    f: impl Fn(T, T) -> T + Copy + Sync,
) -> Result<ArrayD<T>> {
    let internal =
        |e: ndarray::ShapeError| KernelError::invalid(OP, format!("internal reshape: {e}"));
    let kept: Vec<usize> = (0..a.ndim()).filter(|&d| !reduced[d]).collect();
    let red: Vec<usize> = (0..a.ndim()).filter(|&d| reduced[d]).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&d| a.shape()[d]).collect();
    let k: usize = out_shape.iter().product();
    let r: usize = red.iter().map(|&d| a.shape()[d]).product();
    let inner_stride = |axes: &[usize]| {
        let shape: Vec<usize> = axes.iter().map(|&d| a.shape()[d]).collect();
        let strides: Vec<isize> = axes.iter().map(|&d| a.strides()[d]).collect();
        group_stride(&shape, &strides)
    };

    let data: Vec<T> =
        if r > 1 && k > 1 && inner_stride(&red) != Some(1) && inner_stride(&kept) == Some(1) {
            // Kept elements contiguous: combine whole rows into an accumulator.
            let v = a.view().permuted_axes([red, kept].concat());
            let mut acc = Array1::from_elem(k, init);
            for row in v.to_shape((r, k)).map_err(internal)?.rows() {
                acc.zip_mut_with(&row, |s, &x| *s = f(*s, x));
            }
            acc.to_vec()
        } else {
            // Fold each output's reduced elements (a view when the strides
            // allow, else a copy into a kept × reduced matrix).
            // Outputs go to several cores when the input is big; each
            // output's fold is the same whoever computes it.
            let v = a.view().permuted_axes([kept, red].concat());
            let m = v.to_shape((k, r)).map_err(internal)?;
            let mut out = vec![init; k];
            let touched = k * r * std::mem::size_of::<T>();
            crate::cpu::pieces::fill_pieces_touching(&mut out, 1, touched, |start, piece| {
                for (i, o) in piece.iter_mut().enumerate() {
                    *o = fold_row(m.row(start + i), init, f);
                }
            });
            out
        };
    ArrayD::from_shape_vec(IxDyn(&out_shape), data).map_err(internal)
}

/// The stride of the innermost axis of a group of axes (given in order) if
/// the group is one evenly strided run of memory, so it can be merged into
/// one axis without a copy. Size-1 axes do not matter.
fn group_stride(shape: &[usize], strides: &[isize]) -> Option<isize> {
    let dims: Vec<(usize, isize)> = shape
        .iter()
        .copied()
        .zip(strides.iter().copied())
        .filter(|&(n, _)| n != 1)
        .collect();
    let Some(&(_, inner)) = dims.last() else {
        return Some(1);
    };
    let merges = dims.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
    merges.then_some(inner)
}

/// `init ⊕ row[0] ⊕ row[1] ⊕ ...`, with 8 interleaved accumulators over a
/// contiguous row so the loop vectorizes.
fn fold_row<T: HostElem>(row: ArrayView1<'_, T>, init: T, f: impl Fn(T, T) -> T + Copy) -> T {
    const LANES: usize = 8;
    let Some(s) = row.as_slice() else {
        return row.iter().fold(init, |acc, &x| f(acc, x));
    };
    if s.len() < 2 * LANES {
        return s.iter().fold(init, |acc, &x| f(acc, x));
    }
    let mut chunks = s.chunks_exact(LANES);
    let mut acc: [T; LANES] = [s[0]; LANES];
    acc.copy_from_slice(&s[..LANES]);
    chunks.next();
    for c in &mut chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a = f(*a, x);
        }
    }
    let tail = chunks.remainder().iter().fold(init, |a, &x| f(a, x));
    let pairs = [
        f(acc[0], acc[4]),
        f(acc[1], acc[5]),
        f(acc[2], acc[6]),
        f(acc[3], acc[7]),
    ];
    f(tail, f(f(pairs[0], pairs[2]), f(pairs[1], pairs[3])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;
    use ndarray::Axis;

    fn t(shape: &[usize], v: Vec<f32>) -> HostTensor {
        HostTensor::from_vec(shape, v).unwrap()
    }
    fn s(x: f32) -> HostTensor {
        t(&[], vec![x])
    }

    #[test]
    fn sum_max_over_each_axis_and_all() {
        let x = t(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let r =
            |kind, dims: &[i64], init| reduce(kind, dims, &[&x], &[&s(init)]).unwrap().remove(0);
        assert_eq!(r(ReduceKind::Add, &[1], 0.0), t(&[2], vec![6.0, 15.0]));
        assert_eq!(r(ReduceKind::Add, &[0], 0.0), t(&[3], vec![5.0, 7.0, 9.0]));
        assert_eq!(r(ReduceKind::Add, &[0, 1], 10.0), t(&[], vec![31.0]));
        assert_eq!(
            r(ReduceKind::Maximum, &[1], f32::NEG_INFINITY),
            t(&[2], vec![3.0, 6.0])
        );
        assert_eq!(
            r(ReduceKind::Minimum, &[0], 2.0),
            t(&[3], vec![1.0, 2.0, 2.0])
        );
        assert_eq!(
            r(ReduceKind::Multiply, &[1], 1.0),
            t(&[2], vec![6.0, 120.0])
        );
        assert_eq!(
            r(ReduceKind::Add, &[], 0.0),
            x,
            "no dims: init ⊕ each element"
        );
    }

    #[test]
    fn init_enters_once_per_output() {
        // Long rows take the 8-lane path; short rows the plain fold.
        for len in [5usize, 40, 1000] {
            let x = t(&[2, len], vec![1.0; 2 * len]);
            let got = reduce(ReduceKind::Add, &[1], &[&x], &[&s(100.0)])
                .unwrap()
                .remove(0);
            assert_eq!(got.to_f64_vec(), vec![100.0 + len as f64; 2]);
            let got = reduce(ReduceKind::Add, &[0], &[&x], &[&s(100.0)])
                .unwrap()
                .remove(0);
            assert_eq!(got.to_f64_vec(), vec![102.0; len]);
        }
    }

    #[test]
    fn middle_and_multiple_dims_match_a_plain_loop() {
        let shape = [3usize, 4, 5, 2];
        let data: Vec<f32> = (0..120).map(|i| ((i * 37) % 11) as f32 - 5.0).collect();
        let x = t(&shape, data.clone());
        for dims in [
            vec![1i64],
            vec![0, 2],
            vec![1, 3],
            vec![0, 1, 2, 3],
            vec![2],
        ] {
            let got = reduce(ReduceKind::Add, &dims, &[&x], &[&s(0.0)])
                .unwrap()
                .remove(0);
            let a = ndarray::ArrayD::from_shape_vec(IxDyn(&shape), data.clone()).unwrap();
            let mut want = a.clone();
            let mut sorted = dims.clone();
            sorted.sort_unstable_by(|p, q| q.cmp(p));
            for d in sorted {
                want = want.sum_axis(Axis(d as usize));
            }
            assert_eq!(got, HostTensor::F32(want), "dims {dims:?}");
        }
    }

    #[test]
    fn max_propagates_nan_ints_and_bools() {
        let x = t(&[3], vec![1.0, f32::NAN, 2.0]);
        let m = reduce(ReduceKind::Maximum, &[0], &[&x], &[&s(0.0)])
            .unwrap()
            .remove(0);
        assert!(m.to_f64_vec()[0].is_nan());
        let i = HostTensor::from_vec(&[2, 2], vec![1i32, 6, 3, 4]).unwrap();
        let i0 = HostTensor::from_vec(&[], vec![0i32]).unwrap();
        let got = reduce(ReduceKind::Or, &[1], &[&i], &[&i0])
            .unwrap()
            .remove(0);
        assert_eq!(got, HostTensor::from_vec(&[2], vec![7i32, 7]).unwrap());
        let b = HostTensor::from_vec(&[2, 2], vec![true, false, true, true]).unwrap();
        let t0 = HostTensor::from_vec(&[], vec![true]).unwrap();
        let got = reduce(ReduceKind::And, &[1], &[&b], &[&t0])
            .unwrap()
            .remove(0);
        assert_eq!(got, HostTensor::from_vec(&[2], vec![false, true]).unwrap());
        assert!(reduce(ReduceKind::And, &[0], &[&x], &[&s(0.0)]).is_err());
    }

    #[test]
    fn variadic_and_half_precision() {
        let a = t(&[2], vec![1.0, 2.0]);
        let b =
            HostTensor::from_vec(&[2], vec![bf16::from_f32(0.5), bf16::from_f32(0.25)]).unwrap();
        let b0 = HostTensor::from_vec(&[], vec![bf16::ZERO]).unwrap();
        let got = reduce(ReduceKind::Add, &[0], &[&a, &b], &[&s(0.0), &b0]).unwrap();
        assert_eq!(got[0], s(3.0));
        assert_eq!(got[1].to_f64_vec(), vec![0.75]);
    }

    #[test]
    fn bad_reductions_are_errors() {
        let x = t(&[2, 3], vec![0.0; 6]);
        let msg = |dims: &[i64], init: &HostTensor| {
            reduce(ReduceKind::Add, dims, &[&x], &[init])
                .unwrap_err()
                .to_string()
        };
        assert!(msg(&[2], &s(0.0)).contains("out of range"));
        assert!(msg(&[1, 1], &s(0.0)).contains("twice"));
        assert!(msg(&[1], &t(&[1], vec![0.0])).contains("scalar"));
        let e = reduce(ReduceKind::Add, &[0], &[&x], &[]).unwrap_err();
        assert!(e.to_string().contains("1 inputs but 0"), "{e}");
    }
}
