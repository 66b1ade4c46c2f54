//! One element of each vectorized function, written branch-free so that a
//! loop over it vectorizes (see `dispatch`): polynomials evaluated with
//! explicit fused multiply-adds, selects instead of branches, integer
//! tricks on the bits instead of float-to-int conversions.
//!
//! Every function has a *fast range*: inputs for which the branch-free code
//! is accurate to the ≤ 2 ulp the property test checks. Lanes outside it
//! (NaN, infinities, subnormal results, huge arguments) are patched by the
//! function's `slow` form, computed through f64 (`std`), so the special
//! cases follow IEEE/libm exactly and the fast code stays simple.
//!
//! `mul_add` is a single rounding on every path (an FMA instruction, or
//! libm's `fma` where the CPU has none), so a lane gives the same bits
//! whether it ran in an AVX-512, AVX2 or scalar loop.
//!
//! Polynomials: `exp`, `log`, `tanh` (|x| < 0.625) are Cephes' single
//! precision minimax polynomials; `erf` uses polynomials fitted for
//! meshrun (least squares on Chebyshev nodes against mpmath, checked in
//! f32 arithmetic); `sin`/`cos` and `pow` compute in f64 with Taylor
//! series, where the truncation error is far below an f32 ulp.

#![allow(clippy::excessive_precision)] // coefficients as fitted/published

#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

