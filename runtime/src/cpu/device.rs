//! One simulated CPU device: its thread's view of the run. Buffers are
//! reference-counted host tensors owned by the device's thread; kernels run
//! single-threaded inside a device (many devices share the cores), and
//! collectives meet the other devices' threads in the run's
//! [`Rendezvous`].
//!
//! Buffers are never written in place, so a result that every member of a
//! group would compute alike (all-gather, big all-reduces) is built once
//! and every member holds a handle to the same block; the block returns to
//! the reuse pool ([`super::alloc`]) when the last of them releases it.

use std::sync::Arc;

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{ElemType, OpKind, Scalar, TensorType};
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_compiler::partition::RemapEntry;
use meshrun_kernels::cpu::dot_chain;
use meshrun_kernels::cpu::fusion::{self, Chain};
use meshrun_kernels::cpu::in_place;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use super::bands::threads_for;
use super::collectives as coll;
use super::local;
use super::rendezvous::{Poisoned, Rendezvous, SlotKey};
use crate::backend::{Device, DeviceError, Participation, ShareHandle};
use crate::blocks::zeros_like_elem;

/// A buffer of a simulated device.
pub type CpuBuffer = Arc<HostTensor>;

/// All-reduces of at least this many elements are reduced once per group
/// (by the last member to arrive, on helper threads when big) and shared;
/// smaller ones are reduced whole by every member, so that no member waits
/// for another's reduction. Both sum each element in rank order, so they
/// give bitwise the same result. The MPI backend's threshold.
pub const CHUNKED_ALL_REDUCE_MIN_ELEMS: usize = 32 * 1024;

/// The threshold of simulated devices: every all-reduce is built once and
/// shared. Their threads share a few cores, so a member that reduces for
/// itself does not finish sooner, and the group reduced and allocated 8
/// times what it needed: a 1 KiB all-reduce on 8 devices took 24.7 µs
/// this way and 16.0 µs shared, 64 KiB 131 µs and 30 µs (one run, 2 cores
/// under load).
pub const SHARED_ALL_REDUCE_MIN_ELEMS: usize = 0;

/// One simulated device of a run.
pub struct CpuDevice {
    id: i64,
    par: Parallelism,
    chunked_min: usize,
    comm: Arc<Rendezvous<CpuBuffer>>,
    /// Whether [`Device::dot_fused`] runs chains on a dot's tiles.
    pub(crate) dot_epilogues: bool,
}

impl CpuDevice {
    pub(crate) fn new(
        id: i64,
        par: Parallelism,
        chunked_min: usize,
        comm: Arc<Rendezvous<CpuBuffer>>,
    ) -> CpuDevice {
        CpuDevice {
            id,
            par,
            chunked_min,
            comm,
            dot_epilogues: true,
        }
    }

    /// How this device's kernels use threads (`Parallelism::None` whenever
    /// the run has several devices).
    pub fn kernel_parallelism(&self) -> Parallelism {
        self.par
    }

    fn key(instance: u64, phase: u32, group: i64) -> SlotKey {
        SlotKey {
            instance,
            phase,
            group,
        }
    }

    /// Exchange blocks with the group; every member's block by rank.
    fn exchange(
        &self,
        instance: u64,
        phase: u32,
        group: usize,
        rank: usize,
        size: usize,
        x: &CpuBuffer,
    ) -> Result<Vec<CpuBuffer>, DeviceError> {
        self.comm
            .exchange(
                Self::key(instance, phase, group as i64),
                rank,
                size,
                x.clone(),
            )
            .map_err(peer_failed)
    }

