//! Combining the members' blocks element by element.
//!
//! Every element is combined in rank order (`acc = op(acc, x_r)` for
//! `r = 1, 2, ...`), so any split of the work — whole blocks, slices, the
//! pieces of [`super::bands`] — gives bitwise the same result. f16 and bf16
//! are combined in f32 and rounded once. The work is done in tiles of
//! [`TILE`] elements whose accumulators stay in the L1 cache, so a big
//! reduction needs no accumulator the size of the block.

use half::{bf16, f16};
use meshrun_compiler::ir::ReduceKind;
use meshrun_kernels::{with_array, HostTensor};

use super::bands::{for_each_piece, row_major};

/// Elements per tile of accumulators.
const TILE: usize = 2048;

/// An element type the members' blocks can be reduced in.
pub trait Reducible: Copy {
    /// `dst[i]` = the `kind` reduction of `srcs[0][i], srcs[1][i], ...` in
    /// that order. Every source has `dst.len()` elements.
    fn reduce(kind: ReduceKind, dst: &mut [Self], srcs: &[&[Self]]) -> Result<(), String>;
}

/// `dst[i] = from(op(...op(to(s0[i]), to(s1[i]))..., to(sn[i])))`.
fn combine<T: Copy, A: Copy>(
    dst: &mut [T],
    srcs: &[&[T]],
    to: impl Fn(T) -> A,
    from: impl Fn(A) -> T,
    op: impl Fn(A, A) -> A,
) -> Result<(), String> {
    let Some((first, rest)) = srcs.split_first() else {
        return Err("a reduction of no blocks".into());
    };
    if let Some(s) = srcs.iter().find(|s| s.len() != dst.len()) {
        return Err(format!(
            "a source of {} elements reduced into {}",
            s.len(),
            dst.len()
        ));
    }
    let mut acc: Vec<A> = Vec::with_capacity(TILE.min(dst.len()));
    for (t, out) in dst.chunks_mut(TILE).enumerate() {
        let range = t * TILE..t * TILE + out.len();
        acc.clear();
        acc.extend(first[range.clone()].iter().map(|&x| to(x)));
        for s in rest {
            for (a, &x) in acc.iter_mut().zip(&s[range.clone()]) {
                *a = op(*a, to(x));
            }
        }
        for (o, &a) in out.iter_mut().zip(&acc) {
            *o = from(a);
        }
    }
    Ok(())
}

/// Floats accumulated in `A` (f32 or f64).
trait Acc: Copy + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + PartialOrd {
    fn is_nan(self) -> bool;
}
impl Acc for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl Acc for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// StableHLO `maximum`: NaN if either is NaN.
fn max_nan<A: Acc>(a: A, b: A) -> A {
    if a.is_nan() {
        a
    } else if b.is_nan() || b > a {
        b
    } else {
        a
    }
}

/// StableHLO `minimum`: NaN if either is NaN.
fn min_nan<A: Acc>(a: A, b: A) -> A {
    if a.is_nan() {
        a
    } else if b.is_nan() || b < a {
        b
    } else {
        a
    }
}

fn float<T: Copy, A: Acc>(
    kind: ReduceKind,
    dst: &mut [T],
    srcs: &[&[T]],
    to: impl Fn(T) -> A,
    from: impl Fn(A) -> T,
) -> Result<(), String> {
    match kind {
        ReduceKind::Add => combine(dst, srcs, to, from, |a, b| a + b),
        ReduceKind::Multiply => combine(dst, srcs, to, from, |a, b| a * b),
        ReduceKind::Maximum => combine(dst, srcs, to, from, max_nan),
        ReduceKind::Minimum => combine(dst, srcs, to, from, min_nan),
        ReduceKind::And | ReduceKind::Or => Err(format!("a {kind:?} reduction of floats")),
    }
}

impl Reducible for f32 {
    fn reduce(kind: ReduceKind, dst: &mut [f32], srcs: &[&[f32]]) -> Result<(), String> {
        float(kind, dst, srcs, |x| x, |a| a)
    }
}
impl Reducible for f64 {
    fn reduce(kind: ReduceKind, dst: &mut [f64], srcs: &[&[f64]]) -> Result<(), String> {
        float(kind, dst, srcs, |x| x, |a| a)
    }
}
impl Reducible for f16 {
    fn reduce(kind: ReduceKind, dst: &mut [f16], srcs: &[&[f16]]) -> Result<(), String> {
        float(kind, dst, srcs, f16::to_f32, f16::from_f32)
    }
}
impl Reducible for bf16 {
    fn reduce(kind: ReduceKind, dst: &mut [bf16], srcs: &[&[bf16]]) -> Result<(), String> {
        float(kind, dst, srcs, bf16::to_f32, bf16::from_f32)
    }
}

