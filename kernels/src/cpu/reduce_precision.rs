//! `stablehlo.reduce_precision` on the bits of each element, as XLA's CPU
//! kernel computes it (the referee: `lax.reduce_precision` under `jax.jit`
//! on CPU, bitwise, in `kernels/tests/reduce_precision.rs`):
//! 1. when the format has fewer mantissa bits than the type, the mantissa
//!    is rounded to nearest, ties to even, by adding a bias and truncating
//!    (a carry may reach the exponent: the largest values round to inf);
//! 2. when it has fewer exponent bits, exponents above the format's
//!    largest become ±inf and those at or below its smallest normal
//!    exponent ±0 (the format has no denormals);
//! 3. NaN stays the input NaN, even with 0 mantissa bits (XLA's CPU kernel
//!    keeps it; a format without a mantissa could not hold a NaN). bf16 is
//!    the exception: XLA computes it in f32 and converts back, which makes
//!    every NaN the canonical quiet NaN with its sign — unless the format
//!    holds all of f32 (e8m23 or wider): then XLA drops the op as a no-op
//!    on f32, the two converts cancel, and NaN payloads stay.

use half::{bf16, f16};

use crate::error::{KernelError, Result};
use crate::tensor::HostTensor;

use super::map::map;

/// A float type's bit layout.
#[derive(Debug, Clone, Copy)]
struct Layout {
    exponent_bits: u32,
    mantissa_bits: u32,
}

impl Layout {
    fn width(self) -> u32 {
        1 + self.exponent_bits + self.mantissa_bits
    }
}

const F64: Layout = Layout {
    exponent_bits: 11,
    mantissa_bits: 52,
};
const F32: Layout = Layout {
    exponent_bits: 8,
    mantissa_bits: 23,
};
const F16: Layout = Layout {
    exponent_bits: 5,
    mantissa_bits: 10,
};
const BF16: Layout = Layout {
    exponent_bits: 8,
    mantissa_bits: 7,
};

/// The reduced format, as checked by the verifier (`exponent_bits >= 1`,
/// `mantissa_bits >= 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
}

impl Format {
    /// The format of the op's attributes, or why they name none.
    pub fn new(exponent_bits: i32, mantissa_bits: i32) -> Result<Format> {
        match (u32::try_from(exponent_bits), u32::try_from(mantissa_bits)) {
            (Ok(e), Ok(m)) if e >= 1 => Ok(Format {
                exponent_bits: e,
                mantissa_bits: m,
            }),
            _ => Err(KernelError::invalid(
                "stablehlo.reduce_precision",
                format!(
                    "needs exponent_bits >= 1 and mantissa_bits >= 0, got {exponent_bits} and {mantissa_bits}"
                ),
            )),
        }
    }
}

/// Steps 1 and 2 on the bits of a value of `ty` (a NaN is the caller's).
fn reduce_bits(bits: u64, ty: Layout, f: Format) -> u64 {
    let width = ty.width();
    let all = u64::MAX >> (64 - width);
    let mut v = bits;
    if f.mantissa_bits < ty.mantissa_bits {
        let drop = ty.mantissa_bits - f.mantissa_bits;
        let last_kept = 1u64 << drop;
        // Half an ulp minus one, plus the last kept bit: exact halves
        // round up only to an even result.
        let bias = (last_kept >> 1) - 1 + ((v >> drop) & 1);
        v = (v.wrapping_add(bias) & all) & !(last_kept - 1);
    }
    if f.exponent_bits < ty.exponent_bits {
        let sign = 1u64 << (width - 1);
        let exp_mask = ((1u64 << ty.exponent_bits) - 1) << ty.mantissa_bits;
        let bias = (1u64 << (ty.exponent_bits - 1)) - 1;
        let reduced_bias = (1u64 << (f.exponent_bits - 1)) - 1;
        let max_exp = (bias + reduced_bias) << ty.mantissa_bits;
        let min_exp = (bias - reduced_bias) << ty.mantissa_bits;
        let exp = v & exp_mask;
        if exp > max_exp {
            v = (v & sign) | exp_mask;
        } else if exp <= min_exp {
            v &= sign;
        }
    }
    v
}

