//! One mesh device while a program runs on it: its GPU, its own stream,
//! its cuBLAS handle and NCCL communicators (kept between runs in
//! `DeviceState`), and the run's meeting point with the other devices.
//!
//! Every op is validated first with the compiler's shape rules
//! (`check_result_types`), then computed by the GPU kernels through
//! `Launcher` (which checks buffer sizes before each launch). The few
//! combinations the GPU does not compute (integer `dot_general` and
//! `convolution`; `gather` / `scatter` with unsigned start indices) are
//! computed on the host by the CPU kernels and counted
//! (`CudaBackend::host_fallbacks`); `gather`, `scatter`,
//! `rng_bit_generator` and `bitcast_convert` have GPU kernels
//! (`data_op`). Needs a GPU to run (not exercised in CI).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaContext, CudaStream};
use meshrun_compiler::ir::infer::check_result_types;
use meshrun_compiler::ir::ops::compare::Compare;
use meshrun_compiler::ir::ops::constant::Constant;
use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{CompareType, OpKind, Scalar, TensorType, UnaryOp};
use meshrun_compiler::partition::reshard::collective::Collective;
use meshrun_compiler::partition::RemapEntry;
use meshrun_kernels::cuda::names;
use meshrun_kernels::{eval_op, HostTensor, KernelError, Parallelism};

use super::buffer::{scalar_bits, CudaBuffer, DevData};
use super::dot;
use super::kernels::{GpuKernels, Launcher};
use super::layout::{self, box_copy, dim_walk, row_major_strides, StridedCopy};
use super::nccl_comms::NcclComms;
use super::run_shared::RunShared;
use crate::backend::{Device, DeviceError, Participation};

/// What a mesh device keeps between runs (only its own thread holds it
/// during a run).
#[derive(Default)]
pub struct DeviceState {
    pub(crate) blas: Option<CudaBlas>,
    /// NCCL communicators this device drives, by member list.
    pub(crate) comms: NcclComms<Vec<i64>>,
}

/// One mesh device of a CUDA run.
pub struct CudaDevice {
    pub(crate) id: i64,
    pub(crate) gpu: usize,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) kernels: Arc<GpuKernels>,
    pub(crate) state: DeviceState,
    pub(crate) shared: Arc<RunShared>,
}

/// A GPU-side failure (a launch, an allocation, a copy).
pub(crate) fn gpu_err(m: String) -> DeviceError {
    DeviceError::Invalid(m)
}

pub(crate) fn invalid(kind: &OpKind, message: impl Into<String>) -> DeviceError {
    DeviceError::Kernel(KernelError::Invalid {
        op: kind.name(),
        message: message.into(),
    })
}

pub(crate) fn unsupported(kind: &OpKind, b: &CudaBuffer) -> DeviceError {
    DeviceError::Kernel(KernelError::UnsupportedType {
        op: kind.name(),
        elem: b.ty.elem,
    })
}

fn is_scalar(b: &CudaBuffer) -> bool {
    b.ty.shape.is_empty()
}

impl CudaDevice {
    pub(crate) fn into_state(self) -> DeviceState {
        self.state
    }

