//! Lowering the data-movement steps of a [`GlobalProgram`] to collectives
//! (Shardy's `-sdy-reshard-to-collectives`, SPEC §6).
//!
//! A reshard becomes the collectives of [`lower_reshard`] (or its
//! cross-mesh variant); an all-reduce becomes one all-reduce collective.
//! An all-reduce whose result only feeds a reshard that starts by slicing
//! along some of the reduced axes is fused with that slice into a
//! reduce-scatter: each device then receives only its part of the sum.
//!
//! A reshard that changes the sharding of a single dimension may instead
//! be *remapped* ([`crate::partition::reshard::remap_plan`]): every device fetches
//! exactly the elements it lacks from the device holding them. That is
//! chosen when it moves fewer bytes, which happens when blocks of a
//! non-divisible dimension shift (whole-block collectives would gather and
//! slice again).

use std::collections::HashMap;

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ElemType;
use crate::partition::global::{GStepKind, GlobalProgram};
use crate::partition::limits::MAX_RESHARD_REMAP_ROUNDS;
use crate::partition::reshard::collective::{
    checked_input, collective_bytes, scattered, Collective, CollectiveKind,
};
use crate::partition::reshard::error::ReshardError;
use crate::partition::reshard::remap_plan::{plan_remap, RemapPlan, RemapSource};
use crate::partition::reshard::{lower_reshard, lower_reshard_between_meshes};
use crate::sharding::layout::TensorLayout;
use crate::sharding::{TensorSharding, ValidSharding};

/// The collectives of every step (empty for compute steps, and for an
/// all-reduce fused into the reshard after it).
#[derive(Debug, Clone, PartialEq)]
pub struct Lowering {
    pub per_step: Vec<Vec<Collective>>,
    /// Reshard steps lowered as a remap of one dimension (their
    /// collectives in `per_step` are the remap's permutes).
    pub remap_dim: Vec<Option<usize>>,
    /// Devices of the program (collective-permutes average over them).
    pub num_devices: usize,
}

impl Lowering {
    /// Every collective with the index of its step, in program order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Collective)> {
        self.per_step
            .iter()
            .enumerate()
            .flat_map(|(i, cs)| cs.iter().map(move |c| (i, c)))
    }

    /// Bytes each device receives over the whole program (ring formulas,
    /// see [`Collective::bytes_per_device`]).
    pub fn total_bytes_per_device(&self) -> f64 {
        let n = self.num_devices.max(1);
        self.iter()
            .map(|(_, c)| collective_bytes(c, n))
            .fold(0.0, |a, b| a + b)
    }
}

/// A reshard as planned: shape, element type, source and target
/// shardings (which name their meshes).
type ReshardKey = (Vec<i64>, ElemType, TensorSharding, TensorSharding);

/// Lower every reshard and all-reduce of `prog`.
pub fn lower_program(prog: &GlobalProgram) -> Result<Lowering, Diagnostic> {
    let mut per_step: Vec<Vec<Collective>> = Vec::with_capacity(prog.steps.len());
    // A program reshards the same kind of value the same way many times
    // (every layer's weights, every use of a scanned activation): each
    // distinct reshard is planned once (planning may search).
    let mut planned: HashMap<ReshardKey, Vec<Collective>> = HashMap::new();
    // Per step, the input of an all-reduce as checked when it was lowered:
    // fusing it into a reduce-scatter below need not check it again.
    let mut inputs: Vec<Option<ValidSharding<'_>>> = vec![None; prog.steps.len()];
    for (i, step) in prog.steps.iter().enumerate() {
        let at = |msg: String| Diagnostic::new(DiagKind::Sharding, step.cause.pos, msg);
        let collectives = match &step.kind {
            GStepKind::Compute(_)
            | GStepKind::Relabel
            | GStepKind::StackPartials { .. }
            | GStepKind::ToUnreduced { .. }
            | GStepKind::Loop { .. }
            | GStepKind::Branch { .. } => Vec::new(),
            GStepKind::Reshard | GStepKind::AllReduce { .. } => {
                let (&[input], &[output]) = (&step.operands[..], &step.results[..]) else {
                    return Err(at(format!(
                        "{}: a reshard has one operand and one result",
                        step.cause.op
                    )));
                };
                let (src, dst) = (prog.value(input), prog.value(output));
                let mesh_err = || {
                    at(format!(
                        "{}: sharding refers to an unknown mesh",
                        step.cause.op
                    ))
                };
                let from_mesh = prog.mesh_of(&src.sharding).ok_or_else(mesh_err)?;
                let to_mesh = prog.mesh_of(&dst.sharding).ok_or_else(mesh_err)?;
                let shape = &src.ty.shape;
                let elem = src.ty.elem;
                let result = match &step.kind {
                    GStepKind::AllReduce { axes, reduction } => {
                        checked_input(from_mesh, &src.sharding, shape).and_then(|input| {
                            inputs[i] = Some(input);
                            Collective::all_reduce_of(input, shape, elem, axes, *reduction)
                                .map(|c| vec![c])
                        })
                    }
                    _ => {
                        let key = (
                            shape.clone(),
                            elem,
                            src.sharding.clone(),
                            dst.sharding.clone(),
                        );
                        match planned.get(&key) {
                            Some(cs) => Ok(cs.clone()),
                            None => if from_mesh == to_mesh {
                                lower_reshard(from_mesh, shape, elem, &src.sharding, &dst.sharding)
                            } else {
                                lower_reshard_between_meshes(
                                    from_mesh,
                                    to_mesh,
                                    shape,
                                    elem,
                                    &src.sharding,
                                    &dst.sharding,
                                )
                            }
                            .inspect(|cs| {
                                planned.insert(key, cs.clone());
                            }),
                        }
                    }
                };
                result.map_err(|e| {
                    Diagnostic::new(
                        e.to_diagnostic(step.cause.pos).kind,
                        step.cause.pos,
                        format!(
                            "{}: cannot move {} from {} to {}: {e}",
                            step.cause.op, src.ty, src.sharding, dst.sharding
                        ),
                    )
                })?
            }
        };
        per_step.push(collectives);
    }
    let mut lowering = Lowering {
        remap_dim: vec![None; per_step.len()],
        per_step,
        num_devices: prog.devices().len(),
    };
    for i in 0..prog.steps.len() {
        if let Some((dim, collectives)) = cheaper_remap(prog, i, &lowering.per_step[i]) {
            lowering.per_step[i] = collectives;
            lowering.remap_dim[i] = Some(dim);
        }
    }
    fuse_reduce_scatter(prog, &inputs, &mut lowering)?;
    Ok(lowering)
}

