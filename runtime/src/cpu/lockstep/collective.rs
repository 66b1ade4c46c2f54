//! A collective on every active device of a lockstep run: each group's
//! blocks are at hand, so the result is computed once per group (a
//! gathered or reduced block every member shares) or once per member
//! (all-to-all, reduce-scatter, all-slice), with the pure functions of
//! [`crate::cpu::collectives`], the ones the thread-per-device run uses:
//! the same reductions in rank order, the same bits. A permute hands the
//! sender's block to the receiver: no copy at all.

use std::sync::Arc;

use meshrun_compiler::ir::TensorType;
use meshrun_compiler::partition::reshard::collective::{Collective, CollectiveKind};
use meshrun_compiler::partition::{DeviceProgram, Instr};
use meshrun_kernels::HostTensor;
use rayon::prelude::*;

use super::{Failed, Made, Run};
use crate::backend::DeviceError;
use crate::blocks::zeros_like_elem;
use crate::cpu::bands::threads_for;
use crate::cpu::collectives as coll;
use crate::cpu::CpuBuffer;
use crate::exec_plan::Part;
use crate::exec_step::live_ref;

/// Run collective instruction `instr` on `active` (`parts`: each device's
/// place in it).
pub(super) fn run(
    r: &Run<'_>,
    instr: &Instr,
    parts: &[Part],
    active: &[usize],
) -> Result<Made, Failed> {
    let Instr::Collective {
        collective,
        operand,
        result,
        ..
    } = instr
    else {
        let e = DeviceError::Invalid("not a collective".into());
        return Err((active[0], e));
    };
    let block = |pos: usize| live_ref(&r.env[pos], *operand).cloned();
    let out = &r.program.values[*result].ty;
    apply(r.program, collective, parts, active, block, out)
}

/// Collective `c` on `active`, whose blocks `block` gives; `out` is the
/// local type of the result.
pub(super) fn apply(
    p: &DeviceProgram,
    c: &Collective,
    parts: &[Part],
    active: &[usize],
    block: impl Fn(usize) -> Result<CpuBuffer, DeviceError>,
    out: &TensorType,
) -> Result<Made, Failed> {
    let invalid = |pos: usize, m: String| (pos, DeviceError::Invalid(m));
    let first = active.first().copied().unwrap_or(0);
    let out_shape = coll::dims(&out.shape).map_err(|m| invalid(first, m))?;
    let mut blocks: Vec<Option<CpuBuffer>> = vec![None; p.num_devices()];
    for &pos in active {
        let b = block(pos).map_err(|e| (pos, e))?;
        if b.elem_type() != out.elem {
            let m = format!("the result is {out} but the block is {}", b.tensor_type());
            return Err(invalid(pos, m));
        }
        blocks[pos] = Some(b);
    }
    let made = if c.kind == CollectiveKind::CollectivePermute {
        permute(p, parts, active, &blocks, &out_shape)?
    } else {
        groups(p, c, parts, active, &blocks, &out_shape)?
    };
    for (pos, b) in &made {
        if b.shape() != out_shape.as_slice() {
            let m = format!(
                "the {} gives a block of shape {:?} but the program expects {out}",
                c.kind,
                b.shape()
            );
            return Err(invalid(*pos, m));
        }
    }
    Ok(made.into_iter().map(|(q, b)| (q, vec![b])).collect())
}

fn place(parts: &[Part], pos: usize) -> Result<Part, Failed> {
    parts.get(pos).copied().ok_or_else(|| {
        let e = DeviceError::Invalid("no place in the collective".into());
        (pos, e)
    })
}

/// A collective-permute: each receiver takes its sender's block.
fn permute(
    p: &DeviceProgram,
    parts: &[Part],
    active: &[usize],
    blocks: &[Option<CpuBuffer>],
    out: &[usize],
) -> Result<Vec<(usize, CpuBuffer)>, Failed> {
    let mut made = Vec::with_capacity(active.len());
    for &pos in active {
        let Part::Permute { recv_from, .. } = place(parts, pos)? else {
            let e = DeviceError::Invalid("a permute given groups, not pairs".into());
            return Err((pos, e));
        };
        let got = match recv_from {
            None => {
                let own = blocks[pos]
                    .as_ref()
                    .ok_or_else(|| (pos, elsewhere(p.devices[pos])))?;
                Arc::new(zeros_like_elem(own, out))
            }
            Some(src) => {
                let from = p.position(src).and_then(|q| blocks[q].clone());
                from.ok_or_else(|| (pos, elsewhere(src)))?
            }
        };
        made.push((pos, got));
    }
    Ok(made)
}

/// The error of a collective whose peer `device` runs another branch of
/// the program's control flow (or is not one of its devices).
fn elsewhere(device: i64) -> DeviceError {
    DeviceError::Invalid(format!(
        "device {device} of this collective is not on this device's control path (its loop or branch went another way)"
    ))
}

