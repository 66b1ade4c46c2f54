//! Number traits the float kernels are generic over.
//!
//! f32 and f64 compute natively ([`Real`]); f16 and bf16 ([`HalfFloat`]) are
//! widened to f32, computed there, and rounded back once per op, which is
//! what XLA's CPU backend does for them.

use half::{bf16, f16};

use crate::tensor::HostElem;

/// A float type kernels compute in directly.
pub(crate) trait Real: HostElem + num_traits::Float {
    /// Round half to even (`round_nearest_even`).
    fn round_even(self) -> Self;
}

impl Real for f32 {
    fn round_even(self) -> f32 {
        self.round_ties_even()
    }
}

impl Real for f64 {
    fn round_even(self) -> f64 {
        self.round_ties_even()
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

/// StableHLO `maximum` on floats: NaN if either side is NaN.
pub(crate) fn max_nan<F: Real>(x: F, y: F) -> F {
    if x.is_nan() || y.is_nan() {
        F::nan()
    } else if x >= y {
        x
    } else {
        y
    }
}

/// StableHLO `minimum` on floats: NaN if either side is NaN.
pub(crate) fn min_nan<F: Real>(x: F, y: F) -> F {
    if x.is_nan() || y.is_nan() {
        F::nan()
    } else if x <= y {
        x
    } else {
        y
    }
}
