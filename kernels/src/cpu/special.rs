//! CHLO's element-wise special functions that JAX leaves in lowered text:
//! `erf`, `erfc`, `erf_inv`, `lgamma`, `digamma`, `bessel_i1e`, the inverse
//! and hyperbolic trigonometric functions, `polygamma`, `zeta` and
//! `next_after`.
//!
//! Values are computed in f64 and rounded once to the element type (f16
//! and bf16 arrive widened to f32, see `elementwise`), so they are at least
//! as accurate as XLA's f32 approximations; the domain rules (poles, NaN
//! outside the domain) are those of StableHLO's CHLO decompositions.
//! `next_after` works on the bits of the element type itself.

use std::f64::consts::PI;

use half::{bf16, f16};
use meshrun_compiler::ir::{BinaryOp, Scalar, UnaryOp};
use ndarray::ArrayD;

use crate::cpu::map::{map, zip_map};
use crate::cpu::real::Real;
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

fn f64_of<F: Real>(x: F) -> f64 {
    HostElem::to_f64(x)
}

fn from_f64<F: Real>(x: f64) -> F {
    F::from_scalar(Scalar::Float(x))
}

/// A CHLO unary function (or an inverse/hyperbolic trigonometric one) on
/// floats; an error for ops that are not float functions.
pub(crate) fn unary_real<F: Real>(op: UnaryOp, a: &ArrayD<F>) -> Result<ArrayD<F>> {
    use UnaryOp as U;
    let f: fn(f64) -> f64 = match op {
        U::Erf => libm::erf,
        U::Erfc => libm::erfc,
        U::ErfInv => erf_inv,
        U::Lgamma => lgamma,
        U::Digamma => digamma,
        U::BesselI1e => bessel_i1e,
        U::Acos => f64::acos,
        U::Acosh => f64::acosh,
        U::Asin => f64::asin,
        U::Asinh => f64::asinh,
        U::Atan => f64::atan,
        U::Atanh => f64::atanh,
        U::Cosh => f64::cosh,
        U::Sinh => f64::sinh,
        _ => return Err(KernelError::unsupported(&op.full_name(), F::ELEM)),
    };
    Ok(map(a, |x| from_f64(f(f64_of(x)))))
}

/// A CHLO binary function on floats (`polygamma`, `zeta`).
pub(crate) fn binary_real<F: Real>(
    op: BinaryOp,
    a: &ArrayD<F>,
    b: &ArrayD<F>,
) -> Result<ArrayD<F>> {
    let f: fn(f64, f64) -> f64 = match op {
        BinaryOp::Polygamma => polygamma,
        BinaryOp::Zeta => zeta,
        _ => return Err(KernelError::unsupported(&op.full_name(), F::ELEM)),
    };
    Ok(zip_map(a, b, |x, y| from_f64(f(f64_of(x), f64_of(y)))))
}

/// `erf⁻¹` on [-1, 1]: ±inf at ±1, NaN outside. A rational first guess
/// (Giles' single-precision approximation) refined by Newton steps on
/// `erf`.
pub(crate) fn erf_inv(x: f64) -> f64 {
    if x.is_nan() || x.abs() > 1.0 {
        return f64::NAN;
    }
    if x.abs() == 1.0 {
        return x * f64::INFINITY;
    }
    let w = -((1.0 - x) * (1.0 + x)).ln();
    let guess = if w < 5.0 {
        let w = w - 2.5;
        let c = [
            2.810_226_36e-08,
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ];
        c.iter().fold(0.0, |p, &k| p * w + k)
    } else {
        let w = w.sqrt() - 3.0;
        let c = [
            -0.000_200_214_257,
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ];
        c.iter().fold(0.0, |p, &k| p * w + k)
    } * x;
    // Newton on erf(y) - x; erf'(y) = 2/sqrt(pi) exp(-y^2).
    let mut y = guess;
    for _ in 0..3 {
        let slope = 2.0 / PI.sqrt() * (-y * y).exp();
        if slope == 0.0 {
            break;
        }
        y -= (libm::erf(y) - x) / slope;
    }
    y
}

/// `log |Γ(x)|`; +inf at the poles (0 and the negative integers).
pub(crate) fn lgamma(x: f64) -> f64 {
    if x <= 0.0 && x == x.floor() {
        return f64::INFINITY;
    }
    libm::lgamma(x)
}

