//! Small real-world JAX models (`fixtures/jax_models/`, made by
//! `tools/jax_export_models.py`): a ViT block, a top-k mixture of experts,
//! a hand-written Adam step, an LSTM, dropout keys per layer in a scan,
//! sampling, bf16 mixed precision, bf16 emulated by reduce_precision, segment sums, switch + remat'd scan, a
//! KV-cache decode loop, a strided-conv ViT patchify with
//! `dot_product_attention`, and shard_map sequence/expert parallelism. Each is partitioned twice, from
//! Shardy's propagation (`propagated.mlir`) and from meshrun's own
//! (`input.mlir` through `compile`), and run on 8 simulated CPU devices;
//! the outputs must equal JAX's (`out_*.npy`) and the unsharded reference
//! interpreter's (which runs shard_map bodies once per device), and neither partitioning may move more bytes per device than XLA
//! (`xla_collectives.json`).
//!
//! Every fixture of the folder is checked; the ones that do not pass yet
//! are listed in [`KNOWN_FAILURES`] with the error they fail with, and the
//! test fails when one of them passes or fails otherwise, so the list
//! cannot go stale.

use std::path::PathBuf;

use meshrun_compiler::ir::Module;
use meshrun_compiler::partition::{partition, CollectiveKind, PartitionedProgram};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::Parallelism;
use meshrun_runtime::compare::rtol_for;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::reference::run_function;

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/fixture_run.rs"]
mod fixture_run;
use fixture_files::{numbered, xla_bytes};
use fixture_run::{compare_outputs, execute, fixture};

const FOLDER: &str = "jax_models";

/// Fixtures that do not pass yet: (name, a piece of the error they fail
/// with). Each is a feature meshrun does not have, refused at parse time
/// with a one-line error:
const KNOWN_FAILURES: &[(&str, &str)] = &[
    // `jnp.fft`: no complex element types (nor `stablehlo.fft`).
    (
        "fft_spectrum",
        "complex element type 'complex<f32>' is not supported",
    ),
    // `jnp.linalg.solve`/`cholesky` on CPU call LAPACK through
    // custom_calls; meshrun has no LU/Cholesky kernels.
    (
        "linalg_solve",
        "custom_call target '@lapack_sgetrf_ffi' is not supported",
    ),
];

/// Bytes per device of both partitionings and XLA's.
struct Bytes {
    shardy: f64,
    ours: f64,
    xla: f64,
}

fn parse(dir: &std::path::Path, file: &str) -> Result<Module, String> {
    let text = std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    parse_module(&text).map_err(|d| format!("{file}:{d}"))
}

/// Partition, run and check fixture `name`; its programs (Shardy's
/// propagation, meshrun's) and bytes.
fn check(name: &str) -> Result<(PartitionedProgram, PartitionedProgram, Bytes), String> {
    let dir = fixture(FOLDER, name);
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

fn names() -> Vec<String> {
    let root: PathBuf = fixture(FOLDER, "");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("no fixtures at {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.mlir").exists())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

#[test]
fn every_model_runs_sharded_matches_jax_and_moves_no_more_than_xla() {
    let names = names();
    assert!(names.len() >= 10, "only {} model fixtures", names.len());
    for (known, _) in KNOWN_FAILURES {
        assert!(names.iter().any(|n| n == known), "{known} is not a fixture");
    }
    let mut problems = Vec::new();
    for name in &names {
        let known = KNOWN_FAILURES.iter().find(|(n, _)| n == name);
        match (check(name), known) {
            (Ok((_, _, b)), None) => {
                eprintln!(
                    "{name}: bytes/device Shardy's {} meshrun's {} XLA {}",
                    b.shardy, b.ours, b.xla
                );
                if b.shardy > b.xla || b.ours > b.xla {
                    problems.push(format!(
                        "{name}: {} (Shardy's) / {} (meshrun's) bytes/device > XLA's {}",
                        b.shardy, b.ours, b.xla
                    ));
                }
            }
            (Ok(_), Some(_)) => {
                problems.push(format!("{name} passes now: take it out of KNOWN_FAILURES"))
            }
            (Err(e), Some((_, want))) if e.contains(want) => {
                eprintln!("{name}: still fails as recorded: {e}");
            }
            (Err(e), _) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}

/// `lax.all_to_all(x, "x", 0, 0)` (split and concatenate one dimension):
/// each device receives 7 of its 8 chunks, XLA's 448 bytes per all-to-all,
/// through a [1, 8, c] view of the dimension (see
/// `partition::manual_ops::same_dim_all_to_all`).
#[test]
fn expert_all_to_all_on_one_dimension_moves_what_xla_does() {
    let (_, ours, b) = check("shard_map_expert_all_to_all").unwrap_or_else(|e| panic!("{e}"));
    let a2a: Vec<_> = ours
        .device
        .collectives()
        .filter(|(c, _)| c.kind == CollectiveKind::AllToAll)
        .map(|(c, _)| (c.in_local_shape.clone(), c.out_local_shape.clone()))
        .collect();
    let view = (vec![1, 8, 1, 2, 8], vec![8, 1, 1, 2, 8]);
    assert_eq!(a2a, [view.clone(), view]);
    assert_eq!(b.ours, b.xla);
}
