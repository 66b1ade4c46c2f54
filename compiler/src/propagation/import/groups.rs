//! Sharding groups at import (Shardy's `ShardingGroupImportPass`): groups
//! that share a value are one group, all members must have the same shape,
//! and members that already have shardings (written, or from applied
//! constraints) must agree; the others start with that sharding.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, OpKind, Value};

use crate::propagation::graph::Groups;
use crate::propagation::values::{describe_value, set_sharding_of, sharding_of};

/// Check and seed the sharding groups of `f`. Returns every value that took
/// its sharding from another member, with that member.
pub fn import_groups(f: &mut Function) -> Result<Vec<(Value, Value)>, Diagnostic> {
    let mut seeded = Vec::new();
    let groups = Groups::build(f);
    for (g, members) in groups.members.iter().enumerate() {
        let Some(&first) = members.first() else {
            continue;
        };
        let pos = f.op(groups.first_op[g]).pos;
        let shape = &f.ty(first).shape;
        if let Some(&other) = members.iter().find(|&&m| &f.ty(m).shape != shape) {
            return Err(Diagnostic::new(
                DiagKind::Sharding,
                group_op_pos(f, other).unwrap_or(pos),
                format!(
                    "sdy.sharding_group: all members of a sharding group must have the same shape, \
                     but {} is {} and {} is {}",
                    describe_value(f, first),
                    f.ty(first),
                    describe_value(f, other),
                    f.ty(other)
                ),
            ));
        }
        let mut seen: Option<(crate::ir::Value, crate::sharding::TensorSharding)> = None;
        for &m in members {
            let Some(s) = sharding_of(f, m) else {
                continue;
            };
            match &seen {
                None => seen = Some((m, s.clone())),
                Some((v, first_sharding)) if first_sharding != s => {
                    return Err(Diagnostic::new(
                        DiagKind::Sharding,
                        group_op_pos(f, m).unwrap_or(pos),
                        format!(
                            "sdy.sharding_group: conflicting shardings in one sharding group: \
                             {} is sharded {} but {} is sharded {}",
                            describe_value(f, *v),
                            first_sharding,
                            describe_value(f, m),
                            s
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some((source, s)) = seen {
            for &m in members {
                if sharding_of(f, m).is_none() {
                    set_sharding_of(f, m, s.clone());
                    seeded.push((m, source));
                }
            }
        }
    }
    Ok(seeded)
}

/// Where the `sdy.sharding_group` of value `v` is written.
fn group_op_pos(f: &Function, v: crate::ir::Value) -> Option<crate::diag::SrcPos> {
    f.all_ops()
        .into_iter()
        .map(|id| f.op(id))
        .find(|op| {
            matches!(op.kind, OpKind::ShardingGroup { .. }) && op.operands.first() == Some(&v)
        })
        .map(|op| op.pos)
}
