//! Lowering one reshard (source sharding -> target sharding of one tensor)
//! to a list of collectives (SPEC §6).
//!
//! Same mesh, or two meshes with the same axes in another device order:
//! the greedy planner (`planner.rs`: all-slice, collective-permute, all-to-all,
//! all-gather; at most two rounds). Two meshes with different axes over the
//! same devices: one collective-permute onto a sharding of the target mesh
//! with the source's shards per dimension (as close to the target as it
//! can be), then the planner on the target mesh.
//!
//! Where a dimension does not divide, the planner also runs on the
//! layouts of [`crate::partition::reshard::padded`] (virtual extents, padding
//! selectors); of all plans found, the one that never makes the tensor
//! less sharded before its last collective and moves the fewest bytes per
//! device (then takes the fewest collectives) wins.
//!
//! Where the greedy plan needs a collective-permute (or there is none), a
//! bounded search over the same moves (`search.rs`) may replace it, only
//! with a plan that moves fewer bytes per device.
//!
//! When no plan is found — sub-axes with no common refinement (`"x":(1)2`
//! vs `"x":(1)3` on `"x"=6`) or a non-divisible dimension whose padded
//! blocks must shift (13 split 4 ways pads to 16, split 2 ways to 14, so
//! blocks move by more than whole shards) — the reshard falls back to
//! gathering the dimensions that change and slicing them again: correct,
//! but the local tensor grows before it shrinks
//! ([`ReshardStrategy::GrowThenShrink`]). The search then also tries plans
//! that move data first and end in a gather and a slice, kept only if they
//! move fewer bytes than the fallback.

pub mod collective;
pub mod error;
pub(crate) mod padded;
pub(crate) mod pieces;
pub(crate) mod planner;
pub mod remap_plan;
pub(crate) mod search;
pub mod simulate;

use std::collections::{BTreeMap, HashMap};

use crate::ir::ElemType;
use crate::partition::reshard::collective::{AllToAllDims, Collective, CollectiveKind};
use crate::partition::reshard::error::{ReshardError, Side};
use crate::partition::reshard::padded::{add_selectors, candidates, Candidate};
use crate::partition::reshard::pieces::{
    align, block_index, complement, merged, pieces_of, product, DimPieces, Piece,
};
use crate::partition::reshard::planner::{Move, Planner, Step};
use crate::partition::reshard::search::search;
use crate::sharding::groups::{device_groups, group_ranks};
use crate::sharding::validate::{is_maximal_mesh, validate_mesh_structure};
use crate::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding, ValidSharding};

/// How a reshard was lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReshardStrategy {
    /// The tensor never becomes less sharded before the last collective
    /// (slices, permutes and all-to-alls first, gathers last), so the local
    /// tensor does not grow before the last step (other than by padding).
    Monotone,
    /// Some shards are gathered before others are sliced: the local tensor
    /// grows, then shrinks. Taken when sub-axes do not line up, when padded
    /// blocks must shift (a non-divisible dimension whose padded extent
    /// changes), or when mixed axis sizes (3 and 2) leave no exact order.
    GrowThenShrink,
}

/// The collectives of one reshard and how they were chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct ReshardPlan {
    pub collectives: Vec<Collective>,
    pub strategy: ReshardStrategy,
}

/// Lowers a reshard of a tensor of `shape` from `from` to `to`, both on
/// `mesh`. An empty list means the data is already in place.
pub fn lower_reshard(
    mesh: &Mesh,
    shape: &[i64],
    elem: ElemType,
    from: &TensorSharding,
    to: &TensorSharding,
) -> Result<Vec<Collective>, ReshardError> {
    Ok(plan_reshard(mesh, mesh, shape, elem, from, to)?.collectives)
}

/// Lowers a reshard between two meshes over the same set of devices
/// (different device order, or different axes): collective-permutes plus
/// slices, all-to-alls and gathers. Meshes over different devices are an
/// error.
pub fn lower_reshard_between_meshes(
    from_mesh: &Mesh,
    to_mesh: &Mesh,
    shape: &[i64],
    elem: ElemType,
    from: &TensorSharding,
    to: &TensorSharding,
) -> Result<Vec<Collective>, ReshardError> {
    Ok(plan_reshard(from_mesh, to_mesh, shape, elem, from, to)?.collectives)
}

