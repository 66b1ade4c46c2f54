//! The module's shardings checked against its meshes (SPEC §2): every
//! mesh once, function arguments and results, each op's per-result
//! shardings (one per result), and the sharding of
//! `sdy.sharding_constraint` / `sdy.reshard`. One sharding on its own is
//! `sharding::validate`'s business; this walks the module to find them.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::{Function, Module, OpData, TensorType, Value};
use crate::sharding::validate::{join, mesh_label, validate_mesh, ShardingError};
use crate::sharding::{MeshRef, TensorSharding, ValidSharding};

/// Checks every mesh and every sharding of `module`: function arguments and
/// results, each op's per-result shardings (one per result), and the
/// sharding of `sdy.sharding_constraint` / `sdy.reshard`.
pub fn validate_module_shardings(module: &Module) -> Result<(), Diagnostic> {
    let mut names = std::collections::HashSet::new();
    for def in &module.meshes {
        if !names.insert(def.name.as_str()) {
            return Err(Diagnostic::new(
                DiagKind::Sharding,
                def.pos,
                format!("mesh @{} is defined twice", def.name),
            ));
        }
        validate_mesh(&def.mesh).map_err(|e| {
            Diagnostic::new(
                DiagKind::Sharding,
                def.pos,
                format!("invalid mesh @{}: {e}", def.name),
            )
        })?;
    }
    for func in &module.funcs {
        validate_function(module, func)?;
    }
    Ok(())
}

fn validate_function(module: &Module, func: &Function) -> Result<(), Diagnostic> {
    for (i, (&v, attrs)) in func.args.iter().zip(&func.arg_attrs).enumerate() {
        if let (Some(s), Some(ty)) = (&attrs.sharding, value_type(func, v)) {
            check_in_module(module, s, ty).map_err(|e| {
                e.to_diagnostic(
                    func.pos,
                    &format!("argument {i} (%arg{i}) of @{}", func.name),
                )
            })?;
        }
    }
    for (i, (ty, attrs)) in func.result_types.iter().zip(&func.result_attrs).enumerate() {
        if let Some(s) = &attrs.sharding {
            check_in_module(module, s, ty)
                .map_err(|e| e.to_diagnostic(func.pos, &format!("result {i} of @{}", func.name)))?;
        }
    }
    for (_, op) in func.ops_in_order() {
        validate_op(module, func, op)?;
    }
    Ok(())
}

fn validate_op(module: &Module, func: &Function, op: &OpData) -> Result<(), Diagnostic> {
    let name = op.kind.name();
    if let Some(shardings) = &op.shardings {
        if shardings.len() != op.results.len() && !op.is_placement_only() {
            return Err(Diagnostic::new(
                DiagKind::Sharding,
                op.pos,
                format!(
                    "{name} has {} shardings in sdy.sharding but {} result{}",
                    shardings.len(),
                    op.results.len(),
                    if op.results.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        for (i, (s, &v)) in shardings.iter().zip(&op.results).enumerate() {
            let Some(ty) = value_type(func, v) else {
                continue;
            };
            check_in_module(module, s, ty)
                .map_err(|e| e.to_diagnostic(op.pos, &format!("result {i} of {name}")))?;
        }
    }
    if let Some(sharding) = op.kind.def().and_then(|d| d.value_sharding()) {
        let value = op.results.first().or(op.operands.first());
        if let Some(ty) = value.and_then(|&v| value_type(func, v)) {
            check_in_module(module, sharding, ty).map_err(|e| e.to_diagnostic(op.pos, &name))?;
        }
    }
    Ok(())
}

/// The type of `v`, if `v` belongs to `func` (dangling ids are the IR
/// verifier's business, not a reason to panic here).
fn value_type(func: &Function, v: Value) -> Option<&TensorType> {
    func.values.get(v.index()).map(|d| &d.ty)
}

/// Resolves the sharding's mesh (checking an inline one) and validates the
/// sharding against it and the tensor type: the one check of each sharding
/// on the way into the compiler.
fn check_in_module<'m>(
    module: &'m Module,
    sharding: &'m TensorSharding,
    ty: &TensorType,
) -> Result<ValidSharding<'m>, ShardingError> {
    let mesh = module
        .resolve_mesh(&sharding.mesh)
        .ok_or_else(|| ShardingError::UnknownMesh {
            mesh: mesh_label(&sharding.mesh),
            available: if module.meshes.is_empty() {
                "none".into()
            } else {
                join(module.meshes.iter().map(|m| format!("@{}", m.name)))
            },
        })?;
    if let MeshRef::Inline(m) = &sharding.mesh {
        validate_mesh(m)?;
    }
    ValidSharding::new(sharding, mesh, ty.rank())
}
