//! `slice`, `pad`, `concatenate` and `reverse` on local blocks.
//!
//! Along a dimension that neither the operand nor the result shards, the
//! op is local with its own attributes. Along a dimension the result
//! shards (a *remap* factor, see [`crate::partition::global::compat`]), each result
//! block is rebuilt element by element ([`Instr::Remap`]) from:
//! - the operand itself where it is replicated along that dimension (the
//!   device holds all of it: no communication), or
//! - where the operand is sharded along it, the operand's own block (the
//!   elements it holds) plus, for every other block it needs data from, a
//!   slab cut from that block ([`Instr::SliceDim`], at a per-device
//!   offset) and sent by a collective-permute (a halo exchange). Only the
//!   devices that need a slab receive one, and the slab is as short as
//!   the longest range any device needs from that neighbour (see
//!   [`crate::partition::reshard::remap_plan`]).
//!
//! [`emit_remap`] also serves reshards of one dimension (see
//! [`crate::partition::lower`]).

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{OpKind, TensorType};
use crate::partition::global::{Cause, GValueId};
use crate::partition::local::builder::DeviceBuilder;
use crate::partition::program::{Instr, LocalId, PerDevice, RemapEntry};
use crate::partition::reshard::collective::{Collective, CollectiveKind};
use crate::partition::reshard::remap_plan::{plan_remap, IndexMap, Pick, RemapPlan, RemapSource};

/// Lower a slice, pad or concatenate step.
pub(crate) fn lower_remap_op(
    b: &mut DeviceBuilder<'_>,
    step: usize,
    kind: &OpKind,
    operands: &[GValueId],
    locals: &[LocalId],
    result: GValueId,
) -> Result<(), Diagnostic> {
    let rank = b.prog.values[result].ty.rank();
    let remapped: Vec<usize> = (0..rank)
        .filter(|&d| !b.dim_axes(result, d).is_empty() && changes_dim(kind, b, operands, result, d))
        .collect();
    match kind {
        OpKind::Slice(crate::ir::ops::slice::Slice {
            start,
            limit,
            strides,
        }) => {
            let mut local_start = start.clone();
            let mut local_limit = limit.clone();
            let mut local_strides = strides.clone();
            let in_ty = b.local_ty(locals[0]).clone();
            for &d in &remapped {
                local_start[d] = 0;
                local_limit[d] = in_ty.shape[d];
                local_strides[d] = 1;
            }
            // Pass-through dims keep the whole local block.
            for d in 0..rank {
                if !remapped.contains(&d) && !b.dim_axes(result, d).is_empty() {
                    local_start[d] = 0;
                    local_limit[d] = in_ty.shape[d];
                    local_strides[d] = 1;
                }
            }
            let shape: Vec<i64> = (0..rank)
                .map(|d| {
                    (local_limit[d] - local_start[d] + local_strides[d] - 1)
                        / local_strides[d].max(1)
                })
                .collect();
            let mut cur = if shape == in_ty.shape {
                locals[0]
            } else {
                let out = b.new_value(
                    in_ty.with_shape(shape),
                    format!("{}.local", b.name_of(result)),
                );
                b.instrs.push(Instr::Op {
                    kind: OpKind::Slice(crate::ir::ops::slice::Slice {
                        start: local_start,
                        limit: local_limit,
                        strides: local_strides,
                    }),
                    operands: vec![locals[0]],
                    results: vec![out],
                    step,
                });
                out
            };
            for &d in &remapped {
                let (s0, st) = (start[d], strides[d]);
                let map = move |o: i64| Some((0usize, s0 + st * o));
                cur = remap_dim(b, step, &[(cur, operands[0])], None, result, d, &map)?;
            }
            finish(b, cur, result, step)
        }
        OpKind::Pad(crate::ir::ops::pad::Pad {
            low,
            high,
            interior,
        }) => {
            let in_ty = b.local_ty(locals[0]).clone();
            let mut l = low.clone();
            let mut h = high.clone();
            let mut it = interior.clone();
            for d in 0..rank {
                if !b.dim_axes(result, d).is_empty() {
                    l[d] = 0;
                    h[d] = 0;
                    it[d] = 0;
                }
            }
            let shape: Vec<i64> = (0..rank)
                .map(|d| {
                    let n = in_ty.shape[d];
                    l[d] + h[d] + n + (n - 1).max(0) * it[d]
                })
                .collect();
            let mut cur = if shape == in_ty.shape {
                locals[0]
            } else {
                let out = b.new_value(
                    in_ty.with_shape(shape),
                    format!("{}.local", b.name_of(result)),
                );
                b.instrs.push(Instr::Op {
                    kind: OpKind::Pad(crate::ir::ops::pad::Pad {
                        low: l,
                        high: h,
                        interior: it,
                    }),
                    operands: vec![locals[0], locals[1]],
                    results: vec![out],
                    step,
                });
                out
            };
            let source_size = b.prog.values[operands[0]].ty.shape.clone();
            for &d in &remapped {
                let (lo, step_) = (low[d], interior[d] + 1);
                let n = source_size[d];
                let map = move |o: i64| {
                    let t = o - lo;
                    (t >= 0 && t % step_ == 0 && t / step_ < n).then_some((0usize, t / step_))
                };
                cur = remap_dim(
                    b,
                    step,
                    &[(cur, operands[0])],
                    Some(locals[1]),
                    result,
                    d,
                    &map,
                )?;
            }
            finish(b, cur, result, step)
        }
        OpKind::Concatenate(crate::ir::ops::concatenate::Concatenate { dim }) => {
            let d = *dim as usize;
            if !remapped.contains(&d) {
                let out = b.local(result)?;
                b.instrs.push(Instr::Op {
                    kind: kind.clone(),
                    operands: locals.to_vec(),
                    results: vec![out],
                    step,
                });
                return Ok(());
            }
            let mut offsets = Vec::with_capacity(operands.len());
            let mut acc = 0;
            for &o in operands {
                offsets.push(acc);
                acc += b.prog.values[o].ty.shape[d];
            }
            let offsets2 = offsets.clone();
            let map = move |o: i64| {
                let k = offsets2.iter().rposition(|&off| off <= o)?;
                Some((k, o - offsets2[k]))
            };
            let sources: Vec<(LocalId, GValueId)> = locals
                .iter()
                .copied()
                .zip(operands.iter().copied())
                .collect();
            let cur = remap_dim(b, step, &sources, None, result, d, &map)?;
            finish(b, cur, result, step)
        }
        OpKind::Reverse(r) => {
            // Dimensions the result does not shard reverse locally; a
            // sharded one is rebuilt from the mirrored elements.
            let local_dims: Vec<i64> = r
                .dimensions
                .iter()
                .copied()
                .filter(|&d| !remapped.contains(&(d as usize)))
                .collect();
            let mut cur = locals[0];
            if !local_dims.is_empty() {
                let out = b.new_value(
                    b.local_ty(locals[0]).clone(),
                    format!("{}.local", b.name_of(result)),
                );
                b.instrs.push(Instr::Op {
                    kind: OpKind::Reverse(crate::ir::ops::reverse::Reverse {
                        dimensions: local_dims,
                    }),
                    operands: vec![cur],
                    results: vec![out],
                    step,
                });
                cur = out;
            }
            let size = b.prog.values[operands[0]].ty.shape.clone();
            for &d in &remapped {
                let n = size[d];
                let map = move |o: i64| Some((0usize, n - 1 - o));
                cur = remap_dim(b, step, &[(cur, operands[0])], None, result, d, &map)?;
            }
            finish(b, cur, result, step)
        }
        _ => Err(Diagnostic::new(
            DiagKind::Unsupported,
            b.prog.steps[step].cause.pos,
            format!("{} is not a remap op", kind.name()),
        )),
    }
}