    pub(crate) fn launcher(&self) -> Launcher<'_> {
        Launcher {
            stream: &self.stream,
            kernels: &self.kernels,
        }
    }

    pub(crate) fn zeros(&self, ty: &TensorType) -> Result<DevData, DeviceError> {
        let n = layout::num_elements(&layout::dims(&ty.shape).map_err(gpu_err)?)
            .ok_or_else(|| gpu_err(format!("{ty} has too many elements")))?;
        DevData::zeros(&self.stream, ty.elem, n).map_err(gpu_err)
    }

    pub(crate) fn wrap(&self, data: DevData, ty: &TensorType) -> CudaBuffer {
        CudaBuffer {
            data: Arc::new(data),
            ty: ty.clone(),
            gpu: self.gpu,
        }
    }

    /// A new buffer of `ty` holding `copies` of `src` applied to zeros.
    pub(crate) fn assemble(
        &self,
        ty: &TensorType,
        parts: &[(&DevData, StridedCopy)],
    ) -> Result<CudaBuffer, DeviceError> {
        let mut y = self.zeros(ty)?;
        let l = self.launcher();
        for (src, copy) in parts {
            l.copy(src, &mut y, copy).map_err(gpu_err)?;
        }
        Ok(self.wrap(y, ty))
    }

    fn check_local(&self, bufs: &[&CudaBuffer]) -> Result<(), DeviceError> {
        match bufs.iter().find(|b| b.gpu != self.gpu) {
            Some(b) => Err(DeviceError::Invalid(format!(
                "a buffer of GPU {} used on device {} (GPU {})",
                b.gpu, self.id, self.gpu
            ))),
            None => Ok(()),
        }
    }

    /// Compute `kind` on the host with the CPU kernels (the operands
    /// downloaded, the results uploaded).
    pub(crate) fn host_op(
        &mut self,
        kind: &OpKind,
        operands: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let hosts = operands
            .iter()
            .map(|b| b.data.download(&self.stream, &b.shape()))
            .collect::<Result<Vec<HostTensor>, String>>()
            .map_err(gpu_err)?;
        let refs: Vec<&HostTensor> = hosts.iter().collect();
        let outs = eval_op(kind, &refs, result_types, Parallelism::None)?;
        self.shared.fallbacks.fetch_add(1, Ordering::Relaxed);
        outs.iter()
            .map(|t| {
                DevData::upload(&self.stream, t)
                    .map(|d| self.wrap(d, &t.tensor_type()))
                    .map_err(gpu_err)
            })
            .collect()
    }

    pub(crate) fn blas(&mut self) -> Result<(), DeviceError> {
        if self.state.blas.is_none() {
            let blas = CudaBlas::new(self.stream.clone())
                .map_err(|e| gpu_err(format!("cannot create a cuBLAS handle: {e:?}")))?;
            self.state.blas = Some(blas);
        }
        Ok(())
    }

    /// One GPU op whose operands and result types are already checked.
    fn gpu_op(
        &mut self,
        kind: &OpKind,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let out = &result_types[0];
        let n = layout::num_elements(&layout::dims(&out.shape).map_err(gpu_err)?).unwrap_or(0);
        let e = gpu_err;
        let l = self.launcher();
        let one = |y: DevData| Ok(vec![self.wrap(y, out)]);
        match kind {
            OpKind::Unary(op) => {
                let name = if *op == UnaryOp::IsFinite {
                    names::is_finite(x[0].ty.elem)
                } else {
                    names::unary(*op, x[0].ty.elem)
                };
                let name = name.ok_or_else(|| unsupported(kind, x[0]))?;
                let mut y = self.zeros(out)?;
                l.map1(&name, &x[0].data, &mut y, n).map_err(e)?;
                one(y)
            }
            OpKind::ReducePrecision(r) => {
                if names::reduce_precision(x[0].ty.elem).is_none() {
                    return Err(unsupported(kind, x[0]));
                }
                let mut y = self.zeros(out)?;
                l.reduce_precision(&x[0].data, &mut y, n, r.exponent_bits, r.mantissa_bits)
                    .map_err(e)?;
                one(y)
            }
            OpKind::Binary(op) => {
                let name =
                    names::binary(*op, x[0].ty.elem).ok_or_else(|| unsupported(kind, x[0]))?;
                let mut y = self.zeros(out)?;
                l.map2(&name, &x[0].data, &x[1].data, &mut y, n)
                    .map_err(e)?;
                one(y)
            }
            OpKind::Compare(Compare {
                direction,
                compare_type,
            }) => {
                let total = *compare_type == Some(CompareType::TotalOrder);
                let name = names::compare(*direction, total, x[0].ty.elem)
                    .ok_or_else(|| unsupported(kind, x[0]))?;
                let mut y = self.zeros(out)?;
                l.map2(&name, &x[0].data, &x[1].data, &mut y, n)
                    .map_err(e)?;
                one(y)
            }
            OpKind::Select(_) => {
                let mut y = self.zeros(out)?;
                l.select(
                    &x[0].data,
                    !is_scalar(x[0]),
                    &x[1].data,
                    &x[2].data,
                    &mut y,
                    n,
                )
                .map_err(e)?;
                one(y)
            }
            OpKind::Clamp(_) => {
                let mut y = self.zeros(out)?;
                l.clamp(
                    &x[0].data,
                    !is_scalar(x[0]),
                    &x[1].data,
                    &x[2].data,
                    !is_scalar(x[2]),
                    &mut y,
                    n,
                )
                .map_err(e)?;
                one(y)
            }
            OpKind::Convert(_) => {
                if x[0].ty.elem == out.elem {
                    return Ok(vec![x[0].with_type(out.clone())]);
                }
                let name = names::convert(x[0].ty.elem, out.elem)
                    .ok_or_else(|| unsupported(kind, x[0]))?;
                let mut y = self.zeros(out)?;
                l.map1(&name, &x[0].data, &mut y, n).map_err(e)?;
                one(y)
            }
            OpKind::Constant(Constant { value: lit, .. }) => {
                let t = HostTensor::from_literal(lit, out)?;
                one(DevData::upload(&self.stream, &t).map_err(e)?)
            }
            OpKind::Iota(meshrun_compiler::ir::ops::iota::Iota { dim }) => {
                let shape = layout::dims(&out.shape).map_err(e)?;
                let d =
                    usize::try_from(*dim).map_err(|_| invalid(kind, format!("dimension {dim}")))?;
                let (size, inner) = dim_walk(&shape, d).map_err(|m| invalid(kind, m))?;
                let mut y = self.zeros(out)?;
                l.iota(&mut y, n, size, inner, 0).map_err(e)?;
                one(y)
            }
            OpKind::BroadcastInDim(
                meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims },
            ) => {
                let shape = layout::dims(&out.shape).map_err(e)?;
                let copy = layout::broadcast_in_dim(&x[0].shape(), dims, &shape)
                    .map_err(|m| invalid(kind, m))?;
                Ok(vec![self.assemble(out, &[(&x[0].data, copy)])?])
            }
            OpKind::Reshape(_) => Ok(vec![x[0].with_type(out.clone())]),
            OpKind::Transpose(meshrun_compiler::ir::ops::transpose::Transpose { perm }) => {
                let (_, copy) =
                    layout::transpose(&x[0].shape(), perm).map_err(|m| invalid(kind, m))?;
                Ok(vec![self.assemble(out, &[(&x[0].data, copy)])?])
            }
            OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
                start,
                limit,
                strides,
            }) => {
                let (_, copy) = layout::slice(&x[0].shape(), start, limit, strides)
                    .map_err(|m| invalid(kind, m))?;
                Ok(vec![self.assemble(out, &[(&x[0].data, copy)])?])
            }
            OpKind::Pad(meshrun_compiler::ir::ops::pad::Pad {
                low,
                high,
                interior,
            }) => {
                let (shape, copy) = layout::pad(&x[0].shape(), low, high, interior)
                    .map_err(|m| invalid(kind, m))?;
                // The padding value (a scalar) everywhere, then the operand.
                let fill = StridedCopy {
                    src_strides: vec![0; shape.len()],
                    dst_strides: row_major_strides(&shape),
                    shape,
                    src_offset: 0,
                    dst_offset: 0,
                };
                Ok(vec![self.assemble(
                    out,
                    &[(&x[1].data, fill), (&x[0].data, copy)],
                )?])
            }
            OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate { dim }) => {
                let shapes: Vec<Vec<usize>> = x.iter().map(|b| b.shape()).collect();
                let (_, copies) =
                    layout::concatenate(&shapes, *dim).map_err(|m| invalid(kind, m))?;
                let parts: Vec<(&DevData, StridedCopy)> =
                    x.iter().map(|b| &*b.data).zip(copies).collect();
                Ok(vec![self.assemble(out, &parts)?])
            }
            OpKind::Reduce(r) => {
                let k = x.len() / 2;
                let lay =
                    layout::reduce_layout(&x[0].shape(), r.dims()).map_err(|m| invalid(kind, m))?;
                // Each input as an `outer x red` matrix (transposed when the
                // reduced dims are not the last ones).
                let mut moved: Vec<Option<DevData>> = Vec::with_capacity(k);
                for input in &x[..k] {
                    moved.push(match &lay.perm {
                        None => None,
                        Some(p) => {
                            let (tshape, copy) = layout::transpose(&input.shape(), p).map_err(e)?;
                            let mut t = DevData::zeros(
                                &self.stream,
                                input.ty.elem,
                                tshape.iter().product(),
                            )
                            .map_err(e)?;
                            l.copy(&input.data, &mut t, &copy).map_err(e)?;
                            Some(t)
                        }
                    });
                }
                let srcs: Vec<&DevData> = x[..k]
                    .iter()
                    .zip(&moved)
                    .map(|(b, m)| m.as_ref().unwrap_or(&b.data))
                    .collect();
                let inits: Vec<&DevData> = x[k..].iter().map(|b| &*b.data).collect();
                let mut ys = result_types[..k]
                    .iter()
                    .map(|t| self.zeros(t))
                    .collect::<Result<Vec<DevData>, DeviceError>>()?;
                match r.kinds().filter(|ks| ks.len() == k) {
                    // One known reduction per input: the fixed kernels.
                    Some(kinds) => {
                        for (i, y) in ys.iter_mut().enumerate() {
                            let name = names::reduce(kinds[i], x[i].ty.elem)
                                .ok_or_else(|| unsupported(kind, x[i]))?;
                            l.reduce(&name, srcs[i], inits[i], y, lay.outer, lay.red)
                                .map_err(e)?;
                        }
                    }
                    // Any other body (argmax's comparator): a kernel
                    // generated from it, compiled on first use.
                    None => {
                        let module = meshrun_kernels::cuda::body::reduce_body_module(&r.body)
                            .map_err(|m| invalid(kind, m))?;
                        l.reduce_body(&module, &srcs, &inits, &mut ys, lay.outer, lay.red)
                            .map_err(e)?;
                    }
                }
                Ok(ys
                    .into_iter()
                    .zip(result_types)
                    .map(|(y, t)| self.wrap(y, t))
                    .collect())
            }
            OpKind::ReduceWindow(_) | OpKind::SelectAndScatter(_) => {
                self.window_op(kind, x, result_types)
            }
            OpKind::Sort(s) => self.gpu_sort(kind, s, x, result_types),
            OpKind::TopK(t) => self.gpu_top_k(kind, t.k, x[0], result_types),
            OpKind::Reverse(r) => self.gpu_reverse(&r.dimensions, x[0], out),
            OpKind::CustomCall(c) if c.run_error().is_some() => {
                Err(invalid(kind, c.run_error().unwrap_or_default()))
            }
            // Identities, as on the CPU (`OpDef::runs_as_identity`).
            _ if kind.def().is_some_and(|d| d.runs_as_identity()) => {
                Ok(x.iter().map(|b| (*b).clone()).collect())
            }
            OpKind::DotGeneral(_)
            | OpKind::Call(_)
            | OpKind::ShardingConstraint(_)
            | OpKind::Reshard(_)
            | OpKind::ShardingGroup(_) => Err(invalid(kind, "not a GPU kernel")),
            _ => Err(invalid(kind, "has no GPU kernel")),
        }
    }
}

