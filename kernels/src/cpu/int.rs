//! Element-wise integer kernels, for every integer type (i8..i64 and
//! ui8..ui64): arithmetic, bit operations, shifts, `popcnt` and
//! `count_leading_zeros`.
//!
//! Semantics are XLA's (its CPU backend is the referee): arithmetic wraps;
//! `x / 0` has every bit set (-1, or the unsigned maximum) and `x % 0` is
//! `x`; `MIN / -1` is `MIN` and `MIN % -1` is 0; a shift by an amount that
//! is negative or at least the bit width gives 0 (left and logical right)
//! or the sign fill (arithmetic right, which reads the top bit as a sign on
//! unsigned types too).

use meshrun_compiler::ir::{BinaryOp, UnaryOp};
use ndarray::ArrayD;
use num_traits::{CheckedRem, PrimInt, WrappingAdd, WrappingMul, WrappingNeg, WrappingSub};

use crate::cpu::map::{map, zip_map};
use crate::error::{KernelError, Result};
use crate::tensor::{HostElem, HostTensor};

/// The integer types kernels compute in: every integer element type.
pub(crate) trait Int:
    HostElem + PrimInt + CheckedRem + WrappingAdd + WrappingSub + WrappingMul + WrappingNeg
{
    /// Whether the type is signed.
    fn signed() -> bool {
        Self::min_value() < Self::zero()
    }

    /// Width in bits.
    fn bits() -> u32 {
        Self::zero().count_zeros()
    }

    /// -1 for signed types, the maximum for unsigned ones: every bit set.
    fn all_ones() -> Self {
        !Self::zero()
    }
}

impl<T> Int for T where
    T: HostElem + PrimInt + CheckedRem + WrappingAdd + WrappingSub + WrappingMul + WrappingNeg
{
}

/// Run `f` on the array of an integer tensor, typed; `None` for a tensor
/// that does not hold integers.
macro_rules! with_int_array {
    ($x:expr, $a:ident => $body:expr) => {
        match $x {
            HostTensor::I8($a) => Some(HostTensor::I8($body)),
            HostTensor::I16($a) => Some(HostTensor::I16($body)),
            HostTensor::I32($a) => Some(HostTensor::I32($body)),
            HostTensor::I64($a) => Some(HostTensor::I64($body)),
            HostTensor::U8($a) => Some(HostTensor::U8($body)),
            HostTensor::U16($a) => Some(HostTensor::U16($body)),
            HostTensor::U32($a) => Some(HostTensor::U32($body)),
            HostTensor::U64($a) => Some(HostTensor::U64($body)),
            _ => None,
        }
    };
}

fn op_name(name: &str) -> String {
    format!("stablehlo.{name}")
}

/// `stablehlo.<op>` of one integer tensor; `None` when `x` holds no
/// integers.
pub(crate) fn unary(op: UnaryOp, x: &HostTensor) -> Option<Result<HostTensor>> {
    let elem = x.elem_type();
    let out = with_int_array!(x, a => match unary_int(op, a) {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    });
    out.map(Ok).or_else(|| {
        elem.is_integer()
            .then(|| Err(KernelError::unsupported(&op_name(op.name()), elem)))
    })
}

fn unary_int<I: Int>(op: UnaryOp, a: &ArrayD<I>) -> Result<ArrayD<I>> {
    let signed = I::signed();
    Ok(match op {
        UnaryOp::Negate => map(a, |x| x.wrapping_neg()),
        // abs(MIN) wraps to MIN, as in XLA.
        UnaryOp::Abs if signed => map(a, |x| if x < I::zero() { x.wrapping_neg() } else { x }),
        UnaryOp::Sign if signed => map(a, |x| {
            if x > I::zero() {
                I::one()
            } else if x < I::zero() {
                I::all_ones()
            } else {
                x
            }
        }),
        UnaryOp::Square => map(a, |x| x.wrapping_mul(&x)),
        UnaryOp::Not => map(a, |x| !x),
        UnaryOp::Popcnt => map(a, |x| I::from(x.count_ones()).unwrap_or_else(I::zero)),
        UnaryOp::CountLeadingZeros => {
            map(a, |x| I::from(x.leading_zeros()).unwrap_or_else(I::zero))
        }
        _ => return Err(KernelError::unsupported(&op_name(op.name()), I::ELEM)),
    })
}