#[inline(always)]
fn fma64(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

#[inline(always)]
fn sel(c: bool, a: f32, b: f32) -> f32 {
    if c {
        a
    } else {
        b
    }
}

#[inline(always)]
fn sel64(c: bool, a: f64, b: f64) -> f64 {
    if c {
        a
    } else {
        b
    }
}

/// `c[0] + c[1]·t + c[2]·t² + ...` by Horner's rule.
#[inline(always)]
fn horner(c: &[f32], t: f32) -> f32 {
    let mut p = c[c.len() - 1];
    for &k in c[..c.len() - 1].iter().rev() {
        p = fma(p, t, k);
    }
    p
}

#[inline(always)]
fn horner64(c: &[f64], t: f64) -> f64 {
    let mut p = c[c.len() - 1];
    for &k in c[..c.len() - 1].iter().rev() {
        p = fma64(p, t, k);
    }
    p
}

/// 1.5·2^23: `x + MAGIC` rounds `x` (|x| < 2^22) to an integer, ties to
/// even, and the integer sits in the low mantissa bits.
const MAGIC: f32 = 12_582_912.0;
/// 1.5·2^52, the same for f64.
const MAGIC64: f64 = 6_755_399_441_055_744.0;

// ------------------------------------------------------------------ exp

const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 split so that `n·LN2_HI` is exact for |n| < 2^15 (Cephes' C1, C2).
const LN2_HI: f32 = 0.693_359_375;
const LN2_LO: f32 = -2.121_944_4e-4;
const EXP_POLY: [f32; 6] = [
    5.000_000_120_1e-1,
    1.666_666_545_9e-1,
    4.166_579_589_4e-2,
    8.333_451_907_3e-3,
    1.398_199_950_7e-3,
    1.987_569_150_0e-4,
];

/// e^x for x in [-87, 88] (results normal); other inputs give garbage
/// (never a panic), which the callers select away or patch.
#[inline(always)]
pub(super) fn exp_core(x: f32) -> f32 {
    let t = fma(x, LOG2E, MAGIC);
    let n = t - MAGIC;
    let r = fma(n, -LN2_HI, x);
    let r = fma(n, -LN2_LO, r);
    let p = horner(&EXP_POLY, r);
    let y = fma(p, r * r, r) + 1.0;
    // 2^n: the integer n is in t's low bits; shifting them into the
    // exponent field drops t's own exponent (see MAGIC).
    let scale = f32::from_bits((t.to_bits() << 23).wrapping_add(127 << 23));
    y * scale
}

#[inline(always)]
pub(super) fn exp(x: f32) -> f32 {
    exp_core(x)
}

#[inline(always)]
pub(super) fn exp_fast(x: f32) -> bool {
    (-87.0..=88.0).contains(&x)
}

pub(super) fn exp_slow(x: f32) -> f32 {
    (x as f64).exp() as f32
}

// ------------------------------------------------------------------ log

const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;
const LOG_POLY: [f32; 9] = [
    3.333_333_117_4e-1,
    -2.499_999_399_3e-1,
    2.000_071_476_5e-1,
    -1.666_805_766_5e-1,
    1.424_932_278_7e-1,
    -1.242_014_084_6e-1,
    1.167_699_874_0e-1,
    -1.151_461_031_0e-1,
    7.037_683_629_2e-2,
];

/// ln x for normal positive x.
#[inline(always)]
pub(super) fn log(x: f32) -> f32 {
    let bits = x.to_bits();
    // x = m·2^e with m in [0.5, 1).
    let e = ((bits >> 23) as i32) - 126;
    let m = f32::from_bits((bits & 0x007F_FFFF) | 0x3F00_0000);
    // Keep m in [√½, √2) so that f = m − 1 is small.
    let small = m < SQRT_HALF;
    let e = (e - small as i32) as f32;
    let f = sel(small, m + m, m) - 1.0;
    let z = f * f;
    let mut y = horner(&LOG_POLY, f) * f * z;
    y = fma(e, LN2_LO, y);
    y = fma(z, -0.5, y);
    fma(e, LN2_HI, f + y)
}

#[inline(always)]
pub(super) fn log_fast(x: f32) -> bool {
    (f32::MIN_POSITIVE..=f32::MAX).contains(&x)
}

pub(super) fn log_slow(x: f32) -> f32 {
    (x as f64).ln() as f32
}

// ------------------------------------------------------------------ tanh

const TANH_POLY: [f32; 5] = [
    -3.333_328_194_22e-1,
    1.333_144_220_36e-1,
    -5.373_971_555_31e-2,
    2.063_908_879_54e-2,
    -5.704_988_727_45e-3,
];

/// tanh x: an odd polynomial below |x| = 0.625, else 1 − 2/(e^{2|x|} + 1).
#[inline(always)]
pub(super) fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let small = fma(horner(&TANH_POLY, z) * z, x, x);
    // Past |x| = 44, e^{2|x|} would overflow; tanh is 1 long before.
    let e = exp_core(sel(a < 44.0, a + a, 88.0));
    let big = (1.0 - 2.0 / (e + 1.0)).copysign(x);
    sel(a < 0.625, small, big)
}

#[inline(always)]
pub(super) fn not_nan(x: f32) -> bool {
    !x.is_nan()
}

/// NaN in, NaN out (the only input `tanh`, `erf` patch).
pub(super) fn nan_slow(x: f32) -> f32 {
    x
}

// ------------------------------------------------------------------ logistic

/// 1/(1 + e^{−x}) in f64, from e = e^{−|x|} ≤ 1 on both sides (no
/// overflow, and for x < 0 the result e/(1 + e) keeps its relative
/// accuracy); in f32 the three roundings reached 2.1 ulp.
#[inline(always)]
pub(super) fn logistic(x: f32) -> f32 {
    let a = x.abs() as f64;
    let e = exp2_64(-a * LOG2E_64);
    (sel64(x < 0.0, e, 1.0) / (1.0 + e)) as f32
}

#[inline(always)]
pub(super) fn logistic_fast(x: f32) -> bool {
    x.abs() <= 87.0
}

pub(super) fn logistic_slow(x: f32) -> f32 {
    (1.0 / (1.0 + (-(x as f64)).exp())) as f32
}

// ------------------------------------------------------------------ erf

/// erf x = x + x·q(x²) on |x| < 1.
const ERF_SMALL: [f32; 7] = [
    0.128_379_17,
    -0.376_126_26,
    0.112_835_98,
    -0.026_854_336,
    0.005_189_320_5,
    -0.000_801_889_46,
    7.882_529_5e-5,
];
/// erfc(x)·e^{x²} as a polynomial in x − 2.5 on 1 ≤ x ≤ 4.
const ERF_BIG: [f32; 11] = [
    0.210_806_35,
    -0.074_347_6,
    0.024_938_203,
    -0.007_999_343,
    0.002_465_981,
    -0.000_739_003,
    0.000_212_973_89,
    -5.358_213_5e-5,
    1.435_263_5e-5,
    -6.386_902_4e-6,
    1.672_004_8e-6,
];

/// erf x: a polynomial below |x| = 1, else 1 − e^{−x²}·h(|x|) with x²
/// carried as hi + lo (the rounding of x² would cost several ulps).
#[inline(always)]
pub(super) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let small = fma(x, horner(&ERF_SMALL, x * x), x);
    // erf is 1 in f32 from |x| ≈ 3.92 on; 4.5 keeps h in its fitted range.
    let b = sel(a < 4.5, a, 4.5);
    let hi = b * b;
    let lo = fma(b, b, -hi);
    let e = exp_core(-hi);
    let e = fma(e, -lo, e);
    let big = fma(-e, horner(&ERF_BIG, b - 2.5), 1.0).copysign(x);
    sel(a < 1.0, small, big)
}

// ------------------------------------------------------------------ sin, cos

const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
/// π/2 as 33 + 53 bits (fdlibm's pio2_1, pio2_1t): `n·PIO2_HI` is exact
/// for |n| < 2^20.
const PIO2_HI: f64 = 1.570_796_326_734_125_614_17;
const PIO2_LO: f64 = 6.077_100_506_506_192_249_32e-11;
/// sin r = r + r·z·S(z), z = r², Taylor to r^11.
const SIN_POLY: [f64; 5] = [
    -1.0 / 6.0,
    1.0 / 120.0,
    -1.0 / 5_040.0,
    1.0 / 362_880.0,
    -1.0 / 39_916_800.0,
];
/// cos r = 1 − z/2 + z²·C(z), Taylor to r^12.
const COS_POLY: [f64; 5] = [
    1.0 / 24.0,
    -1.0 / 720.0,
    1.0 / 40_320.0,
    -1.0 / 3_628_800.0,
    1.0 / 479_001_600.0,
];

