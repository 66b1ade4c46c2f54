//! reduce_window and select_and_scatter on a CUDA device, in the forms the
//! GPU kernels run (`meshrun_kernels::cuda::window`: one input, bodies of
//! one reduction / one comparison); other forms are errors naming the op.
//! Never run on a GPU.

use meshrun_compiler::ir::{OpKind, TensorType};
use meshrun_kernels::cuda::window::{
    reduce_window, reduce_window_kind, scatter_selected, select_and_scatter_kinds, select_window,
    window_meta,
};

use super::buffer::CudaBuffer;
use super::device::{gpu_err, invalid, unsupported, CudaDevice};
use crate::backend::DeviceError;

impl CudaDevice {
    /// `kind` (a reduce_window or select_and_scatter) on `x`.
    pub(crate) fn window_op(
        &mut self,
        kind: &OpKind,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let out = result_types
            .first()
            .ok_or_else(|| invalid(kind, "has no result type"))?;
        let input = x.first().ok_or_else(|| invalid(kind, "has no operands"))?;
        let shape = input.shape();
        let l = self.launcher();
        match kind {
            OpKind::ReduceWindow(rw) => {
                let rk = reduce_window_kind(rw).map_err(|m| invalid(kind, m))?;
                let name =
                    reduce_window(rk, input.ty.elem).ok_or_else(|| unsupported(kind, input))?;
                let window = rw.window(shape.len()).map_err(|m| invalid(kind, m))?;
                let meta = window_meta(&window, &shape)
                    .ok_or_else(|| invalid(kind, "has no windows on its input"))?;
                let init = x
                    .get(1)
                    .ok_or_else(|| invalid(kind, "needs an init value"))?;
                let mut y = self.zeros(out)?;
                l.reduce_window(&name, &input.data, &init.data, &mut y, &meta)
                    .map_err(gpu_err)?;
                Ok(vec![self.wrap(y, out)])
            }
            OpKind::SelectAndScatter(ss) => {
                let [_, source, init] = x else {
                    return Err(invalid(
                        kind,
                        "needs an operand, a source and an init value",
                    ));
                };
                let (dir, rk) = select_and_scatter_kinds(ss).map_err(|m| invalid(kind, m))?;
                let e = input.ty.elem;
                let select = select_window(dir, e).ok_or_else(|| unsupported(kind, input))?;
                let scatter = scatter_selected(rk, e).ok_or_else(|| unsupported(kind, input))?;
                let window = ss.window(shape.len()).map_err(|m| invalid(kind, m))?;
                let meta = window_meta(&window, &shape)
                    .ok_or_else(|| invalid(kind, "has no windows on its operand"))?;
                let mut y = self.zeros(out)?;
                l.select_and_scatter(
                    &select,
                    &scatter,
                    &input.data,
                    &source.data,
                    &init.data,
                    &mut y,
                    &meta,
                )
                .map_err(gpu_err)?;
                Ok(vec![self.wrap(y, out)])
            }
            _ => Err(invalid(kind, "is not a window op")),
        }
    }
}
