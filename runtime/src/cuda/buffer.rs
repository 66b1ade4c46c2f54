//! Device buffers: plain device allocations (never managed memory), one
//! typed `CudaSlice` per element type, shared by `Arc` and never written
//! after they are made (every op returns new buffers), so a handle can be
//! cloned, reshaped (same data, new type: no copy) and read by other mesh
//! devices' streams. cudarc records a read and a write event per
//! allocation and makes every stream that uses one wait for its last
//! writer, and frees it on its own stream after its last reader.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DriverError};
use half::{bf16, f16};
use meshrun_compiler::ir::{ElemType, Scalar, TensorType};
use meshrun_kernels::{HostElem, HostTensor};

/// The elements of a device buffer, by element type (`i1` as bytes 0/1).
/// `ui32` and `ui64` are storage only: `rng_bit_generator`'s state and
/// bits, and what bitcasts, copies, gathers and replacing scatters move;
/// element-wise kernels have none (an op on them is a one-line error).
#[derive(Debug)]
pub enum DevData {
    F64(CudaSlice<f64>),
    F32(CudaSlice<f32>),
    F16(CudaSlice<f16>),
    BF16(CudaSlice<bf16>),
    Pred(CudaSlice<u8>),
    I32(CudaSlice<i32>),
    I64(CudaSlice<i64>),
    U32(CudaSlice<u32>),
    U64(CudaSlice<u64>),
}

/// Match a `DevData` (or a reference to one), binding its slice to `$s`.
macro_rules! with_dev {
    ($data:expr, $s:ident => $body:expr) => {
        match $data {
            $crate::cuda::buffer::DevData::F64($s) => $body,
            $crate::cuda::buffer::DevData::F32($s) => $body,
            $crate::cuda::buffer::DevData::F16($s) => $body,
            $crate::cuda::buffer::DevData::BF16($s) => $body,
            $crate::cuda::buffer::DevData::Pred($s) => $body,
            $crate::cuda::buffer::DevData::I32($s) => $body,
            $crate::cuda::buffer::DevData::I64($s) => $body,
            $crate::cuda::buffer::DevData::U32($s) => $body,
            $crate::cuda::buffer::DevData::U64($s) => $body,
        }
    };
}
pub(crate) use with_dev;

