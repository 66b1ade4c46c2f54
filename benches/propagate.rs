//! Propagation speed on generated MLP chains (4 ops per layer): 200 layers
//! (goal: ≤ 10 ms in release), a 10k-op program, and 50/200/800/2500
//! layers to show that the time grows linearly.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use meshrun::compiler::propagation::{propagate, PropagationOptions};
use meshrun::compiler::text::parse_module;
use meshrun::synth::mlp_chain_text;

fn bench_propagate(c: &mut Criterion) {
    let opts = PropagationOptions::default();
    let mut group = c.benchmark_group("propagate");
    group.sample_size(10);
    for layers in [50usize, 200, 800, 2500] {
        let module =
            parse_module(&mlp_chain_text(layers, 64, 128)).expect("synthetic module parses");
        let ops: usize = module.funcs.iter().map(|f| f.body.len()).sum();
        assert_eq!(ops, 4 * layers);
        // Every value must come out sharded, or the bench measures nothing.
        let out = propagate(&module, &opts).expect("synthetic module propagates");
        assert!(out.funcs[0]
            .ops_in_order()
            .all(|(_, op)| op.shardings.is_some()));
        group.bench_with_input(
            BenchmarkId::new("mlp_chain_layers", layers),
            &module,
            |b, m| b.iter(|| propagate(black_box(m), &opts).expect("propagates")),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_propagate);
criterion_main!(benches);
