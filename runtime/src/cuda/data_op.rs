//! gather, scatter, rng_bit_generator and bitcast_convert on a CUDA
//! device, through the kernels of `meshrun_kernels::cuda::{index, rng}`
//! and the width-generic copy. Results are bitwise the CPU kernels': the
//! walk tables and RNG plans are built from the same geometry and checked
//! against the CPU kernels on the CPU (the kernels' index arithmetic
//! emulated). Never run on a GPU (none is lent to this project).
//!
//! What stays on the host (counted in `host_fallbacks`): a gather or
//! scatter with unsigned start indices (no device conversion to i64).

use meshrun_compiler::ir::ops::gather::Gather;
use meshrun_compiler::ir::ops::rng_bit_generator::RngBitGenerator;
use meshrun_compiler::ir::ops::scatter::Scatter;
use meshrun_compiler::ir::{ElemType, OpKind, TensorType};
use meshrun_kernels::cuda::index::{scatter as scatter_name, scatter_strategy, walk_meta};
use meshrun_kernels::cuda::names;
use meshrun_kernels::cuda::rng::rng_plan;
use meshrun_kernels::HostTensor;

use super::buffer::{CudaBuffer, DevData};
use super::device::{gpu_err, invalid, unsupported, CudaDevice};
use super::layout::{self, StridedCopy};
use crate::backend::DeviceError;

impl CudaDevice {
    /// Start indices as i64 on the device: i64 as they are, i32 through
    /// the convert kernel (`None`: the buffer itself); `Err(None)` for
    /// unsigned indices, which the caller computes on the host.
    fn i64_indices(
        &self,
        kind: &OpKind,
        what: &str,
        indices: &CudaBuffer,
    ) -> Result<Option<DevData>, Option<DeviceError>> {
        match indices.ty.elem {
            ElemType::I64 => Ok(None),
            ElemType::I32 => {
                let name = names::convert(ElemType::I32, ElemType::I64)
                    .ok_or_else(|| Some(unsupported(kind, indices)))?;
                let mut out = DevData::zeros(&self.stream, ElemType::I64, indices.len())
                    .map_err(|m| Some(gpu_err(m)))?;
                self.launcher()
                    .map1(&name, &indices.data, &mut out, indices.len())
                    .map_err(|m| Some(gpu_err(m)))?;
                Ok(Some(out))
            }
            e if e.is_integer() => Err(None),
            e => Err(Some(invalid(
                kind,
                format!("{what} must be integers, not {e}"),
            ))),
        }
    }

    pub(crate) fn gather_op(
        &mut self,
        kind: &OpKind,
        g: &Gather,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let ([operand, indices], [out]) = (x, result_types) else {
            return Err(invalid(
                kind,
                "needs an operand, start indices and one result",
            ));
        };
        let shape = layout::dims(&out.shape).map_err(gpu_err)?;
        let meta = walk_meta(
            &g.dimension_numbers,
            &operand.shape(),
            &indices.shape(),
            &shape,
            Some(&g.slice_sizes),
        )
        .map_err(|m| invalid(kind, m))?;
        let idx = match self.i64_indices(kind, "start_indices", indices) {
            Ok(idx) => idx,
            Err(Some(e)) => return Err(e),
            Err(None) => return self.host_op(kind, x, result_types),
        };
        let mut y = self.zeros(out)?;
        self.launcher()
            .gather(
                &operand.data,
                idx.as_ref().unwrap_or(&indices.data),
                &mut y,
                &meta,
            )
            .map_err(gpu_err)?;
        Ok(vec![self.wrap(y, out)])
    }

