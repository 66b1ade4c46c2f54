//! Applying sharding constraints (Shardy's `ApplyShardingConstraintsPass`):
//! a fully closed `sdy.sharding_constraint` also shards its input, when
//! the input has no sharding yet and no other constraint on it disagrees.
//! A chain of constraints (each the only user of the one before) also
//! takes over the later uses of the chain's input, so that those see the
//! last constraint rather than the unconstrained value.
//!
//! A constrained value that a data-flow edge decides (a loop's or a named
//! computation's result or block argument, see `propagation::data_flow`)
//! keeps no sharding of its own: the constraint moves right after it and
//! every other use reads the constraint instead, so the edge's sharding is
//! still found by propagation (Shardy does this to match GSPMD).

use std::collections::HashSet;

use crate::ir::{Function, OpId, OpKind, Value, ValueDef};
use crate::propagation::data_flow;
use crate::sharding::{DimSharding, TensorSharding};

use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::propagation::blocks::{self, Block};
use crate::propagation::values::{set_sharding_of, sharding_of, use_counts};

fn constraint_of(f: &Function, id: OpId) -> Option<&TensorSharding> {
    match &f.op(id).kind {
        OpKind::ShardingConstraint(ShardingConstraint { sharding }) => Some(sharding),
        _ => None,
    }
}

fn defining_constraint(f: &Function, v: Value) -> Option<OpId> {
    match f.values.get(v.index())?.def {
        ValueDef::Result { op, .. } if constraint_of(f, op).is_some() => Some(op),
        _ => None,
    }
}

/// The constraint ops (in any block) that use `v`, except `excluded`.
fn constraint_users(f: &Function, v: Value, excluded: Option<OpId>) -> Vec<OpId> {
    f.all_ops()
        .into_iter()
        .filter(|&u| Some(u) != excluded)
        .filter(|&u| constraint_of(f, u).is_some() && f.op(u).operands.contains(&v))
        .collect()
}

/// The last constraint of the chain that starts at `head`, if the chain
/// has at least two constraints and may take over its input's later uses.
fn chain_tail(f: &Function, head: OpId, counts: &[usize]) -> Option<OpId> {
    let input = *f.op(head).operands.first()?;
    if defining_constraint(f, input).is_some()
        || sharding_of(f, input).is_some()
        || !constraint_users(f, input, Some(head)).is_empty()
    {
        return None;
    }
    let mut tail = head;
    loop {
        let result = *f.op(tail).results.first()?;
        if counts.get(result.index()).copied().unwrap_or(0) != 1 {
            break;
        }
        let users = constraint_users(f, result, None);
        match users.as_slice() {
            [next] => tail = *next,
            _ => break,
        }
    }
    if tail == head {
        return None;
    }
    let tail_result = *f.op(tail).results.first()?;
    if !constraint_users(f, tail_result, None).is_empty() {
        return None;
    }
    Some(tail)
}

/// Apply the sharding constraints of `f`. Returns every value that took a
/// constraint's sharding, with the constraint's result.
pub fn apply_constraints(f: &mut Function) -> Vec<(Value, Value)> {
    let mut applied = Vec::new();
    for b in blocks::blocks(f) {
        apply_in_block(f, b, &mut applied);
    }
    applied
}

/// [`apply_constraints`] for the constraints of one block; a chain takes
/// over the later uses of its input in that block.
fn apply_in_block(f: &mut Function, b: Block, applied: &mut Vec<(Value, Value)>) {
    let body = blocks::ops(f, b).to_vec();
    let edge_values: HashSet<Value> = data_flow::edges(f)
        .into_iter()
        .flat_map(|e| std::iter::once(e.owner).chain(e.targets))
        .collect();
    for &id in &body {
        let Some(sharding) = constraint_of(f, id).cloned() else {
            continue;
        };
        let Some(&input) = f.op(id).operands.first() else {
            continue;
        };
        let counts = use_counts(f);
        if let Some(tail) = chain_tail(f, id, &counts) {
            take_over_later_uses(f, id, tail, input);
        }
        let applies = sharding_of(f, input).is_none()
            && sharding.dims.iter().all(|d| d.is_closed)
            && constraint_users(f, input, None)
                .iter()
                .all(|&u| constraint_of(f, u) == Some(&sharding));
        if applies && edge_values.contains(&input) {
            constrain_edge_value(f, b, id, input, &sharding);
        } else if applies {
            set_sharding_of(f, input, sharding);
            if let Some(&result) = f.op(id).results.first() {
                applied.push((input, result));
            }
        }
    }
}

