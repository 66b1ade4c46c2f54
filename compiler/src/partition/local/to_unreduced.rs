//! A value that is not partial becoming a partial sum over mesh axes with
//! no data moved (Shardy's `sdy.replicated_to_unreduced` and
//! `sdy.sharded_to_unreduced`): `jnp.zeros(..., out_sharding=P(...,
//! unreduced={"data"}))`, a sharding constraint or `reshard` to an
//! unreduced sharding, an accumulator's initial value.
//!
//! The all-reduce of the result over those axes must give the operand
//! back, so each device keeps only what no other device of its group
//! keeps:
//! - axes that shard a dimension last (`[{"x", "y"}]` to `[{"x"}],
//!   unreduced={"y"}`): the device's block is placed at its offset in the
//!   larger block the result has along that dimension, zeros elsewhere (a
//!   local remap);
//! - axes the operand is replicated along: the first device of each group
//!   along them keeps its block, the others hold zeros (a local mask).
//!
//! Axes that shard a dimension but not last are gathered first (a
//! reshard). A max- or min-partial needs no zeros: copies of a value
//! reduce to it, so replicated copies are relabelled (and sharded ones
//! gathered first).

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{OpKind, ReduceKind, TensorType};
use crate::partition::global::compat::truncate_without_overlap;
use crate::partition::global::explicit_reshards::{braced, is_zero, placement, Builder};
use crate::partition::global::{Cause, GStepKind, GValueId};
use crate::partition::local::builder::{internal, DeviceBuilder};
use crate::partition::local::padding::identity_of;
use crate::partition::program::{Instr, LocalId, PerDevice, RemapEntry};
use crate::rules::axis_algebra::overlaps;
use crate::sharding::groups::{device_groups, group_ranks};
use crate::sharding::layout::TensorLayout;
use crate::sharding::validate::sort_in_mesh_order;
use crate::sharding::{AxisRef, Mesh, ReductionOp, TensorSharding};

/// `s` with the axes of `extra` that end a dimension's list taken off
/// (the sharded-to-unreduced part); `None` when an axis of `extra` still
/// shards a dimension after that.
fn strip_trailing(s: &TensorSharding, extra: &[AxisRef]) -> Option<TensorSharding> {
    let mut out = s.clone();
    for d in &mut out.dims {
        while d.axes.last().is_some_and(|a| extra.contains(a)) {
            d.axes.pop();
        }
    }
    let still = out
        .dims
        .iter()
        .any(|d| d.axes.iter().any(|a| extra.iter().any(|e| overlaps(a, e))));
    (!still).then_some(out)
}

/// Whether every device's block of `inner` lies inside its block of
/// `outer` (its valid elements, dimension by dimension): always where
/// sizes divide, not always where blocks are padded.
fn blocks_nest(mesh: &Mesh, inner: &TensorSharding, outer: &TensorSharding, shape: &[i64]) -> bool {
    let (Ok(i), Ok(o)) = (
        TensorLayout::new(mesh, inner, shape),
        TensorLayout::new(mesh, outer, shape),
    ) else {
        return false;
    };
    mesh.device_list()
        .into_iter()
        .all(|d| match (i.slice(d), o.slice(d)) {
            (Some(a), Some(b)) => (0..shape.len()).all(|k| {
                a.extent[k] == 0
                    || (a.offset[k] >= b.offset[k]
                        && a.offset[k] + a.extent[k] <= b.offset[k] + b.extent[k])
            }),
            _ => false,
        })
}

