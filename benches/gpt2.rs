//! The GPT-2 training step (value_and_grad of the cross-entropy + SGD, as
//! `tools/jax_export.py` writes it in JAX), 8 devices vs 1 device:
//!
//! - `fixture`: `fixtures/jax/gpt2_train_step` as exported (vocabulary 64,
//!   width 32, 8 x 8 tokens) with its inputs: so small that it measures
//!   the per-instruction and collective overheads;
//! - `bench_size`: the same program at vocabulary 2048, width 128, 4
//!   heads, 16 x 64 tokens, 2 layers (`benches/data/gpt2_train_step.mlir`,
//!   made by `tools/gpt2_bench_export.py`), inputs drawn here.
//!
//! Each runs sharded as JAX users shard it (batch on `data`=4, heads, MLP
//! columns and the vocab-parallel table on `model`=2) on 8 simulated CPU
//! devices, and unsharded on one device (the reference interpreter, its
//! matmuls on every core). `summary` times both side by side and prints
//! the 8-device / 1-device time ratios.
//!
//! `cargo bench --bench gpt2` (add `-- summary` for the ratios alone).

#[path = "common/eight_vs_one.rs"]
mod eight_vs_one;
#[path = "common/median.rs"]
mod median;

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use meshrun::compiler::Module;
use meshrun::runtime::npy::read_npy;
use meshrun::runtime::random_inputs::random_inputs;
use meshrun_compiler::ir::ElemType;
use meshrun_kernels::HostTensor;

use eight_vs_one::{bench_cases, summarize, Case};

const FIXTURE: &str = "fixtures/jax/gpt2_train_step";
const BENCH_SIZE: &str = "benches/data/gpt2_train_step.mlir";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fixture with JAX's inputs.
fn fixture() -> Case {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    Case::new(&read(&dir.join("input.mlir")), |_| {
        (0..)
            .map(|i| dir.join(format!("in_{i}.npy")))
            .take_while(|p| p.exists())
            .map(|p| read_npy(&p).expect("npy"))
            .collect()
    })
}

/// The bench-size program; token ids and labels (the i32 arguments)
/// spread over the vocabulary (the first argument's rows).
fn bench_size() -> Case {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(BENCH_SIZE);
    Case::new(&read(&path), |module: &Module| {
        let f = module.func("main").expect("@main");
        let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
        let vocab = types[0].shape[0] as u64;
        let mut inputs = random_inputs(&types, 5).expect("inputs");
        let mut x: u64 = 12345;
        for (t, ty) in inputs.iter_mut().zip(&types) {
            if ty.elem == ElemType::I32 {
                let n = ty.num_elements() as usize;
                let ids: Vec<i32> = (0..n)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        ((x >> 33) % vocab) as i32
                    })
                    .collect();
                let shape: Vec<usize> = ty.shape.iter().map(|&d| d as usize).collect();
                *t = HostTensor::from_vec(&shape, ids).expect("ids");
            }
        }
        inputs
    })
}

fn cases() -> [(&'static str, Case); 2] {
    [("fixture", fixture()), ("bench_size", bench_size())]
}

fn bench(c: &mut Criterion) {
    bench_cases(c, "gpt2_train_step", &cases());
}

fn summary(_: &mut Criterion) {
    summarize(&cases(), |name| format!("gpt2_train_step {name}"));
}

criterion_group!(benches, bench, summary);
criterion_main!(benches);
