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
//! - `--json`: the communicating collectives and their bytes, the meshes,
//!   every argument's and result's sharding, and the memory per device
//!   (`meshrun::plan::plan_json`).

use std::path::Path;

use meshrun::compiler::partition::program::print::{print_device, print_global, print_lowered};
use meshrun::compiler::propagation::PropagationOptions;
use meshrun::cost::memory::memory_per_device;
use meshrun::load::load_file;
use meshrun::plan::{partition_file, plan_json};

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
        let mut s = serde_json::to_string_pretty(&plan_json(
            &program,
            &memory_per_device(&program.device),
        ))?;
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