    /// Exchange blocks with the group and return the one result `build`
    /// makes of them (by rank), shared by every member.
    fn exchange_shared(
        &self,
        instance: u64,
        group: usize,
        rank: usize,
        size: usize,
        x: &CpuBuffer,
        build: impl FnOnce(&[&HostTensor]) -> Result<HostTensor, String>,
    ) -> Result<CpuBuffer, DeviceError> {
        self.comm
            .exchange_build(
                Self::key(instance, 0, group as i64),
                rank,
                size,
                x.clone(),
                |blocks| {
                    let refs: Vec<&HostTensor> = blocks.iter().map(|b| &**b).collect();
                    build(&refs).map(Arc::new)
                },
            )
            .map_err(peer_failed)?
            .map_err(DeviceError::Invalid)
    }

    fn all_reduce(
        &self,
        instance: u64,
        group: usize,
        rank: usize,
        size: usize,
        x: &CpuBuffer,
        c: &Collective,
    ) -> Result<CpuBuffer, DeviceError> {
        let kind = c
            .reduction
            .ok_or_else(|| DeviceError::Invalid("an all-reduce without a reduction".into()))?;
        let len = x.len();
        if len < self.chunked_min || len < size {
            let blocks = self.exchange(instance, 0, group, rank, size, x)?;
            let refs: Vec<&HostTensor> = blocks.iter().map(|b| &**b).collect();
            return Ok(Arc::new(
                coll::all_reduce(&refs, kind).map_err(DeviceError::Invalid)?,
            ));
        }
        // The builder reads every member's whole block.
        let threads = threads_for(len * x.elem_type().byte_size() * size);
        self.exchange_shared(instance, group, rank, size, x, |refs| {
            coll::all_reduce_on(refs, kind, threads)
        })
    }

    fn permute(
        &self,
        instance: u64,
        send_to: Option<i64>,
        recv_from: Option<i64>,
        x: &CpuBuffer,
        out: &[usize],
    ) -> Result<CpuBuffer, DeviceError> {
        if let Some(t) = send_to.filter(|&t| t != self.id) {
            self.comm
                .send(Self::key(instance, 0, t), x.clone())
                .map_err(peer_failed)?;
        }
        match recv_from {
            Some(s) if s == self.id => Ok(x.clone()),
            Some(_) => self
                .comm
                .recv(Self::key(instance, 0, self.id))
                .map_err(peer_failed),
            None => Ok(Arc::new(zeros_like_elem(x, out))),
        }
    }
}

fn peer_failed(p: Poisoned) -> DeviceError {
    DeviceError::PeerFailed(p.failed)
}

fn group_of(part: Participation<'_>) -> Result<(usize, usize, usize), DeviceError> {
    match part {
        Participation::Group {
            group,
            rank,
            members,
        } => Ok((group, rank, members.len())),
        Participation::Permute { .. } => Err(DeviceError::Invalid(
            "a group collective given permute pairs".into(),
        )),
    }
}

impl Device for CpuDevice {
    type Buffer = CpuBuffer;

    fn id(&self) -> i64 {
        self.id
    }

    fn buffer_type(&self, b: &CpuBuffer) -> TensorType {
        b.tensor_type()
    }

    fn read_scalar(&mut self, b: &CpuBuffer) -> Result<HostTensor, DeviceError> {
        Ok((**b).clone())
    }

    fn share_handle(&self, b: &CpuBuffer) -> Option<(usize, ShareHandle)> {
        // A `Weak` keeps the allocation, so the address names this block
        // until the handle is dropped, but not the block's memory.
        let key = Arc::as_ptr(b) as usize;
        Some((key, ShareHandle(Box::new(Arc::downgrade(b)))))
    }

    fn share_kept(&self, b: &CpuBuffer) -> Option<ShareHandle> {
        Some(ShareHandle(Box::new(b.clone())))
    }

    fn shared_buffer(&self, h: &ShareHandle) -> Option<CpuBuffer> {
        match h.0.downcast_ref::<std::sync::Weak<HostTensor>>() {
            Some(weak) => weak.upgrade(),
            None => h.0.downcast_ref::<CpuBuffer>().cloned(),
        }
    }