impl Device for CudaDevice {
    type Buffer = CudaBuffer;

    fn id(&self) -> i64 {
        self.id
    }

    fn sync(&mut self) -> Result<(), DeviceError> {
        self.stream
            .synchronize()
            .map_err(|e| gpu_err(format!("GPU {}: stream synchronize: {e}", self.gpu)))
    }

    fn buffer_type(&self, b: &CudaBuffer) -> TensorType {
        b.ty.clone()
    }

    /// Waits for the stream (the copy back is synchronous). Never run on a
    /// GPU here: none is lent to this project's CI.
    fn read_scalar(&mut self, b: &CudaBuffer) -> Result<HostTensor, DeviceError> {
        b.data.download(&self.stream, &b.shape()).map_err(gpu_err)
    }

    fn op(
        &mut self,
        kind: &OpKind,
        operands: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        if matches!(
            kind,
            OpKind::Call(_)
                | OpKind::ShardingConstraint(_)
                | OpKind::Reshard(_)
                | OpKind::ShardingGroup(_)
        ) {
            return Err(DeviceError::Kernel(KernelError::NotAKernel {
                op: kind.name(),
            }));
        }
        self.check_local(operands)?;
        let types: Vec<TensorType> = operands.iter().map(|b| b.ty.clone()).collect();
        check_result_types(kind, &types, result_types).map_err(|m| invalid(kind, m))?;
        if result_types.is_empty() {
            return Err(invalid(kind, "no result types"));
        }
        match kind {
            OpKind::Convolution(c) => return self.convolution(kind, c, operands, result_types),
            OpKind::DynamicSlice(_) | OpKind::DynamicUpdateSlice(_) => {
                return self.dynamic_op(kind, operands, result_types)
            }
            OpKind::Gather(g) => return self.gather_op(kind, g, operands, result_types),
            OpKind::Scatter(s) => return self.scatter_op(kind, s, operands, result_types),
            OpKind::RngBitGenerator(r) => return self.rng_op(kind, r, operands, result_types),
            OpKind::RaggedDot(r) => return self.ragged_dot_op(kind, r, operands, result_types),
            OpKind::BitcastConvert(_) => {
                let x = operands
                    .first()
                    .ok_or_else(|| invalid(kind, "needs an operand"))?;
                return self.bitcast_op(kind, x, &result_types[0]);
            }
            _ => {}
        }
        if let OpKind::DotGeneral(DotGeneral { dims, .. }) = kind {
            let (lhs, rhs, out) = (operands[0], operands[1], &result_types[0]);
            if !dot::supported(lhs.ty.elem, rhs.ty.elem, out.elem) {
                return self.host_op(kind, operands, result_types);
            }
            self.blas()?;
            let blas = self
                .state
                .blas
                .as_ref()
                .ok_or_else(|| gpu_err("no cuBLAS handle".into()))?;
            let y = dot::dot_general(
                &self.launcher(),
                blas,
                &self.stream,
                &lhs.data,
                &lhs.shape(),
                &rhs.data,
                &rhs.shape(),
                dims,
                out.elem,
            )
            .map_err(gpu_err)?;
            return Ok(vec![self.wrap(y, out)]);
        }
        self.gpu_op(kind, operands, result_types)
    }

