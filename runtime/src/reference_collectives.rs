//! The user's collectives (`jax.shard_map` bodies) in the reference's
//! per-device run ([`crate::reference_manual`]): StableHLO's semantics
//! over the devices' values ("lanes", one per mesh position, which is the
//! partition id that `replica_groups` / `source_target_pairs` name).
//!
//! Reductions combine the members' blocks in group order through the CPU
//! runtime's own [`reduce_into`], so a sharded CPU run and the reference
//! give bitwise the same sums (f16/bf16 combined in f32, rounded once).
//! Moving data (gather, scatter, all-to-all) uses the `concatenate` and
//! `slice` kernels.
//!
//! Only the devices running the op (`active`: all of them, except inside
//! a `case` branch or `while` loop that not every device takes) take part:
//! a group with members both running and not running the op is an error,
//! as the program would hang on real devices.

use meshrun_compiler::ir::ops::collectives::reduction_of;
use meshrun_compiler::ir::{OpKind, ReduceKind, TensorType};
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use crate::cpu::reduce::reduce_into;
use crate::reference_value::{Lanes, Slot};

/// Whether `kind` is a collective this file runs.
pub(crate) fn is_collective(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::AllReduce(_)
            | OpKind::AllGather(_)
            | OpKind::ReduceScatter(_)
            | OpKind::AllToAll(_)
            | OpKind::CollectivePermute(_)
    )
}

/// Run collective `kind` on `operand` (one block per device) for the
/// devices in `active`; `ty` is the op's result type (the local type
/// every member gets).
pub(crate) fn run_collective<'a>(
    kind: &OpKind,
    operand: &Lanes<'a>,
    active: &[bool],
    ty: &TensorType,
    par: Parallelism,
) -> Result<Lanes<'a>, String> {
    let mut out: Lanes = vec![None; operand.len()];
    let rank = ty.rank();
    match kind {
        OpKind::AllReduce(a) => {
            let how = reduction(reduction_of(&a.body))?;
            for g in groups(&a.attrs.replica_groups.rows, active)? {
                let blocks = members(operand, &g)?;
                let sum = Slot::new(reduce(&blocks, how)?);
                for &p in &g {
                    out[p] = Some(sum.clone());
                }
            }
        }
        OpKind::AllGather(a) => {
            let dim = a.dim(rank)?;
            for g in groups(&a.attrs.replica_groups.rows, active)? {
                let blocks = members(operand, &g)?;
                let all = Slot::new(one(
                    &OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate {
                        dim: dim as i64,
                    }),
                    &blocks,
                    ty,
                    par,
                )?);
                for &p in &g {
                    out[p] = Some(all.clone());
                }
            }
        }
        OpKind::ReduceScatter(a) => {
            let how = reduction(reduction_of(&a.body))?;
            let dim = a.dim(rank)?;
            for g in groups(&a.attrs.replica_groups.rows, active)? {
                let blocks = members(operand, &g)?;
                let sum = reduce(&blocks, how)?;
                for (r, &p) in g.iter().enumerate() {
                    out[p] = Some(Slot::new(chunk(&sum, dim, r, ty.shape[dim], par)?));
                }
            }
        }
        OpKind::AllToAll(a) => {
            let (split, concat) = a.dims(rank)?;
            for g in groups(&a.attrs.replica_groups.rows, active)? {
                let blocks = members(operand, &g)?;
                let n = blocks[0].shape().get(split).copied().unwrap_or(0);
                let size = (n / g.len().max(1)) as i64;
                // Member `r` gets chunk `r` of every member's block, in
                // member order along the concatenated dimension.
                for (r, &p) in g.iter().enumerate() {
                    let chunks = blocks
                        .iter()
                        .map(|b| chunk(b, split, r, size, par))
                        .collect::<Result<Vec<_>, _>>()?;
                    let refs: Vec<&HostTensor> = chunks.iter().collect();
                    let concat_kind =
                        OpKind::Concatenate(meshrun_compiler::ir::ops::concatenate::Concatenate {
                            dim: concat as i64,
                        });
                    out[p] = Some(Slot::new(one(&concat_kind, &refs, ty, par)?));
                }
            }
        }
        OpKind::CollectivePermute(c) => {
            for pair in &c.attrs.source_target_pairs.rows {
                let (s, t) = match pair.as_slice() {
                    [s, t] => (lane(*s, active)?, lane(*t, active)?),
                    _ => return Err(format!("source_target_pairs row {pair:?} is not a pair")),
                };
                if active[s] != active[t] {
                    return Err(divergent(&[s, t], active));
                }
                if active[t] {
                    if out[t].is_some() {
                        return Err(format!("device {t} is the target of two pairs"));
                    }
                    out[t] = Some(operand[s].clone().ok_or_else(|| no_value(s))?);
                }
            }
            // Devices no pair sends to get zeros (StableHLO).
            let zeros = Slot::new(HostTensor::zeros(ty).map_err(|e| e.to_string())?);
            for (p, o) in out.iter_mut().enumerate() {
                if active[p] && o.is_none() {
                    *o = Some(zeros.clone());
                }
            }
        }
        other => return Err(format!("{} is not a collective", other.name())),
    }
    Ok(out)
}

