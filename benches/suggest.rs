//! How long `meshrun suggest` takes: the unannotated training steps of
//! `fixtures/jax_suggest/` on a `data`=4 × `model`=2 mesh for
//! `h100-nvlink-8` (the targets: under 1 s for the MLP, under 30 s
//! for a GPT-2 training step: here a 2-layer GPT-2 decoder with gather
//! embedding and scatter-add gradient, ~960 ops,
//! and a 16-layer MLP, 34 arguments), and how many assignments each search
//! scores (printed once per program).
//!
//! `cargo bench --bench suggest`

use std::path::Path;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use meshrun::compiler::sharding::Mesh;
use meshrun::cost::Topology;
use meshrun::load::load_file;
use meshrun::suggest::search::SearchOptions;
use meshrun::suggest::{suggest, SuggestOptions};

const PROGRAMS: [&str; 5] = [
    "mlp4_train_b4096_h2048",
    "mlp4_train_b16384_h512",
    "attention_train_b8_s512_e1024",
    "gpt2_train_l2_e768",
    "mlp16_train_b4096_h2048",
];

fn bench_suggest(c: &mut Criterion) {
    let opts = SuggestOptions {
        mesh: Some(Mesh::new(&[("data", 4), ("model", 2)])),
        topology: Topology::resolve("h100-nvlink-8").expect("built in"),
        memory_per_device: None,
        keep_given: false,
        top: 3,
        search: SearchOptions::default(),
    };
    let mut group = c.benchmark_group("suggest");
    group.sample_size(10);
    for name in PROGRAMS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/jax_suggest")
            .join(name)
            .join("input.mlir");
        let module = load_file(&path).expect("loads");
        let s = suggest(&module, &opts).expect("suggests");
        eprintln!(
            "{name}: {} assignments scored, {} annotation sets completed by propagation",
            s.evaluated, s.completed
        );
        group.bench_function(name, |b| {
            b.iter(|| suggest(black_box(&module), &opts).expect("suggests"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_suggest);
criterion_main!(benches);