/// Whether `kind` changes dimension `d` (its size or its elements' order).
fn changes_dim(
    kind: &OpKind,
    b: &DeviceBuilder<'_>,
    operands: &[GValueId],
    result: GValueId,
    d: usize,
) -> bool {
    match kind {
        OpKind::Concatenate(crate::ir::ops::concatenate::Concatenate { dim }) => *dim as usize == d,
        OpKind::Reverse(r) => r.reverses(d) && b.prog.values[result].ty.shape[d] > 1,
        OpKind::Slice(crate::ir::ops::slice::Slice { start, strides, .. }) => {
            start[d] != 0
                || strides[d] != 1
                || b.prog.values[operands[0]].ty.shape[d] != b.prog.values[result].ty.shape[d]
        }
        OpKind::Pad(crate::ir::ops::pad::Pad { low, interior, .. }) => {
            low[d] != 0
                || interior[d] != 0
                || b.prog.values[operands[0]].ty.shape[d] != b.prog.values[result].ty.shape[d]
        }
        _ => false,
    }
}

fn finish(
    b: &mut DeviceBuilder<'_>,
    cur: LocalId,
    result: GValueId,
    step: usize,
) -> Result<(), Diagnostic> {
    let want = b.local_type(result)?;
    if *b.local_ty(cur) != want {
        return Err(Diagnostic::new(
            DiagKind::Unsupported,
            b.prog.steps[step].cause.pos,
            format!(
                "internal error: {} is built as {} but its sharding needs {}",
                b.name_of(result),
                b.local_ty(cur),
                want
            ),
        ));
    }
    b.set_global(result, cur);
    Ok(())
}

