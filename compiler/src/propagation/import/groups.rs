//! Sharding groups before propagation. Groups that share a value are one
//! group and all members must have the same shape (Shardy's
//! `ShardingGroupImportPass`); then the members' shardings are made one
//! (Shardy's `ShardingGroupMap::syncGroupMemberShardings`, which every
//! propagation strategy runs first):
//! - members without a sharding, or with a fully open replicated one, take
//!   the sharding the others agree on;
//! - when two members already have different shardings (for instance two
//!   constraints the user put on values that `jax.shard_alike` ties), no
//!   member can take the other's: each member gets an open
//!   `sdy.sharding_constraint` right after it, that constraint replaces the
//!   member in the group and in every use, and propagation fills the group
//!   from there. The members keep their own shardings, so the partitioner
//!   reshards between each member and the group's.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, OpKind, Value, ValueDef};
use crate::sharding::{DimSharding, TensorSharding};

use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::propagation::graph::Groups;
use crate::propagation::values::{describe_value, set_sharding_of, sharding_of};

/// What [`sync_groups`] did to one function.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupSync {
    /// Members that took their sharding from another member, with it.
    pub seeded: Vec<(Value, Value)>,
    /// The constraints put after members of groups whose shardings
    /// conflicted: (member, constraint result).
    pub constrained: Vec<(Value, Value)>,
}

/// Check the sharding groups of `f` and make every group's shardings one.
pub fn sync_groups(f: &mut Function) -> Result<GroupSync, Diagnostic> {
    let groups = Groups::build(f);
    check_shapes(f, &groups)?;
    let mut sync = GroupSync::default();
    for members in &groups.members {
        match common_sharding(f, members) {
            Common::None => {}
            Common::Agreed { source, sharding } => {
                for &m in members {
                    if sharding_of(f, m) != Some(&sharding) {
                        set_sharding_of(f, m, sharding.clone());
                        sync.seeded.push((m, source));
                    }
                }
            }
            Common::Conflict { first } => {
                let open = fully_open_like(&first);
                for &m in members {
                    let c = constrain_after(f, m, open.clone())?;
                    sync.constrained.push((m, c));
                }
            }
        }
    }
    Ok(sync)
}

/// All members of a group must have one shape.
fn check_shapes(f: &Function, groups: &Groups) -> Result<(), Diagnostic> {
    for (g, members) in groups.members.iter().enumerate() {
        let Some(&first) = members.first() else {
            continue;
        };
        let shape = &f.ty(first).shape;
        if let Some(&other) = members.iter().find(|&&m| &f.ty(m).shape != shape) {
            let pos = f.op(groups.first_op[g]).pos;
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
    }
    Ok(())
}

enum Common {
    /// No member has a sharding that says anything.
    None,
    /// Every member that says something says `sharding` (first said by
    /// `source`).
    Agreed {
        source: Value,
        sharding: TensorSharding,
    },
    /// Two members disagree; `first` is the first member's sharding.
    Conflict { first: TensorSharding },
}

/// Shardy's `findCommonSharding`: members without a sharding or with a
/// fully open replicated one say nothing; the others must be equal.
fn common_sharding(f: &Function, members: &[Value]) -> Common {
    let mut found: Option<(Value, &TensorSharding)> = None;
    for &m in members {
        let Some(s) = sharding_of(f, m) else {
            continue;
        };
        if is_fully_open_replicated(s) {
            continue;
        }
        match found {
            None => found = Some((m, s)),
            Some((_, first)) if first != s => {
                return Common::Conflict {
                    first: first.clone(),
                }
            }
            Some(_) => {}
        }
    }
    match found {
        None => Common::None,
        Some((source, sharding)) => Common::Agreed {
            source,
            sharding: sharding.clone(),
        },
    }
}

fn is_fully_open_replicated(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty() && !d.is_closed)
}

/// `[{?}, {?}, ...]` on the mesh and rank of `s`.
fn fully_open_like(s: &TensorSharding) -> TensorSharding {
    TensorSharding {
        mesh: s.mesh.clone(),
        dims: vec![DimSharding::open(Vec::new()); s.dims.len()],
        replicated: Vec::new(),
        unreduced: Vec::new(),
        unreduced_op: Default::default(),
    }
}

/// Put `%c = sdy.sharding_constraint %v <sharding>` right after `v`'s
/// definition (at the start of the body for an argument, so constraints
/// put on several arguments end up in reverse order, as MLIR's insertion
/// point does) and make every other use of `v` use `%c`. Returns `%c`.
/// A member defined inside a region (a while or case body) is an error:
/// the constraint would have to go into that region, which propagation
/// through regions does not handle yet.
fn constrain_after(
    f: &mut Function,
    v: Value,
    sharding: TensorSharding,
) -> Result<Value, Diagnostic> {
    let ty = f.ty(v).clone();
    let top_level = |op| f.body.iter().position(|&id| id == op);
    let (at, pos) = match f.value(v).def {
        ValueDef::Arg(_) => (Some(0), f.pos),
        ValueDef::Result { op, .. } => (top_level(op).map(|i| i + 1), f.op(op).pos),
        ValueDef::RegionArg { op, .. } => (None, f.op(op).pos),
    };
    let Some(at) = at else {
        return Err(Diagnostic::new(
            DiagKind::Unsupported,
            group_op_pos(f, v).unwrap_or(pos),
            format!(
                "sdy.sharding_group: the members' shardings disagree and {} is defined inside a \
                 region; a sharding constraint cannot be put there yet",
                describe_value(f, v)
            ),
        ));
    };
    let id = f.create_op(
        OpKind::ShardingConstraint(ShardingConstraint { sharding }),
        vec![v],
        vec![ty],
    );
    f.op_mut(id).pos = pos;
    f.body.insert(at, id);
    let c = f.result(id);
    let mut map = vec![None; f.values.len()];
    map[v.index()] = Some(c);
    f.replace_uses(&map);
    f.op_mut(id).operands = vec![v];
    Ok(c)
}

/// Where the `sdy.sharding_group` of value `v` is written.
fn group_op_pos(f: &Function, v: Value) -> Option<crate::diag::SrcPos> {
    f.all_ops()
        .into_iter()
        .map(|id| f.op(id))
        .find(|op| matches!(op.kind, OpKind::ShardingGroup(_)) && op.operands.first() == Some(&v))
        .map(|op| op.pos)
}
