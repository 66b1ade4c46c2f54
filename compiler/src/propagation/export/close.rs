//! The last export step: every sharding is closed (open dimensions become
//! final, explicitly replicated axes are dropped; Shardy's
//! `CloseShardingsPass`). A value left without a sharding is replicated,
//! as in Shardy, and printed without one; `make_module_explicit` writes
//! those replicated shardings out for the partitioner.

use crate::ir::{Function, Module, OpKind};
use crate::sharding::{MeshRef, TensorSharding};

use super::io_shardings::closed;
use crate::ir::ops::reshard::Reshard;
use crate::ir::ops::sharding_constraint::ShardingConstraint;

/// Close every sharding of `f`.
pub fn close_shardings(f: &mut Function) {
    for attrs in f.arg_attrs.iter_mut().chain(f.result_attrs.iter_mut()) {
        if let Some(s) = &attrs.sharding {
            attrs.sharding = Some(closed(s));
        }
    }
    for id in f.all_ops() {
        let op = &mut f.ops[id.index()];
        if let Some(list) = &mut op.shardings {
            for s in list.iter_mut() {
                *s = closed(s);
            }
        }
        if let OpKind::ShardingConstraint(ShardingConstraint { sharding })
        | OpKind::Reshard(Reshard { sharding }) = &mut op.kind
        {
            *sharding = closed(sharding);
        }
    }
}

/// Give every value of `module` without a sharding an explicit,
/// closed, fully replicated one: on the mesh its function already uses,
/// or the module's first mesh if it uses none.
pub fn make_module_explicit(module: &mut Module) {
    let first_mesh = module
        .meshes
        .first()
        .map(|m| MeshRef::Symbol(m.name.clone()));
    for f in &mut module.funcs {
        let used = f
            .arg_attrs
            .iter()
            .filter_map(|a| a.sharding.as_ref())
            .chain(
                f.all_ops()
                    .into_iter()
                    .filter_map(|id| f.op(id).shardings.as_ref()?.first()),
            )
            .map(|s| s.mesh.clone())
            .next();
        if let Some(mesh) = used.or_else(|| first_mesh.clone()) {
            make_explicit(f, &mesh);
        }
    }
}

/// Give every argument, result and op result of `f` without a sharding a
/// closed, fully replicated one on `mesh`. Ops without results (sharding
/// groups) are left alone.
pub fn make_explicit(f: &mut Function, mesh: &MeshRef) {
    let replicated = |rank: usize| TensorSharding {
        mesh: mesh.clone(),
        dims: vec![crate::sharding::DimSharding::replicated(); rank],
        replicated: Vec::new(),
        unreduced: Vec::new(),
        unreduced_op: Default::default(),
    };
    for (i, &v) in f.args.iter().enumerate() {
        let rank = f.values[v.index()].ty.rank();
        if let Some(attrs) = f.arg_attrs.get_mut(i) {
            attrs.sharding.get_or_insert_with(|| replicated(rank));
        }
    }
    for (i, ty) in f.result_types.iter().enumerate() {
        if let Some(attrs) = f.result_attrs.get_mut(i) {
            attrs.sharding.get_or_insert_with(|| replicated(ty.rank()));
        }
    }
    let ranks: Vec<usize> = f.values.iter().map(|d| d.ty.rank()).collect();
    for id in f.all_ops() {
        let op = &mut f.ops[id.index()];
        if op.results.is_empty()
            || matches!(
                op.kind,
                OpKind::ShardingConstraint(_) | OpKind::Reshard(_) | OpKind::SdyAllReduce(_)
            )
        {
            continue;
        }
        let results = op.results.clone();
        op.shardings.get_or_insert_with(|| {
            results
                .iter()
                .map(|v| replicated(ranks.get(v.index()).copied().unwrap_or(0)))
                .collect()
        });
    }
}