/// `stablehlo.<op>` of two integer tensors of one type and shape (checked
/// by the caller); `None` when they do not both hold that integer type.
pub(crate) fn binary(op: BinaryOp, x: &HostTensor, y: &HostTensor) -> Option<Result<HostTensor>> {
    macro_rules! pair {
        ($($v:ident),*) => {
            match (x, y) {
                $((HostTensor::$v(a), HostTensor::$v(b)) => {
                    Some(binary_int(op, a, b).map(HostTensor::$v))
                })*
                _ => None,
            }
        };
    }
    pair!(I8, I16, I32, I64, U8, U16, U32, U64)
}

/// Integer division as XLA defines it: `x / 0` has every bit set,
/// `MIN / -1 = MIN`.
pub(crate) fn int_div<I: Int>(x: I, y: I) -> I {
    if y == I::zero() {
        I::all_ones()
    } else {
        x.checked_div(&y).unwrap_or(x)
    }
}

/// Integer remainder as XLA defines it: `x % 0 = x`, `MIN % -1 = 0`.
pub(crate) fn int_rem<I: Int>(x: I, y: I) -> I {
    if y == I::zero() {
        x
    } else {
        x.checked_rem(&y).unwrap_or(I::zero())
    }
}

/// Integer power by squaring, wrapping; a negative exponent gives 0 except
/// for bases 1 and -1 (XLA's rule).
pub(crate) fn int_pow<I: Int>(base: I, exp: I) -> I {
    if exp < I::zero() {
        let minus_one = I::all_ones();
        return if base == I::one() {
            I::one()
        } else if base == minus_one {
            if (exp & I::one()) == I::zero() {
                I::one()
            } else {
                minus_one
            }
        } else {
            I::zero()
        };
    }
    let (mut result, mut b, mut e) = (I::one(), base, exp);
    while e > I::zero() {
        if (e & I::one()) == I::one() {
            result = result.wrapping_mul(&b);
        }
        b = b.wrapping_mul(&b);
        e = e.unsigned_shr(1);
    }
    result
}

/// The shift amount `y` if it is in `0..bits` (a negative `y` is, read as
/// unsigned bits, larger than any width).
fn shift_in_range<I: Int>(y: I) -> Option<u32> {
    y.to_u64()
        .filter(|&n| n < u64::from(I::bits()))
        .map(|n| n as u32)
}

pub(crate) fn shift_left<I: Int>(x: I, y: I) -> I {
    shift_in_range(y).map_or(I::zero(), |n| x.unsigned_shl(n))
}

pub(crate) fn shift_right_logical<I: Int>(x: I, y: I) -> I {
    shift_in_range(y).map_or(I::zero(), |n| x.unsigned_shr(n))
}

pub(crate) fn shift_right_arithmetic<I: Int>(x: I, y: I) -> I {
    let n = shift_in_range(y).unwrap_or(I::bits() - 1);
    x.signed_shr(n)
}

