//! IEEE arithmetic on f32 slices (add, subtract, multiply, divide,
//! maximum, minimum; negate, abs, square), compiled per instruction set
//! and chosen at run time like the functions of [`super::dispatch`].
//!
//! Built for the x86-64 baseline, these loops run 4 lanes wide (SSE2);
//! a fused chain of a GELU's gradient is ~20 of them on blocks that sit
//! in L1, so the width is their speed. Each element is one IEEE
//! operation (or `max_nan`/`min_nan`) on that element alone, so every
//! width gives the same bits (a test checks it). A scalar side (a
//! broadcast constant, `0.01 · grad`) is read as a scalar, not copied
//! into a block first.

use meshrun_compiler::ir::{BinaryOp, UnaryOp};

use super::dispatch::{Isa, Level};
use crate::cpu::real::{max_nan, min_nan};

/// A binary op these loops compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryArith {
    Add,
    Subtract,
    Multiply,
    Divide,
    Maximum,
    Minimum,
}

impl BinaryArith {
    pub const ALL: [BinaryArith; 6] = [
        BinaryArith::Add,
        BinaryArith::Subtract,
        BinaryArith::Multiply,
        BinaryArith::Divide,
        BinaryArith::Maximum,
        BinaryArith::Minimum,
    ];

    pub fn of_binary(op: BinaryOp) -> Option<BinaryArith> {
        Some(match op {
            BinaryOp::Add => BinaryArith::Add,
            BinaryOp::Subtract => BinaryArith::Subtract,
            BinaryOp::Multiply => BinaryArith::Multiply,
            BinaryOp::Divide => BinaryArith::Divide,
            BinaryOp::Maximum => BinaryArith::Maximum,
            BinaryOp::Minimum => BinaryArith::Minimum,
            _ => return None,
        })
    }
}

/// A unary op these loops compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryArith {
    Negate,
    Abs,
    Square,
}

impl UnaryArith {
    pub const ALL: [UnaryArith; 3] = [UnaryArith::Negate, UnaryArith::Abs, UnaryArith::Square];

    pub fn of_unary(op: UnaryOp) -> Option<UnaryArith> {
        Some(match op {
            UnaryOp::Negate => UnaryArith::Negate,
            UnaryOp::Abs => UnaryArith::Abs,
            UnaryOp::Square => UnaryArith::Square,
            _ => return None,
        })
    }
}

/// One side of a binary op: a slice (as long as the result) or one value
/// for every element.
#[derive(Debug, Clone, Copy)]
pub enum Side<'a> {
    Slice(&'a [f32]),
    Scalar(f32),
}

#[inline(always)]
fn zip(f: impl Fn(f32, f32) -> f32, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    match (a, b) {
        (Side::Slice(a), Side::Slice(b)) => {
            for ((o, &x), &y) in dst.iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        }
        (Side::Slice(a), Side::Scalar(y)) => {
            for (o, &x) in dst.iter_mut().zip(a) {
                *o = f(x, y);
            }
        }
        (Side::Scalar(x), Side::Slice(b)) => {
            for (o, &y) in dst.iter_mut().zip(b) {
                *o = f(x, y);
            }
        }
        (Side::Scalar(x), Side::Scalar(y)) => dst.fill(f(x, y)),
    }
}

#[inline(always)]
fn map(f: impl Fn(f32) -> f32, src: &[f32], dst: &mut [f32]) {
    for (o, &x) in dst.iter_mut().zip(src) {
        *o = f(x);
    }
}

/// One monomorphized loop per op and form, so each inlines its op.
macro_rules! binary_body {
    ($op:expr, $a:expr, $b:expr, $dst:expr) => {
        match $op {
            BinaryArith::Add => zip(|x, y| x + y, $a, $b, $dst),
            BinaryArith::Subtract => zip(|x, y| x - y, $a, $b, $dst),
            BinaryArith::Multiply => zip(|x, y| x * y, $a, $b, $dst),
            BinaryArith::Divide => zip(|x, y| x / y, $a, $b, $dst),
            BinaryArith::Maximum => zip(max_nan, $a, $b, $dst),
            BinaryArith::Minimum => zip(min_nan, $a, $b, $dst),
        }
    };
}

macro_rules! unary_body {
    ($op:expr, $src:expr, $dst:expr) => {
        match $op {
            UnaryArith::Negate => map(|x| -x, $src, $dst),
            UnaryArith::Abs => map(f32::abs, $src, $dst),
            UnaryArith::Square => map(|x| x * x, $src, $dst),
        }
    };
}

