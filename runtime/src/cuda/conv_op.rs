//! `stablehlo.convolution` on a CUDA device: the plan of
//! [`super::conv_plan`] run with the im2col kernel and cuBLAS (floats:
//! f32/f64 in their own precision, f16/bf16 with f32 accumulation, as
//! `dot_general`). Integer or mixed-type convolutions are computed on the
//! host by the CPU kernel and counted, as integer dots are. Never run on
//! a GPU (none is lent to this project): the plan and the kernel's index
//! arithmetic are tested on the CPU, NVRTC compiles the kernel in CI.

use meshrun_compiler::ir::ops::convolution::Convolution;
use meshrun_compiler::ir::{OpKind, TensorType};

use super::buffer::{CudaBuffer, DevData};
use super::conv_plan::{ConvPlan, COLUMN_LIMIT};
use super::device::{gpu_err, invalid, CudaDevice};
use super::dot::{gemm_type, supported};
use super::ffi::gemm::{self, StridedGemm};
use super::layout::{transpose, StridedCopy};
use crate::backend::DeviceError;

impl CudaDevice {
    /// `x` of `shape` transposed by `perm` into a new buffer, or `None`.
    fn conv_arranged(
        &self,
        x: &DevData,
        shape: &[usize],
        perm: &Option<Vec<i64>>,
    ) -> Result<Option<DevData>, String> {
        let Some(p) = perm else { return Ok(None) };
        let (out_shape, copy) = transpose(shape, p)?;
        let mut t = DevData::zeros(&self.stream, x.elem(), out_shape.iter().product())?;
        self.launcher().copy(x, &mut t, &copy)?;
        Ok(Some(t))
    }

    pub(crate) fn convolution(
        &mut self,
        kind: &OpKind,
        c: &Convolution,
        operands: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let ([lhs, rhs], Some(out)) = (operands, result_types.first()) else {
            return Err(invalid(kind, "needs two operands and a result type"));
        };
        if !supported(lhs.ty.elem, rhs.ty.elem, out.elem) {
            return self.host_op(kind, operands, result_types);
        }
        let plan = ConvPlan::new(c, &lhs.shape(), &rhs.shape(), COLUMN_LIMIT)
            .map_err(|m| invalid(kind, m))?;
        let (Some(ab), Some(ct)) = (gemm_type(lhs.ty.elem), gemm_type(out.elem)) else {
            return self.host_op(kind, operands, result_types);
        };
        self.blas()?;
        let e = gpu_err;
        let x = self
            .conv_arranged(&lhs.data, &lhs.shape(), &plan.lhs_perm)
            .map_err(e)?;
        let w = self
            .conv_arranged(&rhs.data, &rhs.shape(), &plan.rhs_perm)
            .map_err(e)?;
        let (x, w) = (
            x.as_ref().unwrap_or(&lhs.data),
            w.as_ref().unwrap_or(&rhs.data),
        );
        let mut canon = DevData::zeros(&self.stream, out.elem, plan.out_len()).map_err(e)?;
        let whole = plan.chunks.len() == 1;
        for chunk in &plan.chunks {
            let mut col = DevData::zeros(&self.stream, lhs.ty.elem, chunk.columns).map_err(e)?;
            self.launcher()
                .im2col(x, &mut col, &chunk.meta)
                .map_err(e)?;
            let g = &chunk.gemm;
            let call = StridedGemm {
                m: g.m,
                n: g.n,
                k: g.k,
                lda: g.lda,
                ldb: g.ldb,
                ldc: g.ldc,
                stride_a: g.stride_a,
                stride_b: g.stride_b,
                stride_c: g.stride_c,
                batch: g.batch,
                ab,
                c: ct,
            };
            let blas = self
                .state
                .blas
                .as_ref()
                .ok_or_else(|| gpu_err("no cuBLAS handle".into()))?;
            self.stream
                .context()
                .bind_to_thread()
                .map_err(|err| gpu_err(format!("CUDA: {err}")))?;
            // One chunk writes the canonical output itself; several write
            // their rows apart and are copied into place.
            if whole {
                gemm::strided_batched(blas, &self.stream, &call, w, &col, &mut canon).map_err(e)?;
            } else {
                let mut rows = DevData::zeros(&self.stream, out.elem, chunk.out_len).map_err(e)?;
                gemm::strided_batched(blas, &self.stream, &call, w, &col, &mut rows).map_err(e)?;
                let place = StridedCopy {
                    dst_offset: chunk.out_offset,
                    ..StridedCopy::contiguous(chunk.out_len)
                };
                self.launcher().copy(&rows, &mut canon, &place).map_err(e)?;
            }
        }
        let y = self
            .conv_arranged(&canon, &plan.geometry.canonical_out(), &plan.out_perm)
            .map_err(e)?
            .unwrap_or(canon);
        Ok(vec![self.wrap(y, out)])
    }
}