fn binary_int<I: Int>(op: BinaryOp, a: &ArrayD<I>, b: &ArrayD<I>) -> Result<ArrayD<I>> {
    use BinaryOp as B;
    Ok(match op {
        B::Add => zip_map(a, b, |x, y| x.wrapping_add(&y)),
        B::Subtract => zip_map(a, b, |x, y| x.wrapping_sub(&y)),
        B::Multiply => zip_map(a, b, |x, y| x.wrapping_mul(&y)),
        B::Divide => zip_map(a, b, int_div),
        B::Remainder => zip_map(a, b, int_rem),
        B::Maximum => zip_map(a, b, |x, y| x.max(y)),
        B::Minimum => zip_map(a, b, |x, y| x.min(y)),
        B::Power => zip_map(a, b, int_pow),
        B::And => zip_map(a, b, |x, y| x & y),
        B::Or => zip_map(a, b, |x, y| x | y),
        B::Xor => zip_map(a, b, |x, y| x ^ y),
        B::ShiftLeft => zip_map(a, b, shift_left),
        B::ShiftRightLogical => zip_map(a, b, shift_right_logical),
        B::ShiftRightArithmetic => zip_map(a, b, shift_right_arithmetic),
        _ => return Err(KernelError::unsupported(&op_name(op.name()), I::ELEM)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t<T: HostElem>(v: &[T]) -> HostTensor {
        HostTensor::from_vec(&[v.len()], v.to_vec()).unwrap()
    }

    fn bin(op: BinaryOp, x: &HostTensor, y: &HostTensor) -> HostTensor {
        binary(op, x, y).unwrap().unwrap()
    }

    #[test]
    fn shifts_saturate_out_of_range_amounts() {
        let x = t(&[1i32, -8, -8, 5, 5, i32::MIN]);
        let y = t(&[31i32, 1, 40, -1, 32, 31]);
        assert_eq!(
            bin(BinaryOp::ShiftLeft, &x, &y),
            t(&[i32::MIN, -16, 0, 0, 0, 0])
        );
        assert_eq!(
            bin(BinaryOp::ShiftRightLogical, &x, &y),
            t(&[0i32, 0x7fff_fffc, 0, 0, 0, 1])
        );
        assert_eq!(
            bin(BinaryOp::ShiftRightArithmetic, &x, &y),
            t(&[0i32, -4, -1, 0, 0, -1])
        );
        // Unsigned: the amount is read as is; arithmetic fills the top bit.
        let u = t(&[0x8000_0000u32, 0xF0, 3]);
        let n = t(&[4u32, 4, 32]);
        assert_eq!(
            bin(BinaryOp::ShiftRightArithmetic, &u, &n),
            t(&[0xF800_0000u32, 0xF, 0])
        );
        assert_eq!(
            bin(BinaryOp::ShiftRightLogical, &u, &n),
            t(&[0x0800_0000u32, 0xF, 0])
        );
        let b = t(&[0x81u8]);
        assert_eq!(bin(BinaryOp::ShiftLeft, &b, &t(&[1u8])), t(&[0x02u8]));
        assert_eq!(
            bin(BinaryOp::ShiftRightArithmetic, &b, &t(&[200u8])),
            t(&[0xFFu8])
        );
    }

    #[test]
    fn popcnt_clz_not_negate() {
        let x = t(&[0u16, 1, 0xFFFF, 0x0100]);
        let un = |op| unary(op, &x).unwrap().unwrap();
        assert_eq!(un(UnaryOp::Popcnt), t(&[0u16, 1, 16, 1]));
        assert_eq!(un(UnaryOp::CountLeadingZeros), t(&[16u16, 15, 0, 7]));
        assert_eq!(un(UnaryOp::Not), t(&[0xFFFFu16, 0xFFFE, 0, 0xFEFF]));
        assert_eq!(un(UnaryOp::Negate), t(&[0u16, 0xFFFF, 1, 0xFF00]));
        let s = t(&[-1i8, 0, 5, i8::MIN]);
        let sun = |op| unary(op, &s).unwrap().unwrap();
        assert_eq!(sun(UnaryOp::Popcnt), t(&[8i8, 0, 2, 1]));
        assert_eq!(sun(UnaryOp::CountLeadingZeros), t(&[0i8, 8, 5, 0]));
        assert_eq!(sun(UnaryOp::Sign), t(&[-1i8, 0, 1, -1]));
        assert_eq!(sun(UnaryOp::Abs), t(&[1i8, 0, 5, i8::MIN]));
        assert!(unary(UnaryOp::Abs, &x).unwrap().is_err());
        assert!(unary(UnaryOp::Exp, &s).unwrap().is_err());
        assert!(unary(UnaryOp::Not, &t(&[1.0f32])).is_none());
    }

    #[test]
    fn unsigned_division_power_and_wrapping() {
        let a = t(&[7u32, 0, u32::MAX, 9]);
        let b = t(&[2u32, 0, 2, 0]);
        assert_eq!(
            bin(BinaryOp::Divide, &a, &b),
            t(&[3u32, u32::MAX, u32::MAX / 2, u32::MAX])
        );
        assert_eq!(bin(BinaryOp::Remainder, &a, &b), t(&[1u32, 0, 1, 9]));
        assert_eq!(bin(BinaryOp::Add, &a, &b), t(&[9u32, 0, 1, 9]));
        assert_eq!(
            bin(BinaryOp::Subtract, &b, &a),
            t(&[u32::MAX - 4, 0, 3, u32::MAX - 8])
        );
        assert_eq!(
            bin(BinaryOp::Power, &t(&[3u8, 2]), &t(&[5u8, 9])),
            t(&[243u8, 0])
        );
        assert_eq!(
            bin(BinaryOp::Maximum, &t(&[200u8]), &t(&[100u8])),
            t(&[200u8])
        );
        assert_eq!(
            bin(BinaryOp::Divide, &t(&[i16::MIN, 5]), &t(&[-1i16, 0])),
            t(&[i16::MIN, -1])
        );
        assert_eq!(
            bin(BinaryOp::Power, &t(&[-1i64, -1, 2]), &t(&[-3i64, -2, -1])),
            t(&[-1i64, 1, 0])
        );
        assert!(binary(BinaryOp::Atan2, &a, &b).unwrap().is_err());
        assert!(binary(BinaryOp::Add, &a, &t(&[1i32, 2, 3, 4])).is_none());
    }
}
