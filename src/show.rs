//! The text `meshrun show` prints: every argument and result of every
//! function (and with `all`, every op result) with its sharding drawn as
//! the blocks each device holds.

use std::fmt::Write;

use meshrun_compiler::ir::{Function, Module, TensorType};
use meshrun_compiler::sharding::TensorSharding;

use crate::render::describe_sharding;

/// The text `show` prints for every function of the module.
pub fn show_module(module: &Module, all: bool) -> String {
    let mut out = String::new();
    for f in &module.funcs {
        let _ = writeln!(out, "func @{}", f.name);
        for (i, &arg) in f.args.iter().enumerate() {
            let sharding = f.arg_attrs[i].sharding.as_ref();
            value(&mut out, module, &format!("%arg{i}"), f.ty(arg), sharding);
        }
        if all {
            op_results(&mut out, module, f);
        }
        for (i, ty) in f.result_types.iter().enumerate() {
            let sharding = f.result_attrs[i].sharding.as_ref();
            value(&mut out, module, &format!("result {i}"), ty, sharding);
        }
    }
    out
}

fn op_results(out: &mut String, module: &Module, f: &Function) {
    for (id, op) in f.ops_in_order() {
        for (k, &v) in op.results.iter().enumerate() {
            let label = format!("{} result {k} (op #{})", op.kind.name(), id.0);
            value(out, module, &label, f.ty(v), f.sharding_of(v));
        }
    }
}

fn value(
    out: &mut String,
    module: &Module,
    label: &str,
    ty: &TensorType,
    sharding: Option<&TensorSharding>,
) {
    let Some(s) = sharding else {
        let _ = writeln!(
            out,
            "{label}: {ty}  (no sharding: replicated, open to propagation)\n"
        );
        return;
    };
    let _ = writeln!(out, "{label}: {ty}  {s}");
    let mesh_name = s.mesh_name().unwrap_or("<inline>");
    match module.resolve_mesh(&s.mesh) {
        Some(mesh) => out.push_str(&describe_sharding(ty, s, mesh_name, mesh)),
        None => {
            let _ = writeln!(out, "  unknown mesh @{mesh_name}");
        }
    }
    out.push('\n');
}
