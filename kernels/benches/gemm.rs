//! The `gemm` crate called directly vs meshrun's `dot_general` kernel on the
//! MLP layer shape (256x2048 · 2048x2048, f32), single-threaded: the kernel
//! must stay within a few percent of raw gemm. Throughput is reported in
//! FLOP/s (criterion's "elem/s", 2·M·N·K per iteration).
//!
//! `matrixmultiply` and meshrun's own packed AVX2 kernel
//! (`cpu::packed_gemm`, on CPUs with AVX2 + FMA) run beside raw gemm in
//! each product group, compared in the same run.
//!
//! A second group times the element-wise ops of an MLP layer on the same
//! activations.
//!
//! `cargo bench -p meshrun-kernels --bench gemm`

#[path = "common/raw_gemm.rs"]
mod raw_gemm;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun_compiler::ir::{BinaryOp, DotDims, ElemType, OpKind, TensorType, UnaryOp};
use meshrun_kernels::cpu::dot::dot_general;
use meshrun_kernels::cpu::packed_gemm::PackedGemm;
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

use raw_gemm::{data, raw_gemm, raw_gemm_col_dst, raw_matrixmultiply};

const M: usize = 256;
const K: usize = 2048;
const N: usize = 2048;

fn bench(c: &mut Criterion) {
    let (a, b) = (data(M * K, 1), data(K * N, 2));
    let mut group = c.benchmark_group("f32_256x2048x2048");
    group.throughput(Throughput::Elements((2 * M * N * K) as u64));
    group.sample_size(20);

    let mut dst = vec![0.0f32; M * N];
    group.bench_function("raw_gemm", |bench| {
        bench.iter(|| raw_gemm(M, N, K, &mut dst, &a, &b))
    });
    group.bench_function("matrixmultiply", |bench| {
        bench.iter(|| raw_matrixmultiply(M, N, K, &mut dst, &a, &b))
    });
    if let Some(packed) = PackedGemm::detect() {
        group.bench_function("packed_avx2", |bench| {
            bench.iter(|| raw_packed(packed, M, N, K, &mut dst, &a, &b))
        });
    }

    let lhs = HostTensor::from_vec(&[M, K], a.clone()).expect("lhs");
    let rhs = HostTensor::from_vec(&[K, N], b.clone()).expect("rhs");
    let dims = DotDims::for_dot(2);
    let out = TensorType::new(vec![M as i64, N as i64], ElemType::F32);
    group.bench_function("dot_general", |bench| {
        bench.iter(|| dot_general(&lhs, &rhs, &dims, &out, Parallelism::None).expect("dot"))
    });
    group.finish();
}

/// The element-wise work around each matmul of a tanh MLP layer (bias
/// broadcast, add, tanh) on the same 256x2048 activations, for comparison
/// with the matmul's time above.
fn bench_layer_ops(c: &mut Criterion) {
    let act = HostTensor::from_vec(&[M, N], data(M * N, 3)).expect("act");
    let bias = HostTensor::from_vec(&[N], data(N, 4)).expect("bias");
    let ty = TensorType::new(vec![M as i64, N as i64], ElemType::F32);
    let mut group = c.benchmark_group("f32_256x2048_elementwise");
    group.throughput(Throughput::Elements((M * N) as u64));
    group.sample_size(20);
    let run = |kind: &OpKind, operands: &[&HostTensor]| {
        eval_op(kind, operands, std::slice::from_ref(&ty), Parallelism::None).expect("op")
    };
    let bcast = OpKind::BroadcastInDim(
        meshrun_compiler::ir::ops::broadcast_in_dim::BroadcastInDim { dims: vec![1] },
    );
    group.bench_function("broadcast_in_dim", |b| b.iter(|| run(&bcast, &[&bias])));
    let add = OpKind::Binary(BinaryOp::Add);
    group.bench_function("add", |b| b.iter(|| run(&add, &[&act, &act])));
    let tanh = OpKind::Unary(UnaryOp::Tanh);
    group.bench_function("tanh", |b| b.iter(|| run(&tanh, &[&act])));
    group.finish();
}

/// `gemm` at the small-M shapes of sharded runs (per-device blocks of the
/// 8-device MLP and GPT-2 step), single-threaded, in both orientations
/// of the row-major result: as meshrun calls it (row-major `dst`) and
/// with a column-major `dst` (the transposed problem for `gemm`).
fn bench_small_m(c: &mut Criterion) {
    let shapes = [
        (64, 2048, 1024),
        (64, 1024, 2048),
        (16, 1024, 512),
        (32, 2048, 1024),
        (64, 1024, 512),
        (128, 2048, 1024),
        (16, 512, 1024),
        (256, 128, 1024),
        (256, 64, 128),
        (256, 256, 128),
    ];
    let mut group = c.benchmark_group("f32_small_m");
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(300));
    group.measurement_time(std::time::Duration::from_secs(1));
    for (m, k, n) in shapes {
        let (a, b) = (data(m * k, 1), data(k * n, 2));
        let mut dst = vec![0.0f32; m * n];
        group.throughput(Throughput::Elements((2 * m * n * k) as u64));
        group.bench_function(format!("{m}x{k}x{n}_row_dst"), |bench| {
            bench.iter(|| raw_gemm(m, n, k, &mut dst, &a, &b))
        });
        group.bench_function(format!("{m}x{k}x{n}_col_dst"), |bench| {
            bench.iter(|| raw_gemm_col_dst(m, n, k, &mut dst, &a, &b))
        });
        group.bench_function(format!("{m}x{k}x{n}_matrixmultiply"), |bench| {
            bench.iter(|| raw_matrixmultiply(m, n, k, &mut dst, &a, &b))
        });
        if let Some(packed) = PackedGemm::detect() {
            group.bench_function(format!("{m}x{k}x{n}_packed_avx2"), |bench| {
                bench.iter(|| raw_packed(packed, m, n, k, &mut dst, &a, &b))
            });
        }
    }
    group.finish();
}

/// `dst[M x N] = a[M x K] · b[K x N]`, row-major, one thread, by
/// meshrun's own packed AVX2 kernel.
fn raw_packed(g: PackedGemm, m: usize, n: usize, k: usize, dst: &mut [f32], a: &[f32], b: &[f32]) {
    use ndarray::{ArrayView2, ArrayViewMut2};
    let d = ArrayViewMut2::from_shape((m, n), dst).expect("dst");
    let l = ArrayView2::from_shape((m, k), a).expect("lhs");
    let r = ArrayView2::from_shape((k, n), b).expect("rhs");
    g.run(d, l, r);
}

criterion_group!(benches, bench, bench_layer_ops, bench_small_m);
criterion_main!(benches);
