//! `jax.shard_map` fixtures (`fixtures/jax_shard_map/`, made by
//! `tools/jax_export_shard_map.py`): each is propagated, partitioned and
//! run on its mesh of 8 simulated CPU devices; the outputs must equal
//! JAX's (`out_*.npy`, themselves checked against numpy by the export),
//! the user's collectives must appear in the device program with the
//! reason "written in shard_map", and the bytes per device must not
//! exceed XLA's (`xla_collectives.json`).
//!
//! The outputs must also be bitwise the reference interpreter's, which
//! runs each manual computation's body once per device with its
//! collectives.
//! Every fixture must pass; none is skipped.

use meshrun_compiler::partition::global::explicit_reshards::manual::WRITTEN_IN_SHARD_MAP;
use meshrun_compiler::partition::CollectiveKind;
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

/// Run fixture `name` sharded; returns meshrun's bytes per device and the
/// kinds of the user's collectives, in program order.
fn run(name: &str) -> (f64, f64, Vec<CollectiveKind>) {
    let dir = fixture("jax_shard_map", name);
    let text = std::fs::read_to_string(dir.join("input.mlir")).expect("input.mlir");
    let module = parse_module(&text).unwrap_or_else(|d| panic!("{name}: input.mlir:{d}"));
    let program = compile(&module).unwrap_or_else(|d| panic!("{name}: {}: {}", d.pos, d.message));
    assert_eq!(program.device.num_devices(), 8, "{name}");
    let inputs = numbered(&dir, "in");
    let got = execute(&program.device, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare_outputs(&got, &numbered(&dir, "out"), rtol_for(&module), "JAX")
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let reference = run_function(&module, "main", &inputs, Parallelism::None)
        .unwrap_or_else(|e| panic!("{name}: reference: {e}"));
    compare_outputs(&got, &reference, rtol_for(&module), "the reference")
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // The reference reduces in group order through the CPU runtime's own
    // reduction, so the user's collectives give the same bits.
    assert!(
        got == reference,
        "{name}: the sharded run is not bitwise the reference's"
    );
    let user: Vec<CollectiveKind> = program
        .device
        .collectives()
        .filter(|(_, cause)| cause.reason == WRITTEN_IN_SHARD_MAP)
        .map(|(c, _)| c.kind)
        .collect();
    (program.total_bytes_per_device(), xla_bytes(&dir), user)
}

#[test]
fn psum_over_one_axis() {
    let (ours, xla, user) = run("shard_map_psum");
    assert_eq!(user, [CollectiveKind::AllReduce]);
    assert!(ours <= xla, "{ours} bytes/device > XLA's {xla}");
}

#[test]
fn all_gather_then_psum_scatter() {
    let (ours, xla, user) = run("shard_map_gather_scatter");
    assert_eq!(
        user,
        [CollectiveKind::AllGather, CollectiveKind::ReduceScatter]
    );
    assert!(ours <= xla, "{ours} bytes/device > XLA's {xla}");
}

#[test]
fn ring_of_ppermutes_sums_every_block() {
    let (ours, xla, user) = run("shard_map_ring_allreduce");
    assert_eq!(user, [CollectiveKind::CollectivePermute; 7]);
    assert!(ours <= xla, "{ours} bytes/device > XLA's {xla}");
}

/// `y` stays automatic: propagation carries the dot's `y` sharding into
/// the body, so the psum runs on `y`-sharded blocks as in XLA.
#[test]
fn shard_map_over_one_axis_inside_an_automatic_program() {
    let (ours, xla, user) = run("shard_map_partial");
    assert_eq!(user, [CollectiveKind::AllReduce]);
    assert!(ours <= xla, "{ours} bytes/device > XLA's {xla}");
}

/// A shard_map over `y` inside a shard_map over `x` (JAX lowers it to a
/// manual computation nested in another): each psum runs on its own axis.
#[test]
fn nested_shard_maps_run_each_psum_on_its_axis() {
    let (ours, xla, user) = run("shard_map_nested");
    assert_eq!(user, [CollectiveKind::AllReduce; 2]);
    assert!(ours <= xla, "{ours} bytes/device > XLA's {xla}");
}
