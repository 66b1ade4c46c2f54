//! Small helpers on the IR that the import and export passes share: the
//! sharding annotated on a value, setting it, users of values, and how to
//! name a value in a diagnostic.

use crate::ir::ops::reshard::Reshard;
use crate::ir::ops::sharding_constraint::ShardingConstraint;
use crate::ir::{Function, OpId, OpKind, Value, ValueDef};
use crate::sharding::{DimSharding, TensorSharding};

/// The sharding `v` is annotated with: the argument's, the defining op's
/// per-result sharding, or a constraint's / reshard's own.
pub fn sharding_of(f: &Function, v: Value) -> Option<&TensorSharding> {
    match f.values.get(v.index())?.def {
        ValueDef::Arg(i) => f.arg_attrs.get(i as usize)?.sharding.as_ref(),
        ValueDef::Result { op, index } => {
            let data = f.ops.get(op.index())?;
            match &data.kind {
                OpKind::ShardingConstraint(ShardingConstraint { sharding })
                | OpKind::Reshard(Reshard { sharding }) => Some(sharding),
                // After propagation a manual computation's results keep
                // their shardings only in `out_shardings`, as in Shardy.
                OpKind::ManualComputation(mc) if data.shardings.is_none() => {
                    mc.out_shardings.get(index as usize)
                }
                // So do Shardy's collectives: `out_sharding`.
                OpKind::SdyAllReduce(ar) if data.shardings.is_none() => Some(&ar.out_sharding),
                _ => data.shardings.as_ref()?.get(index as usize),
            }
        }
        ValueDef::RegionArg { op, region, index } => {
            let data = f.ops.get(op.index())?;
            match &data.kind {
                // A loop's block arguments are its results (one data-flow
                // edge): they read the op's per-result sharding.
                OpKind::While(_) => data.shardings.as_ref()?.get(index as usize),
                OpKind::NamedComputation(nc) if region == 0 => {
                    nc.in_shardings.as_ref()?.get(index as usize)?.as_ref()
                }
                // The edge from an operand to the body (see `data_flow`).
                OpKind::ManualComputation(mc) if region == 0 => mc.in_shardings.get(index as usize),
                _ => None,
            }
        }
    }
}

/// Annotate `v` with `sharding`. The other results of a multi-result op
/// without shardings become fully open, as in Shardy.
pub fn set_sharding_of(f: &mut Function, v: Value, sharding: TensorSharding) {
    let Some(def) = f.values.get(v.index()).map(|d| d.def) else {
        return;
    };
    match def {
        ValueDef::Arg(i) => {
            if let Some(attrs) = f.arg_attrs.get_mut(i as usize) {
                attrs.sharding = Some(sharding);
            }
        }
        ValueDef::RegionArg { op, region, index } => {
            let loop_result = f
                .ops
                .get(op.index())
                .filter(|d| matches!(d.kind, OpKind::While(_)))
                .and_then(|d| d.results.get(index as usize).copied());
            if let Some(r) = loop_result {
                set_sharding_of(f, r, sharding);
                return;
            }
            let Some(data) = f.ops.get_mut(op.index()) else {
                return;
            };
            let n = data.operands.len();
            match (&mut data.kind, region) {
                (OpKind::NamedComputation(nc), 0) => {
                    let list = nc.in_shardings.get_or_insert_with(|| vec![None; n]);
                    if let Some(slot) = list.get_mut(index as usize) {
                        *slot = Some(sharding);
                    }
                }
                (OpKind::ManualComputation(mc), 0) => {
                    if let Some(old) = mc.in_shardings.get(index as usize) {
                        let new = mc.with_free_axes(old, &sharding);
                        mc.in_shardings[index as usize] = new;
                    }
                }
                _ => {}
            }
        }
        ValueDef::Result { op, index } => {
            let ranks: Vec<usize> = f
                .ops
                .get(op.index())
                .map(|d| d.results.iter().map(|r| f.ty(*r).rank()).collect())
                .unwrap_or_default();
            let Some(data) = f.ops.get_mut(op.index()) else {
                return;
            };
            match &mut data.kind {
                OpKind::ShardingConstraint(ShardingConstraint { sharding: s })
                | OpKind::Reshard(Reshard { sharding: s }) => {
                    *s = sharding;
                }
                _ => {
                    let list = data.shardings.get_or_insert_with(|| {
                        ranks
                            .iter()
                            .map(|&r| TensorSharding {
                                mesh: sharding.mesh.clone(),
                                dims: vec![DimSharding::open(vec![]); r],
                                replicated: vec![],
                                unreduced: vec![],
                                unreduced_op: Default::default(),
                            })
                            .collect()
                    });
                    if let Some(slot) = list.get_mut(index as usize) {
                        *slot = sharding;
                    }
                }
            }
        }
    }
}

/// The ops of the body that use `v` (each once, program order), and
/// whether the function returns it.
pub fn users_of(f: &Function, v: Value) -> (Vec<OpId>, bool) {
    let mut users = Vec::new();
    for id in f.all_ops() {
        if f.op(id).operands.contains(&v) {
            users.push(id);
        }
    }
    (users, f.returns.contains(&v))
}

/// How many operands of ops (in regions too), of region terminators and
/// of the return refer to each value.
pub fn use_counts(f: &Function) -> Vec<usize> {
    let mut counts = vec![0; f.values.len()];
    for id in f.all_ops() {
        let op = f.op(id);
        let region_returns = op.regions.iter().flat_map(|r| &r.returns);
        for v in op.operands.iter().chain(region_returns) {
            if let Some(c) = counts.get_mut(v.index()) {
                *c += 1;
            }
        }
    }
    for v in &f.returns {
        if let Some(c) = counts.get_mut(v.index()) {
            *c += 1;
        }
    }
    counts
}

/// A value as a diagnostic names it: `%argN`, or the result of an op
/// with the op's name.
pub fn describe_value(f: &Function, v: Value) -> String {
    match f.values.get(v.index()).map(|d| d.def) {
        Some(ValueDef::Arg(i)) => format!("%arg{i}"),
        Some(ValueDef::Result { op, index }) => match f.ops.get(op.index()) {
            Some(data) if data.results.len() > 1 => {
                format!("result {index} of {} at {}", data.kind.name(), data.pos)
            }
            Some(data) => format!("the result of {} at {}", data.kind.name(), data.pos),
            None => format!("value #{}", v.0),
        },
        Some(ValueDef::RegionArg { op, region, index }) => match f.ops.get(op.index()) {
            Some(data) => format!(
                "argument {index} of region {region} of {} at {}",
                data.kind.name(),
                data.pos
            ),
            None => format!("value #{}", v.0),
        },
        None => format!("value #{}", v.0),
    }
}