fn binary_baseline(op: BinaryArith, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    binary_body!(op, a, b, dst)
}

fn unary_baseline(op: UnaryArith, src: &[f32], dst: &mut [f32]) {
    unary_body!(op, src, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn binary_avx2(op: BinaryArith, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    binary_body!(op, a, b, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn unary_avx2(op: UnaryArith, src: &[f32], dst: &mut [f32]) {
    unary_body!(op, src, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
fn binary_avx512(op: BinaryArith, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    binary_body!(op, a, b, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
fn unary_avx512(op: UnaryArith, src: &[f32], dst: &mut [f32]) {
    unary_body!(op, src, dst)
}

/// `dst[i] = a[i] op b[i]` with `isa`'s loop, over the shortest of `dst`
/// and the slice sides.
#[allow(unsafe_code)]
pub fn binary(isa: Isa, op: BinaryArith, a: Side<'_>, b: Side<'_>, dst: &mut [f32]) {
    match isa.0 {
        Level::Baseline => binary_baseline(op, a, b, dst),
        // SAFETY: an `Isa` of this level exists only if the CPU reported
        // AVX2 and FMA (`Isa::available`), the features the loop is built
        // with; the loop itself is safe code.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { binary_avx2(op, a, b, dst) },
        // SAFETY: as above, for AVX-512 F/DQ/VL/BW, AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { binary_avx512(op, a, b, dst) },
    }
}

/// `dst[i] = op(src[i])` with `isa`'s loop, over the shorter slice.
#[allow(unsafe_code)]
pub fn unary(isa: Isa, op: UnaryArith, src: &[f32], dst: &mut [f32]) {
    match isa.0 {
        Level::Baseline => unary_baseline(op, src, dst),
        // SAFETY: see `binary`.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { unary_avx2(op, src, dst) },
        // SAFETY: see `binary`.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { unary_avx512(op, src, dst) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values with every sign, zero sign, NaN, infinities, subnormals.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        let special = [
            0.0,
            -0.0,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e-40,
            -1e-40,
            f32::MAX,
            f32::MIN_POSITIVE,
        ];
        (0..n)
            .map(|i| {
                let h = (i as u32 ^ seed).wrapping_mul(2_654_435_761);
                if h.is_multiple_of(7) {
                    special[(h as usize / 7) % special.len()]
                } else {
                    f32::from_bits(h.rotate_left(seed % 32)) % 1e6
                }
            })
            .collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn every_width_gives_the_bits_of_the_scalar_op() {
        // Lengths around the vector widths and their tails.
        for n in [0, 1, 7, 8, 15, 16, 17, 31, 33, 1000] {
            let (a, b) = (values(n, 3), values(n, 11));
            let s = values(1, 5)[0];
            for op in BinaryArith::ALL {
                let f = |x: f32, y: f32| -> f32 {
                    match op {
                        BinaryArith::Add => x + y,
                        BinaryArith::Subtract => x - y,
                        BinaryArith::Multiply => x * y,
                        BinaryArith::Divide => x / y,
                        BinaryArith::Maximum => max_nan(x, y),
                        BinaryArith::Minimum => min_nan(x, y),
                    }
                };
                let forms: [(Side, Side, Vec<f32>); 4] = [
                    (
                        Side::Slice(&a),
                        Side::Slice(&b),
                        a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect(),
                    ),
                    (
                        Side::Slice(&a),
                        Side::Scalar(s),
                        a.iter().map(|&x| f(x, s)).collect(),
                    ),
                    (
                        Side::Scalar(s),
                        Side::Slice(&b),
                        b.iter().map(|&y| f(s, y)).collect(),
                    ),
                    (Side::Scalar(s), Side::Scalar(2.5), vec![f(s, 2.5); n]),
                ];
                for (x, y, want) in forms {
                    for isa in Isa::available() {
                        let mut got = vec![7.0f32; n];
                        binary(isa, op, x, y, &mut got);
                        assert_eq!(bits(&got), bits(&want), "{op:?} n={n} {}", isa.name());
                    }
                }
            }
            for op in UnaryArith::ALL {
                let want: Vec<f32> = a
                    .iter()
                    .map(|&x| match op {
                        UnaryArith::Negate => -x,
                        UnaryArith::Abs => x.abs(),
                        UnaryArith::Square => x * x,
                    })
                    .collect();
                for isa in Isa::available() {
                    let mut got = vec![7.0f32; n];
                    unary(isa, op, &a, &mut got);
                    assert_eq!(bits(&got), bits(&want), "{op:?} n={n} {}", isa.name());
                }
            }
        }
    }
}
