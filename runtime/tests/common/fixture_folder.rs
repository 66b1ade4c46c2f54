//! Checking every fixture of a `fixtures/FOLDER` written by
//! `tools/jax_export*.py` (include with
//! `#[path = "common/fixture_folder.rs"] mod fixture_folder;` next to
//! `fixture_files` and `fixture_run`): each is partitioned twice, from
//! Shardy's propagation (`propagated.mlir`) and from meshrun's own
//! (`input.mlir` through `compile`), and run on 8 simulated CPU devices;
//! the outputs must equal JAX's (`out_*.npy`) and the unsharded reference
//! interpreter's, and neither partitioning may move more bytes per device
//! than XLA (`xla_collectives.json`). Fixtures that do not pass yet are
//! listed with a piece of their error, and the check fails when one of them
//! passes or fails otherwise, so the list cannot go stale.

// Each test file that includes this uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use meshrun_compiler::ir::Module;
use meshrun_compiler::partition::{partition, PartitionedProgram};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::Parallelism;
use meshrun_runtime::compare::rtol_for;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::reference::run_function;

use crate::fixture_files::{numbered, xla_bytes};
use crate::fixture_run::{compare_outputs, execute, fixture};

/// Bytes per device of both partitionings and XLA's.
pub struct Bytes {
    pub shardy: f64,
    pub ours: f64,
    pub xla: f64,
}

pub fn parse(dir: &Path, file: &str) -> Result<Module, String> {
    let text = std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    parse_module(&text).map_err(|d| format!("{file}:{d}"))
}

/// Partition, run and check fixture `folder/name`; its programs (Shardy's
/// propagation, meshrun's) and bytes.
pub fn check(
    folder: &str,
    name: &str,
) -> Result<(PartitionedProgram, PartitionedProgram, Bytes), String> {
    let dir = fixture(folder, name);
    let input = parse(&dir, "input.mlir")?;
    let propagated = parse(&dir, "propagated.mlir")?;
    let shardy = partition(&propagated)
        .map_err(|d| format!("partition of propagated.mlir: {}: {}", d.pos, d.message))?;
    let ours = compile(&input).map_err(|d| format!("compile: {}: {}", d.pos, d.message))?;
    for p in [&shardy, &ours] {
        if p.device.num_devices() != 8 {
            return Err(format!("{} devices", p.device.num_devices()));
        }
    }
    let inputs = numbered(&dir, "in");
    let jax = numbered(&dir, "out");
    let rtol = rtol_for(&input);
    let got = execute(&shardy.device, &inputs).map_err(|e| format!("Shardy's: {e}"))?;
    let got_ours = execute(&ours.device, &inputs).map_err(|e| format!("meshrun's: {e}"))?;
    compare_outputs(&got, &jax, rtol, "JAX")?;
    compare_outputs(&got_ours, &jax, rtol, "JAX (meshrun's propagation)")?;
    let main = input.entry().ok_or("no entry function")?.name.clone();
    let reference = run_function(&input, &main, &inputs, Parallelism::None)
        .map_err(|e| format!("reference: {e}"))?;
    compare_outputs(&got, &reference, rtol, "the reference")?;
    compare_outputs(
        &got_ours,
        &reference,
        rtol,
        "the reference (meshrun's propagation)",
    )?;
    let bytes = Bytes {
        shardy: shardy.total_bytes_per_device(),
        ours: ours.total_bytes_per_device(),
        xla: xla_bytes(&dir),
    };
    Ok((shardy, ours, bytes))
}

/// The fixtures of `folder`, sorted.
pub fn names(folder: &str) -> Vec<String> {
    let root: PathBuf = fixture(folder, "");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("no fixtures at {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.mlir").exists())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

/// Bytes a fixture may move above XLA's, with the reason: only where
/// XLA's numbers come from another program (a cuda lowering's fixture
/// compiled by XLA from the CPU lowering, no GPU compiler being here).
pub struct AboveXla {
    pub name: &'static str,
    pub bytes: f64,
    pub why: &'static str,
}

/// Check every fixture of `folder` (at least `min` of them); `known`
/// lists (name, a piece of the error) of those that do not pass yet;
/// `above` the exact excess allowed where XLA compiled another program.
pub fn check_folder(folder: &str, min: usize, known: &[(&str, &str)], above: &[AboveXla]) {
    let names = names(folder);
    assert!(
        names.len() >= min,
        "only {} fixtures in {folder}",
        names.len()
    );
    for k in known
        .iter()
        .map(|k| k.0)
        .chain(above.iter().map(|a| a.name))
    {
        assert!(names.iter().any(|n| n == k), "{k} is not a fixture");
    }
    let mut problems = Vec::new();
    for name in &names {
        let known = known.iter().find(|(n, _)| n == name);
        match (check(folder, name), known) {
            (Ok((_, _, b)), None) => {
                eprintln!(
                    "{name}: bytes/device Shardy's {} meshrun's {} XLA {}",
                    b.shardy, b.ours, b.xla
                );
                let allowed = above.iter().find(|a| a.name == name);
                let limit = b.xla + allowed.map_or(0.0, |a| a.bytes);
                if b.shardy > limit || b.ours > limit {
                    problems.push(format!(
                        "{name}: {} (Shardy's) / {} (meshrun's) bytes/device > XLA's {}{}",
                        b.shardy,
                        b.ours,
                        b.xla,
                        allowed.map_or(String::new(), |a| format!(" + {} ({})", a.bytes, a.why))
                    ));
                }
                if let Some(a) = allowed.filter(|a| b.ours <= b.xla + a.bytes - 1.0) {
                    problems.push(format!(
                        "{name}: {} bytes/device, the allowance of {} above XLA's {} is more than \
                         it needs now: lower it",
                        b.ours, a.bytes, b.xla
                    ));
                }
            }
            (Ok(_), Some(_)) => problems.push(format!(
                "{name} passes now: take it out of the known failures"
            )),
            (Err(e), Some((_, want))) if e.contains(want) => {
                eprintln!("{name}: still fails as recorded: {e}");
            }
            (Err(e), _) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}
