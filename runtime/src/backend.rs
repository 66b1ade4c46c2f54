//! The backend interface: what the executor needs from a kind of device.
//!
//! One trait pair, one module per backend (like candle's `BackendDevice` /
//! `BackendStorage`): [`Backend`] owns the devices of a run (it places
//! buffers and runs one closure per device, concurrently), and [`Device`] is
//! one device while a program runs on it (local ops, the local
//! instructions of a device program, and its part in each collective). The
//! executor ([`crate::executor`]) is written against these traits only, so
//! a CUDA or MPI backend plugs in without touching it.

use meshrun_compiler::ir::{OpKind, Scalar, TensorType};
use meshrun_compiler::partition::reshard::collective::Collective;
use meshrun_compiler::partition::RemapEntry;
use meshrun_kernels::cpu::fusion::Chain;
use meshrun_kernels::{HostTensor, KernelError};

use crate::error::RuntimeError;
use crate::exec_options::ExecOptions;
use crate::exec_plan::PlannedProgram;

/// Why one operation on one device failed. The executor adds where (which
/// device, which instruction).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceError {
    /// A kernel refused its operands or attributes.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The instruction does not fit its operands (an index out of range, a
    /// block of the wrong shape, a group this device is not in).
    #[error("{0}")]
    Invalid(String),
    /// Another device of the run failed; this one stopped waiting for it.
    #[error("device {0} failed")]
    PeerFailed(i64),
}

/// Where one device stands in one collective (computed by the executor
/// from the collective's groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Participation<'a> {
    /// Member `rank` of group number `group`; `members` lists the group's
    /// device ids by rank.
    Group {
        group: usize,
        rank: usize,
        members: &'a [i64],
    },
    /// A collective-permute: the device this one sends its block to and
    /// the one it receives from (itself for a self-pair). A device that
    /// receives from no one ends with a block of zeros.
    Permute {
        send_to: Option<i64>,
        recv_from: Option<i64>,
    },
}

/// A kind of device and the devices of one run.
pub trait Backend: Sync {
    /// A buffer on a device: a cheap handle (cloning it must not copy the
    /// data), so inputs placed once can be used by many runs.
    type Buffer: Clone + Send + Sync;
    /// One device while a program runs on it.
    type Device: Device<Buffer = Self::Buffer>;

    /// `cpu`, `cuda`, ...
    fn name(&self) -> &'static str;

    /// Whether a run's devices share the results they make from the same
    /// blocks (see [`Device::share_key`]).
    fn shares_results(&self) -> bool {
        false
    }

    /// Get ready to run on `devices` (program order), before anything is
    /// uploaded: a backend that maps devices onto hardware does it here
    /// (the CUDA backend places mesh devices on GPUs and gives each a
    /// stream). [`crate::Executor::place`] calls it; the default does
    /// nothing.
    fn prepare(&self, devices: &[i64]) -> Result<(), RuntimeError> {
        let _ = devices;
        Ok(())
    }

    /// The most devices one run may have; a program on more is refused
    /// before anything is allocated (see [`crate::capacity`]).
    fn max_devices(&self) -> usize {
        usize::MAX
    }

    /// The memory of one device in bytes, the bound on each local block
    /// (`None`: unknown, not checked).
    fn device_memory_bytes(&self) -> Option<u64> {
        None
    }

    /// Put a host tensor on device `device`.
    fn upload(&self, device: i64, t: HostTensor) -> Result<Self::Buffer, RuntimeError>;

    /// Put the same host tensor on every device of `devices` (a block
    /// several devices hold). Backends whose devices share memory may
    /// hand them one copy: buffers are never written in place.
    fn upload_shared(
        &self,
        devices: &[i64],
        t: HostTensor,
    ) -> Result<Vec<Self::Buffer>, RuntimeError> {
        devices.iter().map(|&d| self.upload(d, t.clone())).collect()
    }

    /// Bring a buffer of device `device` back to the host (consuming the
    /// handle, so a backend whose buffers already are host memory can hand
    /// the data over without a copy).
    fn download(&self, device: i64, b: Self::Buffer) -> Result<HostTensor, RuntimeError>;

    /// Give back a buffer of device `device` that nobody reads any more (a
    /// repeated run's outputs, dropped before the next run): a backend
    /// that pools memory keeps it for later results, as XLA's allocator
    /// reuses a freed output buffer. The default drops it.
    fn discard(&self, device: i64, b: Self::Buffer) {
        let _ = (device, b);
    }

