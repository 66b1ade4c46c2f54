//! From a loaded module to its partitioned program and the JSON document
//! `meshrun partition --json` prints: the one path the CLI, the Python
//! package and the tests share.

use std::path::Path;

use serde_json::{json, Value};

use meshrun_compiler::partition::program::report::collective_report;
use meshrun_compiler::partition::{partition as partition_module, PartitionedProgram};
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::sharding::{Mesh, TensorSharding};
use meshrun_compiler::Module;

use crate::cost::memory::{memory_json, peak_detail, MemoryEstimate};
use crate::cost::render::{human_bytes, memory_lines, table, with_runs};
use crate::load::LoadError;

/// Propagate with `propagation` (none: the module is already propagated),
/// then partition; errors name `file` (the program's file, or what the
/// caller calls its text).
pub fn partition_file(
    file: &Path,
    module: &Module,
    propagation: Option<&PropagationOptions>,
) -> Result<PartitionedProgram, LoadError> {
    let at = |diag| LoadError::Invalid {
        path: file.to_path_buf(),
        diag,
    };
    let propagated;
    let module = match propagation {
        None => module,
        Some(opts) => {
            propagated = propagate(module, opts).map_err(at)?;
            &propagated
        }
    };
    partition_module(module).map_err(at)
}

/// The `partition --json` document: every communicating collective (kind,
/// the op that needs it and why, axes, groups, shapes, bytes per device)
/// and the total per device.
pub fn partition_json(program: &PartitionedProgram) -> Value {
    let r = collective_report(program);
    let collectives: Vec<Value> = r
        .collectives
        .iter()
        .map(|e| {
            json!({
                "kind": e.kind,
                "op": e.op,
                "reason": e.reason,
                "axes": e.axes,
                "groups": e.groups,
                "dtype": e.dtype,
                "in_shape": e.in_shape,
                "out_shape": e.out_shape,
                "bytes_per_device": e.bytes_per_device,
                "bytes_per_run": e.bytes_per_run,
                "runs": e.runs,
                "trip_count_unknown": e.trip_count_unknown,
            })
        })
        .collect();
    json!({
        "num_devices": r.num_devices,
        "collectives": collectives,
        "total_bytes_per_device": r.total_bytes_per_device,
        "trip_count_unknown": r.trip_count_unknown,
    })
}

/// A sharding for tools: its Shardy text, its mesh, and `spec` — per
/// dimension the mesh axes that shard it, major first, as a
/// `PartitionSpec` lists them — or `null` when some dimension uses a
/// sub-axis (`"x":(1)2`), which a `PartitionSpec` cannot name.
pub fn sharding_json(s: &TensorSharding) -> Value {
    let whole = s
        .dims
        .iter()
        .all(|d| d.axes.iter().all(|a| a.sub.is_none()));
    let spec = whole.then(|| {
        s.dims
            .iter()
            .map(|d| d.axes.iter().map(|a| a.name.clone()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    });
    let names = |axes: &[meshrun_compiler::sharding::AxisRef]| {
        axes.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    json!({
        "text": s.to_string(),
        "mesh": s.mesh_name(),
        "spec": spec,
        "replicated": names(&s.replicated),
        "unreduced": names(&s.unreduced),
        "unreduced_op": if s.unreduced.is_empty() { None } else { Some(s.unreduced_op.keyword().unwrap_or("sum")) },
    })
}

/// A mesh for tools: its axes (name and size, major to minor) and the
/// device at each position (`null`: devices in order).
pub fn mesh_json(name: &str, mesh: &Mesh) -> Value {
    json!({
        "name": name,
        "axes": mesh.axes.iter().map(|a| json!({"name": a.name, "size": a.size})).collect::<Vec<_>>(),
        "device_ids": mesh.device_ids,
    })
}

/// The plan of a partitioned program, for tools and the Python package:
/// `partition --json`'s document, plus the meshes, every argument's and
/// result's sharding (as propagated) with its global and local types and
/// memory kind, and `memory`, the program's memory per device
/// (`cost::memory::memory_per_device`).
pub fn plan_json(program: &PartitionedProgram, memory: &MemoryEstimate) -> Value {
    let mut doc = partition_json(program);
    let io = |items: &[meshrun_compiler::partition::ProgramIo]| {
        items
            .iter()
            .map(|io| {
                let local = program
                    .device
                    .values
                    .get(io.value)
                    .map(|v| v.ty.shape.clone());
                json!({
                    "shape": io.global.shape,
                    "dtype": io.global.elem.name(),
                    "local_shape": local,
                    "sharding": sharding_json(&io.sharding),
                    "memory_kind": io.memory_kind,
                })
            })
            .collect::<Vec<_>>()
    };
    if let Value::Object(o) = &mut doc {
        o.insert(
            "meshes".into(),
            Value::Array(
                program
                    .global
                    .meshes
                    .iter()
                    .map(|d| mesh_json(&d.name, &d.mesh))
                    .collect(),
            ),
        );
        o.insert("arguments".into(), Value::Array(io(&program.device.inputs)));
        o.insert("results".into(), Value::Array(io(&program.device.outputs)));
        o.insert("memory".into(), memory_json(program, memory));
    }
    doc
}

/// The plan for people: the mesh, each argument's sharding, one row per
/// communicating collective (kind, the op that needs it, axes, bytes per
/// device, why) and `memory`, the memory per device.
pub fn plan_text(program: &PartitionedProgram, memory: &MemoryEstimate) -> String {
    let mut out = String::new();
    for d in &program.global.meshes {
        let axes: Vec<String> = d
            .mesh
            .axes
            .iter()
            .map(|a| format!("\"{}\"={}", a.name, a.size))
            .collect();
        out.push_str(&format!(
            "mesh @{}: {} ({} devices)\n",
            d.name,
            axes.join(", "),
            d.mesh.num_devices()
        ));
    }
    for (k, io) in program.device.inputs.iter().enumerate() {
        let memory = io
            .memory_kind
            .as_deref()
            .filter(|_| io.on_host())
            .map(|m| format!("  ({m})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "argument {k}: {}  {}{memory}\n",
            io.global, io.sharding
        ));
    }
    out.push('\n');
    let r = collective_report(program);
    if r.collectives.is_empty() {
        out.push_str("no communicating collectives\n");
    } else {
        let rows: Vec<Vec<String>> = r
            .collectives
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let kind = with_runs(&e.kind, e.runs, e.trip_count_unknown);
                vec![
                    (i + 1).to_string(),
                    kind,
                    e.op.clone(),
                    if e.axes.is_empty() {
                        "-".into()
                    } else {
                        e.axes.join(",")
                    },
                    human_bytes(e.bytes_per_device),
                    e.reason.clone(),
                ]
            })
            .collect();
        out.push_str(&table(
            &["#", "kind", "op", "axes", "bytes/device", "why"],
            &rows,
            &[true, false, false, false, true, false],
        ));
    }
    out.push_str(&format!(
        "\ncommunication  {} per device in {} collective(s)\n",
        human_bytes(r.total_bytes_per_device),
        r.collectives.len()
    ));
    out.push_str(&memory_lines(memory, peak_detail(program, memory).as_ref()));
    out
}
