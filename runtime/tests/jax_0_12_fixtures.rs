//! Programs of the current JAX (`fixtures/jax_0_12/`, made by
//! `tools/jax_export_current.py` under JAX 0.12): what JAX >= 0.11 writes
//! differently from 0.10.2 — shard_map collectives whose groups are mesh
//! axes (`#stablehlo.replica_group_mesh_axes`), `lax.axis_index` in a
//! partial-manual shard_map, explicit-mode steps, unreduced values, host
//! memory kinds, async collectives, `ragged_dot`. Each is partitioned from
//! Shardy's propagation and from meshrun's, run on 8 simulated CPU
//! devices, compared with JAX's outputs and the reference interpreter, and
//! held to XLA's bytes per device (`common/fixture_folder.rs`). The ones
//! that do not run yet are listed with their one-line errors.

use meshrun_compiler::partition::global::explicit_reshards::manual::WRITTEN_IN_SHARD_MAP;
use meshrun_compiler::partition::CollectiveKind;

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/fixture_folder.rs"]
mod fixture_folder;
#[path = "common/fixture_run.rs"]
mod fixture_run;
use fixture_folder::{check, check_folder, names, AboveXla};
use fixture_run::fixture;

const FOLDER: &str = "jax_0_12";

/// Fixtures that do not pass yet: (name, a piece of the error they fail
/// with). None at present; the list stays so a regression names itself.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

/// Where XLA's numbers are another program's. XLA here compiles the CPU
/// lowering of a cuda fixture; in the CPU lowering of the expert-parallel
/// MoE step the group sizes feed masks sharded by expert, so XLA reduces
/// half of them over "data" (12 B) and gathers them over "model" (8 B),
/// where the cuda lowering's `chlo.ragged_dot` needs them whole (one
/// 24 B all-reduce: one collective instead of two). On the CPU lowering
/// meshrun moves 33,366 B to XLA's 33,370.
const ABOVE_XLA: &[AboveXla] = &[AboveXla {
    name: "ragged_dot_moe_train_experts_cuda",
    bytes: 4.0,
    why: "XLA's numbers are the CPU lowering's: its group sizes are reduced in halves",
}];

#[test]
fn every_jax_0_12_program_runs_sharded_matches_jax_and_moves_no_more_than_xla() {
    check_folder(FOLDER, 20, KNOWN_FAILURES, ABOVE_XLA);
}

/// The fixtures are JAX 0.12's, and their shard_map collectives use the
/// mesh-axes groups (so this folder tests that form, not the dense one).
#[test]
fn fixtures_are_jax_0_12_with_mesh_axes_groups() {
    let mut with_groups = 0;
    for name in names(FOLDER) {
        let dir = fixture(FOLDER, &name);
        let meta = std::fs::read_to_string(dir.join("meta.json")).expect("meta.json");
        assert!(meta.contains("\"jax_version\": \"0.12"), "{name}: {meta}");
        let text = std::fs::read_to_string(dir.join("input.mlir")).expect("input.mlir");
        assert!(
            !text.contains("replica_groups = dense"),
            "{name}: dense replica groups"
        );
        with_groups += usize::from(text.contains("#stablehlo.replica_group_mesh_axes"));
    }
    assert!(
        with_groups >= 8,
        "{with_groups} fixtures with mesh-axes groups"
    );
}

/// A gradient accumulated over microbatches in a scan whose carry starts
/// as `jnp.zeros(..., out_sharding=P(None, "model", unreduced={"data"}))`:
/// the zero carry becomes unreduced without communication, the carry stays
/// a partial sum through the loop, and the one all-reduce is after it
/// (not one per iteration), as XLA does.
#[test]
fn unreduced_carry_is_reduced_once_after_the_loop() {
    let (_, ours, b) = check(FOLDER, "unreduced_grad_accum").unwrap_or_else(|e| panic!("{e}"));
    let all_reduces: Vec<_> = ours
        .device
        .collectives()
        .filter(|(c, _)| c.kind == CollectiveKind::AllReduce)
        .collect();
    assert_eq!(all_reduces.len(), 1, "{all_reduces:?}");
    assert_eq!(b.ours, b.xla);
}