/// [`lower_reshard_between_meshes`], also saying which strategy it took.
pub fn plan_reshard(
    from_mesh: &Mesh,
    to_mesh: &Mesh,
    shape: &[i64],
    elem: ElemType,
    from: &TensorSharding,
    to: &TensorSharding,
) -> Result<ReshardPlan, ReshardError> {
    // The planner's one check of its inputs: everything below takes the
    // shardings as checked.
    let (from, to) = check_inputs(from_mesh, to_mesh, shape, from, to)?;
    let rank = shape.len();
    let src = pieces_of(from, rank, false);
    let tgt = pieces_of(to, rank, false);
    let same_axes = from_mesh.axes == to_mesh.axes;
    let same_order = from_mesh.device_list() == to_mesh.device_list();

    let ctx = |extent: Vec<i64>| Lowering {
        shape,
        extent,
        elem,
        from,
        to,
    };
    // The cheapest lowering so far.
    type Best = Option<(Cost, Vec<Step>, Vec<Collective>)>;
    let mut best: Best = None;
    let consider =
        |best: &mut Best, extent: Vec<i64>, steps: Vec<Step>| -> Result<(), ReshardError> {
            let collectives = drop_idle_permutes(ctx(extent).collectives(&src, &steps)?);
            let cost = Cost::of(is_monotone(&src, &steps), &collectives);
            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                *best = Some((cost, steps, collectives));
            }
            Ok(())
        };
    let devices = from_mesh.num_devices();
    let elem_bytes = elem.byte_size() as f64;
    // Candidates on which to also search for a cheaper plan, once every
    // greedy plan is known.
    let mut searches: Vec<Candidate> = Vec::new();
    if same_axes {
        let (mut cur, mut want) = (src.clone(), tgt.clone());
        if align(&mut cur, &mut want) {
            for c in candidates(shape, devices, &cur, &want) {
                let planned =
                    Planner::new(&c.extent, c.start.clone(), c.target.clone(), same_order).run();
                if needs_search(planned.as_deref(), &c, same_order, &from) {
                    searches.push(c.clone());
                }
                if let Some(steps) = planned {
                    let mut all: Vec<Step> = c
                        .prefix
                        .iter()
                        .map(|s| Step {
                            on_target: same_order,
                            ..s.clone()
                        })
                        .collect();
                    all.extend(add_selectors(&c, steps));
                    consider(&mut best, c.extent, all)?;
                }
            }
        }
    } else {
        for c in candidates(shape, devices, &src, &tgt) {
            if c.selectors.iter().any(|s| !s.is_empty()) {
                continue;
            }
            if let Some(steps) = bridged(&c.extent, to_mesh, &src, tgt.clone()) {
                consider(&mut best, c.extent, steps)?;
            }
        }
    }
    // Whether the best plan is the gather-then-slice fallback (or a
    // searched plan that replaced it): only then may a searched plan
    // gather before its last collective.
    let fallback = best.is_none();
    if fallback {
        let steps = gather_then_slice(&src, &tgt, same_axes && same_order);
        consider(&mut best, shape.to_vec(), steps)?;
    }
    for c in searches {
        let Some((cost, _, _)) = &best else { break };
        // A searched plan replaces the best one only if it moves fewer
        // bytes (it never grows the tensor unless the best one is the
        // fallback, which grows it too, so it then also compares lower),
        // so no reshard costs more than the greedy plan.
        let bytes = cost.bytes;
        let free = free_pieces(to_mesh, &c.start, &c.target);
        if let Some(steps) = search(
            shape,
            &c.extent,
            &c.start,
            &c.target,
            &free,
            bytes / elem_bytes,
            fallback,
        ) {
            let mut found = None;
            consider(&mut found, c.extent, steps)?;
            if let Some(f) = found.filter(|f| f.0.bytes < bytes) {
                best = Some(f);
            }
        }
    }
    let Some((_, steps, collectives)) = best else {
        return Err(ReshardError::Internal("no reshard plan".into()));
    };
    let strategy = if is_monotone(&src, &steps) {
        ReshardStrategy::Monotone
    } else {
        ReshardStrategy::GrowThenShrink
    };
    Ok(ReshardPlan {
        collectives,
        strategy,
    })
}

