//! `.npy` files to and from [`HostTensor`].
//!
//! f32, f64, bool and every integer type go through `ndarray-npy`. It has no 16-bit
//! floats, so those are read and written here: f16 as numpy's `<f2`, bf16 as
//! `<V2` (2-byte void), which is how numpy saves an `ml_dtypes.bfloat16`
//! array (load it back with `np.load(p).view(ml_dtypes.bfloat16)`).
//! Fortran-order files are read too. Errors name the file and what is wrong.

use std::fs;
use std::path::Path;

use half::{bf16, f16};
use meshrun_compiler::ir::TensorType;
use meshrun_kernels::HostTensor;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndarray_npy::{ReadNpyExt, WriteNpyExt};

use crate::error::RuntimeError;

fn npy_err(path: &Path, message: impl Into<String>) -> RuntimeError {
    RuntimeError::Npy {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Read a `.npy` file; the element type comes from the file.
pub fn read_npy(path: &Path) -> Result<HostTensor, RuntimeError> {
    let bytes = fs::read(path).map_err(|e| npy_err(path, format!("cannot read: {e}")))?;
    decode(&bytes).map_err(|m| npy_err(path, m))
}

/// Read a `.npy` file that must hold a tensor of type `expected`.
pub fn read_npy_as(path: &Path, expected: &TensorType) -> Result<HostTensor, RuntimeError> {
    let t = read_npy(path)?;
    if t.tensor_type() != *expected {
        return Err(npy_err(
            path,
            format!(
                "expected {expected}, file holds shape {:?} {}",
                t.shape(),
                t.elem_type()
            ),
        ));
    }
    Ok(t)
}

/// Write `t` to a `.npy` file (row-major).
pub fn write_npy(path: &Path, t: &HostTensor) -> Result<(), RuntimeError> {
    let bytes = encode(t).map_err(|m| npy_err(path, m))?;
    fs::write(path, bytes).map_err(|e| npy_err(path, format!("cannot write: {e}")))
}

/// The parts of an npy header meshrun needs.
#[derive(Debug, PartialEq)]
pub(crate) struct Header {
    pub(crate) descr: String,
    pub(crate) fortran_order: bool,
    pub(crate) shape: Vec<usize>,
    /// Where the data starts.
    pub(crate) data_offset: usize,
}

const MAGIC: &[u8] = b"\x93NUMPY";

pub(crate) fn parse_header(bytes: &[u8]) -> Result<Header, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not an .npy file (bad magic)".into());
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let text = bytes.get(start..start + len).ok_or("header is cut short")?;
    let text = std::str::from_utf8(text).map_err(|_| "header is not text")?;
    Ok(Header {
        descr: dict_value(text, "descr")
            .and_then(|v| v.strip_prefix('\'')?.split('\'').next())
            .ok_or("header has no 'descr' string (structured dtypes are not supported)")?
            .to_string(),
        fortran_order: dict_value(text, "fortran_order")
            .ok_or("header has no 'fortran_order'")?
            .starts_with("True"),
        shape: parse_shape(dict_value(text, "shape").ok_or("header has no 'shape'")?)?,
        data_offset: start + len,
    })
}

/// The text after `'key':` in a header dict, whitespace trimmed.
fn dict_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let at = text.find(&format!("'{key}'"))?;
    let rest = text[at + key.len() + 2..].trim_start().strip_prefix(':')?;
    Some(rest.trim_start())
}

/// `(2, 3)` / `(4,)` / `()` at the start of `s`.
fn parse_shape(s: &str) -> Result<Vec<usize>, String> {
    let inner = s
        .strip_prefix('(')
        .and_then(|r| r.split(')').next())
        .ok_or("'shape' is not a tuple")?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse()
                .map_err(|_| format!("bad dimension {p:?} in 'shape'"))
        })
        .collect()
}

