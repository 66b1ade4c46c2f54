//! A fused element-wise chain against its ops run one by one, one thread:
//! the MLP layer's epilogue `tanh(d + broadcast(b))` and a longer chain
//! `(tanh(d + broadcast(b)) * d - d) * d` on a 64×1024 block (one device's
//! share at B=256 H=2048) and a 256×2048 one (the 1-device run).
//!
//! `summary` times both side by side, alternating rounds, and prints the
//! ratio; `threads` does the same for the fused chain on one thread and
//! on two (a 1-device run cuts big chains over rayon's threads, see
//! `meshrun_kernels::cpu::pieces`), checking that the bits agree.
//!
//! `cargo bench -p meshrun-kernels --bench fusion` (add `-- summary` for
//! the ratios alone).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun_compiler::ir::{BinaryOp, ElemType, OpKind, TensorType, UnaryOp};
use meshrun_kernels::cpu::fusion::{eval, Arg, Chain, Step, StepOp};
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

struct Case {
    name: &'static str,
    chain: Chain,
    /// The same ops unfused: (kind, operand slots) over a value table that
    /// starts with the chain's operands and grows by each op's result.
    ops: Vec<(OpKind, Vec<usize>)>,
    operands: Vec<HostTensor>,
    ty: TensorType,
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / u32::MAX as f32 * 2.0 - 1.0
        })
        .collect()
}

fn case(name: &'static str, rows: usize, cols: usize, long: bool) -> Case {
    let d = HostTensor::from_vec(&[rows, cols], data(rows * cols, 1)).unwrap();
    let b = HostTensor::from_vec(&[cols], data(cols, 2)).unwrap();
    let ty = TensorType::new(vec![rows as i64, cols as i64], ElemType::F32);
    let step = |op, args| Step { op, args };
    let mut steps = vec![
        step(
            StepOp::Binary(BinaryOp::Add),
            vec![Arg::Operand(0), Arg::Repeated(1)],
        ),
        step(StepOp::Unary(UnaryOp::Tanh), vec![Arg::Step(0)]),
    ];
    // Values: 0 = d, 1 = b, 2 = broadcast b, 3.. = results.
    let mut ops = vec![
        (
            OpKind::BroadcastInDim(
                meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1] },
            ),
            vec![1],
        ),
        (OpKind::Binary(BinaryOp::Add), vec![0, 2]),
        (OpKind::Unary(UnaryOp::Tanh), vec![3]),
    ];
    if long {
        steps.push(step(
            StepOp::Binary(BinaryOp::Multiply),
            vec![Arg::Step(1), Arg::Operand(0)],
        ));
        steps.push(step(
            StepOp::Binary(BinaryOp::Subtract),
            vec![Arg::Step(2), Arg::Operand(0)],
        ));
        steps.push(step(
            StepOp::Binary(BinaryOp::Multiply),
            vec![Arg::Step(3), Arg::Operand(0)],
        ));
        ops.push((OpKind::Binary(BinaryOp::Multiply), vec![4, 0]));
        ops.push((OpKind::Binary(BinaryOp::Subtract), vec![5, 0]));
        ops.push((OpKind::Binary(BinaryOp::Multiply), vec![6, 0]));
    }
    Case {
        name,
        chain: Chain {
            steps,
            shape: vec![rows, cols],
        },
        ops,
        operands: vec![d, b],
        ty,
    }
}

fn unfused(c: &Case) -> HostTensor {
    let mut values: Vec<HostTensor> = c.operands.clone();
    for (kind, args) in &c.ops {
        let refs: Vec<&HostTensor> = args.iter().map(|&k| &values[k]).collect();
        let out = eval_op(kind, &refs, std::slice::from_ref(&c.ty), Parallelism::None).unwrap();
        values.extend(out);
    }
    values.pop().unwrap()
}

fn fused(c: &Case) -> HostTensor {
    fused_on(c, Parallelism::None)
}

fn fused_on(c: &Case, par: Parallelism) -> HostTensor {
    let refs: Vec<&HostTensor> = c.operands.iter().collect();
    eval(&c.chain, &refs, par).unwrap()
}

fn cases() -> Vec<Case> {
    vec![
        case("bias_tanh_64x1024", 64, 1024, false),
        case("bias_tanh_256x2048", 256, 2048, false),
        case("long_chain_256x2048", 256, 2048, true),
    ]
}

fn benches(c: &mut Criterion) {
    for k in cases() {
        assert_eq!(
            fused(&k),
            unfused(&k),
            "{}: fused and unfused differ",
            k.name
        );
        let mut group = c.benchmark_group(format!("fusion/{}", k.name));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(1))
            .throughput(Throughput::Elements(
                k.chain.shape.iter().product::<usize>() as u64,
            ));
        group.bench_function("fused", |b| b.iter(|| fused(black_box(&k))));
        group.bench_function("unfused", |b| b.iter(|| unfused(black_box(&k))));
        group.finish();
    }
}

fn summary(_: &mut Criterion) {
    println!("fusion summary (one thread, best of 15 alternating rounds):");
    for k in cases() {
        let (mut tf, mut tu) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..15 {
            let t = Instant::now();
            black_box(fused(&k));
            tf = tf.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            black_box(unfused(&k));
            tu = tu.min(t.elapsed().as_secs_f64());
        }
        println!(
            "  {:<22} fused {:8.1} µs  unfused {:8.1} µs  unfused/fused {:4.2}x",
            k.name,
            tf * 1e6,
            tu * 1e6,
            tu / tf
        );
    }
}

fn threads(_: &mut Criterion) {
    println!("fused chains on 1 and 2 threads (best of 15 alternating rounds):");
    for k in cases() {
        let two = Parallelism::Rayon(2);
        assert_eq!(
            fused(&k),
            fused_on(&k, two),
            "{}: threads change the bits",
            k.name
        );
        let (mut t1, mut t2) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..15 {
            let t = Instant::now();
            black_box(fused(&k));
            t1 = t1.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            black_box(fused_on(&k, two));
            t2 = t2.min(t.elapsed().as_secs_f64());
        }
        println!(
            "  {:<22} 1 thread {:8.1} µs  2 threads {:8.1} µs  speedup {:4.2}x",
            k.name,
            t1 * 1e6,
            t2 * 1e6,
            t1 / t2
        );
    }
}

criterion_group!(fusion_benches, benches, summary, threads);
criterion_main!(fusion_benches);
