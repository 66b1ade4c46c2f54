//! Number traits the float kernels are generic over.
//!
//! f32 and f64 compute natively ([`Real`]); f16 and bf16 ([`HalfFloat`]) are
//! widened to f32, computed there, and rounded back once per op, which is
//! what XLA's CPU backend does for them.

use half::{bf16, f16};

use crate::tensor::HostElem;

/// A float type kernels compute in directly.
pub(crate) trait Real: HostElem + num_traits::Float {
    /// `tanh` as the kernels compute it (see [`fast_tanh_f32`] for f32).
    fn tanh_kernel(self) -> Self;
    /// Round half to even (`round_nearest_even`).
    fn round_even(self) -> Self;
}

impl Real for f32 {
    fn tanh_kernel(self) -> f32 {
        fast_tanh_f32(self)
    }
    fn round_even(self) -> f32 {
        self.round_ties_even()
    }
}

impl Real for f64 {
    fn tanh_kernel(self) -> f64 {
        self.tanh()
    }
    fn round_even(self) -> f64 {
        self.round_ties_even()
    }
}

/// f32 `tanh` as a clamped rational approximation, the one XLA's CPU backend
/// and Eigen use (absolute error below 1e-6, exactly ±1 at the clamp). It is
/// branch-free, so loops over it vectorize; libm's `tanhf` does not, and it
/// is several times slower on the MLP benchmarks, where tanh follows every
/// matmul.
#[allow(clippy::excessive_precision)] // coefficients as published
pub(crate) fn fast_tanh_f32(x: f32) -> f32 {
    const CLAMP: f32 = 7.90531110763549805;
    // Below this |x|, tanh(x) == x to f32 precision (and the rational form
    // would underflow for tiny x).
    const SMALL: f32 = 0.0004;
    const NUM: [f32; 7] = [
        -2.76076847742355e-16,
        2.00018790482477e-13,
        -8.60467152213735e-11,
        5.12229709037114e-08,
        1.48572235717979e-05,
        6.37261928875436e-04,
        4.89352455891786e-03,
    ];
    const DEN: [f32; 4] = [
        1.19825839466702e-06,
        1.18534705686654e-04,
        2.26843463243900e-03,
        4.89352518554385e-03,
    ];
    let c = x.clamp(-CLAMP, CLAMP);
    let x2 = c * c;
    let mut p = NUM[0];
    for k in &NUM[1..] {
        p = p * x2 + k;
    }
    let mut q = DEN[0];
    for k in &DEN[1..] {
        q = q * x2 + k;
    }
    if x.abs() < SMALL {
        x
    } else {
        c * p / q
    }
}

/// A 16-bit float type computed through f32.
pub(crate) trait HalfFloat: HostElem {
    fn widen(self) -> f32;
    fn narrow(x: f32) -> Self;
}

impl HalfFloat for f16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(x: f32) -> f16 {
        f16::from_f32(x)
    }
}

impl HalfFloat for bf16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(x: f32) -> bf16 {
        bf16::from_f32(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_tanh_is_accurate_and_bounded() {
        let mut worst = 0.0f64;
        for i in -20_000..=20_000 {
            let x = i as f32 * 5e-4;
            let got = fast_tanh_f32(x) as f64;
            worst = worst.max((got - (x as f64).tanh()).abs());
            assert!(got.abs() <= 1.0);
        }
        assert!(worst < 1e-6, "max error {worst}");
        assert_eq!(fast_tanh_f32(100.0), 1.0);
        assert_eq!(fast_tanh_f32(-f32::INFINITY), -1.0);
        assert!(fast_tanh_f32(f32::NAN).is_nan());
        assert_eq!(fast_tanh_f32(1e-30), 1e-30);
        assert_eq!(fast_tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
    }
}
