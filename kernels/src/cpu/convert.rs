//! `stablehlo.convert` between every pair of element types, with the rules
//! of [`HostElem::from_wide`]: round to nearest even between floats (and
//! from integers, by their true value), truncate and saturate float → int,
//! wrap int → narrower int, `!= 0` to bool.

use meshrun_compiler::ir::ElemType;

use crate::cpu::map::map;
use crate::error::Result;
use crate::tensor::{with_elem_type, HostElem, HostTensor};

// Here rather than in `tensor.rs`: the conversion is a kernel (`map`
// over the pool's arrays), and the tensor type sits below every kernel.
impl HostTensor {
    /// This tensor converted to element type `to` (`stablehlo.convert`).
    pub fn convert(&self, to: ElemType) -> Result<HostTensor> {
        convert(self, to)
    }
}

/// `x` converted to element type `to` (a copy when the type is the same).
pub fn convert(x: &HostTensor, to: ElemType) -> Result<HostTensor> {
    if x.elem_type() == to {
        return Ok(x.clone());
    }
    crate::with_array!(x, a: S => {
        with_elem_type!(to, "stablehlo.convert", D => {
            D::wrap(map(a, |v: S| D::from_wide(v.to_wide())))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn float_int_bool_conversions() {
        let x = HostTensor::from_vec(&[5], vec![-1.7f32, 0.0, 2.5, f32::NAN, 3e10]).unwrap();
        let i = convert(&x, ElemType::I32).unwrap();
        assert_eq!(
            i,
            HostTensor::from_vec(&[5], vec![-1, 0, 2, 0, i32::MAX]).unwrap()
        );
        let b = convert(&x, ElemType::I1).unwrap();
        assert_eq!(
            b,
            HostTensor::from_vec(&[5], vec![true, false, true, true, true]).unwrap()
        );
        let back = convert(&b, ElemType::F32).unwrap();
        assert_eq!(back.to_f64_vec(), vec![1.0, 0.0, 1.0, 1.0, 1.0]);
        let wide = convert(
            &HostTensor::from_vec(&[1], vec![-3i32]).unwrap(),
            ElemType::I64,
        );
        assert_eq!(
            wide.unwrap(),
            HostTensor::from_vec(&[1], vec![-3i64]).unwrap()
        );
    }

    #[test]
    fn rounding_to_half_types() {
        let x = HostTensor::from_vec(&[2], vec![0.1f32, 65520.0]).unwrap();
        let h = convert(&x, ElemType::F16).unwrap();
        assert_eq!(
            h,
            HostTensor::from_vec(&[2], vec![f16::from_f32(0.1), f16::INFINITY]).unwrap()
        );
        let b = convert(&x, ElemType::BF16).unwrap();
        assert_eq!(b.to_f64_vec()[0], bf16::from_f32(0.1).to_f64());
    }

    #[test]
    fn unsigned_and_narrow_integers() {
        let big = HostTensor::from_vec(&[3], vec![u64::MAX, 1 << 63, 7]).unwrap();
        let f = convert(&big, ElemType::F32).unwrap();
        assert_eq!(
            f.to_f64_vec(),
            vec![u64::MAX as f32 as f64, 2f64.powi(63), 7.0]
        );
        let i = convert(&big, ElemType::I64).unwrap();
        assert_eq!(
            i,
            HostTensor::from_vec(&[3], vec![-1i64, i64::MIN, 7]).unwrap()
        );
        let u = convert(&big, ElemType::U32).unwrap();
        assert_eq!(u, HostTensor::from_vec(&[3], vec![u32::MAX, 0, 7]).unwrap());
        let x = HostTensor::from_vec(&[4], vec![-1.5f32, 300.0, f32::NAN, 2.9]).unwrap();
        let b = convert(&x, ElemType::U8).unwrap();
        assert_eq!(b, HostTensor::from_vec(&[4], vec![0u8, 255, 0, 2]).unwrap());
        let s = convert(&x, ElemType::I8).unwrap();
        assert_eq!(
            s,
            HostTensor::from_vec(&[4], vec![-1i8, 127, 0, 2]).unwrap()
        );
        let w = convert(
            &HostTensor::from_vec(&[2], vec![-1i16, 300]).unwrap(),
            ElemType::U16,
        );
        assert_eq!(
            w.unwrap(),
            HostTensor::from_vec(&[2], vec![u16::MAX, 300]).unwrap()
        );
        // i64 -> f32 rounds once (through f64 it would round twice).
        let v = (1i64 << 60) + (1 << 36) + 1;
        let r = convert(&HostTensor::from_vec(&[1], vec![v]).unwrap(), ElemType::F32).unwrap();
        assert_eq!(r, HostTensor::from_vec(&[1], vec![v as f32]).unwrap());
    }
}