/// The tensor in the bytes of a `.npy` file (what `np.save` writes).
pub fn decode(bytes: &[u8]) -> Result<HostTensor, String> {
    let h = parse_header(bytes)?;
    let via_crate = |e: ndarray_npy::ReadNpyError| format!("cannot decode {}: {e}", h.descr);
    Ok(match h.descr.as_str() {
        "<f4" | ">f4" => HostTensor::F32(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<f8" | ">f8" => HostTensor::F64(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<i4" | ">i4" => HostTensor::I32(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<i8" | ">i8" => HostTensor::I64(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "|b1" => HostTensor::Pred(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "|i1" => HostTensor::I8(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<i2" | ">i2" => HostTensor::I16(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "|u1" => HostTensor::U8(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<u2" | ">u2" => HostTensor::U16(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<u4" | ">u4" => HostTensor::U32(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<u8" | ">u8" => HostTensor::U64(ArrayD::read_npy(bytes).map_err(via_crate)?),
        "<f2" | ">f2" => HostTensor::F16(read_u16s(bytes, &h, f16::from_bits)?),
        "<V2" | "|V2" => HostTensor::BF16(read_u16s(bytes, &h, bf16::from_bits)?),
        other => return Err(format!("unsupported dtype {other:?}")),
    })
}

/// The data of a 2-byte element type, decoded from its bit patterns.
fn read_u16s<T>(bytes: &[u8], h: &Header, from_bits: fn(u16) -> T) -> Result<ArrayD<T>, String> {
    let n: usize = h.shape.iter().product();
    let data = bytes
        .get(h.data_offset..)
        .filter(|d| d.len() == 2 * n)
        .ok_or_else(|| format!("data is not {n} elements of 2 bytes (shape {:?})", h.shape))?;
    let big_endian = h.descr.starts_with('>');
    let values = data
        .chunks_exact(2)
        .map(|c| {
            let pair = [c[0], c[1]];
            from_bits(if big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            })
        })
        .collect();
    let shape = IxDyn(&h.shape);
    let array = if h.fortran_order {
        ArrayD::from_shape_vec(shape.f(), values)
    } else {
        ArrayD::from_shape_vec(shape, values)
    };
    array.map_err(|e| e.to_string())
}

/// The bytes of a `.npy` file holding `t` (what `np.load` reads).
pub fn encode(t: &HostTensor) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let via_crate = |e: ndarray_npy::WriteNpyError| format!("cannot encode: {e}");
    match t {
        HostTensor::F32(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::F64(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::I32(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::I64(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::Pred(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::I8(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::I16(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::U8(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::U16(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::U32(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::U64(a) => a.write_npy(&mut out).map_err(via_crate)?,
        HostTensor::F16(a) => write_u16s(&mut out, "<f2", a, |x| x.to_bits()),
        HostTensor::BF16(a) => write_u16s(&mut out, "<V2", a, |x| x.to_bits()),
    }
    Ok(out)
}

/// A version 1.0 file of a 2-byte element type, row-major.
fn write_u16s<T: Copy>(out: &mut Vec<u8>, descr: &str, a: &ArrayD<T>, bits: fn(T) -> u16) {
    let dims: Vec<String> = a.shape().iter().map(usize::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so that the data starts on a 64-byte boundary; end with '\n'.
    let used = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - used % 64) % 64));
    header.push('\n');
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &x in a.iter() {
        out.extend_from_slice(&bits(x).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_parsing() {
        let text = "{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3), }    \n";
        let mut h = MAGIC.to_vec();
        h.extend_from_slice(&[1, 0]);
        h.extend_from_slice(&(text.len() as u16).to_le_bytes());
        h.extend_from_slice(text.as_bytes());
        let parsed = parse_header(&h).unwrap();
        assert_eq!(parsed.data_offset, h.len());
        assert!(parse_header(&h[..20]).unwrap_err().contains("cut short"));
        assert_eq!(parsed.descr, "<f2");
        assert!(parsed.fortran_order);
        assert_eq!(parsed.shape, vec![2, 3]);
        assert_eq!(parse_shape("(),").unwrap(), Vec::<usize>::new());
        assert_eq!(parse_shape("(7,)").unwrap(), vec![7]);
        assert!(parse_header(b"PK\x03\x04 not npy").is_err());
    }

    #[test]
    fn fortran_order_f16_is_read_in_logical_order() {
        // np.asfortranarray(np.arange(6, dtype=np.float16).reshape(2, 3))
        let mut bytes = Vec::new();
        let hdr = "{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3), }";
        let hdr = format!("{hdr:<117}\n");
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(hdr.len() as u16).to_le_bytes());
        bytes.extend_from_slice(hdr.as_bytes());
        for v in [0.0f32, 3.0, 1.0, 4.0, 2.0, 5.0] {
            bytes.extend_from_slice(&f16::from_f32(v).to_bits().to_le_bytes());
        }
        let t = decode(&bytes).unwrap();
        assert_eq!(t.to_f64_vec(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }
}
