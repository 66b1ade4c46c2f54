//! Parsing speed: a 10k-op module (goal: < 50 ms in release) and printing it
//! back.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use meshrun::compiler::text::{parse_module, print_module};
use meshrun::synth::mlp_chain_text;

fn bench_parse(c: &mut Criterion) {
    let src = mlp_chain_text(2500, 64, 128);
    let module = parse_module(&src).expect("synthetic module parses");
    let ops: usize = module.funcs.iter().map(|f| f.body.len()).sum();
    assert_eq!(ops, 10_000);
    let mut group = c.benchmark_group("text");
    group.sample_size(20);
    group.bench_function("parse_10k_ops", |b| {
        b.iter(|| parse_module(black_box(&src)).unwrap())
    });
    group.bench_function("print_10k_ops", |b| {
        b.iter(|| print_module(black_box(&module)))
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
