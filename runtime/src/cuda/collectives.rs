//! A mesh device's part in a collective on the GPU, following the group's
//! route (`routes`):
//!
//! 1. every member deposits a handle to its block in the run's
//!    rendezvous and takes everyone's (process memory; nothing is copied
//!    yet). This is also the barrier that stops everyone when a device of
//!    the run has failed, before anyone enters NCCL;
//! 2. NCCL route with a native op (all-reduce, reduce-scatter, all-gather):
//!    one NCCL call on the group's communicator;
//! 3. otherwise, blocks that must cross GPUs travel between the GPUs'
//!    leaders with grouped `ncclSend`/`ncclRecv` (one communicator per
//!    leader list, created once, in the leaders' own threads after binding
//!    their contexts), and the leader hands what it received to the other
//!    members on its GPU through the rendezvous;
//! 4. the member builds its result on its own stream from the blocks it
//!    can now read on its GPU: box copies (`boxes`) or a rank-order
//!    reduction (`reduce_many`), exactly the CPU backend's semantics.
//!
//! Cross-stream ordering comes from cudarc's per-allocation events. Needs
//! GPUs to run (not exercised in CI); the plans it follows are tested on
//! the CPU. Known limit: a device that fails *after* its peers entered an
//! NCCL call leaves them waiting in the GPU; the rendezvous barrier makes
//! that window one collective wide.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::nccl::{Comm, Group, Id};
use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_kernels::cuda::names;

use super::boxes::{result_boxes, SourceBox};
use super::buffer::{with_dev, CudaBuffer, DevData};
use super::device::{gpu_err, CudaDevice};
use super::layout::{box_copy, dims, StridedCopy};
use super::routes::{native_reduce_op, GroupPlan, NcclOp, Needs, Route};
use super::run_shared::Item;
use crate::backend::{DeviceError, Participation};
use crate::cpu::rendezvous::{Poisoned, SlotKey};

fn peer_failed(p: Poisoned) -> DeviceError {
    DeviceError::PeerFailed(p.failed)
}

fn nccl_err(what: &str) -> impl Fn(cudarc::nccl::result::NcclError) -> DeviceError + '_ {
    move |e| DeviceError::Invalid(format!("NCCL {what}: {e:?}"))
}

/// Apply `$body` to the two slices of a pair of `DevData` of one type.
macro_rules! with_pair {
    ($x:expr, $y:expr, $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            (DevData::F64($a), DevData::F64($b)) => $body,
            (DevData::F32($a), DevData::F32($b)) => $body,
            (DevData::F16($a), DevData::F16($b)) => $body,
            (DevData::BF16($a), DevData::BF16($b)) => $body,
            (DevData::Pred($a), DevData::Pred($b)) => $body,
            (DevData::I32($a), DevData::I32($b)) => $body,
            (DevData::I64($a), DevData::I64($b)) => $body,
            (DevData::U32($a), DevData::U32($b)) => $body,
            (DevData::U64($a), DevData::U64($b)) => $body,
            _ => {
                return Err(DeviceError::Invalid(
                    "buffers of different element types".into(),
                ))
            }
        }
    };
}

fn group_send<'g>(g: &mut Group<'g>, d: &'g DevData, peer: i32) -> Result<(), DeviceError> {
    with_dev!(d, s => g.send(s.as_view(), peer)).map_err(nccl_err("send"))
}

fn group_recv<'g>(g: &mut Group<'g>, d: &'g mut DevData, peer: i32) -> Result<(), DeviceError> {
    with_dev!(d, s => g.recv(s.as_view_mut(), peer).map(drop)).map_err(nccl_err("recv"))
}

/// Who this device is in the collective.
struct Role {
    /// The rendezvous key of its group.
    key: i64,
    rank: usize,
    members: Vec<i64>,
    needs: Needs,
    /// A permute's source (group rank), if any.
    source: Option<usize>,
}

impl CudaDevice {
    fn role(&self, c: &Collective, part: Participation<'_>) -> Result<Role, DeviceError> {
        match part {
            Participation::Group {
                group,
                rank,
                members,
            } => Ok(Role {
                key: group as i64,
                rank,
                members: members.to_vec(),
                needs: Needs::All,
                source: None,
            }),
            Participation::Permute { .. } => {
                let members = self.shared.placement.devices().to_vec();
                let pos = |d: i64| {
                    members.iter().position(|&x| x == d).ok_or_else(|| {
                        DeviceError::Invalid(format!("device {d} is not in the run"))
                    })
                };
                let mut sources = vec![None; members.len()];
                for pair in &c.groups {
                    let &[s, t] = pair.as_slice() else {
                        return Err(DeviceError::Invalid(format!("permute pair {pair:?}")));
                    };
                    sources[pos(t)?] = Some(pos(s)?);
                }
                let rank = pos(self.id)?;
                Ok(Role {
                    key: 0,
                    rank,
                    source: sources[rank],
                    members,
                    needs: Needs::Sources(sources),
                })
            }
        }
    }