/// Whether to also search for a cheaper plan than the greedy one
/// (`search.rs`): only where the greedy planner needs a permute, more
/// than one all-to-all (one permute may set up a single all-to-all, or
/// make the blocks smaller: `{a}{b}{} -> {b}{}{a}`) or finds nothing
/// (elsewhere it moves only what must move), on a plain layout (no
/// padding selectors to carry), on one device order and without partial
/// sums.
fn needs_search(
    planned: Option<&[Step]>,
    c: &Candidate,
    same_order: bool,
    from: &TensorSharding,
) -> bool {
    let plain = c.prefix.is_empty() && c.selectors.iter().all(Vec::is_empty);
    let costly = planned.is_none_or(|steps| {
        let all_to_alls = steps
            .iter()
            .filter(|s| matches!(s.mv, Move::AllToAll { .. }))
            .count();
        all_to_alls > 1 || steps.iter().any(|s| s.mv == Move::Permute)
    });
    plain && same_order && from.unreduced.is_empty() && costly
}

/// The parts of mesh axes neither `a` nor `b` uses (whole axes, and the
/// rest of an axis one of them uses part of, so that `"x":(2)2` is offered
/// as a third axis would be): the search may slice them to make a
/// permute's blocks smaller and gather them last.
fn free_pieces(mesh: &Mesh, a: &DimPieces, b: &DimPieces) -> Vec<Piece> {
    let used: DimPieces = a.iter().chain(b).cloned().collect();
    let mut free = complement(mesh, &used).unwrap_or_default();
    free.retain(|p| p.size > 1);
    free
}

/// How a candidate lowering compares: plans that never make the tensor
/// less sharded before their last collective first, then bytes per
/// device, then collectives that communicate, then all collectives.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
struct Cost {
    grows: bool,
    bytes: f64,
    communicating: usize,
    total: usize,
}

impl Cost {
    fn of(monotone: bool, cs: &[Collective]) -> Cost {
        Cost {
            grows: !monotone,
            bytes: cs.iter().map(Collective::bytes_per_device).sum(),
            communicating: cs.iter().filter(|c| c.communicates()).count(),
            total: cs.len(),
        }
    }
}

/// Removes collective-permutes in which every device keeps its block (a
/// change of mesh that moves no data, e.g. of a replicated tensor). The
/// neighbours take over the dropped permute's shardings so that the list
/// still chains and still ends in the target sharding.
fn drop_idle_permutes(all: Vec<Collective>) -> Vec<Collective> {
    let mut out: Vec<Collective> = Vec::with_capacity(all.len());
    let mut first_in: Option<TensorSharding> = None;
    for mut c in all {
        let idle = c.kind == CollectiveKind::CollectivePermute
            && c.groups.iter().all(|pair| pair.first() == pair.last());
        if idle {
            match out.last_mut() {
                Some(prev) => prev.out_sharding = c.out_sharding,
                None => {
                    first_in.get_or_insert(c.in_sharding);
                }
            }
            continue;
        }
        if let Some(s) = first_in.take() {
            c.in_sharding = s;
        }
        out.push(c);
    }
    out
}

/// Whether no step but the last lowers the total number of shards.
fn is_monotone(src: &DimPieces, steps: &[Step]) -> bool {
    let total = |p: &DimPieces| p.iter().map(|d| product(d)).product::<i64>();
    let mut before = total(src);
    for step in steps.iter().take(steps.len().saturating_sub(1)) {
        let after = total(&step.after);
        if after < before {
            return false;
        }
        before = after;
    }
    true
}

fn list(ids: &[i64]) -> String {
    let v: Vec<String> = ids.iter().map(ToString::to_string).collect();
    format!("[{}]", v.join(", "))
}

/// Checks the meshes, the shape and both shardings (in that order, so that
/// the most basic problem is the one reported), then that the reshard is
/// possible at all; returns the shardings as checked.
fn check_inputs<'a>(
    from_mesh: &'a Mesh,
    to_mesh: &'a Mesh,
    shape: &[i64],
    from: &'a TensorSharding,
    to: &'a TensorSharding,
) -> Result<(ValidSharding<'a>, ValidSharding<'a>), ReshardError> {
    for (side, mesh) in [(Side::Source, from_mesh), (Side::Target, to_mesh)] {
        validate_mesh_structure(mesh).map_err(|error| ReshardError::InvalidMesh { side, error })?;
    }
    if let Some((dim, &size)) = shape.iter().enumerate().find(|(_, &s)| s < 0) {
        return Err(ReshardError::NegativeDimSize { dim, size });
    }
    let valid = |side, mesh, s| {
        let rank = if is_maximal_mesh(mesh) {
            0
        } else {
            shape.len()
        };
        ValidSharding::new(s, mesh, rank).map_err(|e| ReshardError::from_sharding(side, e))
    };
    let valid_from = valid(Side::Source, from_mesh, from)?;
    let valid_to = valid(Side::Target, to_mesh, to)?;
    let (mut a, mut b) = (from_mesh.device_list(), to_mesh.device_list());
    a.sort_unstable();
    b.sort_unstable();
    if a != b {
        return Err(ReshardError::DifferentDeviceSets {
            from: list(&a),
            to: list(&b),
        });
    }
    let same_unreduced = if from_mesh.axes == to_mesh.axes {
        from.unreduced == to.unreduced
            && (from.unreduced.is_empty() || from.unreduced_op == to.unreduced_op)
    } else {
        from.unreduced.is_empty() && to.unreduced.is_empty()
    };
    if !same_unreduced {
        let show = |t: &TensorSharding| {
            let s: Vec<String> = t.unreduced.iter().map(ToString::to_string).collect();
            let op = t.unreduced_op.keyword().unwrap_or_default();
            format!("{op}{{{}}}", s.join(", "))
        };
        return Err(ReshardError::UnreducedMismatch {
            from: show(from),
            to: show(to),
        });
    }
    Ok((valid_from, valid_to))
}