    fn iota(
        &mut self,
        ty: &TensorType,
        dim: usize,
        offset: i64,
    ) -> Result<CudaBuffer, DeviceError> {
        let shape = layout::dims(&ty.shape).map_err(gpu_err)?;
        let (size, inner) = dim_walk(&shape, dim).map_err(DeviceError::Invalid)?;
        let mut y = self.zeros(ty)?;
        self.launcher()
            .iota(&mut y, shape.iter().product(), size, inner, offset)
            .map_err(gpu_err)?;
        Ok(self.wrap(y, ty))
    }

    fn mask(
        &mut self,
        x: &CudaBuffer,
        dim: usize,
        valid: i64,
        fill: Scalar,
    ) -> Result<CudaBuffer, DeviceError> {
        self.check_local(&[x])?;
        let shape = x.shape();
        let (size, inner) = dim_walk(&shape, dim).map_err(DeviceError::Invalid)?;
        if valid >= size as i64 {
            return Ok(x.clone());
        }
        let bits = scalar_bits(x.ty.elem, fill).map_err(DeviceError::Invalid)?;
        let mut y = self.zeros(&x.ty)?;
        self.launcher()
            .mask(&x.data, &mut y, x.len(), size, inner, valid, bits)
            .map_err(gpu_err)?;
        Ok(self.wrap(y, &x.ty))
    }

