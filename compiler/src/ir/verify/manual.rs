//! Where manual-only ops may appear. The user's collectives and
//! `stablehlo.partition_id` speak of devices, so they belong inside
//! `sdy.manual_computation` bodies: a collective inside some manual
//! computation, `partition_id` only where every mesh axis is manual (JAX
//! wraps `lax.axis_index` in a nested manual computation over the other
//! axes for that reason). A nested manual computation may not make an
//! axis manual twice.

use crate::diag::{DiagKind, Diagnostic};
use crate::ir::ops::manual_computation::BODY_MANUAL_AXES_ATTR;
use crate::ir::ops::OpKind;
use crate::ir::{Function, Module, OpId};
use crate::sharding::MeshRef;

/// A diagnostic for every misplaced manual-only op of `f`.
pub(super) fn placement_errors(m: &Module, f: &Function) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    // A manual computation's body propagated as a function of its own.
    let mut manual: Vec<String> = f
        .attrs
        .iter()
        .filter(|a| a.name == BODY_MANUAL_AXES_ATTR)
        .filter_map(|a| a.value.as_deref())
        .flat_map(|v| v.split(',').map(str::to_string))
        .collect();
    walk(m, f, &f.body, &mut manual, &mut errors);
    errors
}

/// The axes of the mesh `manual` computations use (the module's first mesh
/// when none names one).
fn mesh_axes(m: &Module, mesh: Option<&MeshRef>) -> Vec<String> {
    let mesh = match mesh {
        Some(MeshRef::Inline(mesh)) => Some(mesh),
        Some(MeshRef::Symbol(name)) => m.meshes.iter().find(|d| &d.name == name).map(|d| &d.mesh),
        None => m.meshes.first().map(|d| &d.mesh),
    };
    mesh.map_or_else(Vec::new, |mesh| {
        mesh.axes
            .iter()
            .filter(|a| a.size > 1)
            .map(|a| a.name.clone())
            .collect()
    })
}

fn walk(
    m: &Module,
    f: &Function,
    body: &[OpId],
    manual: &mut Vec<String>,
    errors: &mut Vec<Diagnostic>,
) {
    for &id in body {
        let Some(op) = f.ops.get(id.index()) else {
            continue;
        };
        let mut error = |msg: String| {
            errors.push(Diagnostic::new(
                DiagKind::Unsupported,
                op.pos,
                format!("{}: {msg}", op.kind.name()),
            ))
        };
        let mark = manual.len();
        match &op.kind {
            OpKind::ManualComputation(mc) => {
                for a in &mc.manual_axes {
                    if manual.contains(a) {
                        error(format!(
                            "axis \"{a}\" is already manual in an enclosing sdy.manual_computation"
                        ));
                    }
                }
                manual.extend(mc.manual_axes.iter().cloned());
            }
            OpKind::PartitionId(_) => {
                let automatic: Vec<String> = mesh_axes(m, None)
                    .into_iter()
                    .filter(|a| !manual.contains(a))
                    .map(|a| format!("\"{a}\""))
                    .collect();
                if !automatic.is_empty() {
                    error(format!(
                        "outside a manual computation over every mesh axis (automatic here: {}); \
                         the device's position is only defined where all axes are manual",
                        automatic.join(", ")
                    ));
                }
            }
            OpKind::AllReduce(_)
            | OpKind::AllGather(_)
            | OpKind::AllToAll(_)
            | OpKind::ReduceScatter(_)
            | OpKind::CollectivePermute(_)
                if manual.is_empty() =>
            {
                error(
                    "a collective written by hand must be inside an sdy.manual_computation".into(),
                );
            }
            _ => {}
        }
        for r in &op.regions {
            walk(m, f, &r.body, manual, errors);
        }
        manual.truncate(mark);
    }
}
