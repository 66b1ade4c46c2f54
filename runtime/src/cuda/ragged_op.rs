//! `chlo.ragged_dot` on a CUDA device: the group sizes (and a device's
//! block starts) are read back to the host — a few integers; the copy
//! waits for the stream — and the op's steps
//! (`meshrun_compiler::ir::ops::ragged_dot_steps`, the same steps the CPU
//! kernel runs) run as device ops: slices, zero blocks and concatenations
//! by the copy kernels, each group's product by cuBLAS. No data goes to
//! the host. Never run on a GPU (none is lent to this project); the steps
//! are tested on the CPU, where every ragged_dot fixture runs them.

use meshrun_compiler::ir::ops::ragged_dot::RaggedDot;
use meshrun_compiler::ir::ops::ragged_dot_steps::run;
use meshrun_compiler::ir::{OpKind, TensorType};
use meshrun_kernels::cpu::ragged_dot::ragged_dot_steps;

use super::buffer::CudaBuffer;
use super::device::{invalid, CudaDevice};
use crate::backend::{Device, DeviceError};

impl CudaDevice {
    pub(crate) fn ragged_dot_op(
        &mut self,
        kind: &OpKind,
        op: &RaggedDot,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let out = result_types
            .first()
            .ok_or_else(|| invalid(kind, "has no result type"))?;
        let (lhs, rhs, ints) = match x {
            [l, r, ints @ ..] if ints.len() == 1 || ints.len() == 3 => (*l, *r, ints),
            _ => return Err(invalid(kind, format!("{} operands", x.len()))),
        };
        // The group sizes, then (a device's blocks) the two block starts.
        let hosts = self.read_starts(ints)?;
        let starts = match &hosts[..] {
            [_, row, group] => Some((row, group)),
            _ => None,
        };
        let steps = ragged_dot_steps(op, &lhs.ty, &rhs.ty, &hosts[0], starts, out)?;
        let y = run(&steps, lhs, rhs, |k, operands, ty| {
            self.op(k, operands, std::slice::from_ref(ty))?
                .pop()
                .ok_or_else(|| invalid(k, "gave no result"))
        })?;
        Ok(vec![y])
    }
}