/// The chain from `head` to `tail` takes over the later uses of its
/// `input`: those in the tail's block after the tail (as Shardy: only
/// there does the tail's result dominate them), a region's terminator
/// included but not the function's return. The tail may sit in a region
/// nested in the head's block (a constraint in a loop body on one from
/// around it); uses in the head's block, or in other regions, keep
/// reading `input`.
fn take_over_later_uses(f: &mut Function, head: OpId, tail: OpId, input: Value) {
    let Some(&tail_result) = f.op(tail).results.first() else {
        return;
    };
    let Some((b, tail_pos)) = blocks::blocks(f)
        .into_iter()
        .find_map(|b| Some((b, blocks::ops(f, b).iter().position(|&o| o == tail)?)))
    else {
        return;
    };
    let later = blocks::ops(f, b)[tail_pos + 1..].to_vec();
    for op in later.into_iter().filter(|&o| o != head) {
        for o in &mut f.op_mut(op).operands {
            if *o == input {
                *o = tail_result;
            }
        }
    }
    if matches!(b, Block::Region(..)) {
        let returns = blocks::returns(f, b)
            .iter()
            .map(|&v| if v == input { tail_result } else { v })
            .collect();
        blocks::set_returns(f, b, returns);
    }
}

/// Constraint `id` (in block `b`) on `input`, a value a data-flow edge
/// decides: the constraint moves right after `input` and its result takes
/// over every other use of `input`. Unreduced axes do not propagate, so
/// `input` keeps those.
fn constrain_edge_value(
    f: &mut Function,
    b: Block,
    id: OpId,
    input: Value,
    sharding: &TensorSharding,
) {
    let Some(&result) = f.op(id).results.first() else {
        return;
    };
    let mut replace = vec![None; f.values.len()];
    replace[input.index()] = Some(result);
    f.replace_uses(&replace);
    f.op_mut(id).operands[0] = input;
    let mut ops = blocks::ops(f, b).to_vec();
    let Some(old) = ops.iter().position(|&o| o == id) else {
        return;
    };
    ops.remove(old);
    // Every use of `input` now reads the constraint, in whichever block it
    // is: the constraint goes where `input` is defined (a constraint in a
    // nested loop's body on the enclosing body's argument moves up there).
    let home = match f.value(input).def {
        ValueDef::Result { op, .. } => blocks::blocks(f)
            .into_iter()
            .find(|&h| blocks::ops(f, h).contains(&op))
            .map(|h| (h, Some(op))),
        ValueDef::RegionArg { op, region, .. } => Some((Block::Region(op, region as usize), None)),
        ValueDef::Arg(_) => Some((Block::Body, None)),
    };
    let Some((home, after)) = home else {
        ops.insert(old, id);
        blocks::set_ops(f, b, ops);
        return;
    };
    blocks::set_ops(f, b, ops);
    let mut home_ops = blocks::ops(f, home).to_vec();
    let at = after
        .and_then(|op| home_ops.iter().position(|&o| o == op))
        .map_or(0, |p| p + 1);
    home_ops.insert(at, id);
    blocks::set_ops(f, home, home_ops);
    if !sharding.unreduced.is_empty() {
        let rank = f.ty(input).rank();
        set_sharding_of(
            f,
            input,
            TensorSharding {
                mesh: sharding.mesh.clone(),
                dims: vec![DimSharding::open(vec![]); rank],
                replicated: Vec::new(),
                unreduced: sharding.unreduced.clone(),
                unreduced_op: sharding.unreduced_op,
            },
        );
    }
}