/// The digamma function ψ = Γ'/Γ; NaN at the poles (0 and the negative
/// integers).
pub(crate) fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x < 0.5 {
        // Reflection: ψ(x) = ψ(1 - x) - π / tan(πx).
        return digamma(1.0 - x) - PI / (PI * x).tan();
    }
    // Recurrence ψ(x) = ψ(x + 1) - 1/x up to where the asymptotic series
    // is accurate.
    let (mut x, mut acc) = (x, 0.0);
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    // ψ(x) ~ ln x - 1/(2x) - Σ B₂ₖ / (2k x²ᵏ).
    let inv2 = 1.0 / (x * x);
    let b2k_over_2k = [
        1.0 / 12.0,
        -1.0 / 120.0,
        1.0 / 252.0,
        -1.0 / 240.0,
        1.0 / 132.0,
        -691.0 / 32760.0,
        1.0 / 12.0,
    ];
    let tail = b2k_over_2k.iter().rev().fold(0.0, |p, &k| p * inv2 + k) * inv2;
    acc + x.ln() - 0.5 / x - tail
}

/// `polygamma(n, x)` = ψ⁽ⁿ⁾(x) for a natural number `n` (NaN for any
/// other `n`): ψ for n = 0, else (-1)ⁿ⁺¹ n! ζ(n + 1, x).
pub(crate) fn polygamma(n: f64, x: f64) -> f64 {
    if n.is_nan() || n < 0.0 || n != n.floor() {
        return f64::NAN;
    }
    if n == 0.0 {
        return digamma(x);
    }
    let sign = if n % 2.0 == 1.0 { 1.0 } else { -1.0 };
    sign * libm::lgamma(n + 1.0).exp() * zeta(n + 1.0, x)
}

/// Bernoulli numbers B₂, B₄, ..., B₂₄.
const BERNOULLI_2K: [f64; 12] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
    43867.0 / 798.0,
    -174611.0 / 330.0,
    854513.0 / 138.0,
    -236364091.0 / 2730.0,
];

/// The Hurwitz zeta function ζ(s, q) = Σₖ (q + k)⁻ˢ, by Euler–Maclaurin
/// summation. Domain as CHLO's: +inf at s = 1, NaN for s < 1; for q ≤ 0,
/// `s` must be an integer (NaN otherwise), and an integer q ≤ 0 is a pole
/// (+inf for even s, NaN for odd).
pub(crate) fn zeta(s: f64, q: f64) -> f64 {
    if s.is_nan() || q.is_nan() {
        return f64::NAN;
    }
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return if s == s.floor() && s % 2.0 == 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            };
        }
        if s != s.floor() {
            return f64::NAN;
        }
    }
    const N: usize = 12;
    let mut sum = 0.0;
    let mut a = q;
    for _ in 0..N {
        let term = a.powf(-s);
        sum += term;
        // Converged: the rest cannot change the sum.
        if term.abs() < sum.abs() * f64::EPSILON {
            return sum;
        }
        a += 1.0;
    }
    // Tail from a = q + N: ∫ + half the first term + Bernoulli corrections
    // B₂ⱼ/(2j)! · s(s+1)...(s+2j-2) · a^(-s-2j+1).
    sum += a.powf(1.0 - s) / (s - 1.0) + 0.5 * a.powf(-s);
    let mut rising = s; // s(s+1)...(s+2j-2)
    let mut factorial = 2.0; // (2j)!
    let mut power = a.powf(-s - 1.0);
    for (j, b) in BERNOULLI_2K.iter().enumerate() {
        let term = b / factorial * rising * power;
        sum += term;
        if term.abs() < sum.abs() * f64::EPSILON {
            break;
        }
        let k = 2.0 * (j as f64 + 1.0);
        rising *= (s + k - 1.0) * (s + k);
        factorial *= (k + 1.0) * (k + 2.0);
        power /= a * a;
    }
    sum
}

