//! `dynamic_slice` and `dynamic_update_slice` on a CUDA device: the start
//! indices are read back (scalars; the copy waits for the stream), and
//! the block is one strided copy placed by [`super::dynamic_copy`]. Never
//! run on a GPU (none is lent); the placement is tested on the CPU.

use meshrun_compiler::ir::{OpKind, TensorType};
use meshrun_kernels::HostTensor;

use super::buffer::CudaBuffer;
use super::device::{gpu_err, invalid, CudaDevice};
use super::dynamic_copy::{dynamic_slice_copy, dynamic_update_copy};
use super::layout::StridedCopy;
use crate::backend::DeviceError;

impl CudaDevice {
    /// Small index operands (start indices, group sizes) on the host.
    pub(crate) fn read_starts(
        &self,
        starts: &[&CudaBuffer],
    ) -> Result<Vec<HostTensor>, DeviceError> {
        starts
            .iter()
            .map(|b| b.data.download(&self.stream, &b.shape()).map_err(gpu_err))
            .collect()
    }

    pub(crate) fn dynamic_op(
        &mut self,
        kind: &OpKind,
        x: &[&CudaBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CudaBuffer>, DeviceError> {
        let out = result_types
            .first()
            .ok_or_else(|| invalid(kind, "has no result type"))?;
        match (kind, x) {
            (OpKind::DynamicSlice(_), [operand, starts @ ..]) => {
                let hosts = self.read_starts(starts)?;
                let refs: Vec<&HostTensor> = hosts.iter().collect();
                let sizes: Vec<usize> = out.shape.iter().map(|&d| d as usize).collect();
                let copy = dynamic_slice_copy(&operand.shape(), &sizes, &refs)
                    .map_err(|m| invalid(kind, m))?;
                Ok(vec![self.assemble(out, &[(&operand.data, copy)])?])
            }
            (OpKind::DynamicUpdateSlice(_), [operand, update, starts @ ..]) => {
                let hosts = self.read_starts(starts)?;
                let refs: Vec<&HostTensor> = hosts.iter().collect();
                let place = dynamic_update_copy(&operand.shape(), &update.shape(), &refs)
                    .map_err(|m| invalid(kind, m))?;
                let whole = StridedCopy::contiguous(operand.len());
                Ok(vec![self.assemble(
                    out,
                    &[(&operand.data, whole), (&update.data, place)],
                )?])
            }
            _ => Err(invalid(kind, "needs an operand and its start indices")),
        }
    }
}
