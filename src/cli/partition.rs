//! `meshrun partition FILE [--device D] [--json] [--no-propagate] [--conservative]`.
//!
//! Propagates the shardings of FILE (Shardy's full pipeline; skipped with
//! `--no-propagate`, for files that are already propagated), partitions the
//! entry function, and prints one of:
//! - the global program with explicit reshards and all-reduces, then the
//!   same with every reshard lowered to collectives (Shardy notation), each
//!   data movement with the op and the reason that caused it;
//! - `--device D`: the local program of device D (local shapes, masks,
//!   collectives with D's group);
//! - `--json`: the communicating collectives and their cost.

use std::path::Path;

use anyhow::Context;
use serde_json::{json, Value};

use meshrun::compiler::partition::print_program::{print_device, print_global, print_lowered};
use meshrun::compiler::partition::report::collective_report;
use meshrun::compiler::partition::{partition as partition_module, PartitionedProgram};
use meshrun::compiler::propagation::{propagate, PropagationOptions};
use meshrun::compiler::Module;
use meshrun::load::{load_file, LoadError};

/// Options of `meshrun partition`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartitionArgs {
    pub device: Option<i64>,
    pub json: bool,
    pub no_propagate: bool,
    /// Shardy's conservative propagation (`--conservative`).
    pub conservative: bool,
}

pub fn partition(file: &Path, args: PartitionArgs) -> anyhow::Result<()> {
    let module = load_file(file)?;
    let propagation = (!args.no_propagate).then_some(PropagationOptions {
        conservative: args.conservative,
        ..PropagationOptions::default()
    });
    let program = partition_file(file, &module, propagation.as_ref())?;
    let text = if args.json {
        let mut s = serde_json::to_string_pretty(&report_json(&program))?;
        s.push('\n');
        s
    } else if let Some(d) = args.device {
        print_device(&program.device, Some(d)).map_err(anyhow::Error::msg)?
    } else {
        format!(
            "// explicit reshards\n{}\n// reshards lowered to collectives (total {} bytes/device)\n{}",
            print_global(&program.global),
            program.total_bytes_per_device(),
            print_lowered(&program.global, &program.lowering)
        )
    };
    print!("{text}");
    Ok(())
}

/// Propagate with `propagation` (none: the module is already propagated),
/// then partition; errors name the file.
pub fn partition_file(
    file: &Path,
    module: &Module,
    propagation: Option<&PropagationOptions>,
) -> anyhow::Result<PartitionedProgram> {
    let at = |diag| LoadError::Invalid {
        path: file.to_path_buf(),
        diag,
    };
    let propagated;
    let module = match propagation {
        None => module,
        Some(opts) => {
            propagated = propagate(module, opts)
                .map_err(at)
                .context("sharding propagation failed")?;
            &propagated
        }
    };
    Ok(partition_module(module).map_err(at)?)
}

/// The `--json` document.
pub fn report_json(program: &PartitionedProgram) -> Value {
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
