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

use meshrun_compiler::partition::CollectiveKind;

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/fixture_folder.rs"]
mod fixture_folder;
#[path = "common/fixture_run.rs"]
mod fixture_run;
use fixture_folder::{check, check_folder};

const FOLDER: &str = "jax_models";

/// Fixtures that do not pass yet: (name, a piece of the error they fail
/// with). Each is a feature meshrun does not have, refused with a
/// one-line error (complex types when the module is read; a custom call
/// meshrun has no kernel for when it is run):
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
        "custom_call target '@lapack_sgetrf_ffi' cannot run",
    ),
];

#[test]
fn every_model_runs_sharded_matches_jax_and_moves_no_more_than_xla() {
    check_folder(FOLDER, 10, KNOWN_FAILURES, &[]);
}

/// `lax.all_to_all(x, "x", 0, 0)` (split and concatenate one dimension):
/// each device receives 7 of its 8 chunks, XLA's 448 bytes per all-to-all,
/// through a [1, 8, c] view of the dimension (see
/// `partition::local::manual_ops::same_dim_all_to_all`).
#[test]
fn expert_all_to_all_on_one_dimension_moves_what_xla_does() {
    let (_, ours, b) =
        check(FOLDER, "shard_map_expert_all_to_all").unwrap_or_else(|e| panic!("{e}"));
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
