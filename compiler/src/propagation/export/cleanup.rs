//! Export passes that rewrite ops: sharding groups are dropped (their job
//! is done), sharding constraints become `sdy.reshard`s, which the
//! partitioner lowers to collectives, and reshards nothing reads are
//! dropped (they would only move bytes nobody uses).

use crate::ir::ops::reshard::Reshard;
use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::ir::{Function, OpKind};
use crate::propagation::{blocks, values};

/// Drop every `sdy.sharding_group` op (Shardy's `RemoveShardingGroupsPass`).
pub fn remove_sharding_groups(f: &mut Function) {
    blocks::retain_ops(f, |f, id| {
        !matches!(f.op(id).kind, OpKind::ShardingGroup(_))
    });
}

/// Turn every `sdy.sharding_constraint` into an `sdy.reshard` to the same
/// sharding (Shardy's `ShardingConstraintToReshardPass`).
pub fn constraints_to_reshards(f: &mut Function) {
    for id in f.all_ops() {
        let op = &mut f.ops[id.index()];
        if let OpKind::ShardingConstraint(ShardingConstraint { sharding }) = &op.kind {
            op.kind = OpKind::Reshard(Reshard {
                sharding: sharding.clone(),
            });
        }
    }
}

/// Drop every `sdy.reshard` whose result nothing uses, until none is left
/// (a reshard feeding only a dropped one goes too). A sharding constraint
/// on a value that is otherwise unused has done its job in propagation;
/// Shardy's pipeline drops these reshards the same way (MLIR's
/// canonicalizer erases side-effect-free ops without uses).
pub fn remove_unused_reshards(f: &mut Function) {
    loop {
        let counts = values::use_counts(f);
        let unused = |f: &Function, id: crate::ir::OpId| {
            let op = f.op(id);
            matches!(op.kind, OpKind::Reshard(_))
                && op.results.iter().all(|v| counts.get(v.index()) == Some(&0))
        };
        if !f.all_ops().into_iter().any(|id| unused(f, id)) {
            return;
        }
        blocks::retain_ops(f, |f, id| !unused(f, id));
    }
}
