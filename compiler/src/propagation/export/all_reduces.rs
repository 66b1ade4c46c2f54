//! Explicit all-reduces (the unreduced step of Shardy's
//! `insert-explicit-reshards`): where an op reads an unreduced value in
//! full, that is along axes its result is not unreduced along, an
//! `sdy.all_reduce` over those axes goes right before it; so does one
//! before the return of a value the function result does not keep
//! unreduced. Printed after propagation, the reductions the partitioner
//! will do are then in the text, as in Shardy's; the partitioner lowers
//! each to the all-reduce it would have written anyway.
//!
//! Ops that tie values by data-flow edges (loops, branches, barriers,
//! named and manual computations) and calls are left alone: the
//! partitioner reduces what their edges need.

use crate::ir::ops::sdy_all_reduce::SdyAllReduce;
use crate::ir::{Function, OpId, OpKind, Value};
use crate::propagation::blocks::{self, Block};
use crate::propagation::values::sharding_of;
use crate::sharding::{AxisRef, TensorSharding};

/// Insert the all-reduces of every block of `f`.
pub fn insert_all_reduces(f: &mut Function) {
    for b in blocks::blocks(f) {
        let mut out = Vec::new();
        for id in blocks::ops(f, b).to_vec() {
            if reads_through_edges(&f.op(id).kind) {
                out.push(id);
                continue;
            }
            let kept = f
                .op(id)
                .results
                .first()
                .and_then(|&r| sharding_of(f, r))
                .map(|s| s.unreduced.clone())
                .unwrap_or_default();
            for k in 0..f.op(id).operands.len() {
                let v = f.op(id).operands[k];
                if let Some(reduce) = all_reduce_of(f, v, &kept) {
                    f.op_mut(id).operands[k] = push_all_reduce(f, v, reduce, &mut out);
                }
            }
            out.push(id);
        }
        blocks::set_ops(f, b, out);
    }
    let mut out = f.body.clone();
    for i in 0..f.returns.len() {
        let v = f.returns[i];
        let kept = f
            .result_attrs
            .get(i)
            .and_then(|a| a.sharding.as_ref())
            .map(|s| s.unreduced.clone())
            .unwrap_or_default();
        if let Some(reduce) = all_reduce_of(f, v, &kept) {
            f.returns[i] = push_all_reduce(f, v, reduce, &mut out);
        }
    }
    blocks::set_ops(f, Block::Body, out);
}

fn reads_through_edges(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::While(_)
            | OpKind::Case(_)
            | OpKind::OptimizationBarrier(_)
            | OpKind::NamedComputation(_)
            | OpKind::ManualComputation(_)
            | OpKind::Call(_)
            | OpKind::SdyAllReduce(_)
            | OpKind::ShardingGroup(_)
    )
}

/// The all-reduce a reader of `v` that keeps only `kept` unreduced needs:
/// the reduction axes (mesh order, as `v` lists them) and the sharding
/// after it.
fn all_reduce_of(
    f: &Function,
    v: Value,
    kept: &[AxisRef],
) -> Option<(Vec<AxisRef>, TensorSharding)> {
    let s = sharding_of(f, v)?;
    let axes: Vec<AxisRef> = s
        .unreduced
        .iter()
        .filter(|a| !kept.contains(a))
        .cloned()
        .collect();
    if axes.is_empty() {
        return None;
    }
    let mut out = s.clone();
    out.unreduced.retain(|a| kept.contains(a));
    if out.unreduced.is_empty() {
        out.unreduced_op = Default::default();
    }
    Some((axes, out))
}

/// Create `sdy.all_reduce` of `v`, append it to `ops`, and return its
/// result.
fn push_all_reduce(
    f: &mut Function,
    v: Value,
    (reduction_axes, out_sharding): (Vec<AxisRef>, TensorSharding),
    ops: &mut Vec<OpId>,
) -> Value {
    let ty = f.ty(v).clone();
    let kind = OpKind::SdyAllReduce(SdyAllReduce {
        reduction_axes,
        out_sharding,
    });
    let id = f.create_op(kind, vec![v], vec![ty]);
    ops.push(id);
    f.result(id)
}