impl Builder<'_> {
    /// `v` made partial along `extra` (axes `target` is unreduced along and
    /// `v` is not), then moved to `target`.
    pub(crate) fn make_unreduced(
        &mut self,
        v: GValueId,
        target: &TensorSharding,
        extra: &[AxisRef],
        cause: Cause,
    ) -> Result<GValueId, Diagnostic> {
        let src = self.prog.values[v].sharding.clone();
        let op = target.unreduced_op;
        // `reshard` reduced partials of another reduction first.
        debug_assert!(src.unreduced.is_empty() || src.unreduced_op == op);
        let mut v = v;
        let mut src = src;
        if !self.same_mesh(&src, target) {
            // Become unreduced on the target's mesh: which device keeps a
            // value depends on the device order. (A replicated value is
            // the same on every mesh: the reshard may leave it as it is.)
            let moved = TensorSharding {
                mesh: target.mesh.clone(),
                dims: target.dims.clone(),
                replicated: Vec::new(),
                unreduced: Vec::new(),
                unreduced_op: ReductionOp::default(),
            };
            v = self.reshard(v, &moved, cause.clone())?;
            src = moved;
        }
        let mesh = src
            .mesh_name()
            .and_then(|m| self.mesh(m))
            .cloned()
            .ok_or_else(|| {
                Diagnostic::new(
                    DiagKind::Sharding,
                    cause.pos,
                    format!("{}: sharding {src} refers to an unknown mesh", cause.op),
                )
            })?;
        let shape = self.prog.values[v].ty.shape.clone();
        let stripped = match strip_trailing(&src, extra)
            .filter(|s| op == ReductionOp::Sum || *s == src)
            .filter(|s| blocks_nest(&mesh, &src, s, &shape))
        {
            Some(s) => s,
            None => {
                // Gather the axes that cannot become unreduced in place.
                let mut gathered = src.clone();
                for d in &mut gathered.dims {
                    truncate_without_overlap(&mut d.axes, extra, &mesh);
                }
                v = self.reshard(v, &gathered, cause.clone())?;
                src = gathered.clone();
                gathered
            }
        };
        let mut sharding = stripped.clone();
        sharding.unreduced.extend(extra.iter().cloned());
        sort_in_mesh_order(&mesh, &mut sharding.unreduced);
        sharding.unreduced_op = op;
        let sharding = placement(&sharding, &mesh);
        let ty = self.prog.values[v].ty.clone();
        let r = self.new_value(ty, sharding);
        // No dimension loses axes (the value is replicated along them; on
        // another mesh too, where it may not have moved).
        let in_place = stripped.dims == src.dims;
        if in_place && (op != ReductionOp::Sum || is_zero(&self.prog, v)) {
            let reason = format!(
                "every copy is already a partial {} over {} ({})",
                op.plural(),
                braced(extra),
                if op == ReductionOp::Sum {
                    "zero"
                } else {
                    "an idempotent reduction"
                }
            );
            self.push(
                GStepKind::Relabel,
                vec![v],
                vec![r],
                Cause {
                    reason,
                    ..cause.clone()
                },
            );
        } else {
            let reason = format!(
                "the value becomes a partial sum over {} with no data moved: {}",
                braced(extra),
                if in_place {
                    "the first device along them keeps it, the others hold zeros"
                } else {
                    "each device keeps its own block, zeros elsewhere"
                }
            );
            self.push(
                GStepKind::ToUnreduced {
                    axes: extra.to_vec(),
                },
                vec![v],
                vec![r],
                Cause {
                    reason,
                    ..cause.clone()
                },
            );
        }
        self.reshard(r, target, cause)
    }
}

