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

use std::collections::HashMap;
use std::sync::Arc;

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::ir::{ElemType, OpKind, ReduceKind, TensorType};
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_kernels::cpu::shape_ops::concatenate;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use super::{Failed, Job, Made, Run};
use crate::backend::DeviceError;
use crate::cpu::{local as blocks, CpuBuffer};
use crate::exec_plan::Part;

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

/// The sum over each group of `c` (an all-reduce adding f32 blocks) of
/// its members' products `kind(operands)` (of local type `ty`), as one
/// product per group over the members' operands stacked along the
/// contracted dimension: `Σ_d x_dᵀ·dy_d = [x_0; …; x_n]ᵀ·[dy_0; …; dy_n]`,
/// every weight gradient of a data-parallel step. One product with a
/// contraction n times as long replaces n short ones and the sum of n
/// partial results; the sum is taken in the GEMM's order, not member by
/// member, so the bits are not the thread-per-device run's (its error
/// is a product's over the whole batch, as on one device). Groups whose
/// members hold the same blocks share one result. `None` when the
/// collective or product has another form.
pub(super) fn summed_products(
    r: &Run<'_>,
    kind: &OpKind,
    operands: &[usize],
    ty: &TensorType,
    c: &Collective,
    parts: &[Part],
    active: &[usize],
) -> Result<Option<Made>, Failed> {
    let (OpKind::DotGeneral(DotGeneral { dims, .. }), [lhs, rhs]) = (kind, operands) else {
        return Ok(None);
    };
    let summed = c.kind == CollectiveKind::AllReduce && c.reduction == Some(ReduceKind::Add);
    let ([a], [b]) = (dims.lhs_contract.as_slice(), dims.rhs_contract.as_slice()) else {
        return Ok(None);
    };
    if !summed || ty.elem != ElemType::F32 || !dims.lhs_batch.is_empty() {
        return Ok(None);
    }
    let (Ok(a), Ok(b)) = (usize::try_from(*a), usize::try_from(*b)) else {
        return Ok(None);
    };
    // Each touched group's members (positions) by rank, all active.
    let mut members: Vec<Option<Vec<usize>>> = vec![None; c.groups.len()];
    let mut live = vec![false; r.program.num_devices()];
    for &pos in active {
        live[pos] = true;
    }
    for &pos in active {
        let Some(&Part::Group { group, .. }) = parts.get(pos) else {
            return Ok(None);
        };
        if members.get(group).is_some_and(Option::is_some) {
            continue;
        }
        let Some(ids) = c.groups.get(group) else {
            return Ok(None);
        };
        let ranks: Option<Vec<usize>> = ids
            .iter()
            .map(|&id| r.program.position(id).filter(|&q| live[q]))
            .collect();
        let Some(ranks) = ranks else {
            return Ok(None);
        };
        members[group] = Some(ranks);
    }
    let block = |pos: usize, v: usize| r.env[pos].get(v).and_then(Option::as_ref);
    let mut made: Made = Vec::with_capacity(active.len());
    let mut done: HashMap<Vec<usize>, CpuBuffer> = HashMap::new();
    for m in members.iter().flatten() {
        let mut xs: Vec<&HostTensor> = Vec::with_capacity(m.len());
        let mut ys: Vec<&HostTensor> = Vec::with_capacity(m.len());
        for &pos in m {
            let (Some(x), Some(y)) = (block(pos, *lhs), block(pos, *rhs)) else {
                return Ok(None);
            };
            xs.push(x);
            ys.push(y);
        }
        let same = |ts: &[&HostTensor]| ts.iter().all(|t| t.shape() == ts[0].shape());
        if !same(&xs) || !same(&ys) || xs[0].shape().len() <= a || ys[0].shape().len() <= b {
            return Ok(None);
        }
        let key: Vec<usize> = xs
            .iter()
            .chain(&ys)
            .map(|t| *t as *const HostTensor as usize)
            .collect();
        let sum = match done.get(&key) {
            Some(s) => s.clone(),
            None => {
                let kernel = |e| (m[0], DeviceError::from(e));
                let (x, y) = (
                    concatenate(&xs, a as i64).map_err(kernel)?,
                    concatenate(&ys, b as i64).map_err(kernel)?,
                );
                let out = eval_op(
                    kind,
                    &[&x, &y],
                    std::slice::from_ref(ty),
                    Parallelism::Rayon(0),
                )
                .map_err(kernel)?;
                meshrun_kernels::cpu::alloc::recycle(x);
                meshrun_kernels::cpu::alloc::recycle(y);
                let Some(sum) = out.into_iter().next() else {
                    return Err((m[0], DeviceError::Invalid("the dot made no result".into())));
                };
                let sum = Arc::new(sum);
                done.insert(key, sum.clone());
                sum
            }
        };
        made.extend(m.iter().map(|&q| (q, vec![sum.clone()])));
    }
    Ok(Some(made))
}