/// Integers: wrapping sums and products, bitwise and/or.
macro_rules! int_reducible {
    ($t:ty) => {
        impl Reducible for $t {
            fn reduce(kind: ReduceKind, dst: &mut [$t], srcs: &[&[$t]]) -> Result<(), String> {
                let id = |x: $t| x;
                match kind {
                    ReduceKind::Add => combine(dst, srcs, id, id, <$t>::wrapping_add),
                    ReduceKind::Multiply => combine(dst, srcs, id, id, <$t>::wrapping_mul),
                    ReduceKind::Maximum => combine(dst, srcs, id, id, Ord::max),
                    ReduceKind::Minimum => combine(dst, srcs, id, id, Ord::min),
                    ReduceKind::And => combine(dst, srcs, id, id, |a, b| a & b),
                    ReduceKind::Or => combine(dst, srcs, id, id, |a, b| a | b),
                }
            }
        }
    };
}
int_reducible!(i8);
int_reducible!(i16);
int_reducible!(i32);
int_reducible!(i64);
int_reducible!(u8);
int_reducible!(u16);
int_reducible!(u32);
int_reducible!(u64);

/// Predicates: sum, or and maximum are "any"; product, and and minimum
/// are "all".
impl Reducible for bool {
    fn reduce(kind: ReduceKind, dst: &mut [bool], srcs: &[&[bool]]) -> Result<(), String> {
        let id = |x: bool| x;
        match kind {
            ReduceKind::Add | ReduceKind::Or | ReduceKind::Maximum => {
                combine(dst, srcs, id, id, |a, b| a | b)
            }
            ReduceKind::Multiply | ReduceKind::And | ReduceKind::Minimum => {
                combine(dst, srcs, id, id, |a, b| a & b)
            }
        }
    }
}

/// Write into the first `len` elements of `dst` (row-major) the `kind`
/// reduction of the flat elements `from..from + len` of every block, on up
/// to `threads` threads. The rest of `dst` is left as it is. The blocks
/// must have `dst`'s element type.
pub fn reduce_into(
    dst: &mut HostTensor,
    blocks: &[&HostTensor],
    kind: ReduceKind,
    from: usize,
    len: usize,
    threads: usize,
) -> Result<(), String> {
    let dst_elem = dst.elem_type();
    with_array!(dst, d: T => {
        let data = d.as_slice_mut().ok_or("a block not in row-major layout")?;
        let size = data.len();
        let target = data.get_mut(..len).ok_or_else(|| {
            format!("{len} reduced elements do not fit a block of {size}")
        })?;
        let owned = blocks
            .iter()
            .map(|b| {
                b.array::<T>().map(row_major).ok_or_else(|| {
                    format!("a {} block reduced into a {dst_elem} one", b.elem_type())
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let srcs = owned
            .iter()
            .map(|s| {
                from.checked_add(len).and_then(|end| s.get(from..end)).ok_or_else(|| {
                    format!(
                        "elements {from}..{} of a block of {}",
                        from.saturating_add(len),
                        s.len()
                    )
                })
            })
            .collect::<Result<Vec<&[T]>, String>>()?;
        for_each_piece(target, 1, threads, |offset, piece| {
            let parts: Vec<&[T]> = srcs
                .iter()
                .map(|s| &s[offset..offset + piece.len()])
                .collect();
            T::reduce(kind, piece, &parts)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_and_threads_do_not_change_the_bits() {
        // Sums whose rounding depends on the order: rank order must win
        // whatever the tiling and threading.
        let n = 3 * TILE + 5 + (super::super::bands::PIECE_BYTES / 4) * 2;
        let blocks: Vec<HostTensor> = (0..5)
            .map(|r| {
                let v: Vec<f32> = (0..n)
                    .map(|i| ((i * 7 + r * 13) % 101) as f32 * 1e-3 + (r as f32) * 1e6)
                    .collect();
                HostTensor::from_vec(&[n], v).unwrap()
            })
            .collect();
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        let want: Vec<u32> = (0..n)
            .map(|i| {
                let v = |r: usize| refs[r].array::<f32>().unwrap()[[i]];
                (1..5).fold(v(0), |a, r| a + v(r)).to_bits()
            })
            .collect();
        for threads in [1, 3] {
            let mut out = HostTensor::from_vec(&[n], vec![0.0f32; n]).unwrap();
            reduce_into(&mut out, &refs, ReduceKind::Add, 0, n, threads).unwrap();
            let got: Vec<u32> = out
                .array::<f32>()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect();
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn a_sub_range_lands_at_the_start_and_bad_ranges_are_errors() {
        let a = HostTensor::from_vec(&[6], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
        let b = HostTensor::from_vec(&[6], vec![10i64, 20, 30, 40, 50, 60]).unwrap();
        let mut out = HostTensor::from_vec(&[3], vec![-1i64; 3]).unwrap();
        reduce_into(&mut out, &[&a, &b], ReduceKind::Add, 3, 2, 1).unwrap();
        assert_eq!(out.to_f64_vec(), vec![44.0, 55.0, -1.0]);
        assert!(reduce_into(&mut out, &[&a, &b], ReduceKind::Add, 5, 2, 1).is_err());
        assert!(reduce_into(&mut out, &[&a, &b], ReduceKind::Add, 0, 4, 1).is_err());
        let f = HostTensor::from_vec(&[6], vec![0.0f32; 6]).unwrap();
        assert!(reduce_into(&mut out, &[&a, &f], ReduceKind::Add, 0, 2, 1).is_err());
        let mut fo = HostTensor::from_vec(&[2], vec![0.0f32; 2]).unwrap();
        assert!(reduce_into(&mut fo, &[&f], ReduceKind::And, 0, 2, 1).is_err());
    }
}
