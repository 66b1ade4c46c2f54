//! Partitioning speed: propagation + explicit reshards + collectives +
//! device program for the synthetic MLP chain (`synth::mlp_chain_text`):
//! 200 layers (800 ops) and 2500 layers (10k ops), and partitioning alone
//! of the propagated 10k-op module.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use meshrun::compiler::partition::partition;
use meshrun::compiler::propagation::{propagate, PropagationOptions};
use meshrun::compiler::text::parse_module;
use meshrun::synth::mlp_chain_text;

fn bench_partition(c: &mut Criterion) {
    let opts = PropagationOptions::default();
    let small = parse_module(&mlp_chain_text(200, 64, 128)).expect("parses");
    let large = parse_module(&mlp_chain_text(2500, 64, 128)).expect("parses");
    let large_propagated = propagate(&large, &opts).expect("propagates");
    let mut group = c.benchmark_group("partition");
    group.sample_size(10);
    group.bench_function("propagate_and_partition_800_ops", |b| {
        b.iter(|| partition(&propagate(black_box(&small), &opts).unwrap()).unwrap())
    });
    group.bench_function("propagate_and_partition_10k_ops", |b| {
        b.iter(|| partition(&propagate(black_box(&large), &opts).unwrap()).unwrap())
    });
    group.bench_function("partition_only_10k_ops", |b| {
        b.iter(|| partition(black_box(&large_propagated)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_partition);
criterion_main!(benches);