/// `exp(-|x|) I₁(x)`, the exponentially scaled modified Bessel function
/// of order one (odd in `x`): its power series for |x| ≤ 20, Hankel's
/// asymptotic expansion beyond.
pub(crate) fn bessel_i1e(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    let value = if ax <= 20.0 {
        // I₁(x) = Σ (x/2)^(2k+1) / (k! (k+1)!).
        let half = ax / 2.0;
        let q = half * half;
        let mut term = half;
        let mut sum = term;
        // Terms shrink once k > x/2; 100 terms converge for every x <= 20.
        for k in 1..100 {
            let k = f64::from(k);
            term *= q / (k * (k + 1.0));
            sum += term;
            if term <= sum * f64::EPSILON {
                break;
            }
        }
        sum * (-ax).exp()
    } else if ax.is_infinite() {
        0.0
    } else {
        // I₁(x) e⁻ˣ ~ 1/sqrt(2πx) Σ (-1)ᵏ aₖ / xᵏ, aₖ = Πⱼ₌₁..ₖ (4 - (2j-1)²) / (k! 8ᵏ).
        let mut term = 1.0;
        let mut sum = 1.0;
        for k in 1..30 {
            let j = 2.0 * k as f64 - 1.0;
            term *= -(4.0 - j * j) / (k as f64 * 8.0 * ax);
            sum += term;
            if term.abs() < f64::EPSILON * sum.abs() {
                break;
            }
        }
        sum / (2.0 * PI * ax).sqrt()
    };
    value.copysign(x)
}

/// The next float after `x` toward `y` in the element type's own bits
/// (C's `nextafter`): NaN if either is NaN, `y` if they are equal, the
/// smallest subnormal signed like `y` from zero.
pub(crate) fn next_after(x: &HostTensor, y: &HostTensor) -> Result<HostTensor> {
    let name = BinaryOp::NextAfter.full_name();
    macro_rules! step {
        ($a:expr, $b:expr, $t:ty, $bits:ty, $to:expr, $from:expr) => {
            zip_map($a, $b, |p: $t, q: $t| {
                $from(next_after_bits::<$bits>(
                    $to(p),
                    $to(q),
                    p.is_nan() || q.is_nan(),
                    p == q,
                    $to(<$t>::NAN),
                ))
            })
        };
    }
    Ok(match (x, y) {
        (HostTensor::F64(a), HostTensor::F64(b)) => {
            HostTensor::F64(step!(a, b, f64, u64, f64::to_bits, f64::from_bits))
        }
        (HostTensor::F32(a), HostTensor::F32(b)) => {
            HostTensor::F32(step!(a, b, f32, u32, f32::to_bits, f32::from_bits))
        }
        (HostTensor::F16(a), HostTensor::F16(b)) => {
            HostTensor::F16(step!(a, b, f16, u16, f16::to_bits, f16::from_bits))
        }
        (HostTensor::BF16(a), HostTensor::BF16(b)) => {
            HostTensor::BF16(step!(a, b, bf16, u16, bf16::to_bits, bf16::from_bits))
        }
        _ if x.elem_type() != y.elem_type() => {
            return Err(KernelError::invalid(
                &name,
                format!(
                    "operands have different element types ({} and {})",
                    x.elem_type(),
                    y.elem_type()
                ),
            ))
        }
        _ => return Err(KernelError::unsupported(&name, x.elem_type())),
    })
}