/// Whether `bits` of `ty` are a NaN.
fn is_nan(bits: u64, ty: Layout) -> bool {
    let exp_mask = ((1u64 << ty.exponent_bits) - 1) << ty.mantissa_bits;
    let magnitude = bits & (u64::MAX >> (65 - ty.width()));
    magnitude > exp_mask
}

pub fn f64_elem(x: f64, f: Format) -> f64 {
    let b = x.to_bits();
    if is_nan(b, F64) {
        return x;
    }
    f64::from_bits(reduce_bits(b, F64, f))
}

pub fn f32_elem(x: f32, f: Format) -> f32 {
    let b = u64::from(x.to_bits());
    if is_nan(b, F32) {
        return x;
    }
    f32::from_bits(reduce_bits(b, F32, f) as u32)
}

pub fn f16_elem(x: f16, f: Format) -> f16 {
    let b = u64::from(x.to_bits());
    if is_nan(b, F16) {
        return x;
    }
    f16::from_bits(reduce_bits(b, F16, f) as u16)
}

pub fn bf16_elem(x: bf16, f: Format) -> bf16 {
    let b = u64::from(x.to_bits());
    let no_op_in_f32 = f.exponent_bits >= F32.exponent_bits && f.mantissa_bits >= F32.mantissa_bits;
    if is_nan(b, BF16) && !no_op_in_f32 {
        return bf16::from_bits((x.to_bits() & 0x8000) | 0x7fc0);
    }
    if is_nan(b, BF16) {
        return x;
    }
    bf16::from_bits(reduce_bits(b, BF16, f) as u16)
}

/// The op on a float tensor; other element types are refused (the
/// verifier already did).
pub fn reduce_precision(x: &HostTensor, f: Format) -> Result<HostTensor> {
    Ok(match x {
        HostTensor::F64(a) => HostTensor::F64(map(a, |v| f64_elem(v, f))),
        HostTensor::F32(a) => HostTensor::F32(map(a, |v| f32_elem(v, f))),
        HostTensor::F16(a) => HostTensor::F16(map(a, |v| f16_elem(v, f))),
        HostTensor::BF16(a) => HostTensor::BF16(map(a, |v| bf16_elem(v, f))),
        other => {
            return Err(KernelError::invalid(
                "stablehlo.reduce_precision",
                format!("needs a float operand, not {}", other.tensor_type()),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(e: u32, m: u32) -> Format {
        Format {
            exponent_bits: e,
            mantissa_bits: m,
        }
    }

    #[test]
    fn bf16_format_in_f32_rounds_ties_to_even_and_keeps_range() {
        let bf = fmt(8, 7);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1).
        assert_eq!(f32_elem(1.0 + 2f32.powi(-8), bf), 1.0);
        // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to even.
        assert_eq!(f32_elem(1.0 + 3.0 * 2f32.powi(-8), bf), 1.0 + 2f32.powi(-6));
        assert_eq!(f32_elem(f32::MAX, bf), f32::INFINITY);
        assert_eq!(f32_elem(-f32::MAX, bf), f32::NEG_INFINITY);
        // Same exponent range as f32: denormals stay (rounded).
        assert_eq!(f32_elem(f32::from_bits(1), bf), 0.0);
        assert_eq!(
            f32_elem(f32::from_bits(0x10000), bf),
            f32::from_bits(0x10000)
        );
        assert!(f32_elem(f32::NAN, fmt(1, 0)).is_nan());
    }

    #[test]
    fn narrow_exponent_overflows_and_flushes() {
        let e5m2 = fmt(5, 2);
        assert_eq!(f32_elem(57344.0, e5m2), 57344.0); // e5m2's largest
        assert_eq!(f32_elem(65536.0, e5m2), f32::INFINITY);
        assert_eq!(f32_elem(2f32.powi(-14), e5m2), 2f32.powi(-14)); // smallest normal
        assert_eq!(
            f32_elem(-(2f32.powi(-15)), e5m2).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(f64_elem(1e300, fmt(8, 23)), f64::INFINITY);
    }

    #[test]
    fn refuses_formats_the_verifier_refuses() {
        assert!(Format::new(0, 3).is_err());
        assert!(Format::new(4, -1).is_err());
        let ints = HostTensor::from_vec(&[1], vec![1i32]).unwrap();
        assert!(reduce_precision(&ints, fmt(4, 3)).is_err());
    }
}
