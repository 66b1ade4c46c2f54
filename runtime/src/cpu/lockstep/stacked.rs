//! Products over stacked blocks. Where the devices of a lockstep run
//! multiply their own rows by one shared matrix (`x · W` with the batch
//! sharded and `W` replicated, the forward pass of every data-parallel
//! layer), one product over all the devices' rows replaces a product per
//! device: the GEMM runs on all of the pool's threads at the rate of a
//! tall matrix, not at a short block's (on a Xeon, gemm's single-thread
//! rate on 32 rows was half its rate on the 256 that 8 such blocks stack
//! into; `kernels/benches/gemm.rs`). Every row of the result is still
//! the dot of its own lhs row with `W`'s columns, so each device's block
//! is its own product's.

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{OpKind, TensorType};
use meshrun_kernels::cpu::shape_ops::concatenate;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use std::sync::Arc;

use super::super::{local as blocks, CpuBuffer};
use super::local::{Failed, Job};
use super::Run;
use crate::backend::DeviceError;

/// Stack no more rows than this per device: a taller block already runs
/// at the tall-matrix rate, and the copies would be all that is left.
const MAX_ROWS_PER_DEVICE: usize = 1024;

/// Each job's product `kind(operands)` (of local type `ty`), computed as
/// one product per rhs block over the stacked lhs blocks of the jobs
/// that share it, when the product contracts the lhs's last dimension
/// without batch dimensions; `None` when no two jobs share an rhs.
pub(super) fn product(
    r: &Run<'_>,
    kind: &OpKind,
    operands: &[usize],
    ty: &TensorType,
    jobs: &[Job],
) -> Result<Option<Vec<CpuBuffer>>, Failed> {
    let (OpKind::DotGeneral(DotGeneral { dims, .. }), [lhs, rhs]) = (kind, operands) else {
        return Ok(None);
    };
    if jobs.len() < 2 || !dims.lhs_batch.is_empty() || !dims.rhs_batch.is_empty() {
        return Ok(None);
    }
    let block = |pos: usize, v: usize| r.env[pos].get(v).and_then(Option::as_ref);
    let mut pairs: Vec<(&CpuBuffer, &CpuBuffer)> = Vec::with_capacity(jobs.len());
    for j in jobs {
        let (Some(l), Some(w)) = (block(j.leader, *lhs), block(j.leader, *rhs)) else {
            return Ok(None);
        };
        pairs.push((l, w));
    }
    let lhs0 = pairs[0].0;
    let rank = lhs0.shape().len();
    let rows = lhs0.shape().first().copied().unwrap_or(0);
    let same_lhs_type = pairs
        .iter()
        .all(|(l, _)| l.shape() == lhs0.shape() && l.elem_type() == lhs0.elem_type());
    if rank < 2
        || dims.lhs_contract != [rank as i64 - 1]
        || rows == 0
        || rows > MAX_ROWS_PER_DEVICE
        || ty.shape.first() != Some(&(rows as i64))
        || !same_lhs_type
    {
        return Ok(None);
    }
    // The jobs by rhs block, in order of first use.
    let mut by_rhs: Vec<(&CpuBuffer, Vec<usize>)> = Vec::new();
    for (k, (_, w)) in pairs.iter().enumerate() {
        match by_rhs.iter_mut().find(|(x, _)| Arc::ptr_eq(x, w)) {
            Some((_, ks)) => ks.push(k),
            None => by_rhs.push((w, vec![k])),
        }
    }
    if by_rhs.iter().all(|(_, ks)| ks.len() < 2) {
        return Ok(None);
    }
    let mut per_job: Vec<Option<CpuBuffer>> = vec![None; jobs.len()];
    for (w, ks) in by_rhs {
        let leader = jobs[ks[0]].leader;
        let kernel = |e| (leader, DeviceError::from(e));
        let lhs_blocks: Vec<&HostTensor> = ks.iter().map(|&k| &**pairs[k].0).collect();
        let stacked = concatenate(&lhs_blocks, 0).map_err(kernel)?;
        let mut tall = ty.clone();
        tall.shape[0] *= ks.len() as i64;
        let out = eval_op(kind, &[&stacked, w], &[tall], Parallelism::Rayon(0)).map_err(kernel)?;
        meshrun_kernels::cpu::alloc::recycle(stacked);
        let Some(product) = out.into_iter().next() else {
            return Err((
                leader,
                DeviceError::Invalid("the dot made no result".into()),
            ));
        };
        if ks.len() == 1 {
            per_job[ks[0]] = Some(Arc::new(product));
            continue;
        }
        for (n, &k) in ks.iter().enumerate() {
            let start = (n * rows) as i64;
            let mine = blocks::slice_dim(&product, 0, start, rows as i64)
                .map_err(|m| (jobs[k].leader, DeviceError::Invalid(m)))?;
            per_job[k] = Some(Arc::new(mine));
        }
        meshrun_kernels::cpu::alloc::recycle(product);
    }
    Ok(Some(per_job.into_iter().flatten().collect()))
}
