//! A dot with the element-wise chain that reads it run on the product's
//! tiles (`cpu::dot_chain`) against the dot, then the chain in its own
//! pass (`fusion::eval`), and against the dot alone: a training step's
//! weight update `w - 0.01·(xᵀ·dy)` (the 1-device MLP's gradient shapes at
//! B=64 H=1024 and B=256 H=2048) and a layer's `tanh(x·W + b)`.
//!
//! Every call runs on rayon's threads from inside the pool, as a 1-device
//! run does (`Parallelism::Rayon(0)`); `-- single` runs them on one thread
//! (`Parallelism::None`, a simulated device's kernels).
//!
//! `cargo bench -p meshrun-kernels --bench dot_chain`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun_compiler::ir::{BinaryOp, DotDims, ElemType, TensorType, UnaryOp};
use meshrun_kernels::cpu::dot::dot_general;
use meshrun_kernels::cpu::dot_chain::dot_then_chain;
use meshrun_kernels::cpu::fusion::{eval, Arg, Chain, Step, StepOp};
use meshrun_kernels::{HostTensor, Parallelism};

fn data(shape: &[usize], seed: u32) -> HostTensor {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / u32::MAX as f32 * 2.0 - 1.0
        })
        .collect();
    HostTensor::from_vec(shape, v).unwrap()
}

struct Case {
    name: String,
    lhs: HostTensor,
    rhs: HostTensor,
    dims: DotDims,
    ty: TensorType,
    chain: Chain,
    /// The chain's operands, `None` where the dot's result goes.
    others: Vec<Option<HostTensor>>,
    flop: u64,
}

fn dims(lc: i64, rc: i64) -> DotDims {
    DotDims {
        lhs_batch: vec![],
        rhs_batch: vec![],
        lhs_contract: vec![lc],
        rhs_contract: vec![rc],
    }
}

/// `w - 0.01·(xᵀ·dy)`: x and dy are `batch × hidden`.
fn update(batch: usize, hidden: usize) -> Case {
    let h = hidden;
    Case {
        name: format!("update_{h}x{batch}x{h}"),
        lhs: data(&[batch, h], 1),
        rhs: data(&[batch, h], 2),
        dims: dims(0, 0),
        ty: TensorType::new(vec![h as i64, h as i64], ElemType::F32),
        chain: Chain {
            steps: vec![
                Step {
                    op: StepOp::Binary(BinaryOp::Multiply),
                    args: vec![Arg::Repeated(2), Arg::Operand(1)],
                },
                Step {
                    op: StepOp::Binary(BinaryOp::Subtract),
                    args: vec![Arg::Operand(0), Arg::Step(0)],
                },
            ],
            shape: vec![h, h],
        },
        others: vec![
            Some(data(&[h, h], 3)),
            None,
            Some(HostTensor::from_vec(&[], vec![0.01f32]).unwrap()),
        ],
        flop: 2 * (batch * h * h) as u64,
    }
}

/// `tanh(x·W + b)`: x is `batch × hidden`.
fn layer(batch: usize, hidden: usize) -> Case {
    let h = hidden;
    Case {
        name: format!("layer_{batch}x{h}x{h}"),
        lhs: data(&[batch, h], 1),
        rhs: data(&[h, h], 2),
        dims: dims(1, 0),
        ty: TensorType::new(vec![batch as i64, h as i64], ElemType::F32),
        chain: Chain {
            steps: vec![
                Step {
                    op: StepOp::Binary(BinaryOp::Add),
                    args: vec![Arg::Operand(0), Arg::Repeated(1)],
                },
                Step {
                    op: StepOp::Unary(UnaryOp::Tanh),
                    args: vec![Arg::Step(0)],
                },
            ],
            shape: vec![batch, h],
        },
        others: vec![None, Some(data(&[h], 3))],
        flop: 2 * (batch * h * h) as u64,
    }
}

fn on_tiles(c: &Case, par: Parallelism) -> HostTensor {
    let others: Vec<Option<&HostTensor>> = c.others.iter().map(Option::as_ref).collect();
    dot_then_chain(&c.lhs, &c.rhs, &c.dims, &c.ty, &c.chain, &others, par).unwrap()
}

fn after(c: &Case, par: Parallelism) -> HostTensor {
    let d = dot_general(&c.lhs, &c.rhs, &c.dims, &c.ty, par).unwrap();
    let ops: Vec<&HostTensor> = c.others.iter().map(|o| o.as_ref().unwrap_or(&d)).collect();
    let out = eval(&c.chain, &ops, par).unwrap();
    meshrun_kernels::cpu::alloc::recycle(d);
    out
}

fn bench_with(crit: &mut Criterion, group: &str, par: Parallelism) {
    let cases = [
        update(64, 1024),
        update(256, 2048),
        layer(64, 1024),
        layer(256, 2048),
    ];
    let mut g = crit.benchmark_group(group);
    g.sample_size(20);
    for c in &cases {
        let (a, b) = (on_tiles(c, par), after(c, par));
        assert!(
            a.to_f64_vec() == b.to_f64_vec(),
            "{}: the bits differ",
            c.name
        );
        g.throughput(Throughput::Elements(c.flop));
        // Inside the pool, as a 1-device run's kernels are; each result
        // goes back to the block pool, as the runtime releases it (a fresh
        // 4-16 MiB result each time would time page faults).
        let run = |f: &(dyn Fn() -> HostTensor + Sync)| {
            let t = rayon::scope(|_| f());
            meshrun_kernels::cpu::alloc::recycle(t);
        };
        g.bench_function(format!("{}/on_tiles", c.name), |bench| {
            bench.iter(|| run(&|| black_box(on_tiles(c, par))))
        });
        g.bench_function(format!("{}/dot_then_chain", c.name), |bench| {
            bench.iter(|| run(&|| black_box(after(c, par))))
        });
        g.bench_function(format!("{}/dot_alone", c.name), |bench| {
            bench.iter(|| {
                run(&|| black_box(dot_general(&c.lhs, &c.rhs, &c.dims, &c.ty, par).unwrap()))
            })
        });
    }
    g.finish();
}

fn threads(crit: &mut Criterion) {
    bench_with(crit, "dot_chain_threads", Parallelism::Rayon(0));
}

fn single(crit: &mut Criterion) {
    bench_with(crit, "dot_chain_single", Parallelism::None);
}

criterion_group!(benches, threads, single);
criterion_main!(benches);
