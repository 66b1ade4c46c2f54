//! Blocks on the wire: a [`HostTensor`] as the little-endian bytes of its
//! elements in row-major order, and back.
//!
//! MPI moves bytes (`MPI_BYTE`) so that one code path serves every element
//! type; the receiver always knows the shape and element type it expects
//! (every member of a collective holds a block of the collective's local
//! shape), so nothing but the elements is sent, and a message of the wrong
//! length is an error, not a misread.

use half::{bf16, f16};
use meshrun_compiler::ir::ElemType;
use meshrun_kernels::HostTensor;

/// Bytes of one element of a type the host tensors hold (`None` for types
/// they do not).
pub fn elem_bytes(elem: ElemType) -> Option<usize> {
    Some(match elem {
        ElemType::F64 | ElemType::I64 | ElemType::U64 => 8,
        ElemType::F32 | ElemType::I32 | ElemType::U32 => 4,
        ElemType::F16 | ElemType::BF16 | ElemType::I16 | ElemType::U16 => 2,
        ElemType::I1 | ElemType::I8 | ElemType::U8 => 1,
        ElemType::Token => return None,
    })
}

/// The elements of `t` in row-major order, little-endian.
pub fn to_bytes(t: &HostTensor) -> Vec<u8> {
    macro_rules! le {
        ($a:expr, $bits:expr) => {
            $a.iter().flat_map(|&x| $bits(x)).collect()
        };
    }
    // `iter()` walks an ndarray in logical (row-major) order whatever its
    // memory layout.
    match t {
        HostTensor::F64(a) => le!(a, |x: f64| x.to_le_bytes()),
        HostTensor::F32(a) => le!(a, |x: f32| x.to_le_bytes()),
        HostTensor::F16(a) => le!(a, |x: f16| x.to_bits().to_le_bytes()),
        HostTensor::BF16(a) => le!(a, |x: bf16| x.to_bits().to_le_bytes()),
        HostTensor::I32(a) => le!(a, |x: i32| x.to_le_bytes()),
        HostTensor::I64(a) => le!(a, |x: i64| x.to_le_bytes()),
        HostTensor::I8(a) => le!(a, |x: i8| x.to_le_bytes()),
        HostTensor::I16(a) => le!(a, |x: i16| x.to_le_bytes()),
        HostTensor::U8(a) => le!(a, |x: u8| x.to_le_bytes()),
        HostTensor::U16(a) => le!(a, |x: u16| x.to_le_bytes()),
        HostTensor::U32(a) => le!(a, |x: u32| x.to_le_bytes()),
        HostTensor::U64(a) => le!(a, |x: u64| x.to_le_bytes()),
        HostTensor::Pred(a) => a.iter().map(|&x| u8::from(x)).collect(),
    }
}

/// A tensor of `elem` and `shape` from the bytes [`to_bytes`] makes.
pub fn from_bytes(elem: ElemType, shape: &[usize], bytes: &[u8]) -> Result<HostTensor, String> {
    let size = elem_bytes(elem).ok_or_else(|| format!("{elem} tensors are not supported"))?;
    let n: usize = shape.iter().product();
    if n.checked_mul(size) != Some(bytes.len()) {
        return Err(format!(
            "{} bytes do not hold a {elem} block of shape {shape:?} ({n} elements of {size} bytes)",
            bytes.len()
        ));
    }
    macro_rules! decode {
        ($w:literal, $f:expr) => {{
            let data: Vec<_> = bytes
                .chunks_exact($w)
                .map(|c| {
                    let mut b = [0u8; $w];
                    b.copy_from_slice(c);
                    $f(b)
                })
                .collect();
            HostTensor::from_vec(shape, data)
        }};
    }
    let t = match elem {
        ElemType::F64 => decode!(8, f64::from_le_bytes),
        ElemType::F32 => decode!(4, f32::from_le_bytes),
        ElemType::F16 => decode!(2, |b| f16::from_bits(u16::from_le_bytes(b))),
        ElemType::BF16 => decode!(2, |b| bf16::from_bits(u16::from_le_bytes(b))),
        ElemType::I32 => decode!(4, i32::from_le_bytes),
        ElemType::I64 => decode!(8, i64::from_le_bytes),
        ElemType::I8 => decode!(1, i8::from_le_bytes),
        ElemType::I16 => decode!(2, i16::from_le_bytes),
        ElemType::U8 => decode!(1, u8::from_le_bytes),
        ElemType::U16 => decode!(2, u16::from_le_bytes),
        ElemType::U32 => decode!(4, u32::from_le_bytes),
        ElemType::U64 => decode!(8, u64::from_le_bytes),
        ElemType::I1 => HostTensor::from_vec(shape, bytes.iter().map(|&b| b != 0).collect()),
        ElemType::Token => unreachable!("elem_bytes refused it above"),
    };
    t.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(t: &HostTensor) {
        let bytes = to_bytes(t);
        let back = from_bytes(t.elem_type(), t.shape(), &bytes).unwrap();
        // Bit patterns, so NaNs compare too.
        assert_eq!(to_bytes(&back), bytes);
        assert_eq!(back.tensor_type(), t.tensor_type());
    }

    #[test]
    fn every_element_type_round_trips_bitwise() {
        round_trip(&HostTensor::from_vec(&[2, 2], vec![1.5f32, -0.0, f32::NAN, 3e-42]).unwrap());
        round_trip(&HostTensor::from_vec(&[3], vec![1.0f64, f64::INFINITY, -2.5]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![f16::from_f32(0.1), f16::NAN]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![bf16::from_f32(-7.0), bf16::MAX]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![i32::MIN, 7]).unwrap());
        round_trip(&HostTensor::from_vec(&[1, 2], vec![i64::MAX, -1]).unwrap());
        round_trip(&HostTensor::from_vec(&[3], vec![true, false, true]).unwrap());
        round_trip(&HostTensor::from_vec(&[], vec![4.0f32]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![i8::MIN, 3]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![i16::MIN, 3]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![u8::MAX, 3]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![u16::MAX, 3]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![u32::MAX, 3]).unwrap());
        round_trip(&HostTensor::from_vec(&[2], vec![u64::MAX, 3]).unwrap());
    }

    #[test]
    fn bytes_are_little_endian_row_major() {
        let t = HostTensor::from_vec(&[2], vec![1i32, 256]).unwrap();
        assert_eq!(to_bytes(&t), vec![1, 0, 0, 0, 0, 1, 0, 0]);
        // A transposed view is sent in logical order.
        let a = ndarray::arr2(&[[1.0f32, 2.0], [3.0, 4.0]]).reversed_axes();
        let t = HostTensor::F32(a.into_dyn());
        let back = from_bytes(ElemType::F32, &[2, 2], &to_bytes(&t)).unwrap();
        assert_eq!(back.to_f64_vec(), vec![1.0, 3.0, 2.0, 4.0]);
    }

    #[test]
    fn a_wrong_length_is_an_error() {
        let err = from_bytes(ElemType::F32, &[2, 3], &[0u8; 20]).unwrap_err();
        assert!(err.contains("20 bytes") && err.contains("[2, 3]"), "{err}");
    }
}
