//! The loops over slices, compiled once per instruction set and chosen at
//! run time (as `gemm` chooses its kernels): AVX-512, AVX2 + FMA, and the
//! baseline. The loop bodies are the branch-free element functions of
//! [`super::scalar`], inlined into functions built with
//! `#[target_feature]`, so LLVM vectorizes them at that width.
//!
//! Each slice is processed in blocks of [`BLOCK`] elements: the fast code
//! runs on every lane, then (only if some element of the block is outside
//! the function's fast range) those elements are recomputed by the slow
//! form. Both steps are the same on every path, so the paths give bitwise
//! the same results (a test checks it).

use super::scalar as s;
use super::Func;

/// Elements per block: small enough that a block's input is still in L1
/// when the patch pass re-reads it.
const BLOCK: usize = 256;

/// An instruction set the loops can run with. Only [`Isa::detected`] and
/// [`Isa::available`] make one, and only for what this CPU has: that is
/// what makes calling the `#[target_feature]` loops sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isa(pub(super) Level);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// The widest instruction set this CPU has.
    pub fn detected() -> Isa {
        Isa::available()
            .into_iter()
            .max_by_key(|i| i.0)
            .unwrap_or(Isa(Level::Baseline))
    }

    /// Every instruction set this CPU can run, narrowest first.
    pub fn available() -> Vec<Isa> {
        let mut all = vec![Isa(Level::Baseline)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                all.push(Isa(Level::Avx2));
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                {
                    all.push(Isa(Level::Avx512));
                }
            }
        }
        all
    }

    /// `avx512`, `avx2` or `baseline`.
    pub fn name(self) -> &'static str {
        match self.0 {
            Level::Baseline => "baseline",
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => "avx512",
        }
    }
}

#[inline(always)]
fn unary_loop(
    src: &[f32],
    dst: &mut [f32],
    f: impl Fn(f32) -> f32,
    fast: impl Fn(f32) -> bool,
    slow: fn(f32) -> f32,
) {
    for (x, y) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        for (o, &v) in y.iter_mut().zip(x) {
            *o = f(v);
        }
        let mut all_fast = true;
        for &v in x {
            all_fast &= fast(v);
        }
        if !all_fast {
            for (o, &v) in y.iter_mut().zip(x) {
                if !fast(v) {
                    *o = slow(v);
                }
            }
        }
    }
}

#[inline(always)]
fn binary_loop(
    a: &[f32],
    b: &[f32],
    dst: &mut [f32],
    f: impl Fn(f32, f32) -> f32,
    fast: impl Fn(f32, f32) -> bool,
    slow: fn(f32, f32) -> f32,
) {
    let blocks = a.chunks(BLOCK).zip(b.chunks(BLOCK));
    for ((xa, xb), y) in blocks.zip(dst.chunks_mut(BLOCK)) {
        for ((o, &p), &q) in y.iter_mut().zip(xa).zip(xb) {
            *o = f(p, q);
        }
        let mut all_fast = true;
        for (&p, &q) in xa.iter().zip(xb) {
            all_fast &= fast(p, q);
        }
        if !all_fast {
            for ((o, &p), &q) in y.iter_mut().zip(xa).zip(xb) {
                if !fast(p, q) {
                    *o = slow(p, q);
                }
            }
        }
    }
}

/// The body of every unary entry point: one monomorphized loop per
/// function, so each inlines its element function.
macro_rules! unary_body {
    ($func:expr, $src:expr, $dst:expr) => {
        match $func {
            Func::Exp => unary_loop($src, $dst, s::exp, s::exp_fast, s::exp_slow),
            Func::Log => unary_loop($src, $dst, s::log, s::log_fast, s::log_slow),
            Func::Tanh => unary_loop($src, $dst, s::tanh, s::not_nan, s::nan_slow),
            Func::Logistic => {
                unary_loop($src, $dst, s::logistic, s::logistic_fast, s::logistic_slow)
            }
            Func::Erf => unary_loop($src, $dst, s::erf, s::not_nan, s::nan_slow),
            Func::Sin => unary_loop($src, $dst, s::sin, s::trig_fast, s::sin_slow),
            Func::Cos => unary_loop($src, $dst, s::cos, s::trig_fast, s::cos_slow),
            Func::Sqrt => unary_loop($src, $dst, s::sqrt, s::always, s::sqrt),
            Func::Rsqrt => unary_loop($src, $dst, s::rsqrt, s::always, s::rsqrt),
        }
    };
}

fn unary_baseline(func: Func, src: &[f32], dst: &mut [f32]) {
    unary_body!(func, src, dst)
}

fn pow_baseline(a: &[f32], b: &[f32], dst: &mut [f32]) {
    binary_loop(a, b, dst, s::pow, s::pow_fast, s::pow_slow)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn unary_avx2(func: Func, src: &[f32], dst: &mut [f32]) {
    unary_body!(func, src, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn pow_avx2(a: &[f32], b: &[f32], dst: &mut [f32]) {
    binary_loop(a, b, dst, s::pow, s::pow_fast, s::pow_slow)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
fn unary_avx512(func: Func, src: &[f32], dst: &mut [f32]) {
    unary_body!(func, src, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
fn pow_avx512(a: &[f32], b: &[f32], dst: &mut [f32]) {
    binary_loop(a, b, dst, s::pow, s::pow_fast, s::pow_slow)
}

/// `dst[i] = func(src[i])` with `isa`'s loop (over the shorter of the two).
#[allow(unsafe_code)]
pub fn unary(isa: Isa, func: Func, src: &[f32], dst: &mut [f32]) {
    match isa.0 {
        Level::Baseline => unary_baseline(func, src, dst),
        // SAFETY: an `Isa` of this level exists only if the CPU reported
        // AVX2 and FMA (`Isa::available`), the features the loop is built
        // with; the loop itself is safe code.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { unary_avx2(func, src, dst) },
        // SAFETY: as above, for AVX-512 F/DQ/VL/BW, AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { unary_avx512(func, src, dst) },
    }
}

/// `dst[i] = a[i]^b[i]` with `isa`'s loop (over the shortest slice).
#[allow(unsafe_code)]
pub fn pow(isa: Isa, a: &[f32], b: &[f32], dst: &mut [f32]) {
    match isa.0 {
        Level::Baseline => pow_baseline(a, b, dst),
        // SAFETY: see `unary`.
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { pow_avx2(a, b, dst) },
        // SAFETY: see `unary`.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { pow_avx512(a, b, dst) },
    }
}

/// One element through the same element function and patch, without a
/// loop to vectorize (the scalar version benchmarks compare with).
pub fn one(func: Func, x: f32) -> f32 {
    let pick = |f: fn(f32) -> f32, fast: fn(f32) -> bool, slow: fn(f32) -> f32| {
        if fast(x) {
            f(x)
        } else {
            slow(x)
        }
    };
    match func {
        Func::Exp => pick(s::exp, s::exp_fast, s::exp_slow),
        Func::Log => pick(s::log, s::log_fast, s::log_slow),
        Func::Tanh => pick(s::tanh, s::not_nan, s::nan_slow),
        Func::Logistic => pick(s::logistic, s::logistic_fast, s::logistic_slow),
        Func::Erf => pick(s::erf, s::not_nan, s::nan_slow),
        Func::Sin => pick(s::sin, s::trig_fast, s::sin_slow),
        Func::Cos => pick(s::cos, s::trig_fast, s::cos_slow),
        Func::Sqrt => s::sqrt(x),
        Func::Rsqrt => s::rsqrt(x),
    }
}
