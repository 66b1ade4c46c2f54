//! [`MpiDevice`]: the one mesh device of this process while a program
//! runs. Local work (ops, iota, masks, slices, remaps) is the CPU
//! backend's ([`CpuDevice`]), so a block computed here is bitwise the block
//! a simulated device computes; collectives move bytes over MPI and then
//! combine them with the CPU backend's pure functions
//! ([`crate::cpu::collectives`]), in rank order, so their results are
//! bitwise the CPU backend's too:
//!
//! - **all-gather**: `MPI_Allgather` of the blocks, then concatenation;
//! - **all-to-all**: `MPI_Alltoallv` of exactly the chunk each member
//!   needs, placed along the source dimension by rank;
//! - **reduce-scatter**: `MPI_Alltoallv` of each member's slice, then the
//!   slices reduced element-wise in rank order;
//! - **all-reduce**: blocks under
//!   [`CHUNKED_ALL_REDUCE_MIN_ELEMS`](crate::cpu::CHUNKED_ALL_REDUCE_MIN_ELEMS) elements
//!   are all-gathered and reduced whole by every member; larger ones in two
//!   phases (each member reduces one contiguous range of every member's
//!   block, then the ranges are all-gathered), like the CPU backend. MPI's
//!   own `MPI_Allreduce` is not used: its reduction order is the library's
//!   choice, and f16/bf16 would be summed in 16 bits;
//! - **collective-permute**: a non-blocking send to the target and a
//!   receive from the source on the world communicator; a device without a
//!   source gets zeros;
//! - **all-slice**: local, no communication.
//!
//! Groups are MPI communicators split once per distinct grouping
//! ([`super::comms`]); device `devices[r]` is world rank `r`.

use std::sync::Arc;

use meshrun_compiler::ir::{ElemType, ReduceKind, TensorType};
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_kernels::HostTensor;
use mpi::topology::SimpleCommunicator;

use super::comms;
use super::exchange;
use super::wire::{from_bytes, to_bytes};
use crate::backend::{Device, DeviceError, Participation};
use crate::blocks::{copy_box, zeros_like_elem, BoxCopy};
use crate::cpu::collectives as coll;
use crate::cpu::{CpuBuffer, CpuDevice};

/// A buffer of the MPI backend: a host block, as on the CPU backend.
pub type MpiBuffer = CpuBuffer;

/// MPI tags below this are collective-permute instances (modulo it); the
/// output gather uses the ones above.
pub(crate) const PERMUTE_TAGS: u64 = 16_384;

/// The device of this process.
pub struct MpiDevice {
    local: CpuDevice,
    id: i64,
    /// The run's devices; `devices[r]` runs on world rank `r`.
    devices: Arc<[i64]>,
    /// This process's world rank.
    rank: usize,
    chunked_min: usize,
}

fn invalid(m: String) -> DeviceError {
    DeviceError::Invalid(m)
}

impl MpiDevice {
    pub(crate) fn new(
        local: CpuDevice,
        id: i64,
        devices: Arc<[i64]>,
        rank: usize,
        chunked_min: usize,
    ) -> MpiDevice {
        MpiDevice {
            local,
            id,
            devices,
            rank,
            chunked_min,
        }
    }

    /// The world rank of device `d`.
    fn rank_of(&self, d: i64) -> Result<usize, DeviceError> {
        self.devices
            .iter()
            .position(|&x| x == d)
            .ok_or_else(|| invalid(format!("device {d} is not one of the run's devices")))
    }

    /// The communicator of this device's group in `c` (`None`: a group of
    /// one), with the group's size.
    fn group(
        &self,
        c: &Collective,
    ) -> Result<(Option<std::rc::Rc<SimpleCommunicator>>, usize), DeviceError> {
        let partition = c
            .groups
            .iter()
            .map(|g| g.iter().map(|&d| self.rank_of(d)).collect())
            .collect::<Result<Vec<Vec<usize>>, _>>()?;
        let comm = comms::group_comm(&partition, self.rank).map_err(invalid)?;
        Ok((comm, c.group_size()))
    }

