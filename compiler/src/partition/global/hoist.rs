//! Moving a reshard before the op that produced its operand when that
//! moves fewer bytes.
//!
//! `pad` grows a tensor: padding an 8x16 block to 11x31 and then gathering
//! the result moves far more than gathering the 8x16 operand and padding
//! on every device. So when a value's only use is a reshard, and the value
//! comes from an op that maps its one tensor operand's dimensions straight
//! to its result's (element-wise unary ops, `convert`, `pad`, `slice`), the
//! reshard is tried on the operand instead, and kept there if its
//! collectives move fewer bytes. Hoisted reshards are tried again, so a
//! chain of such ops is climbed as far as it pays.

use std::collections::HashMap;

use crate::ir::OpKind;
use crate::partition::global::{Cause, GStep, GStepKind, GValue, GValueId, GlobalProgram};
use crate::partition::reshard::collective::collective_bytes;
use crate::partition::reshard::lower_reshard;
use crate::sharding::layout::TensorLayout;
use crate::sharding::TensorSharding;

/// Hoist every reshard of `prog` that pays (see the module doc).
pub fn hoist_reshards(prog: &mut GlobalProgram) {
    let n = prog.devices().len();
    let mut changed = true;
    // Each hoist removes a reshard below an op and adds one above it, so
    // this ends; the bound is a safety net.
    let mut budget = prog.steps.len() * 4 + 16;
    while changed && budget > 0 {
        changed = false;
        let uses = prog.uses();
        let mut def: HashMap<GValueId, usize> = HashMap::new();
        for (i, s) in prog.steps.iter().enumerate() {
            for &r in &s.results {
                def.insert(r, i);
            }
        }
        for j in (0..prog.steps.len()).rev() {
            if let Some(plan) = candidate(prog, j, &uses, &def, n) {
                apply(prog, plan);
                changed = true;
                budget -= 1;
                break;
            }
        }
    }
}

struct Hoist {
    /// The reshard below the op, and the op.
    reshard: usize,
    op: usize,
    /// The op's tensor operand and the sharding it gets.
    operand: GValueId,
    target: TensorSharding,
}

fn bytes(prog: &GlobalProgram, v: &GValue, to: &TensorSharding, n: usize) -> Option<f64> {
    let mesh = prog.mesh_of(&v.sharding)?;
    if prog.mesh_of(to)? != mesh {
        return None;
    }
    TensorLayout::new(mesh, to, &v.ty.shape).ok()?;
    let cs = lower_reshard(mesh, &v.ty.shape, v.ty.elem, &v.sharding, to).ok()?;
    Some(cs.iter().map(|c| collective_bytes(c, n)).sum())
}

fn candidate(
    prog: &GlobalProgram,
    j: usize,
    uses: &[Vec<usize>],
    def: &HashMap<GValueId, usize>,
    n: usize,
) -> Option<Hoist> {
    let r = &prog.steps[j];
    if !matches!(r.kind, GStepKind::Reshard) {
        return None;
    }
    let (v, out) = (r.operands[0], r.results[0]);
    if uses[v].len() != 1 || prog.results.contains(&v) {
        return None;
    }
    let i = *def.get(&v)?;
    let p = &prog.steps[i];
    let GStepKind::Compute(kind) = &p.kind else {
        return None;
    };
    if p.results.len() != 1 {
        return None;
    }
    let target = &prog.value(out).sharding;
    let (src, dst) = (prog.value(v), prog.value(out));
    if !src.sharding.unreduced.is_empty() || !target.unreduced.is_empty() {
        return None;
    }
    // The one operand with the result's rank; the others are scalars.
    let tensor_operands: Vec<GValueId> = p
        .operands
        .iter()
        .copied()
        .filter(|&o| prog.value(o).ty.rank() > 0)
        .collect();
    let [operand] = tensor_operands[..] else {
        return None;
    };
    let u = prog.value(operand);
    if u.ty.rank() != dst.ty.rank() {
        return None;
    }
    let maps_dims_straight = match kind {
        OpKind::Unary(_) | OpKind::Convert(_) => true,
        OpKind::Pad(_) | OpKind::Slice(_) => {
            // Dimensions the op changes must stay unsharded.
            (0..dst.ty.rank())
                .all(|d| u.ty.shape[d] == dst.ty.shape[d] || target.dims[d].axes.is_empty())
        }
        _ => false,
    };
    if !maps_dims_straight || u.sharding.mesh != target.mesh {
        return None;
    }
    let mut new_target = target.clone();
    new_target.unreduced = u.sharding.unreduced.clone();
    if !new_target.unreduced.is_empty() {
        return None;
    }
    let now = bytes(prog, src, target, n)?;
    let hoisted = bytes(prog, u, &new_target, n)?;
    (hoisted < now).then_some(Hoist {
        reshard: j,
        op: i,
        operand,
        target: new_target,
    })
}

fn apply(prog: &mut GlobalProgram, h: Hoist) {
    let r = prog.steps[h.reshard].clone();
    let out = r.results[0];
    let op_name = prog.steps[h.op].cause.op.clone();
    // The reshard goes right after the operand is defined, so that all
    // hoisted reshards of one value to one sharding meet and are shared.
    let at = prog
        .steps
        .iter()
        .position(|s| s.results.contains(&h.operand))
        .map_or(0, |i| i + 1);
    let existing = prog.steps[..h.op].iter().position(|s| {
        matches!(s.kind, GStepKind::Reshard)
            && s.operands[0] == h.operand
            && prog.values[s.results[0]].sharding == h.target
    });
    let moved = match existing {
        Some(e) => prog.steps[e].results[0],
        None => {
            prog.values.push(GValue {
                ty: prog.values[h.operand].ty.clone(),
                sharding: h.target.clone(),
            });
            prog.values.len() - 1
        }
    };
    let mut steps = Vec::with_capacity(prog.steps.len() + 1);
    for (k, s) in prog.steps.iter().enumerate() {
        if k == at && existing.is_none() {
            steps.push(GStep {
                kind: GStepKind::Reshard,
                operands: vec![h.operand],
                results: vec![moved],
                cause: Cause {
                    reason: format!(
                        "{} (moved before {op_name}, where it moves fewer bytes)",
                        r.cause.reason
                    ),
                    ..r.cause.clone()
                },
            });
        }
        if k == h.reshard {
            continue;
        }
        let mut s = s.clone();
        if k == h.op {
            for o in s.operands.iter_mut() {
                if *o == h.operand {
                    *o = moved;
                }
            }
            s.results = vec![out];
        }
        steps.push(s);
    }
    prog.steps = steps;
}
