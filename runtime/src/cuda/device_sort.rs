//! `sort`, `chlo.top_k` and `reverse` on a CUDA device: the kernels of
//! `meshrun_kernels::cuda::sort` (generated per comparator / element type,
//! compiled on first use) and the strided copy of [`super::reverse_copy`].
//! None of this has run on a GPU; NVRTC compiles the kernels in CI and the
//! reverse descriptor is tested on the host.

use meshrun_compiler::ir::ops::sort::Sort;
use meshrun_compiler::ir::{ElemType, OpKind, TensorType};

use super::buffer::{CudaBuffer, DevData};
use super::device::{gpu_err, CudaDevice};
use super::layout;
use crate::backend::DeviceError;

fn invalid(kind: &OpKind, message: impl Into<String>) -> DeviceError {
    gpu_err(format!("{}: {}", kind.name(), message.into()))
}

impl CudaDevice {
    /// Two scratch index buffers of `len` i64 each.
    fn index_scratch(&self, len: usize) -> Result<(DevData, DevData), DeviceError> {
        Ok((
            DevData::zeros(&self.stream, ElemType::I64, len).map_err(gpu_err)?,
            DevData::zeros(&self.stream, ElemType::I64, len).map_err(gpu_err)?,
        ))
    }

    /// `x` (of `shape`) with its axes in `perm`, or `None` for the
    /// identity.
    fn permuted(
        &self,
        x: &CudaBuffer,
        shape: &[usize],
        perm: &[i64],
    ) -> Result<Option<DevData>, DeviceError> {
        if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
            return Ok(None);
        }
        let (tshape, copy) = layout::transpose(shape, perm).map_err(gpu_err)?;
        let mut t =
            DevData::zeros(&self.stream, x.ty.elem, tshape.iter().product()).map_err(gpu_err)?;
        self.launcher()
            .copy(&x.data, &mut t, &copy)
            .map_err(gpu_err)?;
        Ok(Some(t))
    }

    pub(crate) fn gpu_sort(
        &mut self,
        kind: &OpKind,
        s: &Sort,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let shape = x.first().ok_or_else(|| invalid(kind, "no inputs"))?.shape();
        let dim = s
            .dim(shape.len())
            .ok_or_else(|| invalid(kind, "sort dimension out of range"))?;
        let n = shape[dim];
        let rows: usize = shape.iter().product::<usize>() / n.max(1);
        // The sorted dimension last, and back.
        let to_last: Vec<i64> = (0..shape.len())
            .filter(|&d| d != dim)
            .chain([dim])
            .map(|d| d as i64)
            .collect();
        let moved_shape: Vec<usize> = to_last.iter().map(|&d| shape[d as usize]).collect();
        let mut back = vec![0i64; to_last.len()];
        for (i, &d) in to_last.iter().enumerate() {
            back[d as usize] = i as i64;
        }
        let module = meshrun_kernels::cuda::sort::sort_module(&s.comparator)
            .map_err(|m| invalid(kind, m))?;
        let moved: Vec<Option<DevData>> = x
            .iter()
            .map(|b| self.permuted(b, &shape, &to_last))
            .collect::<Result<_, _>>()?;
        let srcs: Vec<&DevData> = x
            .iter()
            .zip(&moved)
            .map(|(b, m)| m.as_ref().unwrap_or(&b.data))
            .collect();
        let mut ys = result_types
            .iter()
            .map(|t| self.zeros(t))
            .collect::<Result<Vec<DevData>, DeviceError>>()?;
        let (mut p, mut t) = self.index_scratch(rows * n)?;
        self.launcher()
            .sort_rows(&module, &srcs, &mut ys, (&mut p, &mut t), rows, n)
            .map_err(gpu_err)?;
        let mut out = Vec::with_capacity(ys.len());
        for (y, ty) in ys.into_iter().zip(result_types) {
            let moved_ty = ty.with_shape(moved_shape.iter().map(|&d| d as i64).collect::<Vec<_>>());
            let sorted = self.wrap(y, &moved_ty);
            out.push(match self.permuted(&sorted, &moved_shape, &back)? {
                Some(d) => self.wrap(d, ty),
                // The sorted dimension was already last.
                None => CudaBuffer {
                    ty: ty.clone(),
                    ..sorted
                },
            });
        }
        Ok(out)
    }

    pub(crate) fn gpu_top_k(
        &mut self,
        kind: &OpKind,
        k: i64,
        x: &CudaBuffer,
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let shape = x.shape();
        let n = *shape
            .last()
            .ok_or_else(|| invalid(kind, "a rank-0 operand"))?;
        let rows: usize = shape.iter().product::<usize>() / n.max(1);
        let k = usize::try_from(k).map_err(|_| invalid(kind, "negative k"))?;
        let module =
            meshrun_kernels::cuda::sort::top_k_module(x.ty.elem).map_err(|m| invalid(kind, m))?;
        let (vt, it) = match result_types {
            [v, i] => (v, i),
            _ => return Err(invalid(kind, "needs two result types")),
        };
        let (mut y, mut idx) = (self.zeros(vt)?, self.zeros(it)?);
        let (mut p, mut t) = self.index_scratch(rows * n)?;
        self.launcher()
            .top_k_rows(
                &module,
                &x.data,
                &mut y,
                &mut idx,
                (&mut p, &mut t),
                rows,
                n,
                k,
            )
            .map_err(gpu_err)?;
        Ok(vec![self.wrap(y, vt), self.wrap(idx, it)])
    }

    pub(crate) fn gpu_reverse(
        &mut self,
        dims: &[i64],
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let mut y = self.zeros(out)?;
        self.launcher()
            .reverse(&x.data, &mut y, &x.shape(), dims)
            .map_err(gpu_err)?;
        Ok(vec![self.wrap(y, out)])
    }
}
