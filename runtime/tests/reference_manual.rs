//! The reference interpreter alone on `jax.shard_map` programs
//! (`sdy.manual_computation`, run once per device with its collectives):
//! every fixture of `fixtures/jax_shard_map/` and the shard_map ones of
//! `fixtures/jax_models/` must give JAX's outputs (`compare`'s tolerance
//! rule), and programs changed to be wrong must not.

use std::path::Path;

use meshrun_compiler::ir::Module;
use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::rtol_for;
use meshrun_runtime::reference::run_function;

#[path = "common/fixture_files.rs"]
#[allow(dead_code)] // xla_bytes: the byte counts are fixture_run's tests' job
mod fixture_files;
#[path = "common/fixture_run.rs"]
mod fixture_run;
use fixture_files::numbered;
use fixture_run::{compare_outputs, fixture};
#[path = "common/branching.rs"]
mod branching;
use branching::{branching_program, iota8, looping_program, psum_odd};

fn parse(dir: &Path) -> Module {
    let text = std::fs::read_to_string(dir.join("input.mlir")).expect("input.mlir");
    parse_module(&text).unwrap_or_else(|d| panic!("{}: input.mlir:{d}", dir.display()))
}

fn reference(module: &Module, inputs: &[HostTensor]) -> Result<Vec<HostTensor>, String> {
    run_function(module, "main", inputs, Parallelism::None).map_err(|e| e.to_string())
}

/// Every fixture of `folder` whose name starts with `prefix`, checked
/// against JAX through the reference alone; how many there were.
fn check_folder(folder: &str, prefix: &str) -> usize {
    let root = fixture(folder, "");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("no fixtures at {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.mlir").exists())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    dirs.sort();
    let mut failed = Vec::new();
    for dir in &dirs {
        let module = parse(dir);
        let got = reference(&module, &numbered(dir, "in"));
        let verdict = got
            .and_then(|got| compare_outputs(&got, &numbered(dir, "out"), rtol_for(&module), "JAX"));
        if let Err(why) = verdict {
            failed.push(format!("{}: {why}", dir.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    dirs.len()
}

#[test]
fn reference_gives_jax_outputs_on_every_shard_map_fixture() {
    let n = check_folder("jax_shard_map", "");
    assert!(n >= 5, "only {n} shard_map fixtures");
}

#[test]
fn reference_gives_jax_outputs_on_the_shard_map_models() {
    let n = check_folder("jax_models", "shard_map_");
    assert!(n >= 3, "only {n} shard_map model fixtures");
}

/// `fixture`'s program with `from` replaced by `to` (once), and JAX's
/// verdict on the original: the reference's outputs must differ from
/// JAX's.
fn differs_from_jax(folder: &str, name: &str, from: &str, to: &str) -> String {
    let dir = fixture(folder, name);
    let text = std::fs::read_to_string(dir.join("input.mlir")).expect("input.mlir");
    assert_eq!(text.matches(from).count(), 1, "{from} in {name}");
    let module = parse_module(&text.replacen(from, to, 1)).expect("the changed program parses");
    let got = reference(&module, &numbered(&dir, "in")).expect("the changed program runs");
    compare_outputs(&got, &numbered(&dir, "out"), rtol_for(&module), "JAX")
        .expect_err("a wrong program must not match JAX")
}

/// `shard_map_psum` with its psum over `y` (the replica groups of the
/// other axis) instead of `x`.
#[test]
fn a_psum_over_the_wrong_axis_does_not_match_jax() {
    let why = differs_from_jax(
        "jax_shard_map",
        "shard_map_psum",
        "dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>",
        "dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>",
    );
    assert!(why.starts_with("output 0 vs JAX"), "{why}");
}

/// Each device takes its own branch of a `case` on `partition_id`.
#[test]
fn devices_take_their_own_branches() {
    let m = branching_program("%m = stablehlo.multiply %arg1, %arg1 : tensor<2xf32>");
    let got = reference(&m, &iota8()).expect("runs");
    let want = [-0.0f32, -1.0, 4.0, 9.0, -4.0, -5.0, 36.0, 49.0];
    assert_eq!(
        got,
        vec![HostTensor::from_vec(&[8], want.to_vec()).unwrap()]
    );
}

/// A collective inside a branch only some devices take: fine when each of
/// its groups is wholly in the branch (devices 1 and 3 sum their blocks),
/// an error when a group is split (device 1 would wait for device 0).
#[test]
fn collectives_in_divergent_branches_need_whole_groups() {
    let whole = branching_program(&psum_odd("dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>"));
    let got = reference(&whole, &iota8()).expect("runs");
    let want = [-0.0f32, -1.0, 8.0, 10.0, -4.0, -5.0, 8.0, 10.0];
    assert_eq!(
        got,
        vec![HostTensor::from_vec(&[8], want.to_vec()).unwrap()]
    );
    let split = branching_program(&psum_odd("dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>"));
    let why = reference(&split, &iota8()).expect_err("a split group");
    assert!(
        why.contains("devices [1] run this collective but [0] of the same group do not"),
        "{why}"
    );
}

/// `run --check`'s second opinion, the program in f64, runs shard_map
/// bodies too (the widened body keeps its local shapes).
#[test]
fn the_f64_reference_runs_shard_map_programs() {
    for name in [
        "shard_map_psum",
        "shard_map_nested",
        "shard_map_gather_scatter",
    ] {
        let dir = fixture("jax_shard_map", name);
        let module = parse(&dir);
        let inputs = numbered(&dir, "in");
        let wide = meshrun_runtime::wide_reference::run_in_f64(
            &module,
            "main",
            &inputs,
            Parallelism::None,
            None,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let narrow: Vec<HostTensor> = wide
            .iter()
            .map(|t| t.convert(meshrun_compiler::ir::ElemType::F32).unwrap())
            .collect();
        compare_outputs(&narrow, &numbered(&dir, "out"), 1e-5, "JAX")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A `while` whose trip count is the device's `partition_id`: each device
/// doubles its block that many times (device 0 not at all), the loop
/// ending per device; the sharded CPU run agrees.
#[test]
fn loops_run_per_device_trip_counts() {
    let m = looping_program();
    let got = reference(&m, &iota8()).expect("runs");
    let want = [0.0f32, 1.0, 4.0, 6.0, 16.0, 20.0, 48.0, 56.0];
    assert_eq!(
        got,
        vec![HostTensor::from_vec(&[8], want.to_vec()).unwrap()]
    );
    let program = meshrun_runtime::pipeline::compile(&m).expect("compiles");
    let sharded = fixture_run::execute(&program.device, &iota8()).expect("runs sharded");
    assert_eq!(sharded, got);
}