/// `lax.ragged_dot` lowered for cuda (`chlo.ragged_dot`) and for CPU
/// (a masked matmul): both give JAX's outputs with the tokens (the ragged
/// dimension) left sharded over data and no bytes moved, as XLA; the
/// cuda lowering's local op gets each device's first row.
#[test]
fn ragged_dot_keeps_tokens_local_in_both_lowerings() {
    for name in ["ragged_dot_moe_cuda", "ragged_dot_moe_cpu"] {
        let (shardy, ours, b) = check(FOLDER, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((b.shardy, b.ours, b.xla), (0.0, 0.0, 0.0), "{name}");
        assert_eq!(shardy.device.collectives().count(), 0, "{name}");
        assert_eq!(ours.device.collectives().count(), 0, "{name}");
    }
}

/// Expert parallelism: `chlo.ragged_dot` with the experts (rhs's group
/// dimension) sharded over model. Each device multiplies only the rows of
/// its two experts, and the partial sums are all-reduced once over model
/// (512 B per device, as XLA), instead of gathering the weights. The
/// Shardy-propagated plan is of the CPU lowering (XLA's propagated module):
/// its cumulative sum of the group sizes is cut from the replicated sizes
/// and reads its halo from them, with no message.
#[test]
fn ragged_dot_with_sharded_experts_reduces_partial_rows() {
    let name = "ragged_dot_expert_parallel";
    let (shardy, ours, b) = check(FOLDER, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    for plan in [&shardy, &ours] {
        let moving: Vec<CollectiveKind> = plan
            .device
            .collectives()
            .map(|(c, _)| c.kind)
            .filter(|k| *k != CollectiveKind::AllSlice)
            .collect();
        assert_eq!(moving, [CollectiveKind::AllReduce], "{name}");
    }
    assert_eq!((b.shardy, b.ours, b.xla), (512.0, 512.0, 512.0), "{name}");
}

/// The user's collectives keep their kinds, counts and "written in
/// shard_map" cause when their groups are mesh axes: the pipeline's
/// ppermute inside the fori_loop, the MoE's two all_to_alls, FSDP's
/// all_gather + psum_scatter.
#[test]
fn shard_map_collectives_from_mesh_axes_groups() {
    for (name, want) in [
        (
            "moe_all_to_all",
            &[CollectiveKind::AllToAll, CollectiveKind::AllToAll][..],
        ),
        (
            "fsdp_gather_scatter",
            &[CollectiveKind::AllGather, CollectiveKind::ReduceScatter][..],
        ),
        (
            "pipeline_ppermute",
            &[CollectiveKind::CollectivePermute, CollectiveKind::AllReduce][..],
        ),
        (
            "partial_manual_axis_index",
            &[CollectiveKind::AllReduce][..],
        ),
    ] {
        let (_, ours, b) = check(FOLDER, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let user: Vec<CollectiveKind> = ours
            .device
            .collectives()
            .filter(|(_, cause)| cause.reason == WRITTEN_IN_SHARD_MAP)
            .map(|(c, _)| c.kind)
            .collect();
        assert_eq!(user, want, "{name}");
        assert!(b.ours <= b.xla, "{name}: {} > XLA's {}", b.ours, b.xla);
    }
}

/// `jax.device_put(..., memory_kind="pinned_host")`: the memory kinds of
/// the arguments and results reach the device program (the CPU backend
/// holds host values in ordinary memory; a cost or a GPU backend reads
/// them from here).
#[test]
fn host_memory_kinds_reach_the_device_program() {
    let (_, ours, _) = check(FOLDER, "host_offload").unwrap_or_else(|e| panic!("{e}"));
    let kinds = |ios: &[meshrun_compiler::partition::ProgramIo]| -> Vec<(Option<String>, bool)> {
        ios.iter()
            .map(|io| (io.memory_kind.clone(), io.on_host()))
            .collect()
    };
    let host = |k: &str| (Some(k.to_string()), k.contains("host"));
    assert_eq!(
        kinds(&ours.device.inputs),
        vec![host("pinned_host"), host("device"), host("device")]
    );
    assert_eq!(
        kinds(&ours.device.outputs),
        vec![host("pinned_host"), host("device")]
    );
}