/// All-reduce, then a reshard whose first collective slices along some of
/// the reduced axes: reduce-scatter along those, all-reduce the rest.
/// `inputs[i]` is the input of all-reduce step `i`, checked when it was
/// lowered.
fn fuse_reduce_scatter(
    prog: &GlobalProgram,
    inputs: &[Option<ValidSharding<'_>>],
    lowering: &mut Lowering,
) -> Result<(), Diagnostic> {
    let uses = prog.uses();
    let owner = prog.owners();
    for (i, step) in prog.steps.iter().enumerate() {
        let GStepKind::AllReduce { axes, reduction } = &step.kind else {
            continue;
        };
        let reduced = step.results[0];
        if uses[reduced].len() != 1 || prog.results.contains(&reduced) {
            continue;
        }
        let j = uses[reduced][0];
        // Fused, the pair runs where the reshard is: only within one block
        // (never moving a collective into a loop body).
        if owner[i] != owner[j] {
            continue;
        }
        if !matches!(prog.steps[j].kind, GStepKind::Reshard) {
            continue;
        }
        let Some(first) = lowering.per_step[j].first() else {
            continue;
        };
        if first.kind != CollectiveKind::AllSlice || !first.axes.iter().all(|a| axes.contains(a)) {
            continue;
        }
        let input = prog.value(step.operands[0]);
        let Some(checked) = inputs.get(i).copied().flatten() else {
            continue;
        };
        let (shape, elem) = (&input.ty.shape, input.ty.elem);
        let at = |e: ReshardError| e.to_diagnostic(step.cause.pos);
        // The scattered sharding is checked once: the reduce-scatter's
        // result and the input of the all-reduce over the other axes.
        let out = scattered(&checked, &first.dim_axes);
        let out = checked_input(checked.mesh(), &out, shape).map_err(at)?;
        let mut scatter =
            Collective::reduce_scatter_of(checked, out, shape, elem, &first.dim_axes, *reduction)
                .map_err(at)?;
        // The all-slice may cut blocks of a padded dimension laid out over
        // a longer extent than the sharding's own (`partition::reshard::padded`):
        // the rest of the reshard expects exactly its blocks, so the
        // reduce-scatter keeps them.
        scatter.out_local_shape = first.out_local_shape.clone();
        let rest: Vec<_> = axes
            .iter()
            .filter(|a| !first.axes.contains(a))
            .cloned()
            .collect();
        let mut fused = vec![scatter.clone()];
        if !rest.is_empty() {
            let mut all_reduce =
                Collective::all_reduce_of(out, shape, elem, &rest, *reduction).map_err(at)?;
            all_reduce.in_local_shape = first.out_local_shape.clone();
            all_reduce.out_local_shape = first.out_local_shape.clone();
            fused.push(all_reduce);
        }
        fused.extend(lowering.per_step[j].iter().skip(1).cloned());
        lowering.per_step[i].clear();
        lowering.per_step[j] = fused;
    }
    Ok(())
}

/// The dimension whose sharding a reshard changes, if it changes exactly
/// one on one mesh.
pub fn single_changed_dim(prog: &GlobalProgram, step: usize) -> Option<usize> {
    let s = &prog.steps[step];
    if !matches!(s.kind, GStepKind::Reshard) {
        return None;
    }
    let (a, b) = (
        &prog.value(s.operands[0]).sharding,
        &prog.value(s.results[0]).sharding,
    );
    if a.mesh != b.mesh
        || a.unreduced != b.unreduced
        || a.unreduced_op != b.unreduced_op
        || a.dims.len() != b.dims.len()
    {
        return None;
    }
    let mut changed = (0..a.dims.len()).filter(|&d| a.dims[d].axes != b.dims[d].axes);
    let d = changed.next()?;
    changed.next().is_none().then_some(d)
}

/// The layouts of a reshard step's operand and result.
fn reshard_layouts(prog: &GlobalProgram, step: usize) -> Option<(TensorLayout, TensorLayout)> {
    let s = &prog.steps[step];
    let (src, dst) = (prog.value(s.operands[0]), prog.value(s.results[0]));
    let mesh = prog.mesh_of(&src.sharding)?;
    let from = TensorLayout::new(mesh, &src.sharding, &src.ty.shape).ok()?;
    let to = TensorLayout::new(mesh, &dst.sharding, &dst.ty.shape).ok()?;
    Some((from, to))
}

/// The remap plan of a single-dimension reshard step.
pub fn reshard_remap_plan(
    prog: &GlobalProgram,
    step: usize,
    dim: usize,
) -> Option<(RemapPlan, TensorLayout, TensorLayout)> {
    let (from, to) = reshard_layouts(prog, step)?;
    let plan = plan_between(prog, step, dim, &from, &to)?;
    Some((plan, from, to))
}

/// Plan the remap of `dim` from layout `from` to `to` (step `step`'s).
fn plan_between(
    prog: &GlobalProgram,
    step: usize,
    dim: usize,
    from: &TensorLayout,
    to: &TensorLayout,
) -> Option<RemapPlan> {
    let src = prog.value(prog.steps[step].operands[0]);
    let mesh = prog.mesh_of(&src.sharding)?;
    let axes = src.sharding.dims.get(dim).map_or(&[][..], |d| &d.axes[..]);
    let identity = |o: i64| Some((0usize, o));
    plan_remap(
        mesh,
        &prog.devices(),
        to,
        dim,
        &[RemapSource { layout: from, axes }],
        &identity,
    )
    .ok()
}

/// A lower bound of the rounds a remap of `dim` takes, known before it is
/// planned: a target block spans at least `target / source` source
/// blocks along `dim`, all but one of them held elsewhere.
fn remap_rounds_at_least(from: &TensorLayout, to: &TensorLayout, dim: usize) -> Option<i64> {
    let (f, t) = (*from.local_shape().get(dim)?, *to.local_shape().get(dim)?);
    Some(if f > 0 { t / f - 1 } else { 0 })
}

/// A remap of the one dimension a reshard changes, with its permutes, if
/// it moves fewer bytes than `collectives` in at most
/// [`MAX_RESHARD_REMAP_ROUNDS`] rounds.
fn cheaper_remap(
    prog: &GlobalProgram,
    step: usize,
    collectives: &[Collective],
) -> Option<(usize, Vec<Collective>)> {
    let dim = single_changed_dim(prog, step)?;
    // A remap fetches each element from any device that holds it; the
    // copies of a partial value differ.
    let operand = prog.value(prog.steps[step].operands[0]);
    if !operand.sharding.unreduced.is_empty() {
        return None;
    }
    if collectives
        .iter()
        .all(|c| c.kind == CollectiveKind::AllSlice)
    {
        return None;
    }
    let (from, to) = reshard_layouts(prog, step)?;
    if remap_rounds_at_least(&from, &to, dim)? > MAX_RESHARD_REMAP_ROUNDS {
        return None;
    }
    let plan = plan_between(prog, step, dim, &from, &to)?;
    if plan.rounds.len() as i64 > MAX_RESHARD_REMAP_ROUNDS {
        return None;
    }
    let src = prog.value(prog.steps[step].operands[0]);
    let n = prog.devices().len();
    let local = from.local_shape();
    let row: i64 = local
        .iter()
        .enumerate()
        .filter(|&(e, _)| e != dim)
        .map(|(_, &x)| x)
        .product::<i64>()
        * src.ty.elem.byte_size() as i64;
    let remap_bytes = plan.bytes_per_device(row, n);
    let current: f64 = collectives.iter().map(|c| collective_bytes(c, n)).sum();
    if remap_bytes >= current {
        return None;
    }
    let permutes = plan
        .rounds
        .iter()
        .map(|r| {
            let mut shape = local.clone();
            shape[dim] = r.len;
            Collective {
                kind: CollectiveKind::CollectivePermute,
                axes: Vec::new(),
                dim_axes: vec![Vec::new(); shape.len()],
                dim_factors: vec![1; shape.len()],
                all_to_all: None,
                reduction: None,
                groups: r.pairs.clone(),
                in_sharding: src.sharding.clone(),
                out_sharding: prog.value(prog.steps[step].results[0]).sharding.clone(),
                global_shape: src.ty.shape.clone(),
                in_local_shape: shape.clone(),
                out_local_shape: shape,
                elem: src.ty.elem,
            }
        })
        .collect();
    Some((dim, permutes))
}