    /// This device's NCCL communicator over `members` (as rank `rank`),
    /// created on first use: every member calls this at the same point of
    /// the program, and `ncclCommInitRank` waits for all of them.
    fn comm(&mut self, members: &[i64], rank: usize) -> Result<&Comm, DeviceError> {
        let (shared, ctx, stream) = (&self.shared, &self.ctx, &self.stream);
        self.state.comms.get_or_create(members, || {
            let id = {
                let mut ids = shared.nccl_ids.lock().unwrap_or_else(|e| e.into_inner());
                match ids.get(members) {
                    Some(id) => *id,
                    None => {
                        let id = Id::new().map_err(nccl_err("ncclGetUniqueId"))?;
                        ids.insert(members.to_vec(), id);
                        id
                    }
                }
            };
            bind(ctx)?;
            Comm::from_rank(stream.clone(), rank, members.len(), id)
                .map_err(nccl_err("ncclCommInitRank"))
        })
    }

    /// Make this device's context current (before raw NCCL calls: a drop
    /// of another GPU's buffer may have switched it).
    fn bind(&self) -> Result<(), DeviceError> {
        bind(&self.ctx)
    }

    fn exchange(
        &self,
        instance: u64,
        phase: u32,
        key: i64,
        rank: usize,
        size: usize,
        item: Item,
    ) -> Result<Vec<Item>, DeviceError> {
        self.shared
            .rendezvous
            .exchange(
                SlotKey {
                    instance,
                    phase,
                    group: key,
                },
                rank,
                size,
                item,
            )
            .map_err(peer_failed)
    }

    /// The result of `boxes`, read from `source(rank)` (a buffer on this
    /// GPU and the element offset of the block in it).
    fn boxes_result(
        &self,
        boxes: &[SourceBox],
        in_shape: &[usize],
        out: &TensorType,
        source: &dyn Fn(usize) -> Option<(DevRef, usize)>,
    ) -> Result<CudaBuffer, DeviceError> {
        let out_shape = dims(&out.shape).map_err(DeviceError::Invalid)?;
        let mut held: Vec<(DevRef, StridedCopy)> = Vec::with_capacity(boxes.len());
        for b in boxes {
            let (buf, base) = source(b.source).ok_or_else(|| {
                DeviceError::Invalid(format!("the block of member {} did not arrive", b.source))
            })?;
            let mut copy = box_copy(&out_shape, in_shape, &b.dst_start, &b.src_start, &b.extent)
                .map_err(DeviceError::Invalid)?;
            copy.src_offset += base;
            held.push((buf, copy));
        }
        let parts: Vec<(&DevData, StridedCopy)> =
            held.iter().map(|(b, c)| (&**b, c.clone())).collect();
        self.assemble(out, &parts)
    }

    /// Rank-order reduction of every member's block.
    fn reduce_blocks(
        &self,
        c: &Collective,
        blocks: &[DevRef],
        ty: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        let kind = c
            .reduction
            .ok_or_else(|| DeviceError::Invalid(format!("a {} without a reduction", c.kind)))?;
        let name = names::reduce_many(kind, ty.elem).ok_or_else(|| {
            DeviceError::Invalid(format!("no {} reduction of {}", kind.name(), ty.elem))
        })?;
        let mut y = self.zeros(ty)?;
        let n = dims(&ty.shape)
            .map_err(DeviceError::Invalid)?
            .iter()
            .product();
        let sources: Vec<(&DevData, usize)> = blocks.iter().map(|b| (&**b, 0)).collect();
        self.launcher()
            .reduce_many(&name, &sources, &mut y, n)
            .map_err(gpu_err)?;
        Ok(self.wrap(y, ty))
    }