impl DevData {
    /// Elements held.
    pub fn len(&self) -> usize {
        with_dev!(self, s => s.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn elem(&self) -> ElemType {
        match self {
            DevData::F64(_) => ElemType::F64,
            DevData::F32(_) => ElemType::F32,
            DevData::F16(_) => ElemType::F16,
            DevData::BF16(_) => ElemType::BF16,
            DevData::Pred(_) => ElemType::I1,
            DevData::I32(_) => ElemType::I32,
            DevData::I64(_) => ElemType::I64,
            DevData::U32(_) => ElemType::U32,
            DevData::U64(_) => ElemType::U64,
        }
    }

    /// `len` zeros of `elem` on `stream` (at least one element is
    /// allocated, so every buffer has a valid address).
    pub fn zeros(stream: &Arc<CudaStream>, elem: ElemType, len: usize) -> Result<DevData, String> {
        let n = len.max(1);
        let e = |e: DriverError| format!("cannot allocate {n} x {elem} on the GPU: {e}");
        Ok(match elem {
            ElemType::F64 => DevData::F64(stream.alloc_zeros(n).map_err(e)?),
            ElemType::F32 => DevData::F32(stream.alloc_zeros(n).map_err(e)?),
            ElemType::F16 => DevData::F16(stream.alloc_zeros(n).map_err(e)?),
            ElemType::BF16 => DevData::BF16(stream.alloc_zeros(n).map_err(e)?),
            ElemType::I1 => DevData::Pred(stream.alloc_zeros(n).map_err(e)?),
            ElemType::I32 => DevData::I32(stream.alloc_zeros(n).map_err(e)?),
            ElemType::I64 => DevData::I64(stream.alloc_zeros(n).map_err(e)?),
            ElemType::U32 => DevData::U32(stream.alloc_zeros(n).map_err(e)?),
            ElemType::U64 => DevData::U64(stream.alloc_zeros(n).map_err(e)?),
            other => return Err(format!("the CUDA backend has no buffers of {other}")),
        })
    }

    /// A host tensor copied to the device on `stream`.
    pub fn upload(stream: &Arc<CudaStream>, t: &HostTensor) -> Result<DevData, String> {
        let e = |e: DriverError| format!("cannot copy {} to the GPU: {e}", t.tensor_type());
        // An empty tensor still gets a one-element allocation.
        fn flat<T: HostElem + Default>(a: &ndarray::ArrayD<T>) -> Vec<T> {
            let mut v: Vec<T> = a.iter().copied().collect();
            if v.is_empty() {
                v.push(T::default());
            }
            v
        }
        Ok(match t {
            HostTensor::F64(a) => DevData::F64(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::F32(a) => DevData::F32(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::F16(a) => DevData::F16(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::BF16(a) => DevData::BF16(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::Pred(a) => {
                let bytes: Vec<u8> = flat(a).into_iter().map(u8::from).collect();
                DevData::Pred(stream.clone_htod(&bytes).map_err(e)?)
            }
            HostTensor::I32(a) => DevData::I32(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::I64(a) => DevData::I64(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::U32(a) => DevData::U32(stream.clone_htod(&flat(a)).map_err(e)?),
            HostTensor::U64(a) => DevData::U64(stream.clone_htod(&flat(a)).map_err(e)?),
            other => {
                return Err(format!(
                    "the CUDA backend has no buffers of {}",
                    other.elem_type()
                ))
            }
        })
    }

    /// The first `shape`-many elements copied back to the host (waits for
    /// the copy).
    pub fn download(
        &self,
        stream: &Arc<CudaStream>,
        shape: &[usize],
    ) -> Result<HostTensor, String> {
        let n: usize = shape.iter().product();
        if n > self.len() {
            return Err(format!(
                "a buffer of {} elements read as {shape:?}",
                self.len()
            ));
        }
        let e = |e: DriverError| format!("cannot copy a buffer back from the GPU: {e}");
        let build =
            |r: Result<HostTensor, meshrun_kernels::KernelError>| r.map_err(|e| e.to_string());
        match self {
            DevData::Pred(s) => {
                let v = stream.clone_dtoh(s).map_err(e)?;
                build(HostTensor::from_vec(
                    shape,
                    v[..n].iter().map(|&b| b != 0).collect::<Vec<bool>>(),
                ))
            }
            DevData::F64(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::F32(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::F16(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::BF16(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::I32(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::I64(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::U32(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
            DevData::U64(s) => build(HostTensor::from_vec(
                shape,
                stream.clone_dtoh(s).map_err(e)?[..n].to_vec(),
            )),
        }
    }
}

/// The last handle to a buffer may be dropped on a thread bound to
/// another GPU (a block another device read in a collective): make the
/// allocation's own context current first, so cudarc frees it in the
/// right context. Every later CUDA call of that thread binds its own
/// context again (cudarc's calls do; `dot.rs` and `collectives.rs` bind
/// before their raw cuBLAS and NCCL calls).
impl Drop for DevData {
    fn drop(&mut self) {
        let ctx = with_dev!(&*self, s => s.context().clone());
        let _ = ctx.bind_to_thread();
    }
}

/// A buffer of one mesh device: a handle (cloning it copies nothing).
#[derive(Debug, Clone)]
pub struct CudaBuffer {
    pub(crate) data: Arc<DevData>,
    pub(crate) ty: TensorType,
    /// The GPU ordinal the data lives on.
    pub(crate) gpu: usize,
}

impl CudaBuffer {
    pub fn tensor_type(&self) -> &TensorType {
        &self.ty
    }

    /// The buffer's shape as `usize`s.
    pub fn shape(&self) -> Vec<usize> {
        self.ty.shape.iter().map(|&d| d.max(0) as usize).collect()
    }

    /// Elements of the tensor (the allocation may hold one more for an
    /// empty tensor).
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same data seen as another type of the same element count.
    pub fn with_type(&self, ty: TensorType) -> CudaBuffer {
        CudaBuffer {
            data: self.data.clone(),
            ty,
            gpu: self.gpu,
        }
    }
}

/// The bits of `value` converted to `elem` (StableHLO convert rules, as
/// the CPU's `HostElem::from_scalar`), for the width-generic fill and mask
/// kernels.
pub fn scalar_bits(elem: ElemType, value: Scalar) -> Result<u64, String> {
    Ok(match elem {
        ElemType::F64 => f64::from_scalar(value).to_bits(),
        ElemType::F32 => f32::from_scalar(value).to_bits() as u64,
        ElemType::F16 => f16::from_scalar(value).to_bits() as u64,
        ElemType::BF16 => bf16::from_scalar(value).to_bits() as u64,
        ElemType::I1 => bool::from_scalar(value) as u64,
        ElemType::I32 => i32::from_scalar(value) as u32 as u64,
        ElemType::I64 => i64::from_scalar(value) as u64,
        ElemType::U32 => u64::from(u32::from_scalar(value)),
        ElemType::U64 => u64::from_scalar(value),
        other => return Err(format!("no CUDA kernels for {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_bits_follow_convert_rules() {
        assert_eq!(
            scalar_bits(ElemType::F32, Scalar::Float(1.0)).unwrap(),
            0x3f80_0000
        );
        assert_eq!(
            scalar_bits(ElemType::F16, Scalar::Float(f64::NEG_INFINITY)).unwrap(),
            0xfc00
        );
        assert_eq!(scalar_bits(ElemType::BF16, Scalar::Int(1)).unwrap(), 0x3f80);
        assert_eq!(
            scalar_bits(ElemType::I32, Scalar::Int(-1)).unwrap(),
            0xffff_ffff
        );
        assert_eq!(
            scalar_bits(ElemType::I64, Scalar::Float(-2.7)).unwrap(),
            (-2i64) as u64
        );
        assert_eq!(scalar_bits(ElemType::I1, Scalar::Float(0.5)).unwrap(), 1);
        assert_eq!(
            scalar_bits(ElemType::U32, Scalar::Int(-1)).unwrap(),
            0xffff_ffff
        );
        assert_eq!(scalar_bits(ElemType::U64, Scalar::Int(7)).unwrap(), 7);
        assert!(scalar_bits(ElemType::U8, Scalar::Int(0)).is_err());
    }
}