    fn release(&mut self, b: CpuBuffer) {
        // A shared result is released by every member, maybe at once:
        // `into_inner` gives the block to exactly the last of them (with
        // `try_unwrap`, two releasing together could both fail and drop
        // it).
        if let Some(t) = Arc::into_inner(b) {
            super::alloc::recycle(t);
        }
    }

    fn op(
        &mut self,
        kind: &OpKind,
        operands: &[&CpuBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CpuBuffer>, DeviceError> {
        let refs: Vec<&HostTensor> = operands.iter().map(|b| &***b).collect();
        let out = eval_op(kind, &refs, result_types, self.par)?;
        Ok(out.into_iter().map(Arc::new).collect())
    }

    fn op_into(
        &mut self,
        kind: &OpKind,
        first: CpuBuffer,
        rest: &[&CpuBuffer],
        result_types: &[TensorType],
    ) -> Result<Vec<CpuBuffer>, DeviceError> {
        // Only the block's last reference may be written: another holder
        // (a caller keeping a program input, a replica) still reads it.
        let first = match Arc::try_unwrap(first) {
            Ok(owned) => owned,
            Err(shared) => {
                let mut all = vec![&shared];
                all.extend_from_slice(rest);
                return self.op(kind, &all, result_types);
            }
        };
        let rest: Vec<&HostTensor> = rest.iter().map(|b| &***b).collect();
        let out = in_place::eval_op_into(kind, first, &rest, result_types)?;
        Ok(out.into_iter().map(Arc::new).collect())
    }

    fn dot_fused(
        &mut self,
        dot: &OpKind,
        dot_operands: &[&CpuBuffer],
        dot_ty: &TensorType,
        chain: &Chain,
        operands: &[Option<&CpuBuffer>],
    ) -> Option<Result<CpuBuffer, DeviceError>> {
        let OpKind::DotGeneral(DotGeneral { dims, .. }) = dot else {
            return None;
        };
        if !self.dot_epilogues {
            return None;
        }
        let ([lhs, rhs], ElemType::F32) = (dot_operands, dot_ty.elem) else {
            return None;
        };
        let refs: Vec<Option<&HostTensor>> = operands.iter().map(|b| b.map(|b| &**b)).collect();
        Some(
            dot_chain::dot_then_chain(lhs, rhs, dims, dot_ty, chain, &refs, self.par)
                .map(Arc::new)
                .map_err(DeviceError::from),
        )
    }

    fn fused(
        &mut self,
        chain: &Chain,
        operands: &[&CpuBuffer],
    ) -> Option<Result<CpuBuffer, DeviceError>> {
        let refs: Vec<&HostTensor> = operands.iter().map(|b| &***b).collect();
        Some(
            fusion::eval(chain, &refs, self.par)
                .map(Arc::new)
                .map_err(DeviceError::from),
        )
    }

    fn iota(&mut self, ty: &TensorType, dim: usize, offset: i64) -> Result<CpuBuffer, DeviceError> {
        local::iota(ty, dim, offset)
            .map(Arc::new)
            .map_err(DeviceError::Invalid)
    }

    fn mask(
        &mut self,
        x: &CpuBuffer,
        dim: usize,
        valid: i64,
        fill: Scalar,
    ) -> Result<CpuBuffer, DeviceError> {
        local::mask(x, dim, valid, fill)
            .map(Arc::new)
            .map_err(DeviceError::Invalid)
    }

    fn slice_dim(
        &mut self,
        x: &CpuBuffer,
        dim: usize,
        start: i64,
        size: i64,
    ) -> Result<CpuBuffer, DeviceError> {
        local::slice_dim(x, dim, start, size)
            .map(Arc::new)
            .map_err(DeviceError::Invalid)
    }

    fn remap(
        &mut self,
        sources: &[&CpuBuffer],
        fill: Option<&CpuBuffer>,
        ty: &TensorType,
        dim: usize,
        table: &[RemapEntry],
    ) -> Result<CpuBuffer, DeviceError> {
        let refs: Vec<&HostTensor> = sources.iter().map(|b| &***b).collect();
        local::remap(&refs, fill.map(|f| &**f), ty, dim, table)
            .map(Arc::new)
            .map_err(DeviceError::Invalid)
    }

    fn collective(
        &mut self,
        instance: u64,
        c: &Collective,
        part: Participation<'_>,
        x: &CpuBuffer,
        out: &TensorType,
    ) -> Result<CpuBuffer, DeviceError> {
        let invalid = DeviceError::Invalid;
        if out.elem != x.elem_type() {
            return Err(invalid(format!(
                "the result is {out} but the block is {}",
                x.tensor_type()
            )));
        }
        let out_shape = coll::dims(&out.shape).map_err(invalid)?;
        let result = match c.kind {
            CollectiveKind::CollectivePermute => {
                let Participation::Permute { send_to, recv_from } = part else {
                    return Err(invalid("a permute given groups, not pairs".into()));
                };
                self.permute(instance, send_to, recv_from, x, &out_shape)?
            }
            CollectiveKind::AllSlice => {
                let (_, rank, size) = group_of(part)?;
                Arc::new(coll::all_slice(x, rank, size, c, &out_shape).map_err(invalid)?)
            }
            CollectiveKind::AllGather => {
                let (group, rank, size) = group_of(part)?;
                let bytes = out_shape.iter().product::<usize>() * x.elem_type().byte_size();
                let threads = threads_for(bytes);
                self.exchange_shared(instance, group, rank, size, x, |refs| {
                    coll::all_gather_on(refs, c, &out_shape, threads)
                })?
            }
            CollectiveKind::AllToAll => {
                let (group, rank, size) = group_of(part)?;
                let blocks = self.exchange(instance, 0, group, rank, size, x)?;
                let refs: Vec<&HostTensor> = blocks.iter().map(|b| &**b).collect();
                Arc::new(coll::all_to_all(&refs, rank, c, &out_shape).map_err(invalid)?)
            }
            CollectiveKind::AllReduce => {
                let (group, rank, size) = group_of(part)?;
                if size == 1 {
                    x.clone()
                } else {
                    self.all_reduce(instance, group, rank, size, x, c)?
                }
            }
            CollectiveKind::ReduceScatter => {
                let (group, rank, size) = group_of(part)?;
                let kind = c
                    .reduction
                    .ok_or_else(|| invalid("a reduce-scatter without a reduction".into()))?;
                let blocks = self.exchange(instance, 0, group, rank, size, x)?;
                let refs: Vec<&HostTensor> = blocks.iter().map(|b| &**b).collect();
                Arc::new(coll::reduce_scatter(&refs, rank, kind, c, &out_shape).map_err(invalid)?)
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::alloc::{block, MIN_POOLED_BYTES};

    #[test]
    fn a_shared_block_is_recycled_once_by_its_last_holder() {
        // A size no other test uses, so the pool's block of it is ours.
        let n = MIN_POOLED_BYTES / 8 + 13;
        let like = HostTensor::from_vec(&[1], vec![0i64]).unwrap();
        let shared: CpuBuffer = Arc::new(block(&like, &[n], true));
        let data = shared.array::<i64>().unwrap().as_ptr() as usize;
        let comm = Arc::new(Rendezvous::new());
        std::thread::scope(|s| {
            for id in 0..8 {
                let (b, comm) = (shared.clone(), comm.clone());
                s.spawn(move || CpuDevice::new(id, Parallelism::None, 1, comm).release(b));
            }
        });
        let mut last = CpuDevice::new(8, Parallelism::None, 1, comm);
        last.release(shared);
        let reused = block(&like, &[n], false);
        assert_eq!(reused.array::<i64>().unwrap().as_ptr() as usize, data);
        // Recycled once: the next block of that size is a new one.
        let fresh = block(&like, &[n], false);
        assert_ne!(fresh.array::<i64>().unwrap().as_ptr() as usize, data);
    }
}
