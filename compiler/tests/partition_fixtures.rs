//! Every JAX fixture's propagated module partitions, moves no more bytes
//! per device than XLA's SPMD partitioner did for the same program
//! (`xla_collectives.json`, from `compiled.as_text()`), and no more than
//! this table records (so regressions fail; lower numbers are welcome:
//! update the table).
//!
//! Where we move fewer bytes than XLA, the reasons are, per fixture:
//! - `pad`: both results are replicated, so the 8x16 operand is gathered
//!   once and padded on every device, instead of gathering two 11x31
//!   results (the reshard is hoisted above the pads);
//! - `concatenate`, `slice`, `convert_bf16`: sliced and
//!   concatenated dimensions are rebuilt from the operand's own block plus
//!   halo slabs of only the elements needed (or locally, when the operand
//!   is replicated along the dimension), where XLA moves whole blocks;
//! - `non_divisible`, `non_divisible_7`: reshards of padded dimensions
//!   fetch only real elements instead of whole padded blocks;
//! - `reduce_scatter`, `unreduced_matmul`: all-reduce + slice is fused into
//!   a reduce-scatter (XLA:CPU keeps the all-reduce);
//! - `mesh_device_order`, `out_sharding_override`: the op computes in its
//!   operands' sharding and only its (smaller) result is moved, where XLA
//!   moves the operands or replicates;
//! - `collective_permute_reshard`: devices that already hold their new
//!   block keep it (self-pairs), so fewer devices receive in the permute;
//! - `mean_var`, `reduce_sharded_dim`: a scalar partial sum over two axes
//!   is reduced by one all-reduce over both, where XLA reduces once per
//!   axis;
//! - `gpt2_forward`, `gpt2_train_step`: splitting the model-sharded qkv
//!   projection into q, k, v (slices of a sharded dimension) fetches only
//!   the elements each device lacks, where XLA collective-permutes whole
//!   blocks;
//! - `top_k_logits`: top_k's rows are sharded on the batch and its last
//!   dimension is whole, so every device computes its rows locally, where
//!   XLA:CPU's TopK custom call all-gathers the operand;
//! - `cnn_train_step`: the depthwise weight gradient (a convolution with
//!   batch_group_count = 8 whose batch is on data) is all-reduced over
//!   data only (432 bytes); XLA all-reduces it over all 8 devices (504
//!   bytes), summing the model replicas' equal copies twice, which is why
//!   its sharded output 3 is wrong (the fixture stores the unsharded run's,
//!   see its meta.json).

use std::path::{Path, PathBuf};

use meshrun_compiler::partition::partition;
use meshrun_compiler::propagation::{propagate, PropagationOptions};
use meshrun_compiler::text::parse_module;

