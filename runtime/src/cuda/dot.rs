//! `dot_general` on the GPU: the operands transposed into `[B, M, K]` and
//! `[B, K, N]` when needed (`gemm_plan`), then one
//! `cublasGemmStridedBatchedEx`: f32 and f64 in their own precision (f32
//! without TF32), f16 and bf16 on tensor cores with f32 accumulation, to
//! an f16/bf16 or f32 result. Other element types (integers) are not
//! cuBLAS's business: the device computes them on the host instead (see
//! `device.rs`). Needs a GPU to run (not exercised in CI).

use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::CudaStream;
use meshrun_compiler::ir::{DotDims, ElemType};

use super::buffer::DevData;
use super::ffi::gemm::{self, GemmType, StridedGemm};
use super::gemm_plan::DotPlan;
use super::kernels::Launcher;
use super::layout::transpose;

pub(crate) fn gemm_type(e: ElemType) -> Option<GemmType> {
    Some(match e {
        ElemType::F64 => GemmType::F64,
        ElemType::F32 => GemmType::F32,
        ElemType::F16 => GemmType::F16,
        ElemType::BF16 => GemmType::BF16,
        _ => return None,
    })
}

/// Whether cuBLAS computes a dot of `lhs x rhs -> out` element types.
pub fn supported(lhs: ElemType, rhs: ElemType, out: ElemType) -> bool {
    lhs == rhs
        && match lhs {
            ElemType::F64 | ElemType::F32 => out == lhs,
            ElemType::F16 | ElemType::BF16 => out == lhs || out == ElemType::F32,
            _ => false,
        }
}

/// `x` transposed by `perm` (a new buffer), or `x` itself.
fn arranged<'a>(
    l: &Launcher<'_>,
    x: &'a DevData,
    shape: &[usize],
    perm: &Option<Vec<i64>>,
    holder: &'a mut Option<DevData>,
) -> Result<&'a DevData, String> {
    let Some(p) = perm else { return Ok(x) };
    let (out_shape, copy) = transpose(shape, p)?;
    let mut t = DevData::zeros(l.stream, x.elem(), out_shape.iter().product())?;
    l.copy(x, &mut t, &copy)?;
    Ok(holder.insert(t))
}

/// `dot_general(lhs, rhs)` into a new buffer of `out` elements.
#[allow(clippy::too_many_arguments)]
pub fn dot_general(
    l: &Launcher<'_>,
    blas: &CudaBlas,
    stream: &Arc<CudaStream>,
    lhs: &DevData,
    lhs_shape: &[usize],
    rhs: &DevData,
    rhs_shape: &[usize],
    dims: &DotDims,
    out: ElemType,
) -> Result<DevData, String> {
    let plan = DotPlan::new(lhs_shape, rhs_shape, dims)?;
    let (Some(ab), Some(c)) = (gemm_type(lhs.elem()), gemm_type(out)) else {
        return Err(format!(
            "no cuBLAS GEMM for {} x {} -> {out}",
            lhs.elem(),
            rhs.elem()
        ));
    };
    if !supported(lhs.elem(), rhs.elem(), out) {
        return Err(format!(
            "no cuBLAS GEMM for {} x {} -> {out}",
            lhs.elem(),
            rhs.elem()
        ));
    }
    let total = plan.batch * plan.m * plan.n;
    let mut y = DevData::zeros(stream, out, total)?;
    if plan.is_trivial() {
        return Ok(y);
    }
    let (mut lhold, mut rhold) = (None, None);
    let a_lhs = arranged(l, lhs, lhs_shape, &plan.lhs_perm, &mut lhold)?;
    let b_rhs = arranged(l, rhs, rhs_shape, &plan.rhs_perm, &mut rhold)?;
    let call = plan.call()?;
    let g = StridedGemm {
        m: call.m,
        n: call.n,
        k: call.k,
        lda: call.lda,
        ldb: call.ldb,
        ldc: call.ldc,
        stride_a: call.stride_a,
        stride_b: call.stride_b,
        stride_c: call.stride_c,
        batch: call.batch,
        ab,
        c,
    };
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| format!("CUDA: {e}"))?;
    // cuBLAS's A is the rhs and its B the lhs (row-major trick).
    gemm::strided_batched(blas, stream, &g, b_rhs, a_lhs, &mut y)?;
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cublas_takes_floats_only() {
        assert!(supported(ElemType::BF16, ElemType::BF16, ElemType::F32));
        assert!(supported(ElemType::F32, ElemType::F32, ElemType::F32));
        assert!(!supported(ElemType::F32, ElemType::F32, ElemType::F16));
        assert!(!supported(ElemType::I32, ElemType::I32, ElemType::I32));
        assert!(!supported(ElemType::F16, ElemType::BF16, ElemType::F32));
    }
}
