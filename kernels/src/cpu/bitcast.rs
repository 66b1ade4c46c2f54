//! `stablehlo.bitcast_convert`: the bytes of the operand, row-major and
//! little-endian (XLA's layout on every backend meshrun targets), read
//! back as the result type. Between widths the minor dimension of the
//! narrower side holds the pieces of one wide element, low bytes first.

use half::{bf16, f16};
use meshrun_compiler::ir::{ElemType, TensorType};

use crate::error::{KernelError, Result};
use crate::tensor::{dims_of, HostTensor};

const NAME: &str = "stablehlo.bitcast_convert";

/// The row-major little-endian bytes of `t`; `None` for i1, which has no
/// bit layout.
pub fn to_le_bytes(t: &HostTensor) -> Option<Vec<u8>> {
    macro_rules! le {
        ($a:expr, $f:expr) => {
            $a.iter().flat_map(|&x| $f(x)).collect()
        };
    }
    Some(match t {
        HostTensor::F64(a) => le!(a, f64::to_le_bytes),
        HostTensor::F32(a) => le!(a, f32::to_le_bytes),
        HostTensor::F16(a) => le!(a, |x: f16| x.to_bits().to_le_bytes()),
        HostTensor::BF16(a) => le!(a, |x: bf16| x.to_bits().to_le_bytes()),
        HostTensor::I8(a) => le!(a, i8::to_le_bytes),
        HostTensor::I16(a) => le!(a, i16::to_le_bytes),
        HostTensor::I32(a) => le!(a, i32::to_le_bytes),
        HostTensor::I64(a) => le!(a, i64::to_le_bytes),
        HostTensor::U8(a) => le!(a, u8::to_le_bytes),
        HostTensor::U16(a) => le!(a, u16::to_le_bytes),
        HostTensor::U32(a) => le!(a, u32::to_le_bytes),
        HostTensor::U64(a) => le!(a, u64::to_le_bytes),
        HostTensor::Pred(_) => return None,
    })
}

/// A tensor of `ty` from its row-major little-endian bytes (exactly
/// `num_elements * byte_size` of them).
pub fn from_le_bytes(ty: &TensorType, bytes: &[u8]) -> Result<HostTensor> {
    let shape = dims_of(ty)?;
    let width = ty.elem.byte_size();
    let count: usize = shape.iter().product();
    if ty.elem == ElemType::I1 || ty.is_token() || bytes.len() != count * width {
        return Err(KernelError::invalid(
            NAME,
            format!("{} bytes cannot be read as {ty}", bytes.len()),
        ));
    }
    macro_rules! read {
        ($n:literal, $f:expr) => {
            HostTensor::from_vec(
                &shape,
                bytes
                    .chunks_exact($n)
                    .map(|c| {
                        let mut b = [0u8; $n];
                        b.copy_from_slice(c);
                        $f(b)
                    })
                    .collect(),
            )
        };
    }
    match ty.elem {
        ElemType::F64 => read!(8, f64::from_le_bytes),
        ElemType::F32 => read!(4, f32::from_le_bytes),
        ElemType::F16 => read!(2, |b| f16::from_bits(u16::from_le_bytes(b))),
        ElemType::BF16 => read!(2, |b| bf16::from_bits(u16::from_le_bytes(b))),
        ElemType::I8 => read!(1, i8::from_le_bytes),
        ElemType::I16 => read!(2, i16::from_le_bytes),
        ElemType::I32 => read!(4, i32::from_le_bytes),
        ElemType::I64 => read!(8, i64::from_le_bytes),
        ElemType::U8 => read!(1, u8::from_le_bytes),
        ElemType::U16 => read!(2, u16::from_le_bytes),
        ElemType::U32 => read!(4, u32::from_le_bytes),
        ElemType::U64 => read!(8, u64::from_le_bytes),
        ElemType::I1 | ElemType::Token => unreachable!("rejected above"),
    }
}

/// `bitcast_convert(x)` to the result type `out`.
pub fn bitcast_convert(x: &HostTensor, out: &TensorType) -> Result<HostTensor> {
    let bytes = to_le_bytes(x).ok_or_else(|| {
        KernelError::invalid(NAME, "i1 has no bit layout to reinterpret".to_string())
    })?;
    from_le_bytes(out, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_width_reinterprets_the_bits() {
        // JAX's uniform floats: (bits >> 9) | 0x3f800000 is a float in [1, 2).
        let u = HostTensor::from_vec(&[3], vec![0x3f80_0000u32, 0x4000_0000, 0xbf80_0000]).unwrap();
        let ty = TensorType::new(vec![3], ElemType::F32);
        let f = bitcast_convert(&u, &ty).unwrap();
        assert_eq!(
            f,
            HostTensor::from_vec(&[3], vec![1.0f32, 2.0, -1.0]).unwrap()
        );
        let back = bitcast_convert(&f, &u.tensor_type()).unwrap();
        assert_eq!(back, u);
        let i = bitcast_convert(&u, &TensorType::new(vec![3], ElemType::I32)).unwrap();
        assert_eq!(
            i,
            HostTensor::from_vec(&[3], vec![0x3f80_0000i32, 0x4000_0000, -0x4080_0000]).unwrap()
        );
    }

    #[test]
    fn widths_split_and_join_little_endian() {
        let w = HostTensor::from_vec(&[2], vec![0x0102_0304u32, 0xA0B0_C0D0]).unwrap();
        let narrow = TensorType::new(vec![2, 4], ElemType::U8);
        let b = bitcast_convert(&w, &narrow).unwrap();
        let want = vec![4u8, 3, 2, 1, 0xD0, 0xC0, 0xB0, 0xA0];
        assert_eq!(b, HostTensor::from_vec(&[2, 4], want).unwrap());
        assert_eq!(bitcast_convert(&b, &w.tensor_type()).unwrap(), w);
        let p = HostTensor::from_vec(&[1], vec![true]).unwrap();
        assert!(bitcast_convert(&p, &TensorType::new(vec![1], ElemType::U8)).is_err());
        let bad = TensorType::new(vec![3], ElemType::U32);
        assert!(bitcast_convert(&w, &bad).is_err());
    }
}
