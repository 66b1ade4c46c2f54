//! Embedding lookup and its gradient: a 50k × 1024 f32 table, 8192 ids.
//!
//! - `lookup`: `gather` of the ids' rows (JAX's `jnp.take`), the table
//!   vocab-parallel on `model`, the ids on `data`;
//! - `grad`: the lookup's gradient, a scatter-add of 8192 × 1024 row
//!   cotangents into a zero table (rows on `model`, updates on `data`).
//!
//! Each on 8 simulated CPU devices (`data`=2 × `model`=4) and unsharded on
//! one device (the reference interpreter). `summary` times both side by
//! side and prints the 8-device / 1-device time ratios.
//!
//! `cargo bench --bench embedding` (add `-- summary` for the ratios alone).

#[path = "common/eight_vs_one.rs"]
mod eight_vs_one;
#[path = "common/median.rs"]
mod median;

use criterion::{criterion_group, criterion_main, Criterion};
use meshrun::runtime::random_inputs::random_inputs;
use meshrun_kernels::HostTensor;

use eight_vs_one::{bench_cases, summarize, Case};

const VOCAB: usize = 50_000;
const WIDTH: usize = 1024;
const IDS: usize = 8192;

const MESH: &str = r#"sdy.mesh @mesh = <["data"=2, "model"=4]>"#;

fn lookup_text() -> String {
    format!(
        r#"module @lookup {{
  {MESH}
  func.func @main(%t: tensor<{VOCAB}x{WIDTH}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"model"}}, {{}}]>}}, %i: tensor<{IDS}xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"data"}}]>}}) -> tensor<{IDS}x{WIDTH}xf32> {{
    %r = "stablehlo.gather"(%t, %i) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, {WIDTH}>}}> : (tensor<{VOCAB}x{WIDTH}xf32>, tensor<{IDS}xi32>) -> tensor<{IDS}x{WIDTH}xf32>
    return %r : tensor<{IDS}x{WIDTH}xf32>
  }}
}}"#
    )
}

fn grad_text() -> String {
    format!(
        r#"module @grad {{
  {MESH}
  func.func @main(%i: tensor<{IDS}xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"data"}}]>}}, %u: tensor<{IDS}x{WIDTH}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"data"}}, {{}}]>}}) -> (tensor<{VOCAB}x{WIDTH}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"model"}}, {{}}]>}}) {{
    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %zz = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<{VOCAB}x{WIDTH}xf32>
    %r = "stablehlo.scatter"(%zz, %i, %u) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) : (tensor<{VOCAB}x{WIDTH}xf32>, tensor<{IDS}xi32>, tensor<{IDS}x{WIDTH}xf32>) -> tensor<{VOCAB}x{WIDTH}xf32>
    return %r : tensor<{VOCAB}x{WIDTH}xf32>
  }}
}}"#
    )
}

/// Ids spread over the whole vocabulary (a fixed LCG), with repeats.
fn token_ids() -> HostTensor {
    let mut x: u64 = 12345;
    let ids: Vec<i32> = (0..IDS)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % VOCAB as u64) as i32
        })
        .collect();
    HostTensor::from_vec(&[IDS], ids).expect("ids")
}

/// A case with random inputs but `ids_at` holding [`token_ids`].
fn case(text: &str, ids_at: usize) -> Case {
    Case::new(text, |module| {
        let f = module.func("main").expect("@main");
        let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
        let mut inputs = random_inputs(&types, 3).expect("inputs");
        inputs[ids_at] = token_ids();
        inputs
    })
}

fn cases() -> [(&'static str, Case); 2] {
    [
        ("lookup", case(&lookup_text(), 1)),
        ("grad", case(&grad_text(), 0)),
    ]
}

fn bench(c: &mut Criterion) {
    bench_cases(c, "embedding", &cases());
}

fn summary(_: &mut Criterion) {
    summarize(&cases(), |name| {
        format!("embedding {name} (table {VOCAB}x{WIDTH} f32, {IDS} ids)")
    });
}

criterion_group!(benches, bench, summary);
criterion_main!(benches);