/// The local instructions of a [`GStepKind::ToUnreduced`] step: a remap
/// per dimension that loses its last axes, then a mask for the axes the
/// operand is replicated along.
pub(crate) fn lower_to_unreduced(b: &mut DeviceBuilder<'_>, i: usize) -> Result<(), Diagnostic> {
    let step = &b.prog.steps[i];
    let (GStepKind::ToUnreduced { axes }, &[og], &[rg]) = (
        &step.kind,
        step.operands.as_slice(),
        step.results.as_slice(),
    ) else {
        return Err(internal(
            step.cause.pos,
            "internal error: a to-unreduced step takes one value".into(),
        ));
    };
    let pos = step.cause.pos;
    let (src, dst) = (
        b.prog.values[og].sharding.clone(),
        b.prog.values[rg].sharding.clone(),
    );
    let (src_layout, dst_layout) = (b.layout(og)?, b.layout(rg)?);
    let mesh = b.mesh_of(rg)?;
    let elem = b.prog.values[og].ty.elem;
    let mut cur = b.local(og)?;
    let zero_padded = b.zero_padded[cur];
    let mut by_dims: Vec<AxisRef> = Vec::new();
    for (d, (s, t)) in src.dims.iter().zip(&dst.dims).enumerate() {
        if s.axes == t.axes {
            continue;
        }
        by_dims.extend(s.axes[t.axes.len()..].iter().cloned());
        let local = dst_layout.dims()[d].local;
        let mut table = Vec::with_capacity(b.devices.len());
        for &dev in &b.devices {
            let (from, to) = match (src_layout.slice(dev), dst_layout.slice(dev)) {
                (Some(f), Some(t)) => (f, t),
                _ => return Err(internal(pos, format!("device {dev} is not in the mesh"))),
            };
            let row = (0..local)
                .map(|k| {
                    let g = to.offset[d] + k;
                    let at = g - from.offset[d];
                    if (0..from.extent[d]).contains(&at) {
                        RemapEntry::Source {
                            source: 0,
                            index: at,
                        }
                    } else {
                        RemapEntry::Fill
                    }
                })
                .collect();
            table.push(row);
        }
        let mut shape = b.local_ty(cur).shape.clone();
        shape[d] = local;
        let name = format!("{}.d{d}", b.names[rg]);
        let out = b.new_value(TensorType::new(shape, elem), name);
        b.zero_padded[out] = zero_padded;
        b.instrs.push(Instr::Remap {
            sources: vec![cur],
            fill: None,
            result: out,
            dim: d,
            table: PerDevice(table),
            step: i,
        });
        cur = out;
    }
    let replicated: Vec<AxisRef> = axes
        .iter()
        .filter(|a| !by_dims.contains(a))
        .cloned()
        .collect();
    if !replicated.is_empty() {
        let groups = device_groups(mesh, &replicated)
            .map_err(|e| internal(pos, format!("{}: {e}", b.prog.steps[i].cause.op)))?;
        let ranks = group_ranks(&groups);
        let shape = b.local_ty(cur).shape.clone();
        // A scalar is masked as one element.
        let scalar = shape.is_empty();
        if scalar {
            let name = format!("{}.one", b.names[rg]);
            cur = reshape_to(b, i, cur, vec![1], name);
        }
        let full = b.local_ty(cur).shape[0];
        let valid = b
            .devices
            .iter()
            .map(|dev| match ranks.get(dev) {
                Some(&(_, 0)) => Ok(full),
                Some(_) => Ok(0),
                None => Err(internal(pos, format!("device {dev} is not in the mesh"))),
            })
            .collect::<Result<Vec<i64>, Diagnostic>>()?;
        let ty = b.local_ty(cur).clone();
        let masked = b.new_value(ty, format!("{}.kept", b.names[rg]));
        b.zero_padded[masked] = zero_padded;
        b.instrs.push(Instr::Mask {
            operand: cur,
            result: masked,
            dim: 0,
            valid: PerDevice(valid),
            fill: identity_of(ReduceKind::Add, elem),
            step: i,
        });
        cur = masked;
        if scalar {
            let name = b.names[rg].clone();
            cur = reshape_to(b, i, cur, Vec::new(), name);
        }
    }
    b.check_type(cur, rg, pos)?;
    b.map[rg] = Some(cur);
    Ok(())
}

/// `v` reshaped to `shape` (a local op of step `i`), its padding as `v`'s.
fn reshape_to(
    b: &mut DeviceBuilder<'_>,
    i: usize,
    v: LocalId,
    shape: Vec<i64>,
    name: String,
) -> LocalId {
    let elem = b.local_ty(v).elem;
    let out = b.new_value(TensorType::new(shape, elem), name);
    b.zero_padded[out] = b.zero_padded[v];
    b.instrs.push(Instr::Op {
        kind: OpKind::Reshape(crate::ir::ops::reshape::Reshape),
        operands: vec![v],
        results: vec![out],
        step: i,
    });
    out
}