    /// Every member's block (all of shape `shape`), by rank.
    fn gather_blocks(
        comm: Option<&SimpleCommunicator>,
        x: &HostTensor,
    ) -> Result<Vec<HostTensor>, DeviceError> {
        let Some(comm) = comm else {
            return Ok(vec![x.clone()]);
        };
        let mine = to_bytes(x);
        let all = exchange::all_gather(comm, &mine).map_err(invalid)?;
        let (elem, shape) = (x.elem_type(), x.shape());
        if mine.is_empty() {
            return Ok(vec![x.clone(); all.len().max(1)]);
        }
        all.chunks_exact(mine.len())
            .map(|b| from_bytes(elem, shape, b).map_err(invalid))
            .collect()
    }

    fn all_gather(
        &self,
        c: &Collective,
        x: &HostTensor,
        out: &[usize],
    ) -> Result<HostTensor, DeviceError> {
        let (comm, size) = self.group(c)?;
        let blocks = if x.is_empty() {
            vec![x.clone(); size]
        } else {
            Self::gather_blocks(comm.as_deref(), x)?
        };
        let refs: Vec<&HostTensor> = blocks.iter().collect();
        coll::all_gather(&refs, c, out).map_err(invalid)
    }

    fn all_to_all(
        &self,
        c: &Collective,
        x: &HostTensor,
        out: &[usize],
    ) -> Result<HostTensor, DeviceError> {
        let (comm, size) = self.group(c)?;
        let Some(comm) = comm else {
            return coll::all_to_all(&[x], 0, c, out).map_err(invalid);
        };
        let me = comm_rank(&comm);
        let in_shape = coll::dims(&c.in_local_shape).map_err(invalid)?;
        let (s, t) = all_to_all_dims(c, &in_shape, out, size, x)?;
        // What member `m` sends member `i`: chunk `i` along the target
        // dimension, cut as the CPU backend cuts it.
        let extent = |m: usize, i: usize| -> Vec<usize> {
            let mut e = out.to_vec();
            e[s] = clipped(m * in_shape[s], in_shape[s], out[s]);
            e[t] = clipped(i * out[t], out[t], in_shape[t]);
            e
        };
        let bytes_of = |e: &[usize]| e.iter().product::<usize>() * elem_size(x.elem_type());
        let mut pieces = Vec::with_capacity(size);
        for i in 0..size {
            let e = extent(me, i);
            let mut start = vec![0; out.len()];
            start[t] = i * out[t];
            pieces.push(to_bytes(&cut(x, &start, &e)?));
        }
        let recv_lengths: Vec<usize> = (0..size).map(|m| bytes_of(&extent(m, me))).collect();
        let received = exchange::all_to_all(&*comm, &pieces, &recv_lengths).map_err(invalid)?;
        let mut result = zeros_like_elem(x, out);
        let zero = vec![0; out.len()];
        for (m, bytes) in received.iter().enumerate() {
            let e = extent(m, me);
            let piece = from_bytes(x.elem_type(), &e, bytes).map_err(invalid)?;
            let mut dst_start = vec![0; out.len()];
            dst_start[s] = m * in_shape[s];
            copy_box(
                &mut result,
                &piece,
                BoxCopy {
                    dst_start: &dst_start,
                    src_start: &zero,
                    extent: &e,
                },
            )
            .map_err(invalid)?;
        }
        Ok(result)
    }

