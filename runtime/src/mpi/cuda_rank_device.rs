//! [`CudaRankDevice`]: the one mesh device of this process on its GPU,
//! while a program runs under MPI with `--backend cuda`.
//!
//! - **Local work** (ops, iota, masks, slices, remaps) is the CUDA
//!   backend's own device code ([`CudaDevice`]), so a block computed here
//!   is the block a single-process CUDA run computes.
//! - **Collectives** follow [`super::nccl_plan`]: one NCCL call (or none)
//!   on the group's communicator, then box copies or a rank-order
//!   reduction on this GPU with the CUDA backend's kernels.
//! - **Communicators.** One NCCL communicator per partition of the world
//!   into groups, created the first time a collective over that partition
//!   runs: the group's MPI communicator ([`super::comms`]) carries the
//!   NCCL unique id from the group's rank 0 to its members
//!   ([`super::gpu::broadcast_id_over`]), then `ncclCommInitRank`. Every
//!   rank runs the same collectives in the same order, so every rank
//!   creates the same communicators at the same time. Collective-permutes
//!   use one communicator over the whole world, which every rank joins at
//!   the first permute, even one that neither sends nor receives.
//!   Communicators are kept across runs with the device.
//!
//! **Untested: needs GPUs and NCCL**, which this machine and CI lack; the
//! plans are unit tested in [`super::nccl_plan`].

use std::sync::Arc;

use cudarc::nccl::Comm;
use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_kernels::cuda::names;

use super::comms::{self, membership, Membership};
use super::gpu;
use super::nccl_plan::{self, Exchange, Finish};
use crate::backend::{Device, DeviceError, Participation};
use crate::cpu::collectives::dims;
use crate::cuda::boxes::result_boxes;
use crate::cuda::buffer::{with_dev, CudaBuffer, DevData};
use crate::cuda::device::CudaDevice;
use crate::cuda::layout::{box_copy, StridedCopy};
use crate::cuda::nccl_comms::NcclComms;

fn invalid(m: impl Into<String>) -> DeviceError {
    DeviceError::Invalid(m.into())
}

fn nccl_err(what: &str) -> impl Fn(cudarc::nccl::result::NcclError) -> DeviceError + '_ {
    move |e| invalid(format!("NCCL {what}: {e:?}"))
}