/// One step of `next_after` on raw bits (sign-magnitude floats).
fn next_after_bits<B>(x: B, y: B, any_nan: bool, equal: bool, nan: B) -> B
where
    B: num_traits::PrimInt,
{
    if any_nan {
        return nan;
    }
    if equal {
        return y;
    }
    let sign = B::one().unsigned_shl(B::zero().count_zeros() - 1);
    let (x_mag, y_mag) = (x & !sign, y & !sign);
    if x_mag == B::zero() {
        return (y & sign) | B::one();
    }
    let x_sign = x & sign;
    let toward_zero = x_sign != (y & sign) || x_mag > y_mag;
    if toward_zero {
        x - B::one()
    } else {
        x + B::one()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) {
        let ok = (got - want).abs() <= rel * want.abs().max(1e-300) || got == want;
        assert!(ok, "got {got}, want {want}");
    }

    #[test]
    fn erf_inv_inverts_erf() {
        for i in -999..=999 {
            let x = i as f64 / 1000.0;
            close(libm::erf(erf_inv(x)), x, 1e-14);
        }
        close(erf_inv(0.5), 0.476_936_276_204_469_9, 1e-15);
        assert_eq!(erf_inv(1.0), f64::INFINITY);
        assert_eq!(erf_inv(-1.0), f64::NEG_INFINITY);
        assert!(erf_inv(1.5).is_nan());
        assert_eq!(erf_inv(0.0), 0.0);
    }

    #[test]
    fn digamma_polygamma_and_zeta_known_values() {
        let euler = 0.577_215_664_901_532_9;
        close(digamma(1.0), -euler, 1e-14);
        close(digamma(0.5), -euler - 2.0 * 2f64.ln(), 1e-14);
        close(digamma(-0.5), 0.036_489_973_978_576_52, 1e-12);
        close(digamma(100.0), 4.600_161_852_738_087, 1e-14);
        assert!(digamma(0.0).is_nan() && digamma(-3.0).is_nan());
        // ζ(2) = π²/6, ζ(4, 1) = π⁴/90, ζ(2, 0.5) = π²/2.
        close(zeta(2.0, 1.0), PI * PI / 6.0, 1e-14);
        close(zeta(4.0, 1.0), PI.powi(4) / 90.0, 1e-14);
        close(zeta(2.0, 0.5), PI * PI / 2.0, 1e-14);
        close(
            zeta(3.0, 1e-3),
            1e9 + 1.202_056_903_159_594 - 3.0 * 1.082_323_233_711_138e-3,
            1e-12,
        );
        assert_eq!(zeta(1.0, 2.0), f64::INFINITY);
        assert!(zeta(0.5, 2.0).is_nan());
        assert!(zeta(2.5, -1.5).is_nan());
        assert_eq!(zeta(2.0, -2.0), f64::INFINITY);
        // ψ'(1) = π²/6, ψ''(1) = -2ζ(3).
        close(polygamma(1.0, 1.0), PI * PI / 6.0, 1e-14);
        close(polygamma(2.0, 1.0), -2.0 * 1.202_056_903_159_594, 1e-13);
        close(polygamma(0.0, 3.0), digamma(3.0), 0.0);
        assert!(polygamma(1.5, 1.0).is_nan() && polygamma(-1.0, 1.0).is_nan());
    }

    #[test]
    fn lgamma_and_bessel_i1e() {
        close(lgamma(0.5), PI.sqrt().ln(), 1e-14);
        close(lgamma(10.0), 362_880f64.ln(), 1e-14);
        assert_eq!(lgamma(-2.0), f64::INFINITY);
        // Reference values: scipy.special.i1e.
        close(bessel_i1e(1.0), 0.207_910_415_349_708_4, 1e-14);
        close(bessel_i1e(-1.0), -0.207_910_415_349_708_4, 1e-14);
        close(bessel_i1e(10.0), 0.121_262_681_384_455_5, 1e-13);
        close(bessel_i1e(20.0), 0.087_506_222_183_288_67, 1e-13);
        close(bessel_i1e(20.000_001), bessel_i1e(20.0), 1e-6);
        close(bessel_i1e(100.0), 0.039_744_153_025_130_25, 1e-13);
        assert_eq!(bessel_i1e(0.0), 0.0);
        assert_eq!(bessel_i1e(f64::INFINITY), 0.0);
    }

    #[test]
    fn next_after_steps_in_the_element_type() {
        let x = HostTensor::from_vec(&[5], vec![1.0f32, 1.0, 0.0, -0.0, f32::NAN]).unwrap();
        let y = HostTensor::from_vec(&[5], vec![2.0f32, 0.0, -1.0, 0.0, 1.0]).unwrap();
        let got = next_after(&x, &y).unwrap();
        let HostTensor::F32(a) = got else { panic!() };
        let a: Vec<f32> = a.iter().copied().collect();
        assert_eq!(a[0], f32::from_bits(1.0f32.to_bits() + 1));
        assert_eq!(a[1], f32::from_bits(1.0f32.to_bits() - 1));
        assert_eq!(a[2].to_bits(), 0x8000_0001);
        assert_eq!(a[3].to_bits(), 0);
        assert!(a[4].is_nan());
        let h = HostTensor::from_vec(&[1], vec![bf16::ONE]).unwrap();
        let z = HostTensor::from_vec(&[1], vec![bf16::ZERO]).unwrap();
        let down = next_after(&h, &z).unwrap();
        assert_eq!(
            down,
            HostTensor::from_vec(&[1], vec![bf16::from_bits(0x3f7f)]).unwrap()
        );
    }
}