/// sin x (`cos = false`) or cos x, reduced to |r| ≤ π/4 in f64.
#[inline(always)]
fn sin_cos(x: f32, cos: bool) -> f32 {
    let xd = x as f64;
    let t = fma64(xd, FRAC_2_PI, MAGIC64);
    let n = t - MAGIC64;
    let r = fma64(n, -PIO2_HI, xd);
    let r = fma64(n, -PIO2_LO, r);
    let z = r * r;
    let s = fma64(r * z, horner64(&SIN_POLY, z), r);
    let c = fma64(z * z, horner64(&COS_POLY, z), fma64(z, -0.5, 1.0));
    // The quadrant n mod 4 is in t's low bits.
    let q = t.to_bits() & 3;
    let q = if cos { q + 1 } else { q };
    let v = sel64(q & 1 == 1, c, s);
    sel64(q & 2 == 2, -v, v) as f32
}

#[inline(always)]
pub(super) fn sin(x: f32) -> f32 {
    sin_cos(x, false)
}

#[inline(always)]
pub(super) fn cos(x: f32) -> f32 {
    sin_cos(x, true)
}

#[inline(always)]
pub(super) fn trig_fast(x: f32) -> bool {
    x.abs() <= 1_048_576.0
}

pub(super) fn sin_slow(x: f32) -> f32 {
    (x as f64).sin() as f32
}

pub(super) fn cos_slow(x: f32) -> f32 {
    (x as f64).cos() as f32
}

// ------------------------------------------------------------------ sqrt, rsqrt

#[inline(always)]
pub(super) fn sqrt(x: f32) -> f32 {
    x.sqrt()
}

#[inline(always)]
pub(super) fn rsqrt(x: f32) -> f32 {
    1.0 / x.sqrt()
}

#[inline(always)]
pub(super) fn always(_: f32) -> bool {
    true
}

// ------------------------------------------------------------------ pow

const LOG2E_64: f64 = std::f64::consts::LOG2_E;
/// 2/(2k+1): ln m = s·Σ ATANH[k]·s^{2k}, s = (m−1)/(m+1), |s| ≤ 0.172.
const ATANH_POLY: [f64; 10] = [
    2.0,
    2.0 / 3.0,
    2.0 / 5.0,
    2.0 / 7.0,
    2.0 / 9.0,
    2.0 / 11.0,
    2.0 / 13.0,
    2.0 / 15.0,
    2.0 / 17.0,
    2.0 / 19.0,
];
/// ln2^k / k!: 2^f for |f| ≤ 1/2.
const EXP2_POLY: [f64; 13] = [
    1.0,
    std::f64::consts::LN_2,
    0.240_226_506_959_100_7,
    0.055_504_108_664_821_576,
    0.009_618_129_107_628_477,
    0.001_333_355_814_642_844_1,
    0.000_154_035_303_933_816_06,
    1.525_273_380_405_983_8e-5,
    1.321_548_679_014_430_5e-6,
    1.017_808_600_923_969_6e-7,
    7.054_911_620_801_121e-9,
    4.445_538_271_870_81e-10,
    2.567_843_599_348_819_6e-11,
];

/// log2 v for positive normal f64 v, to about 2^-51 relative.
#[inline(always)]
fn log2_64(v: f64) -> f64 {
    let bits = v.to_bits();
    // The biased exponent as a float without an int-to-float conversion:
    // 2^52 + k has k in its mantissa.
    let biased = f64::from_bits((bits >> 52) | 0x4330_0000_0000_0000) - 4_503_599_627_370_496.0;
    let m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000);
    let big = m > std::f64::consts::SQRT_2;
    let m = sel64(big, m * 0.5, m);
    let e = biased - 1023.0 + sel64(big, 1.0, 0.0);
    let s = (m - 1.0) / (m + 1.0);
    let ln_m = s * horner64(&ATANH_POLY, s * s);
    fma64(ln_m, LOG2E_64, e)
}

/// 2^t for |t| ≤ 1000.
#[inline(always)]
fn exp2_64(t: f64) -> f64 {
    let tt = t + MAGIC64;
    let n = tt - MAGIC64;
    let p = horner64(&EXP2_POLY, t - n);
    let scale = f64::from_bits((tt.to_bits() << 52).wrapping_add(1023 << 52));
    p * scale
}

/// x^y for finite positive x and finite y, in f64: the product y·log2 x
/// carries ~2^-50 relative error, far below an f32 ulp of the result.
/// Results beyond f32's range round to 0 or ∞ in the final conversion.
#[inline(always)]
pub(super) fn pow(x: f32, y: f32) -> f32 {
    let t = log2_64(x as f64) * (y as f64);
    let t = t.clamp(-400.0, 400.0);
    exp2_64(t) as f32
}

#[inline(always)]
pub(super) fn pow_fast(x: f32, y: f32) -> bool {
    x > 0.0 && x <= f32::MAX && y.abs() <= f32::MAX
}

pub(super) fn pow_slow(x: f32, y: f32) -> f32 {
    (x as f64).powf(y as f64) as f32
}