    pub(crate) fn run_collective(
        &mut self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &CudaBuffer,
        out: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        if out.elem != x.ty.elem {
            return Err(DeviceError::Invalid(format!(
                "the result is {out} but the block is {}",
                x.ty
            )));
        }
        let out_shape = dims(&out.shape).map_err(DeviceError::Invalid)?;
        let in_shape = x.shape();
        let role = self.role(c, part)?;
        let size = role.members.len();
        let own = |r: usize| (r == role.rank).then(|| (x.data.clone(), 0));
        match c.kind {
            CollectiveKind::AllSlice => {
                let boxes = result_boxes(c, role.rank, size, None, &out_shape)
                    .map_err(DeviceError::Invalid)?;
                return self.boxes_result(&boxes, &in_shape, out, &own);
            }
            CollectiveKind::AllReduce if size == 1 => return Ok(x.clone()),
            _ => {}
        }
        let plan = GroupPlan::new(&role.members, &self.shared.placement, &role.needs)
            .map_err(DeviceError::Invalid)?;
        // Phase 0: everyone's handles; the barrier.
        let items = self.exchange(
            instance,
            0,
            role.key,
            role.rank,
            size,
            Item::Block(x.clone()),
        )?;
        let blocks: Vec<CudaBuffer> = items
            .into_iter()
            .map(|i| match i {
                Item::Block(b) => Ok(b),
                _ => Err(DeviceError::Invalid("a member deposited no block".into())),
            })
            .collect::<Result<_, _>>()?;
        if blocks.len() != size
            || blocks
                .iter()
                .any(|b| b.ty != x.ty || b.data.len() != x.data.len())
        {
            return Err(DeviceError::Invalid(format!(
                "the members of a {} hold blocks of different types",
                c.kind
            )));
        }
        let native = plan.route == Route::Nccl
            && match c.kind {
                CollectiveKind::AllGather => true,
                CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => c
                    .reduction
                    .and_then(|k| native_reduce_op(k, x.ty.elem))
                    .is_some(),
                _ => false,
            };
        if native {
            return self.native(c, &plan, &role, x, &in_shape, out);
        }
        let remote = self.move_blocks(instance, &plan, &role, &blocks)?;
        let my_gpu = plan.gpu_index(role.rank);
        let here = |r: usize| -> Option<(DevRef, usize)> {
            if plan.gpu_index(r) == my_gpu {
                blocks.get(r).map(|b| (b.data.clone(), 0))
            } else {
                remote.get(&r).map(|b| (b.data.clone(), 0))
            }
        };
        match c.kind {
            CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => {
                let all = (0..size)
                    .map(|r| here(r).map(|(d, _)| d))
                    .collect::<Option<Vec<DevRef>>>()
                    .ok_or_else(|| DeviceError::Invalid("a block did not arrive".into()))?;
                let reduced = self.reduce_blocks(c, &all, &x.ty)?;
                if c.kind == CollectiveKind::AllReduce {
                    return Ok(reduced.with_type(out.clone()));
                }
                let boxes = result_boxes(c, role.rank, size, None, &out_shape)
                    .map_err(DeviceError::Invalid)?;
                self.boxes_result(&boxes, &in_shape, out, &|_| Some((reduced.data.clone(), 0)))
            }
            _ => {
                let boxes = result_boxes(c, role.rank, size, role.source, &out_shape)
                    .map_err(DeviceError::Invalid)?;
                self.boxes_result(&boxes, &in_shape, out, &here)
            }
        }
    }

    /// Native NCCL collectives (one member per GPU).
    fn native(
        &mut self,
        c: &Collective,
        plan: &GroupPlan,
        role: &Role,
        x: &CudaBuffer,
        in_shape: &[usize],
        out: &TensorType,
    ) -> Result<CudaBuffer, DeviceError> {
        let out_shape = dims(&out.shape).map_err(DeviceError::Invalid)?;
        // Communicator ranks follow the GPUs, not the group ranks.
        let members = plan.comm_members();
        let size = members.len();
        let crank = plan
            .gpu_index(role.rank)
            .ok_or_else(|| DeviceError::Invalid("no GPU index".into()))?;
        let alloc = x.data.len();
        let stream = self.stream.clone();
        match c.kind {
            CollectiveKind::AllGather => {
                let mut stacked =
                    DevData::zeros(&stream, x.ty.elem, alloc * size).map_err(gpu_err)?;
                {
                    self.bind()?;
                    let comm = self.comm(&members, crank)?;
                    with_pair!(&*x.data, &mut stacked, a, b => comm.all_gather(a, b).map(drop))
                        .map_err(nccl_err("all-gather"))?;
                }
                let stacked: DevRef = Arc::new(stacked);
                let boxes = result_boxes(c, role.rank, size, None, &out_shape)
                    .map_err(DeviceError::Invalid)?;
                self.boxes_result(&boxes, in_shape, out, &|m| {
                    plan.gpu_index(m).map(|g| (stacked.clone(), g * alloc))
                })
            }
            CollectiveKind::AllReduce | CollectiveKind::ReduceScatter => {
                let op = c
                    .reduction
                    .and_then(|k| native_reduce_op(k, x.ty.elem))
                    .map(NcclOp::nccl)
                    .ok_or_else(|| DeviceError::Invalid("no native reduction".into()))?;
                let mut y = DevData::zeros(&stream, x.ty.elem, alloc).map_err(gpu_err)?;
                {
                    self.bind()?;
                    let comm = self.comm(&members, crank)?;
                    with_pair!(&*x.data, &mut y, a, b => comm.all_reduce(a, b, &op).map(drop))
                        .map_err(nccl_err("all-reduce"))?;
                }
                let reduced: DevRef = Arc::new(y);
                if c.kind == CollectiveKind::AllReduce {
                    return Ok(CudaBuffer {
                        data: reduced,
                        ty: out.clone(),
                        gpu: self.gpu,
                    });
                }
                let boxes = result_boxes(c, role.rank, size, None, &out_shape)
                    .map_err(DeviceError::Invalid)?;
                self.boxes_result(&boxes, in_shape, out, &|_| Some((reduced.clone(), 0)))
            }
            _ => Err(DeviceError::Invalid(format!("no native NCCL {}", c.kind))),
        }
    }