/// (fixture, our bytes per device, XLA's bytes per device).
const TABLE: &[(&str, f64, f64)] = &[
    ("aggressive_conflict", 1536.0, 1536.0),
    ("all_to_all_reshard", 96.0, 96.0),
    ("argmax_accuracy", 134.0, 134.0),
    ("attention", 0.0, 0.0),
    ("attention_projections", 1024.0, 1024.0),
    ("batched_matmul", 2048.0, 2048.0),
    ("avg_pool", 0.0, 0.0),
    ("broadcast", 0.0, 0.0),
    ("call_twice", 0.0, 0.0),
    ("cnn_forward", 0.0, 0.0),
    ("cnn_train_step", 3810.0, 3882.0),
    ("collective_permute_reshard", 96.0, 112.0),
    ("compare_select", 0.0, 0.0),
    ("concatenate", 48.0, 176.0),
    ("conflict_seed003", 896.0, 896.0),
    ("constant_table", 0.0, 0.0),
    ("convert_bf16", 0.0, 64.0),
    ("cross_entropy", 6.0, 6.0),
    ("cumsum_batch", 0.0, 0.0),
    ("depthwise_conv", 0.0, 0.0),
    ("dot_transposed_operands", 384.0, 384.0),
    ("dynamic_slices", 384.0, 384.0),
    ("elementwise_binary", 0.0, 0.0),
    ("elementwise_math", 0.0, 0.0),
    ("elementwise_unary", 0.0, 0.0),
    ("elementwise_unary_more", 0.0, 0.0),
    ("embedding_bag", 640.0, 640.0),
    ("embedding_grad", 3840.0, 3840.0),
    ("explicit_replicated", 384.0, 384.0),
    ("f16_program", 16.0, 16.0),
    ("gpt2_forward", 12288.0, 14336.0),
    ("gpt2_train_step", 114310.0, 120454.0),
    ("halo_avg_pool", 384.0, 384.0),
    ("halo_conv_dilated", 576.0, 576.0),
    ("halo_conv_same", 288.0, 288.0),
    ("halo_conv_same_y", 192.0, 192.0),
    ("halo_conv_stride2", 144.0, 144.0),
    ("halo_conv_valid", 192.0, 192.0),
    ("halo_max_pool_s1", 288.0, 288.0),
    ("halo_max_pool_s2", 144.0, 144.0),
    ("integer_ops", 56.0, 56.0),
    ("iota", 0.0, 0.0),
    ("layernorm", 0.0, 0.0),
    ("max_pool", 0.0, 0.0),
    ("max_pool_grad", 0.0, 0.0),
    ("mean_var", 135.0, 138.0),
    ("mesh_device_order", 96.0, 768.0),
    ("mesh_xyz_matmul", 256.0, 256.0),
    ("mlp_forward", 768.0, 768.0),
    ("mlp_seed", 2048.0, 2048.0),
    ("mlp_train_step", 8054.0, 8054.0),
    ("non_divisible", 896.0, 1120.0),
    ("non_divisible_7", 517.0, 637.0),
    ("out_sharding_override", 448.0, 1920.0),
    ("pad", 384.0, 2424.0),
    ("random_dropout", 0.0, 0.0),
    ("random_rbg", 0.0, 0.0),
    ("reduce_scatter", 768.0, 1536.0),
    ("reduce_sharded_dim", 103.0, 106.0),
    ("reductions", 448.0, 448.0),
    ("reshape_8x4_to_2x16", 112.0, 112.0),
    ("reshape_merge", 16.0, 16.0),
    ("reshape_roundtrip", 48.0, 48.0),
    ("reshape_split_subaxes", 112.0, 112.0),
    ("reverse", 192.0, 192.0),
    ("shard_alike", 0.0, 0.0),
    ("sharding_constraint_unconstrained", 256.0, 256.0),
    ("slice", 272.0, 424.0),
    ("sort_argsort", 768.0, 768.0),
    ("top_k_logits", 0.0, 3072.0),
    ("transpose", 0.0, 0.0),
    ("two_meshes", 544.0, 544.0),
    ("unreduced_add_replicated", 768.0, 768.0),
    ("unreduced_matmul", 768.0, 1536.0),
    ("vocab_parallel_embedding", 768.0, 768.0),
];

fn fixtures_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax")
}

fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_root())
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("propagated.mlir").is_file())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `total_bytes_per_device` of an `xla_collectives.json`.
fn xla_total(dir: &Path) -> f64 {
    let text = std::fs::read_to_string(dir.join("xla_collectives.json")).expect("readable");
    let key = "\"total_bytes_per_device\":";
    let i = text.rfind(key).expect("has a total") + key.len();
    let rest = &text[i..];
    let end = rest.find([',', '}', '\n']).unwrap_or(rest.len());
    rest[..end].trim().parse().expect("a number")
}

fn load(path: &Path) -> meshrun_compiler::Module {
    parse_module(&std::fs::read_to_string(path).expect("readable")).expect("parses")
}

#[test]
fn fixtures_partition_within_xla_bytes_and_the_recorded_table() {
    let mut problems = Vec::new();
    let names = fixture_names();
    for name in &names {
        let dir = fixtures_root().join(name);
        let xla = xla_total(&dir);
        let ours = match partition(&load(&dir.join("propagated.mlir"))) {
            Ok(p) => p.total_bytes_per_device(),
            Err(e) => {
                problems.push(format!("{name}: partition failed: {e}"));
                continue;
            }
        };
        if ours > xla {
            problems.push(format!("{name}: {ours} bytes/device, XLA moves {xla}"));
        }
        match TABLE.iter().find(|(n, _, _)| n == name) {
            Some(&(_, recorded, recorded_xla)) => {
                if ours > recorded + 1e-9 {
                    problems.push(format!(
                        "{name}: {ours} bytes/device, the table records {recorded}"
                    ));
                }
                if (xla - recorded_xla).abs() > 1e-9 {
                    problems.push(format!(
                        "{name}: XLA's total is now {xla}, the table records {recorded_xla}"
                    ));
                }
            }
            None => problems.push(format!("{name}: not in the table (ours {ours}, XLA {xla})")),
        }
    }
    assert!(!names.is_empty(), "no fixtures found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn fixture_inputs_partition_after_propagation() {
    let mut problems = Vec::new();
    for name in fixture_names() {
        let input = load(&fixtures_root().join(&name).join("input.mlir"));
        if let Err(e) =
            propagate(&input, &PropagationOptions::default()).and_then(|m| partition(&m))
        {
            problems.push(format!("{name}: {e}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