    fn reduce_scatter(
        &self,
        c: &Collective,
        x: &HostTensor,
        out: &[usize],
    ) -> Result<HostTensor, DeviceError> {
        let kind = reduction(c)?;
        let (comm, size) = self.group(c)?;
        let Some(comm) = comm else {
            return coll::reduce_scatter(&[x], 0, kind, c, out).map_err(invalid);
        };
        // Member `i` reduces everyone's slice `i`: send it ours.
        let slices = (0..size)
            .map(|i| coll::all_slice(x, i, size, c, out).map(|s| to_bytes(&s)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let len = slices.first().map_or(0, Vec::len);
        let received = exchange::all_to_all(&*comm, &slices, &vec![len; size]).map_err(invalid)?;
        let chunks = received
            .iter()
            .map(|b| from_bytes(x.elem_type(), out, b))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let refs: Vec<&HostTensor> = chunks.iter().collect();
        coll::all_reduce(&refs, kind).map_err(invalid)
    }

    fn all_reduce(&self, c: &Collective, x: &HostTensor) -> Result<HostTensor, DeviceError> {
        let kind = reduction(c)?;
        let (comm, size) = self.group(c)?;
        let Some(comm) = comm else {
            return Ok(x.clone());
        };
        let len = x.len();
        if len < self.chunked_min || len < size {
            let blocks = Self::gather_blocks(Some(&comm), x)?;
            let refs: Vec<&HostTensor> = blocks.iter().collect();
            return coll::all_reduce(&refs, kind).map_err(invalid);
        }
        two_phase_all_reduce(&comm, x, kind, size)
    }

    fn permute(
        &self,
        instance: u64,
        send_to: Option<i64>,
        recv_from: Option<i64>,
        x: &CpuBuffer,
        out: &[usize],
    ) -> Result<CpuBuffer, DeviceError> {
        let to = send_to
            .filter(|&t| t != self.id)
            .map(|t| self.rank_of(t))
            .transpose()?;
        let from = recv_from
            .filter(|&s| s != self.id)
            .map(|s| self.rank_of(s))
            .transpose()?;
        let mine = to_bytes(x);
        let tag = (instance % PERMUTE_TAGS) as i32;
        let world = SimpleCommunicator::world();
        let got = exchange::send_recv(&world, &mine, to, from, mine.len(), tag).map_err(invalid)?;
        match (recv_from, got) {
            (Some(s), _) if s == self.id => Ok(x.clone()),
            (Some(_), Some(bytes)) => Ok(Arc::new(
                from_bytes(x.elem_type(), x.shape(), &bytes).map_err(invalid)?,
            )),
            _ => Ok(Arc::new(zeros_like_elem(x, out))),
        }
    }
}

fn comm_rank(c: &SimpleCommunicator) -> usize {
    use mpi::topology::Communicator;
    c.rank() as usize
}

fn elem_size(e: ElemType) -> usize {
    super::wire::elem_bytes(e).unwrap_or(0)
}

fn reduction(c: &Collective) -> Result<ReduceKind, DeviceError> {
    c.reduction
        .ok_or_else(|| invalid(format!("a {} without a reduction", c.kind)))
}

/// How much of a chunk of length `len` starting at `start` a dimension of
/// size `size` holds (as in the CPU backend).
fn clipped(start: usize, len: usize, size: usize) -> usize {
    len.min(size.saturating_sub(start))
}

/// The box `start`+`extent` of `x` as a tensor of its own.
fn cut(x: &HostTensor, start: &[usize], extent: &[usize]) -> Result<HostTensor, DeviceError> {
    let mut piece = zeros_like_elem(x, extent);
    let zero = vec![0; extent.len()];
    copy_box(
        &mut piece,
        x,
        BoxCopy {
            dst_start: &zero,
            src_start: start,
            extent,
        },
    )
    .map_err(invalid)?;
    Ok(piece)
}

/// The source and target dimensions of an all-to-all, after the checks the
/// CPU backend makes (so both refuse the same malformed collectives).
fn all_to_all_dims(
    c: &Collective,
    in_shape: &[usize],
    out: &[usize],
    size: usize,
    x: &HostTensor,
) -> Result<(usize, usize), DeviceError> {
    if x.shape() != in_shape {
        return Err(invalid(format!(
            "this device holds a block of shape {:?}; the collective expects {in_shape:?}",
            x.shape()
        )));
    }
    let d = c
        .all_to_all
        .ok_or_else(|| invalid("an all-to-all without dimensions".into()))?;
    let (s, t) = (d.src_dim, d.tgt_dim);
    if s == t || s >= in_shape.len() || t >= in_shape.len() || out.len() != in_shape.len() {
        return Err(invalid(format!("bad all-to-all dimensions {s}->{t}")));
    }
    for k in 0..out.len() {
        if k != s && k != t && out[k] != in_shape[k] {
            return Err(invalid(format!(
                "dimension {k} changes from {} to {} in an all-to-all {s}->{t}",
                in_shape[k], out[k]
            )));
        }
    }
    if out[s] > size * in_shape[s] {
        return Err(invalid(format!(
            "dimension {s}: a result of {} is more than {size} blocks of {}",
            out[s], in_shape[s]
        )));
    }
    Ok((s, t))
}

/// A large all-reduce: member `j` reduces the `j`-th contiguous range of
/// every member's block (in rank order), then the reduced ranges are
/// gathered. Each element is still combined in rank order, so the result
/// is bitwise the one-phase result.
fn two_phase_all_reduce(
    comm: &SimpleCommunicator,
    x: &HostTensor,
    kind: ReduceKind,
    size: usize,
) -> Result<HostTensor, DeviceError> {
    let me = comm_rank(comm);
    let len = x.len();
    let chunk = len.div_ceil(size);
    let range = |j: usize| (j * chunk).min(len)..((j + 1) * chunk).min(len);
    let esize = elem_size(x.elem_type());
    let flat = to_bytes(x);
    let pieces: Vec<Vec<u8>> = (0..size)
        .map(|j| {
            let r = range(j);
            flat[r.start * esize..r.end * esize].to_vec()
        })
        .collect();
    let mine = range(me);
    let n = mine.len();
    let received = exchange::all_to_all(comm, &pieces, &vec![n * esize; size]).map_err(invalid)?;
    let parts = received
        .iter()
        .map(|b| from_bytes(x.elem_type(), &[n], b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(invalid)?;
    let refs: Vec<&HostTensor> = parts.iter().collect();
    let reduced = coll::reduce_range(&refs, kind, 0..n).map_err(invalid)?;
    let lengths: Vec<usize> = (0..size).map(|j| range(j).len() * esize).collect();
    let all = exchange::all_gather_var(comm, &to_bytes(&reduced), &lengths).map_err(invalid)?;
    from_bytes(x.elem_type(), x.shape(), &all).map_err(invalid)
}

impl Device for MpiDevice {
    type Buffer = MpiBuffer;

    fn id(&self) -> i64 {
        self.id
    }

    fn buffer_type(&self, b: &MpiBuffer) -> TensorType {
        b.tensor_type()
    }

    crate::backend::forward_local_ops!(MpiBuffer, local);

    fn collective(
        &mut self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &MpiBuffer,
        out: &TensorType,
    ) -> Result<MpiBuffer, DeviceError> {
        if out.elem != x.elem_type() {
            return Err(invalid(format!(
                "the result is {out} but the block is {}",
                x.tensor_type()
            )));
        }
        let out_shape = coll::dims(&out.shape).map_err(invalid)?;
        let in_shape = coll::dims(&c.in_local_shape).map_err(invalid)?;
        if c.kind != CollectiveKind::CollectivePermute && x.shape() != in_shape.as_slice() {
            // Every member must send blocks of the agreed shape, or the
            // byte counts of the exchange would not match.
            return Err(invalid(format!(
                "this device holds a block of shape {:?}; the {} expects {in_shape:?}",
                x.shape(),
                c.kind
            )));
        }
        let result = match (c.kind, part) {
            (CollectiveKind::CollectivePermute, Participation::Permute { send_to, recv_from }) => {
                self.permute(instance, send_to, recv_from, x, &out_shape)?
            }
            (CollectiveKind::CollectivePermute, _) => {
                return Err(invalid("a permute given groups, not pairs".into()))
            }
            (_, Participation::Permute { .. }) => {
                return Err(invalid("a group collective given permute pairs".into()))
            }
            (CollectiveKind::AllSlice, Participation::Group { rank, members, .. }) => {
                Arc::new(coll::all_slice(x, rank, members.len(), c, &out_shape).map_err(invalid)?)
            }
            (CollectiveKind::AllGather, _) => Arc::new(self.all_gather(c, x, &out_shape)?),
            (CollectiveKind::AllToAll, _) => Arc::new(self.all_to_all(c, x, &out_shape)?),
            (CollectiveKind::AllReduce, _) => Arc::new(self.all_reduce(c, x)?),
            (CollectiveKind::ReduceScatter, _) => Arc::new(self.reduce_scatter(c, x, &out_shape)?),
        };
        if result.shape() != out_shape.as_slice() {
            return Err(invalid(format!(
                "the {} gives a block of shape {:?} but the program expects {out}",
                c.kind,
                result.shape()
            )));
        }
        Ok(result)
    }
}