/// Across meshes with different axes: permute onto a target-mesh sharding
/// with the source's number of shards per dimension, then plan on the
/// target mesh. `None` if no such sharding fits or the plan fails.
fn bridged(
    shape: &[i64],
    to_mesh: &Mesh,
    src: &DimPieces,
    mut tgt: DimPieces,
) -> Option<Vec<Step>> {
    let counts: Vec<i64> = src.iter().map(|d| product(d)).collect();
    let mut steps = Vec::new();
    let start = if counts.iter().all(|&c| c == 1) {
        vec![Vec::new(); src.len()]
    } else {
        let bridge = bridge_sharding(to_mesh, &counts, &mut tgt)?;
        steps.push(Step {
            mv: Move::Permute,
            after: bridge.clone(),
            on_target: true,
        });
        bridge
    };
    let (mut cur, mut want) = (start, tgt);
    if !align(&mut cur, &mut want) {
        return None;
    }
    steps.extend(Planner::new(shape, cur, want, true).run()?);
    Some(steps)
}

/// A sharding on the target mesh with `counts[d]` shards in dimension `d`:
/// per dimension, the target's own leading pieces first, then pieces the
/// target does not use (gathered last), then target pieces of other
/// dimensions (moved there by all-to-alls first). Splits target pieces in
/// `tgt` as needed.
fn bridge_sharding(mesh: &Mesh, counts: &[i64], tgt: &mut DimPieces) -> Option<DimPieces> {
    let rank = counts.len();
    let mut cap = counts.to_vec();
    let mut front: DimPieces = vec![Vec::new(); rank];
    let mut rest: Vec<Piece> = Vec::new();
    for d in 0..rank {
        let mut i = 0;
        while i < tgt[d].len() && cap[d] > 1 {
            let p = tgt[d][i];
            if cap[d] % p.size == 0 {
                cap[d] /= p.size;
                front[d].push(p);
            } else if p.size % cap[d] == 0 {
                let (a, b) = p.split(cap[d]);
                tgt[d].splice(i..=i, [a, b]);
                cap[d] = 1;
                front[d].push(a);
            } else {
                break;
            }
            i += 1;
        }
        rest.extend(tgt[d].iter().skip(front[d].len()).copied());
    }
    // Target pieces of other dimensions first (an all-to-all moves them
    // later, cheaper than gathering unused pieces away), then unused ones.
    let mut back: DimPieces = vec![Vec::new(); rank];
    fill(&mut rest, &mut cap, &mut back, Some(tgt));
    let mut unused = complement(mesh, tgt)?;
    unused.retain(|p| p.size > 1);
    let mut middle: DimPieces = vec![Vec::new(); rank];
    fill(&mut unused, &mut cap, &mut middle, None);
    if cap.iter().any(|&c| c != 1) {
        return None;
    }
    Some(
        (0..rank)
            .map(|d| [front[d].clone(), middle[d].clone(), back[d].clone()].concat())
            .collect(),
    )
}