    /// Run `body` once per device of `devices`, all concurrently (they meet
    /// in collectives), and return each device's result in `devices` order.
    ///
    /// If a device fails (an error or a panic), the others must stop within
    /// a short time (their collectives return [`DeviceError::PeerFailed`])
    /// and the run returns the error of the device that failed first.
    ///
    /// A backend with one device per process (MPI) runs `body` for this
    /// process's device only and returns that one result (its peers run in
    /// the other processes); a failure there ends the whole job. Its inputs
    /// are placed and its outputs gathered by `mpi::session`, not by
    /// [`crate::Executor::place`] / [`crate::Executor::gather`].
    fn run_spmd<R: Send>(
        &self,
        devices: &[i64],
        body: &(dyn Fn(&mut Self::Device) -> Result<R, RuntimeError> + Sync),
    ) -> Result<Vec<R>, RuntimeError>;
    /// Run a whole program on `devices`' placed `inputs` (per device, in
    /// program order) and return each device's outputs, instead of the
    /// executor running it on each device through [`Backend::run_spmd`]:
    /// the CPU backend's lockstep executor drives every simulated device
    /// from one thread. `None` (the default): this backend runs a closure
    /// per device.
    fn run_whole(
        &self,
        planned: &PlannedProgram<'_>,
        inputs: &[Vec<Self::Buffer>],
        opts: &ExecOptions,
    ) -> Option<Result<Vec<Vec<Self::Buffer>>, RuntimeError>> {
        let _ = (planned, inputs, opts);
        None
    }
}

/// A weak handle on a buffer (see [`Device::share_handle`]), of the
/// backend's own type.
pub struct ShareHandle(pub Box<dyn std::any::Any + Send + Sync>);

/// One device while a program runs on it. All methods take buffers by
/// reference and return new buffers; the executor frees a buffer by
/// dropping its last handle.
pub trait Device {
    type Buffer;

    /// The device id (as in the mesh's `device_ids`).
    fn id(&self) -> i64;

    /// Shape and element type of a buffer.
    fn buffer_type(&self, b: &Self::Buffer) -> TensorType;

    /// Wait until everything this device was asked to do has finished (a
    /// backend that queues work, like CUDA's streams, returns before it
    /// runs). Timers call it before they stop; the default (work done when
    /// the call returns) does nothing.
    fn sync(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }

    /// Where devices share memory, a key that is the same for two buffers
    /// exactly when they are one block (its address) and a handle that
    /// keeps that key from naming another block without keeping the
    /// block's memory (a weak reference): then a device may take a result
    /// a replica made from the same blocks (see `replica_results`).
    /// `None`: no sharing.
    fn share_handle(&self, b: &Self::Buffer) -> Option<(usize, ShareHandle)> {
        let _ = b;
        None
    }

    /// A handle like [`Device::share_handle`]'s that keeps the block
    /// alive: for constants, which a device lets go of after their last
    /// read, when a replica may not have come yet.
    fn share_kept(&self, b: &Self::Buffer) -> Option<ShareHandle> {
        let _ = b;
        None
    }

    /// The buffer behind a [`Device::share_handle`] (or
    /// [`Device::share_kept`]) handle, if it is still alive.
    fn shared_buffer(&self, h: &ShareHandle) -> Option<Self::Buffer> {
        let _ = h;
        None
    }

    /// The executor is done with `b` (its last use has run). Dropping it
    /// frees it; a backend may keep its memory for later results.
    fn release(&mut self, b: Self::Buffer) {
        drop(b);
    }

    /// A scalar buffer (a loop condition, a branch index) on the host: the
    /// executor decides control flow from it.
    fn read_scalar(&mut self, b: &Self::Buffer) -> Result<HostTensor, DeviceError>;

    /// A StableHLO op on local blocks (`result_types` are the local types).
    fn op(
        &mut self,
        kind: &OpKind,
        operands: &[&Self::Buffer],
        result_types: &[TensorType],
    ) -> Result<Vec<Self::Buffer>, DeviceError>;

    /// [`Device::op`] on `[first, rest..]` where the executor hands over
    /// `first` (the operand's last use): a device may write the result
    /// into its block when no one else holds it (the CPU device does for
    /// the ops `meshrun_kernels::cpu::in_place` names). By default the op
    /// runs as usual and `first` is released.
    fn op_into(
        &mut self,
        kind: &OpKind,
        first: Self::Buffer,
        rest: &[&Self::Buffer],
        result_types: &[TensorType],
    ) -> Result<Vec<Self::Buffer>, DeviceError> {
        let mut all = Vec::with_capacity(1 + rest.len());
        all.push(&first);
        all.extend_from_slice(rest);
        let made = self.op(kind, &all, result_types);
        self.release(first);
        made
    }

    /// A chain of element-wise ops the executor fused
    /// ([`crate::fusion`]), computed in one pass, if this device can; with
    /// `None` (the default) the executor runs the chain's ops one by one,
    /// which gives bitwise the same result.
    fn fused(
        &mut self,
        chain: &Chain,
        operands: &[&Self::Buffer],
    ) -> Option<Result<Self::Buffer, DeviceError>> {
        let _ = (chain, operands);
        None
    }

    /// `chain` with the `None` operand = `dot` (a `dot_general` of
    /// result type `dot_ty`) on `dot_operands`, computed on the product's
    /// tiles as they are made, if this device can; with `None` (the
    /// default) the executor runs the dot, then the chain, which gives
    /// bitwise the same result.
    fn dot_fused(
        &mut self,
        dot: &OpKind,
        dot_operands: &[&Self::Buffer],
        dot_ty: &TensorType,
        chain: &Chain,
        operands: &[Option<&Self::Buffer>],
    ) -> Option<Result<Self::Buffer, DeviceError>> {
        let _ = (dot, dot_operands, dot_ty, chain, operands);
        None
    }

