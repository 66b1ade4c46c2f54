//! `meshrun show FILE [--all] [--propagated]`.

use std::fmt::Write;
use std::path::Path;

use meshrun::compiler::ir::{Function, Module, TensorType};
use meshrun::compiler::sharding::validate::resolve_mesh;
use meshrun::compiler::sharding::TensorSharding;
use meshrun::load::load_file;
use meshrun::render::describe_sharding;

pub fn show(file: &Path, all: bool, propagated: bool) -> anyhow::Result<()> {
    let mut module = load_file(file)?;
    if propagated {
        let opts = meshrun::compiler::propagation::PropagationOptions::default();
        module = super::propagate::propagate_file(file, &module, &opts)?.module;
    }
    print!("{}", show_module(&module, all));
    Ok(())
}

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
    match resolve_mesh(module, &s.mesh) {
        Some(mesh) => out.push_str(&describe_sharding(ty, s, mesh_name, mesh)),
        None => {
            let _ = writeln!(out, "  unknown mesh @{mesh_name}");
        }
    }
    out.push('\n');
}