/// A collective over groups: the members' blocks by rank, then each
/// group's results.
fn groups(
    p: &DeviceProgram,
    c: &Collective,
    parts: &[Part],
    active: &[usize],
    blocks: &[Option<CpuBuffer>],
    out: &[usize],
) -> Result<Vec<(usize, CpuBuffer)>, Failed> {
    // Each touched group's members (positions), by rank.
    let mut members: Vec<Option<Vec<usize>>> = vec![None; c.groups.len()];
    for &pos in active {
        let Part::Group { group, rank } = place(parts, pos)? else {
            let e = DeviceError::Invalid("a group collective given permute pairs".into());
            return Err((pos, e));
        };
        let ids = c.groups.get(group).ok_or_else(|| {
            let e = DeviceError::Invalid(format!("no group {group}"));
            (pos, e)
        })?;
        if members[group].is_none() {
            let mut ranks = Vec::with_capacity(ids.len());
            for &id in ids {
                let q = p.position(id).filter(|&q| blocks[q].is_some());
                ranks.push(q.ok_or_else(|| (pos, elsewhere(id)))?);
            }
            members[group] = Some(ranks);
        }
        if members[group].as_ref().and_then(|m| m.get(rank)) != Some(&pos) {
            let e = DeviceError::Invalid(format!("not rank {rank} of group {group}"));
            return Err((pos, e));
        }
    }
    let touched: Vec<&Vec<usize>> = members.iter().flatten().collect();
    // Many groups: one per pool thread; one big one: helper threads.
    let one = |m: &Vec<usize>, threads: usize| -> Result<Vec<(usize, CpuBuffer)>, Failed> {
        let bufs: Vec<CpuBuffer> = m.iter().filter_map(|&q| blocks[q].clone()).collect();
        group(c, m, &bufs, out, threads)
    };
    let results: Vec<Result<Vec<(usize, CpuBuffer)>, Failed>> = if touched.len() > 1 {
        touched.par_iter().map(|m| one(m, 1)).collect()
    } else {
        touched
            .iter()
            .map(|m| {
                let bytes = out.iter().product::<usize>()
                    * blocks[m[0]]
                        .as_ref()
                        .map_or(0, |b| b.elem_type().byte_size())
                    * m.len();
                one(m, threads_for(bytes))
            })
            .collect()
    };
    let mut made = Vec::with_capacity(active.len());
    for r in results {
        made.extend(r?);
    }
    Ok(made)
}

/// One group's results: `members` by rank (positions), `bufs` their
/// blocks.
fn group(
    c: &Collective,
    members: &[usize],
    bufs: &[CpuBuffer],
    out: &[usize],
    threads: usize,
) -> Result<Vec<(usize, CpuBuffer)>, Failed> {
    let size = members.len();
    let refs: Vec<&HostTensor> = bufs.iter().map(|b| &**b).collect();
    let refs = refs.as_slice();
    let fail = |rank: usize| move |m: String| (members[rank], DeviceError::Invalid(m));
    let shared = |b: CpuBuffer| members.iter().map(|&q| (q, b.clone())).collect::<Vec<_>>();
    let reduction = || {
        c.reduction
            .ok_or_else(|| fail(0)(format!("a {} without a reduction", c.kind)))
    };
    Ok(match c.kind {
        CollectiveKind::AllGather => shared(Arc::new(
            coll::all_gather_on(refs, c, out, threads).map_err(fail(0))?,
        )),
        // Nothing to add: the block itself, as a device would keep it.
        CollectiveKind::AllReduce if size == 1 => vec![(members[0], bufs[0].clone())],
        CollectiveKind::AllReduce => {
            let kind = reduction()?;
            shared(Arc::new(
                coll::all_reduce_on(refs, kind, threads).map_err(fail(0))?,
            ))
        }
        CollectiveKind::AllToAll => (0..size)
            .map(|rank| {
                let b = coll::all_to_all(refs, rank, c, out).map_err(fail(rank))?;
                Ok((members[rank], Arc::new(b)))
            })
            .collect::<Result<_, Failed>>()?,
        CollectiveKind::ReduceScatter => {
            let kind = reduction()?;
            (0..size)
                .map(|rank| {
                    let b = coll::reduce_scatter(refs, rank, kind, c, out).map_err(fail(rank))?;
                    Ok((members[rank], Arc::new(b)))
                })
                .collect::<Result<_, Failed>>()?
        }
        CollectiveKind::AllSlice => (0..size)
            .map(|rank| {
                let b = coll::all_slice(refs[rank], rank, size, c, out).map_err(fail(rank))?;
                Ok((members[rank], Arc::new(b)))
            })
            .collect::<Result<_, Failed>>()?,
        CollectiveKind::CollectivePermute => {
            return Err(fail(0)("a permute given groups".into()));
        }
    })
}
