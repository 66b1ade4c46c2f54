//! From a loaded module to its partitioned program and the JSON document
//! `meshrun partition --json` prints: the one path the CLI, the Python
//! package and the tests share.

use std::path::Path;

use serde_json::{json, Value};

use meshrun_compiler::partition::report::collective_report;
use meshrun_compiler::partition::{partition as partition_module, PartitionedProgram};
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::Module;

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