    pub(crate) fn scatter_op(
        &mut self,
        kind: &OpKind,
        s: &Scatter,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let n = Scatter::num_inputs(x.len());
        if n == 0 || x.len() != 2 * n + 1 || result_types.len() != n {
            return Err(invalid(
                kind,
                format!(
                    "needs N inputs, the indices and N updates, got {} operands",
                    x.len()
                ),
            ));
        }
        let update = s.update_kind().map_err(|m| invalid(kind, m))?;
        let indices = x[n];
        let idx = match self.i64_indices(kind, "scatter_indices", indices) {
            Ok(idx) => idx,
            Err(Some(e)) => return Err(e),
            Err(None) => return self.host_op(kind, x, result_types),
        };
        let idx = idx.as_ref().unwrap_or(&indices.data);
        let mut outs = Vec::with_capacity(n);
        for k in 0..n {
            let (input, updates) = (x[k], x[n + 1 + k]);
            if input.ty.elem != updates.ty.elem {
                return Err(invalid(
                    kind,
                    format!(
                        "an input is {} but its updates are {}",
                        input.ty.elem, updates.ty.elem
                    ),
                ));
            }
            let meta = walk_meta(
                s.dims(),
                &input.shape(),
                &indices.shape(),
                &updates.shape(),
                None,
            )
            .map_err(|m| invalid(kind, m))?;
            // The CPU kernel's refusals (and / or on floats, combining
            // unsigned values) before anything is allocated.
            scatter_name(scatter_strategy(&meta), update, input.ty.elem)
                .ok_or_else(|| unsupported(kind, input))?;
            let mut y = self.zeros(&input.ty)?;
            let l = self.launcher();
            l.copy(&input.data, &mut y, &StridedCopy::contiguous(input.len()))
                .map_err(gpu_err)?;
            l.scatter(update, idx, &updates.data, &mut y, &meta)
                .map_err(gpu_err)?;
            outs.push(self.wrap(y, &result_types[k]));
        }
        Ok(outs)
    }

    /// The state (two or three words) is read back (the copy waits for
    /// the stream); the bits are generated on the device.
    pub(crate) fn rng_op(
        &mut self,
        kind: &OpKind,
        r: &RngBitGenerator,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let ([state], [state_ty, bits_ty]) = (x, result_types) else {
            return Err(invalid(
                kind,
                "needs a state and a state and bits result type",
            ));
        };
        let words = match state.data.download(&self.stream, &state.shape()) {
            Ok(HostTensor::U64(a)) => a.iter().copied().collect::<Vec<u64>>(),
            Ok(_) => return Err(invalid(kind, "the state must be ui64")),
            Err(m) => return Err(gpu_err(m)),
        };
        if bits_ty.elem == ElemType::I1 {
            return Err(invalid(
                kind,
                format!("random bits cannot be read as {bits_ty}"),
            ));
        }
        let shape = layout::dims(&bits_ty.shape).map_err(gpu_err)?;
        let plan = rng_plan(r.algorithm, &words, &shape, bits_ty.elem.byte_size())
            .map_err(|m| invalid(kind, m))?;
        let mut bits = self.zeros(bits_ty)?;
        self.launcher().rng(&plan, &mut bits).map_err(gpu_err)?;
        let next = HostTensor::from_vec(&[plan.state.len()], plan.state)?;
        let next = DevData::upload(&self.stream, &next).map_err(gpu_err)?;
        Ok(vec![self.wrap(next, state_ty), self.wrap(bits, bits_ty)])
    }

    /// The operand's bytes read as the result type: the same buffer when
    /// the element type is unchanged, else one copy.
    pub(crate) fn bitcast_op(
        &mut self,
        kind: &OpKind,
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        if x.ty.elem == ElemType::I1 || out.elem == ElemType::I1 {
            return Err(invalid(kind, "i1 has no bit layout to reinterpret"));
        }
        let shape = layout::dims(&out.shape).map_err(gpu_err)?;
        let bytes = x.len() * x.ty.elem.byte_size();
        if shape.iter().product::<usize>() * out.elem.byte_size() != bytes {
            return Err(invalid(
                kind,
                format!("{bytes} bytes cannot be read as {out}"),
            ));
        }
        if x.ty.elem == out.elem {
            return Ok(vec![x.with_type(out.clone())]);
        }
        let mut y = self.zeros(out)?;
        self.launcher()
            .copy_bytes(&x.data, &mut y, bytes)
            .map_err(gpu_err)?;
        Ok(vec![self.wrap(y, out)])
    }
}