    fn slice_dim(
        &mut self,
        x: &CudaBuffer,
        dim: usize,
        start: i64,
        size: i64,
    ) -> Result<CudaBuffer, DeviceError> {
        self.check_local(&[x])?;
        let shape = x.shape();
        let n = *shape.get(dim).ok_or_else(|| {
            DeviceError::Invalid(format!("dimension {dim} of a rank-{} block", shape.len()))
        })?;
        let (Ok(s), Ok(len)) = (usize::try_from(start), usize::try_from(size)) else {
            return Err(DeviceError::Invalid(format!(
                "slice of {size} elements from {start}"
            )));
        };
        if s.checked_add(len).is_none_or(|end| end > n) {
            return Err(DeviceError::Invalid(format!(
                "elements {start}..{} along dimension {dim} of a block of {n}",
                start.saturating_add(size)
            )));
        }
        let mut out_shape = shape.clone();
        out_shape[dim] = len;
        let mut src_start = vec![0; shape.len()];
        src_start[dim] = s;
        let copy = box_copy(
            &out_shape,
            &shape,
            &vec![0; shape.len()],
            &src_start,
            &out_shape,
        )
        .map_err(DeviceError::Invalid)?;
        let ty = TensorType::new(
            out_shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            x.ty.elem,
        );
        self.assemble(&ty, &[(&x.data, copy)])
    }