/// `$body` with `$a` the first `$n` elements of `$x` (a view) and `$b` the
/// slice of `$y`, both of one element type.
macro_rules! with_pair {
    ($x:expr, $n:expr, $y:expr, $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            (DevData::F64(s), DevData::F64($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::F32(s), DevData::F32($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::F16(s), DevData::F16($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::BF16(s), DevData::BF16($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::Pred(s), DevData::Pred($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::I32(s), DevData::I32($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::I64(s), DevData::I64($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::U32(s), DevData::U32($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            (DevData::U64(s), DevData::U64($b)) => {
                let $a = s.slice(0..$n);
                $body
            }
            _ => return Err(invalid("buffers of different element types")),
        }
    };
}

/// What the rank keeps between runs: its device (GPU context, stream,
/// kernels, cuBLAS handle) and its NCCL communicators by partition.
pub struct RankState {
    device: CudaDevice,
    comms: NcclComms<Vec<Vec<usize>>>,
}

impl RankState {
    pub(crate) fn new(device: CudaDevice) -> RankState {
        RankState {
            device,
            comms: NcclComms::default(),
        }
    }
}

/// The device of this process on its GPU.
pub struct CudaRankDevice {
    state: RankState,
    /// The run's devices; `devices[r]` runs on world rank `r`.
    devices: Arc<[i64]>,
    /// This process's world rank.
    rank: usize,
}

impl CudaRankDevice {
    pub(crate) fn new(mut state: RankState, id: i64, devices: Arc<[i64]>, rank: usize) -> Self {
        state.device.id = id;
        CudaRankDevice {
            state,
            devices,
            rank,
        }
    }

    pub(crate) fn into_state(self) -> RankState {
        self.state
    }

    fn dev(&self) -> &CudaDevice {
        &self.state.device
    }

    /// This rank's NCCL communicator over its group of `partition`,
    /// created on first use (collective over the world the first time a
    /// partition is seen: see the module doc).
    fn comm(&mut self, partition: &[Vec<usize>], me: Membership) -> Result<&Comm, DeviceError> {
        // The MPI split is collective over the world: do it (or find it)
        // on every rank, whether or not the NCCL communicator exists.
        let mpi_comm = comms::group_comm(partition, self.rank)
            .map_err(invalid)?
            .ok_or_else(|| invalid("a group of one has no communicator"))?;
        let dev = &self.state.device;
        self.state.comms.get_or_create(partition, || {
            // Each rank checks NCCL itself (cudarc panics when the library
            // cannot be loaded); a rank that fails ends the job.
            crate::cuda::probe::nccl().map_err(invalid)?;
            let id = gpu::broadcast_id_over(&*mpi_comm, gpu::new_nccl_id)
                .map_err(|e| invalid(e.to_string()))?;
            dev.ctx
                .bind_to_thread()
                .map_err(|e| invalid(format!("CUDA: {e}")))?;
            Comm::from_rank(
                dev.stream.clone(),
                me.rank,
                me.group_size,
                gpu::nccl_id_from_bytes(&id),
            )
            .map_err(nccl_err("ncclCommInitRank"))
        })
    }

    /// The result of `c` for group member `rank` of `size` made of box
    /// copies, member `m`'s block read from `block(m)` (a buffer on this
    /// GPU and the element offset of the block in it).
    fn boxes_result<'b>(
        &self,
        c: &Collective,
        rank: usize,
        size: usize,
        in_shape: &[usize],
        out: &TensorType,
        block: &dyn Fn(usize) -> Option<(&'b DevData, usize)>,
    ) -> Result<CudaBuffer, DeviceError> {
        let out_shape = dims(&out.shape).map_err(invalid)?;
        let boxes = result_boxes(c, rank, size, None, &out_shape).map_err(invalid)?;
        let mut parts: Vec<(&'b DevData, StridedCopy)> = Vec::with_capacity(boxes.len());
        for b in &boxes {
            let (buf, base) = block(b.source)
                .ok_or_else(|| invalid(format!("the block of member {} is missing", b.source)))?;
            let mut copy = box_copy(&out_shape, in_shape, &b.dst_start, &b.src_start, &b.extent)
                .map_err(invalid)?;
            copy.src_offset += base;
            parts.push((buf, copy));
        }
        self.dev().assemble(out, &parts)
    }

    /// The `size` blocks of `n` elements stacked in `stacked`, reduced
    /// element-wise in rank order (the CPU backend's order) to a block of
    /// type `ty`.
    fn reduce_in_rank_order(
        &self,
        c: &Collective,
        stacked: &DevData,
        size: usize,
        n: usize,
        ty: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        let kind = c
            .reduction
            .ok_or_else(|| invalid(format!("a {} without a reduction", c.kind)))?;
        let name = names::reduce_many(kind, ty.elem)
            .ok_or_else(|| invalid(format!("no {} reduction of {}", kind.name(), ty.elem)))?;
        let sources: Vec<(&DevData, usize)> = (0..size).map(|r| (stacked, r * n)).collect();
        let dev = self.dev();
        let mut y = dev.zeros(ty)?;
        dev.launcher()
            .reduce_many(&name, &sources, &mut y, n)
            .map_err(invalid)?;
        Ok(dev.wrap(y, ty))
    }

    /// All-slice, all-gather, all-to-all, all-reduce, reduce-scatter.
    fn group_collective(
        &mut self,
        c: &Collective,
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        let seats = nccl_plan::seats(&c.groups, &self.devices, self.rank).map_err(invalid)?;
        let (rank, size) = (seats.me.rank, seats.me.group_size);
        let n = x.len();
        let plan = nccl_plan::group_plan(c, x.ty.elem, n, size).map_err(invalid)?;
        if x.data.len() < n {
            return Err(invalid(format!(
                "a block of {n} elements in a buffer of {}",
                x.data.len()
            )));
        }
        let stream = self.dev().stream.clone();
        let elem = x.ty.elem;
        // What the exchange leaves on this GPU.
        let mut reduced: Option<DevData> = None;
        let mut gathered: Option<DevData> = None;
        match plan.exchange {
            Exchange::None => {}
            Exchange::AllReduce(op) => {
                let mut y = DevData::zeros(&stream, elem, n).map_err(invalid)?;
                let comm = self.comm(&seats.partition, seats.me)?;
                with_pair!(&*x.data, n, &mut y, a, b => comm.all_reduce(&a, b, &op.nccl()))
                    .map_err(nccl_err("all-reduce"))?;
                reduced = Some(y);
            }
            Exchange::AllGather => {
                let mut y = DevData::zeros(&stream, elem, n * size).map_err(invalid)?;
                let comm = self.comm(&seats.partition, seats.me)?;
                with_pair!(&*x.data, n, &mut y, a, b => comm.all_gather(&a, b))
                    .map_err(nccl_err("all-gather"))?;
                gathered = Some(y);
            }
            Exchange::SendRecv { .. } => return Err(invalid("send/recv planned for a group")),
        }
        let in_shape = x.shape();
        // Member `m`'s block: gathered, or (nothing exchanged) the own one.
        let member = |m: usize| -> Option<(&DevData, usize)> {
            match &gathered {
                Some(g) => (m < size).then_some((g, m * n)),
                None => Some((&*x.data, 0)),
            }
        };
        let none_left = || invalid("the exchange left no block");
        match plan.finish {
            Finish::Same => Ok(match reduced {
                Some(y) => self.dev().wrap(y, out),
                None => x.with_type(out.clone()),
            }),
            Finish::Boxes => self.boxes_result(c, rank, size, &in_shape, out, &member),
            Finish::BoxesOfReduced => {
                let r = reduced.ok_or_else(none_left)?;
                self.boxes_result(c, rank, size, &in_shape, out, &|_| Some((&r, 0)))
            }
            Finish::Reduce => {
                let g = gathered.as_ref().ok_or_else(none_left)?;
                let r = self.reduce_in_rank_order(c, g, size, n, &x.ty)?;
                Ok(r.with_type(out.clone()))
            }
            Finish::ReduceThenBoxes => {
                let g = gathered.as_ref().ok_or_else(none_left)?;
                let r = self.reduce_in_rank_order(c, g, size, n, &x.ty)?;
                self.boxes_result(c, rank, size, &in_shape, out, &|_| Some((&*r.data, 0)))
            }
            Finish::Received | Finish::Own | Finish::Zeros => {
                Err(invalid("a permute result planned for a group"))
            }
        }
    }

    /// Collective-permute: grouped send/recv on the world communicator.
    fn permute(
        &mut self,
        send_to: Option<i64>,
        recv_from: Option<i64>,
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        let plan = nccl_plan::permute_plan(&self.devices, self.rank, send_to, recv_from)
            .map_err(invalid)?;
        let n = x.len();
        if x.data.len() < n {
            return Err(invalid(format!(
                "a block of {n} elements in a buffer of {}",
                x.data.len()
            )));
        }
        let mut received = None;
        let world = nccl_plan::world_partition(self.devices.len());
        if self.devices.len() > 1 {
            // Every rank joins the world communicator at the first permute.
            let me = membership(&world, self.rank).map_err(invalid)?;
            let stream = self.dev().stream.clone();
            let mut y = match plan.exchange {
                Exchange::SendRecv {
                    recv_from: Some(_), ..
                } => Some(DevData::zeros(&stream, x.ty.elem, n).map_err(invalid)?),
                _ => None,
            };
            let comm = self.comm(&world, me)?;
            if let Exchange::SendRecv { send_to, recv_from } = plan.exchange {
                let peer = |r: usize| i32::try_from(r).map_err(|_| invalid("rank out of range"));
                let mut group = comm.group();
                if let Some(t) = send_to {
                    let t = peer(t)?;
                    with_dev!(&*x.data, s => group.send(s.slice(0..n), t))
                        .map_err(nccl_err("send"))?;
                }
                if let (Some(f), Some(buf)) = (recv_from, y.as_mut()) {
                    let f = peer(f)?;
                    with_dev!(buf, s => group.recv(s.slice_mut(0..n), f).map(drop))
                        .map_err(nccl_err("recv"))?;
                }
                // Dropping the group ends it (ncclGroupEnd) and records the
                // reads and writes on the stream.
            }
            received = y;
        }
        match plan.finish {
            Finish::Own => Ok(x.with_type(out.clone())),
            Finish::Received => {
                let y = received.ok_or_else(|| invalid("nothing was received"))?;
                Ok(self.dev().wrap(y, out))
            }
            Finish::Zeros => {
                let dev = self.dev();
                Ok(dev.wrap(dev.zeros(out)?, out))
            }
            _ => Err(invalid("a group result planned for a permute")),
        }
    }
}

impl Device for CudaRankDevice {
    type Buffer = CudaBuffer;

    fn id(&self) -> i64 {
        self.state.device.id()
    }

    fn sync(&mut self) -> Result<(), DeviceError> {
        self.state.device.sync()
    }

    fn buffer_type(&self, b: &CudaBuffer) -> TensorType {
        b.tensor_type().clone()
    }

    crate::backend::forward_local_ops!(CudaBuffer, state.device);

    fn collective(
        &mut self,
        _instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        if out.elem != x.ty.elem {
            return Err(invalid(format!(
                "the result is {out} but the block is {}",
                x.ty
            )));
        }
        let out_shape = dims(&out.shape).map_err(invalid)?;
        let in_shape = dims(&c.in_local_shape).map_err(invalid)?;
        if c.kind != CollectiveKind::CollectivePermute && x.shape() != in_shape {
            // Every member must send blocks of the agreed shape, or the
            // NCCL counts would not match.
            return Err(invalid(format!(
                "this device holds a block of shape {:?}; the {} expects {in_shape:?}",
                x.shape(),
                c.kind
            )));
        }
        let result = match (c.kind, part) {
            (CollectiveKind::CollectivePermute, Participation::Permute { send_to, recv_from }) => {
                self.permute(send_to, recv_from, x, out)?
            }
            (CollectiveKind::CollectivePermute, _) => {
                return Err(invalid("a permute given groups, not pairs"))
            }
            (_, Participation::Permute { .. }) => {
                return Err(invalid("a group collective given permute pairs"))
            }
            (_, Participation::Group { .. }) => self.group_collective(c, x, out)?,
        };
        if result.shape() != out_shape {
            return Err(invalid(format!(
                "the {} gives a block of shape {:?} but the program expects {out}",
                c.kind,
                result.shape()
            )));
        }
        Ok(result)
    }
}