    /// Move whole blocks between GPUs through their leaders; the blocks of
    /// other GPUs this device can now read, by group rank.
    fn move_blocks(
        &mut self,
        instance: u64,
        plan: &GroupPlan,
        role: &Role,
        blocks: &[CudaBuffer],
    ) -> Result<HashMap<usize, CudaBuffer>, DeviceError> {
        if plan.transfers.is_empty() {
            return Ok(HashMap::new());
        }
        let locals = plan.local_ranks(role.rank).to_vec();
        let me = locals
            .iter()
            .position(|&r| r == role.rank)
            .ok_or_else(|| DeviceError::Invalid("not on my own GPU".into()))?;
        let leader_key = role.members[locals[0]];
        let mine = if me == 0 {
            let gpu_idx = plan
                .gpu_index(role.rank)
                .ok_or_else(|| DeviceError::Invalid("no GPU index".into()))?;
            Item::Received(Arc::new(self.leader_transfers(plan, gpu_idx, blocks)?))
        } else {
            Item::Nothing
        };
        let items = self.exchange(instance, 1, leader_key, me, locals.len(), mine)?;
        let mut got = HashMap::new();
        for item in items {
            if let Item::Received(list) = item {
                for (r, b) in list.iter() {
                    got.insert(*r, b.clone());
                }
            }
        }
        Ok(got)
    }

    /// The leader's grouped sends and receives for its GPU.
    fn leader_transfers(
        &mut self,
        plan: &GroupPlan,
        gpu_idx: usize,
        blocks: &[CudaBuffer],
    ) -> Result<Vec<(usize, CudaBuffer)>, DeviceError> {
        let members = plan.comm_members();
        let ty = blocks[0].ty.clone();
        let alloc = blocks[0].data.len();
        let sends: Vec<_> = plan
            .transfers
            .iter()
            .filter(|t| t.from == gpu_idx)
            .copied()
            .collect();
        let recvs: Vec<_> = plan
            .transfers
            .iter()
            .filter(|t| t.to == gpu_idx)
            .copied()
            .collect();
        let stream = self.stream.clone();
        let mut bufs: Vec<DevData> = recvs
            .iter()
            .map(|_| DevData::zeros(&stream, ty.elem, alloc))
            .collect::<Result<_, _>>()
            .map_err(gpu_err)?;
        // Every leader joins the communicator, even one with nothing to move.
        self.bind()?;
        let comm = self.comm(&members, gpu_idx)?;
        if !sends.is_empty() || !recvs.is_empty() {
            let mut group = comm.group();
            for t in &sends {
                group_send(&mut group, &blocks[t.rank].data, t.to as i32)?;
            }
            for (t, buf) in recvs.iter().zip(bufs.iter_mut()) {
                group_recv(&mut group, buf, t.from as i32)?;
            }
            // Dropping the group ends it (ncclGroupEnd) and then records
            // the reads and writes on the leader's stream.
        }
        Ok(recvs
            .iter()
            .zip(bufs)
            .map(|(t, b)| {
                (
                    t.rank,
                    CudaBuffer {
                        data: Arc::new(b),
                        ty: ty.clone(),
                        gpu: self.gpu,
                    },
                )
            })
            .collect())
    }
}

/// A shared handle to device data.
type DevRef = Arc<DevData>;

/// Make `ctx` the calling thread's current context.
fn bind(ctx: &cudarc::driver::CudaContext) -> Result<(), DeviceError> {
    ctx.bind_to_thread()
        .map_err(|e| gpu_err(format!("CUDA: {e}")))
}