fn reduction(kind: Option<ReduceKind>) -> Result<ReduceKind, String> {
    kind.ok_or_else(|| "the reduction body is not one binary op of its two arguments".into())
}

fn no_value(p: usize) -> String {
    format!("device {p} has no value for the collective's operand")
}

fn divergent(group: &[usize], active: &[bool]) -> String {
    let (on, off): (Vec<usize>, Vec<usize>) = group.iter().partition(|&&p| active[p]);
    format!(
        "devices {on:?} run this collective but {off:?} of the same group do not \
         (a branch or loop not every member takes)"
    )
}

/// Partition id `d` as a lane index.
fn lane(d: i64, active: &[bool]) -> Result<usize, String> {
    usize::try_from(d)
        .ok()
        .filter(|&p| p < active.len())
        .ok_or_else(|| {
            format!(
                "names device {d}, but the mesh has {} devices",
                active.len()
            )
        })
}

/// The groups of `rows` whose members run the op, as lane indices in
/// group order (rank order). Every running device must be in exactly one.
fn groups(rows: &[Vec<i64>], active: &[bool]) -> Result<Vec<Vec<usize>>, String> {
    let mut seen = vec![false; active.len()];
    let mut out = Vec::new();
    for row in rows {
        let g = row
            .iter()
            .map(|&d| lane(d, active))
            .collect::<Result<Vec<_>, _>>()?;
        for &p in &g {
            if std::mem::replace(&mut seen[p], true) {
                return Err(format!("replica groups name device {p} twice"));
            }
        }
        match g.iter().filter(|&&p| active[p]).count() {
            0 => {}
            k if k == g.len() => out.push(g),
            _ => return Err(divergent(&g, active)),
        }
    }
    if let Some(p) = (0..active.len()).find(|&p| active[p] && !seen[p]) {
        return Err(format!("device {p} is in no replica group"));
    }
    Ok(out)
}

fn members<'a>(operand: &'a Lanes<'_>, g: &[usize]) -> Result<Vec<&'a HostTensor>, String> {
    g.iter()
        .map(|&p| operand[p].as_deref().ok_or_else(|| no_value(p)))
        .collect()
}

/// The blocks combined element by element in order.
fn reduce(blocks: &[&HostTensor], kind: ReduceKind) -> Result<HostTensor, String> {
    let first = blocks.first().ok_or("a replica group without members")?;
    let mut dst = HostTensor::zeros(&first.tensor_type()).map_err(|e| e.to_string())?;
    let len = first.len();
    reduce_into(&mut dst, blocks, kind, 0, len, 1)?;
    Ok(dst)
}

/// Chunk `r` (of length `size`) of `t` along `dim`.
fn chunk(
    t: &HostTensor,
    dim: usize,
    r: usize,
    size: i64,
    par: Parallelism,
) -> Result<HostTensor, String> {
    let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    let mut start = vec![0; shape.len()];
    let mut limit = shape.clone();
    start[dim] = r as i64 * size;
    limit[dim] = start[dim] + size;
    if limit[dim] > shape[dim] {
        return Err(format!(
            "chunk {r} of {size} along dimension {dim} is past the end of {}",
            t.tensor_type()
        ));
    }
    let mut out_shape = shape.clone();
    out_shape[dim] = size;
    let kind = OpKind::Slice(meshrun_compiler::ir::ops::slice::Slice {
        strides: vec![1; shape.len()],
        start,
        limit,
    });
    one(&kind, &[t], &TensorType::new(out_shape, t.elem_type()), par)
}

/// The one result of kernel `kind`.
fn one(
    kind: &OpKind,
    operands: &[&HostTensor],
    ty: &TensorType,
    par: Parallelism,
) -> Result<HostTensor, String> {
    eval_op(kind, operands, std::slice::from_ref(ty), par)
        .map_err(|e| e.to_string())?
        .pop()
        .ok_or_else(|| format!("{} gave no result", kind.name()))
}