/// Rebuild dimension `d` of the result from `sources` (local value and
/// the global value whose sharding it has along `d`): plan the remap, cut
/// and send the slabs, then pick every element.
#[allow(clippy::too_many_arguments)]
fn remap_dim(
    b: &mut DeviceBuilder<'_>,
    step: usize,
    sources: &[(LocalId, GValueId)],
    fill: Option<LocalId>,
    result: GValueId,
    d: usize,
    map: IndexMap<'_>,
) -> Result<LocalId, Diagnostic> {
    let pos = b.prog.steps[step].cause.pos;
    let err = |msg: String| {
        Diagnostic::new(
            DiagKind::Sharding,
            pos,
            format!("{}: {msg}", b.prog.steps[step].cause.op),
        )
    };
    let r_layout = b.layout(result)?;
    let mesh = b.mesh_of(result)?;
    let mut layouts = Vec::with_capacity(sources.len());
    let mut axes = Vec::with_capacity(sources.len());
    for &(_, g) in sources {
        layouts.push(b.layout(g)?);
        axes.push(b.dim_axes(g, d));
    }
    let specs: Vec<RemapSource<'_>> = layouts
        .iter()
        .zip(&axes)
        .map(|(layout, axes)| RemapSource { layout, axes })
        .collect();
    let plan = plan_remap(mesh, &b.devices, &r_layout, d, &specs, map).map_err(err)?;
    let locals: Vec<LocalId> = sources.iter().map(|&(l, _)| l).collect();
    let what = b.prog.steps[step].cause.op.clone();
    let cause = |shift: i64| {
        Cause {
        reason: format!(
            "{what} needs elements along dimension {d} that the block {} shard(s) {} holds (halo exchange)",
            shift.abs(),
            if shift > 0 { "later" } else { "earlier" }
        ),
        ..b.prog.steps[step].cause.clone()
    }
    };
    let mut shape = b.local_ty(locals[0]).shape.clone();
    shape[d] = r_layout.dims()[d].local;
    let elem = b.local_ty(locals[0]).elem;
    let name = format!("{}.d{d}", b.name_of(result));
    Ok(emit_remap(
        b,
        step,
        &plan,
        &locals,
        &sources.iter().map(|&(_, g)| g).collect::<Vec<_>>(),
        fill,
        TensorType::new(shape, elem),
        name,
        &cause,
    ))
}

/// Emit the instructions of `plan`: per round a cut and a permute, then
/// the remap itself into a new value of type `ty`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn emit_remap(
    b: &mut DeviceBuilder<'_>,
    step: usize,
    plan: &RemapPlan,
    locals: &[LocalId],
    globals: &[GValueId],
    fill: Option<LocalId>,
    ty: TensorType,
    name: String,
    cause: &dyn Fn(i64) -> Cause,
) -> LocalId {
    let d = plan.dim;
    let mut all_sources: Vec<LocalId> = locals.to_vec();
    for round in &plan.rounds {
        let src_local = locals[round.source];
        let mut slab_shape = b.local_ty(src_local).shape.clone();
        slab_shape[d] = round.len;
        let elem = b.local_ty(src_local).elem;
        let slab = b.new_value(
            TensorType::new(slab_shape.clone(), elem),
            format!("{name}.cut{:+}", round.shift),
        );
        b.instrs.push(Instr::SliceDim {
            operand: src_local,
            result: slab,
            dim: d,
            start: PerDevice(round.start.clone()),
            size: round.len,
            step,
        });
        let recv = b.new_value(
            TensorType::new(slab_shape.clone(), elem),
            format!("{name}.halo{:+}", round.shift),
        );
        let g = globals[round.source];
        let sharding = b.prog.values[g].sharding.clone();
        b.instrs.push(Instr::Collective {
            collective: Box::new(Collective {
                kind: CollectiveKind::CollectivePermute,
                axes: Vec::new(),
                dim_axes: vec![Vec::new(); slab_shape.len()],
                dim_factors: vec![1; slab_shape.len()],
                all_to_all: None,
                reduction: None,
                groups: round.pairs.clone(),
                in_sharding: sharding.clone(),
                out_sharding: sharding,
                global_shape: b.prog.values[g].ty.shape.clone(),
                in_local_shape: slab_shape.clone(),
                out_local_shape: slab_shape,
                elem,
            }),
            operand: slab,
            result: recv,
            step,
            cause: cause(round.shift),
        });
        all_sources.push(recv);
    }
    let n = locals.len() as u32;
    let table = plan
        .picks
        .iter()
        .map(|row| {
            row.iter()
                .map(|p| match *p {
                    Pick::Local { source, index } => RemapEntry::Source {
                        source: source as u32,
                        index,
                    },
                    Pick::Received { round, index } => RemapEntry::Source {
                        source: n + round as u32,
                        index,
                    },
                    Pick::Fill => RemapEntry::Fill,
                })
                .collect()
        })
        .collect();
    let out = b.new_value(ty, name);
    b.instrs.push(Instr::Remap {
        sources: all_sources,
        fill,
        result: out,
        dim: d,
        table: PerDevice(table),
        step,
    });
    out
}