/// First-fit of `pool` into the dims' capacities (splitting a piece whose
/// major part fits; its rest stays in the pool and replaces it in `tgt`).
fn fill(
    pool: &mut Vec<Piece>,
    cap: &mut [i64],
    into: &mut DimPieces,
    mut tgt: Option<&mut DimPieces>,
) {
    for d in 0..cap.len() {
        let mut i = 0;
        while cap[d] > 1 && i < pool.len() {
            let p = pool[i];
            if cap[d] % p.size == 0 {
                cap[d] /= p.size;
                into[d].push(pool.remove(i));
            } else if p.size % cap[d] == 0 {
                let (a, b) = p.split(cap[d]);
                if let Some(t) = tgt.as_deref_mut() {
                    for dim in t.iter_mut() {
                        if let Some(j) = dim.iter().position(|&q| q == p) {
                            dim.splice(j..=j, [a, b]);
                        }
                    }
                }
                pool[i] = b;
                cap[d] = 1;
                into[d].push(a);
            } else {
                i += 1;
            }
        }
    }
}

/// The fallback: gather every dimension that changes (all of them across
/// meshes), then slice them to the target.
fn gather_then_slice(src: &DimPieces, tgt: &DimPieces, same_mesh: bool) -> Vec<Step> {
    let rank = src.len();
    let changes: Vec<bool> = (0..rank).map(|d| !same_mesh || src[d] != tgt[d]).collect();
    let mut steps = Vec::new();
    let mut cur = src.clone();
    let gathered: DimPieces = (0..rank)
        .map(|d| {
            if changes[d] {
                std::mem::take(&mut cur[d])
            } else {
                Vec::new()
            }
        })
        .collect();
    if gathered.iter().any(|g| !g.is_empty()) {
        steps.push(Step {
            mv: Move::Gather(gathered),
            after: cur.clone(),
            on_target: same_mesh,
        });
    }
    let sliced: DimPieces = (0..rank)
        .map(|d| {
            if changes[d] {
                tgt[d].clone()
            } else {
                Vec::new()
            }
        })
        .collect();
    if sliced.iter().any(|s| !s.is_empty()) {
        steps.push(Step {
            mv: Move::Slice(sliced),
            after: tgt.clone(),
            on_target: true,
        });
    }
    steps
}

/// Everything needed to turn planned steps into collectives.
struct Lowering<'a> {
    shape: &'a [i64],
    /// Per dimension, the extent sharded dimensions are laid out over
    /// (see [`crate::partition::reshard::padded`]); an unsharded dimension holds
    /// its real size.
    extent: Vec<i64>,
    elem: ElemType,
    /// The reshard's ends, each with the mesh it is on.
    from: ValidSharding<'a>,
    to: ValidSharding<'a>,
}

impl Lowering<'_> {
    fn mesh(&self, on_target: bool) -> (&Mesh, &MeshRef) {
        let end = if on_target { self.to } else { self.from };
        (end.mesh(), &end.sharding().mesh)
    }

    fn sharding(&self, on_target: bool, pieces: &DimPieces) -> TensorSharding {
        let (mesh, mesh_ref) = self.mesh(on_target);
        TensorSharding {
            mesh: mesh_ref.clone(),
            dims: if is_maximal_mesh(mesh) {
                Vec::new()
            } else {
                pieces
                    .iter()
                    .map(|d| DimSharding::closed(merged(mesh, d)))
                    .collect()
            },
            replicated: Vec::new(),
            unreduced: self.from.unreduced.clone(),
            unreduced_op: self.from.unreduced_op,
        }
    }

    fn local_shape(&self, pieces: &DimPieces) -> Vec<i64> {
        (0..self.shape.len())
            .map(|d| {
                let n = product(&pieces[d]).max(1);
                if n == 1 {
                    self.shape[d]
                } else {
                    (self.extent[d] + n - 1) / n
                }
            })
            .collect()
    }

    fn collectives(
        &self,
        src: &DimPieces,
        steps: &[Step],
    ) -> Result<Vec<Collective>, ReshardError> {
        let rank = self.shape.len();
        let first_in = self.sharding(false, &pieces_of(self.from, rank, true));
        let last_out = self.sharding(true, &pieces_of(self.to, rank, true));
        let mut out = Vec::with_capacity(steps.len());
        let mut cur = src.clone();
        let mut cur_on_target = false;
        for (i, step) in steps.iter().enumerate() {
            let in_sharding = if i == 0 {
                first_in.clone()
            } else {
                self.sharding(cur_on_target, &cur)
            };
            let out_sharding = if i + 1 == steps.len() {
                last_out.clone()
            } else {
                self.sharding(step.on_target, &step.after)
            };
            let mut c = Collective {
                kind: CollectiveKind::CollectivePermute,
                axes: Vec::new(),
                dim_axes: vec![Vec::new(); rank],
                dim_factors: vec![1; rank],
                all_to_all: None,
                reduction: None,
                groups: Vec::new(),
                in_sharding,
                out_sharding,
                global_shape: self.shape.to_vec(),
                in_local_shape: self.local_shape(&cur),
                out_local_shape: self.local_shape(&step.after),
                elem: self.elem,
            };
            match &step.mv {
                Move::Slice(per_dim) | Move::Gather(per_dim) => {
                    let is_slice = matches!(step.mv, Move::Slice(_));
                    // A slice runs where its result lives, a gather where
                    // its input does (they differ only for replicated data).
                    let (mesh, _) = self.mesh(if is_slice {
                        step.on_target
                    } else {
                        cur_on_target
                    });
                    c.kind = if is_slice {
                        CollectiveKind::AllSlice
                    } else {
                        CollectiveKind::AllGather
                    };
                    c.dim_axes = per_dim.iter().map(|p| merged(mesh, p)).collect();
                    c.dim_factors = per_dim.iter().map(|p| product(p)).collect();
                    c.axes = c.dim_axes.concat();
                    c.groups = device_groups(mesh, &c.axes)?;
                }
                Move::AllToAll { pieces, src, tgt } => {
                    let (mesh, _) = self.mesh(cur_on_target);
                    c.kind = CollectiveKind::AllToAll;
                    c.axes = merged(mesh, pieces);
                    c.all_to_all = Some(AllToAllDims {
                        src_dim: *src,
                        tgt_dim: *tgt,
                    });
                    c.groups = device_groups(mesh, &c.axes)?;
                }
                Move::Permute => {
                    c.groups = permute_pairs(
                        self.mesh(cur_on_target).0,
                        &cur,
                        self.mesh(step.on_target).0,
                        &step.after,
                        &self.from.unreduced,
                    )?;
                }
            }
            out.push(c);
            cur = step.after.clone();
            cur_on_target = step.on_target;
        }
        Ok(out)
    }
}