    /// A tensor of type `ty` whose element `k` along `dim` is `offset + k`.
    fn iota(
        &mut self,
        ty: &TensorType,
        dim: usize,
        offset: i64,
    ) -> Result<Self::Buffer, DeviceError>;

    /// A copy of `x` with every element whose index along `dim` is
    /// `>= valid` set to `fill`.
    fn mask(
        &mut self,
        x: &Self::Buffer,
        dim: usize,
        valid: i64,
        fill: Scalar,
    ) -> Result<Self::Buffer, DeviceError>;

    /// The `size` elements of `x` along `dim` starting at `start`.
    fn slice_dim(
        &mut self,
        x: &Self::Buffer,
        dim: usize,
        start: i64,
        size: i64,
    ) -> Result<Self::Buffer, DeviceError>;

    /// A tensor of type `ty` built along `dim` element by element from
    /// `table` (see `Instr::Remap`); `fill` is a scalar (zero when `None`).
    fn remap(
        &mut self,
        sources: &[&Self::Buffer],
        fill: Option<&Self::Buffer>,
        ty: &TensorType,
        dim: usize,
        table: &[RemapEntry],
    ) -> Result<Self::Buffer, DeviceError>;

    /// This device's part in collective `c`. `instance` identifies the
    /// collective within the run (the same number on every device), `x` is
    /// this device's block and `out` the local type of the result.
    fn collective(
        &mut self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &Self::Buffer,
        out: &TensorType,
    ) -> Result<Self::Buffer, DeviceError>;
}

/// The local-op methods of a [`Device`] that delegates them to another
/// device reached through `self.$field` (the MPI device runs its local ops
/// on a CPU device, the per-rank CUDA device on a CUDA device); written
/// inside the `impl Device` block, next to the methods it does itself.
#[cfg(feature = "mpi")]
macro_rules! forward_local_ops {
    ($buffer:ty, $($field:ident).+) => {
        fn read_scalar(
            &mut self,
            b: &$buffer,
        ) -> Result<meshrun_kernels::HostTensor, $crate::backend::DeviceError> {
            self.$($field).+.read_scalar(b)
        }

        fn op(
            &mut self,
            kind: &meshrun_compiler::ir::OpKind,
            operands: &[&$buffer],
            result_types: &[meshrun_compiler::ir::TensorType],
        ) -> Result<Vec<$buffer>, $crate::backend::DeviceError> {
            self.$($field).+.op(kind, operands, result_types)
        }

        fn op_into(
            &mut self,
            kind: &meshrun_compiler::ir::OpKind,
            first: $buffer,
            rest: &[&$buffer],
            result_types: &[meshrun_compiler::ir::TensorType],
        ) -> Result<Vec<$buffer>, $crate::backend::DeviceError> {
            self.$($field).+.op_into(kind, first, rest, result_types)
        }

        fn fused(
            &mut self,
            chain: &meshrun_kernels::cpu::fusion::Chain,
            operands: &[&$buffer],
        ) -> Option<Result<$buffer, $crate::backend::DeviceError>> {
            self.$($field).+.fused(chain, operands)
        }

        fn dot_fused(
            &mut self,
            dot: &meshrun_compiler::ir::OpKind,
            dot_operands: &[&$buffer],
            dot_ty: &meshrun_compiler::ir::TensorType,
            chain: &meshrun_kernels::cpu::fusion::Chain,
            operands: &[Option<&$buffer>],
        ) -> Option<Result<$buffer, $crate::backend::DeviceError>> {
            self.$($field).+.dot_fused(dot, dot_operands, dot_ty, chain, operands)
        }

        fn iota(
            &mut self,
            ty: &meshrun_compiler::ir::TensorType,
            dim: usize,
            offset: i64,
        ) -> Result<$buffer, $crate::backend::DeviceError> {
            self.$($field).+.iota(ty, dim, offset)
        }

        fn mask(
            &mut self,
            x: &$buffer,
            dim: usize,
            valid: i64,
            fill: meshrun_compiler::ir::Scalar,
        ) -> Result<$buffer, $crate::backend::DeviceError> {
            self.$($field).+.mask(x, dim, valid, fill)
        }

        fn slice_dim(
            &mut self,
            x: &$buffer,
            dim: usize,
            start: i64,
            size: i64,
        ) -> Result<$buffer, $crate::backend::DeviceError> {
            self.$($field).+.slice_dim(x, dim, start, size)
        }

        fn remap(
            &mut self,
            sources: &[&$buffer],
            fill: Option<&$buffer>,
            ty: &meshrun_compiler::ir::TensorType,
            dim: usize,
            table: &[meshrun_compiler::partition::RemapEntry],
        ) -> Result<$buffer, $crate::backend::DeviceError> {
            self.$($field).+.remap(sources, fill, ty, dim, table)
        }
    };
}
#[cfg(feature = "mpi")]
pub(crate) use forward_local_ops;
