//! Export passes that rewrite ops: sharding groups are dropped (their job
//! is done), and sharding constraints become `sdy.reshard`s, which the
//! partitioner lowers to collectives.

use crate::ir::{Function, OpKind};
use crate::propagation::blocks;

/// Drop every `sdy.sharding_group` op (Shardy's `RemoveShardingGroupsPass`).
pub fn remove_sharding_groups(f: &mut Function) {
    blocks::retain_ops(f, |f, id| {
        !matches!(f.op(id).kind, OpKind::ShardingGroup { .. })
    });
}

/// Turn every `sdy.sharding_constraint` into an `sdy.reshard` to the same
/// sharding (Shardy's `ShardingConstraintToReshardPass`).
pub fn constraints_to_reshards(f: &mut Function) {
    for id in f.all_ops() {
        let op = &mut f.ops[id.index()];
        if let OpKind::ShardingConstraint { sharding } = &op.kind {
            op.kind = OpKind::Reshard {
                sharding: sharding.clone(),
            };
        }
    }
}