/// One `[source, target]` pair per device: the target's block under
/// `out` is the source's block under `inp`. Devices that already hold
/// their new block keep it (self-pairs); the others are matched in
/// ascending device order. A partial value's copies differ along its
/// `unreduced` axes: a block comes from the device at the same
/// coordinates along them.
fn permute_pairs(
    in_mesh: &Mesh,
    inp: &DimPieces,
    out_mesh: &Mesh,
    out: &DimPieces,
    unreduced: &[AxisRef],
) -> Result<Vec<Vec<i64>>, ReshardError> {
    let mut devices = in_mesh.device_list();
    devices.sort_unstable();
    let partial_rank = |mesh: &Mesh| -> Result<HashMap<i64, (usize, usize)>, ReshardError> {
        if unreduced.is_empty() {
            return Ok(HashMap::new());
        }
        device_groups(mesh, unreduced)
            .map(|g| group_ranks(&g))
            .map_err(|e| ReshardError::Internal(format!("unreduced axes: {e}")))
    };
    let (in_rank, out_rank) = (partial_rank(in_mesh)?, partial_rank(out_mesh)?);
    let rank_of =
        |ranks: &HashMap<i64, (usize, usize)>, d: i64| ranks.get(&d).map_or(0, |r| r.1 as i64);
    let mut by_block: BTreeMap<Vec<i64>, (Vec<i64>, Vec<i64>)> = BTreeMap::new();
    for &d in &devices {
        let missing = || ReshardError::Internal(format!("device {d} is not in both meshes"));
        let mut a = block_index(in_mesh, inp, d).ok_or_else(missing)?;
        let mut b = block_index(out_mesh, out, d).ok_or_else(missing)?;
        a.push(rank_of(&in_rank, d));
        b.push(rank_of(&out_rank, d));
        by_block.entry(a).or_default().0.push(d);
        by_block.entry(b).or_default().1.push(d);
    }
    let mut pairs = Vec::with_capacity(devices.len());
    for (block, (srcs, tgts)) in by_block {
        if srcs.len() != tgts.len() {
            return Err(ReshardError::Internal(format!(
                "collective-permute: block {block:?} is held by {} devices before and {} after",
                srcs.len(),
                tgts.len()
            )));
        }
        let (stay, src_rest): (Vec<i64>, Vec<i64>) = srcs.iter().partition(|d| tgts.contains(d));
        let tgt_rest = tgts.iter().filter(|d| !stay.contains(d));
        pairs.extend(stay.iter().map(|&d| vec![d, d]));
        pairs.extend(src_rest.iter().zip(tgt_rest).map(|(&s, &t)| vec![s, t]));
    }
    pairs.sort_unstable();
    Ok(pairs)
}
