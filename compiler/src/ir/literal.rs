//! Constant data of `stablehlo.constant dense<...>`.
//!
//! Values are stored exactly: floats as the f64 that equals the element
//! type's value (an f32/f16/bf16 value is exactly representable in f64),
//! integers as i64 (u64 values above i64::MAX wrap; meshrun has no use for
//! them), booleans as bool. Equality compares float bits so that NaN
//! constants round-trip.

use crate::ir::types::ElemType;

#[derive(Debug, Clone, Copy)]
pub enum Scalar {
    Float(f64),
    Int(i64),
    Bool(bool),
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Scalar::Float(a), Scalar::Float(b)) => a.to_bits() == b.to_bits(),
            (Scalar::Int(a), Scalar::Int(b)) => a == b,
            (Scalar::Bool(a), Scalar::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Float(x) => x,
            Scalar::Int(i) => i as f64,
            Scalar::Bool(b) => b as i64 as f64,
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Float(x) => x as i64,
            Scalar::Int(i) => i,
            Scalar::Bool(b) => b as i64,
        }
    }
}

/// Round `x` to the nearest value of a float element type, returned as f64.
pub fn round_to_elem(x: f64, elem: ElemType) -> f64 {
    match elem {
        ElemType::F32 => x as f32 as f64,
        ElemType::F16 => half::f16::from_f64(x).to_f64(),
        ElemType::BF16 => half::bf16::from_f64(x).to_f64(),
        _ => x,
    }
}

/// Decode a float from its bit pattern in `elem`'s encoding (MLIR writes
/// non-finite float constants as hex bits, e.g. `0xFF800000` is f32 -inf).
pub fn float_from_bits(bits: u64, elem: ElemType) -> f64 {
    match elem {
        ElemType::F64 => f64::from_bits(bits),
        ElemType::F32 => f32::from_bits(bits as u32) as f64,
        ElemType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        ElemType::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        _ => bits as f64,
    }
}

/// The bit pattern of `x` in `elem`'s float encoding.
pub fn float_to_bits(x: f64, elem: ElemType) -> u64 {
    match elem {
        ElemType::F64 => x.to_bits(),
        ElemType::F32 => (x as f32).to_bits() as u64,
        ElemType::F16 => half::f16::from_f64(x).to_bits() as u64,
        ElemType::BF16 => half::bf16::from_f64(x).to_bits() as u64,
        _ => x as u64,
    }
}

/// The payload of `dense<...>`: one value for every element (a splat) or
/// all elements in row-major order.
#[derive(Debug, Clone, PartialEq)]
pub enum DenseLiteral {
    Splat(Scalar),
    Elements(Vec<Scalar>),
}

impl DenseLiteral {
    /// Element `i` (row-major) of a literal with `n` elements.
    pub fn get(&self, i: usize) -> Scalar {
        match self {
            DenseLiteral::Splat(s) => *s,
            DenseLiteral::Elements(v) => v[i],
        }
    }

    /// Number of stored values (1 for a splat).
    pub fn stored_len(&self) -> usize {
        match self {
            DenseLiteral::Splat(_) => 1,
            DenseLiteral::Elements(v) => v.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_constants_compare_equal_by_bits() {
        let a = Scalar::Float(f64::NAN);
        assert_eq!(a, a);
        assert_ne!(Scalar::Float(0.0), Scalar::Float(-0.0));
    }

    #[test]
    fn hex_bits_decode() {
        assert_eq!(
            float_from_bits(0xFF80_0000, ElemType::F32),
            f64::NEG_INFINITY
        );
        assert_eq!(float_from_bits(0xFC00, ElemType::F16), f64::NEG_INFINITY);
        assert_eq!(float_from_bits(0xFF80, ElemType::BF16), f64::NEG_INFINITY);
        assert_eq!(float_to_bits(f64::NEG_INFINITY, ElemType::F32), 0xFF80_0000);
        assert_eq!(round_to_elem(0.1, ElemType::F32), 0.1f32 as f64);
    }
}