    fn remap(
        &mut self,
        sources: &[&CudaBuffer],
        fill: Option<&CudaBuffer>,
        ty: &TensorType,
        dim: usize,
        table: &[RemapEntry],
    ) -> Result<CudaBuffer, DeviceError> {
        self.check_local(sources)?;
        let out = layout::dims(&ty.shape).map_err(DeviceError::Invalid)?;
        let n = *out.get(dim).ok_or_else(|| {
            DeviceError::Invalid(format!("dimension {dim} of a rank-{} result", out.len()))
        })?;
        if table.len() != n {
            return Err(DeviceError::Invalid(format!(
                "a remap table of {} entries for a dimension of {n}",
                table.len()
            )));
        }
        for (i, s) in sources.iter().enumerate() {
            let ss = s.shape();
            let same = s.ty.elem == ty.elem
                && ss.len() == out.len()
                && (0..ss.len()).all(|d| d == dim || ss[d] == out[d]);
            if !same {
                return Err(DeviceError::Invalid(format!(
                    "source {i} is {} but the remap builds {ty} along dimension {dim}",
                    s.ty
                )));
            }
        }
        let out_strides = row_major_strides(&out);
        let mut parts: Vec<(&DevData, StridedCopy)> = Vec::new();
        let mut k = 0;
        while k < n {
            let mut run = 1;
            match table[k] {
                RemapEntry::Fill => {
                    while k + run < n && table[k + run] == RemapEntry::Fill {
                        run += 1;
                    }
                    if let Some(f) = fill {
                        self.check_local(&[f])?;
                        if !f.ty.shape.is_empty() || f.ty.elem != ty.elem {
                            return Err(DeviceError::Invalid(format!(
                                "the fill value is {}, not a scalar of {}",
                                f.ty, ty.elem
                            )));
                        }
                        let mut extent = out.clone();
                        extent[dim] = run;
                        parts.push((
                            &f.data,
                            StridedCopy {
                                shape: extent,
                                src_strides: vec![0; out.len()],
                                dst_strides: out_strides.clone(),
                                src_offset: 0,
                                dst_offset: k * out_strides[dim],
                            },
                        ));
                    }
                }
                RemapEntry::Source { source, index } => {
                    while k + run < n
                        && table[k + run]
                            == (RemapEntry::Source {
                                source,
                                index: index + run as i64,
                            })
                    {
                        run += 1;
                    }
                    let src = sources.get(source as usize).ok_or_else(|| {
                        DeviceError::Invalid(format!(
                            "entry {k} names source {source} of {}",
                            sources.len()
                        ))
                    })?;
                    let ss = src.shape();
                    let start = usize::try_from(index)
                        .ok()
                        .filter(|&i| i + run <= ss[dim])
                        .ok_or_else(|| {
                            DeviceError::Invalid(format!(
                                "entry {k} reads element {index} of source {source}, which has {}",
                                ss[dim]
                            ))
                        })?;
                    let mut extent = out.clone();
                    extent[dim] = run;
                    let mut dst_start = vec![0; out.len()];
                    dst_start[dim] = k;
                    let mut src_start = vec![0; out.len()];
                    src_start[dim] = start;
                    let copy = box_copy(&out, &ss, &dst_start, &src_start, &extent)
                        .map_err(DeviceError::Invalid)?;
                    parts.push((&src.data, copy));
                }
            }
            k += run;
        }
        self.assemble(ty, &parts)
    }

    fn collective(
        &mut self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        self.check_local(&[x])?;
        self.run_collective(instance, c, part, x, out)
    }
}
