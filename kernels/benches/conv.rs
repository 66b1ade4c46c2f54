//! The CPU convolution kernel (im2col + `gemm`) vs one raw `gemm` call on
//! the same im2col'd shape, single-threaded, f32: the difference is what
//! the im2col copies, the blocking and the layout transposes cost.
//!
//! - `3x3_64to64`: a CNN body layer, NHWC 8 x 32 x 32 x 64, 3 x 3 kernel,
//!   64 output features, SAME padding: `[8192 x 576] · [576 x 64]`;
//! - `3x3_3to64`: a first layer (3 input features): `[8192 x 27] · [27 x
//!   64]`, where the copies weigh most.
//!
//! Throughput in FLOP/s (criterion's "elem/s", 2·M·N·K per iteration).
//!
//! `cargo bench -p meshrun-kernels --bench conv`

#[path = "common/raw_gemm.rs"]
mod raw_gemm;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun_compiler::ir::ops::convolution::{ConvDims, Convolution, ConvolutionAttrs};
use meshrun_compiler::ir::ops::decode::I64Rows;
use meshrun_compiler::ir::{ElemType, TensorType};
use meshrun_kernels::cpu::convolution::convolution;
use meshrun_kernels::{HostTensor, Parallelism};

use raw_gemm::{data, raw_gemm};

const BATCH: usize = 8;
const SIDE: usize = 32;
const OUT: usize = 64;

fn same_3x3() -> Convolution {
    Convolution(Box::new(ConvolutionAttrs {
        batch_group_count: 1,
        dimension_numbers: ConvDims::parse_body("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]")
            .expect("dims"),
        feature_group_count: 1,
        lhs_dilation: None,
        padding: Some(I64Rows {
            rows: vec![vec![1, 1], vec![1, 1]],
            width: 2,
        }),
        precision_config: None,
        rhs_dilation: None,
        window_reversal: None,
        window_strides: None,
    }))
}

fn bench_layer(c: &mut Criterion, name: &str, features: usize) {
    let conv = same_3x3();
    let lhs = HostTensor::from_vec(
        &[BATCH, SIDE, SIDE, features],
        data(BATCH * SIDE * SIDE * features, 1),
    )
    .expect("lhs");
    let rhs =
        HostTensor::from_vec(&[3, 3, features, OUT], data(9 * features * OUT, 2)).expect("rhs");
    let out = TensorType::new(
        vec![BATCH as i64, SIDE as i64, SIDE as i64, OUT as i64],
        ElemType::F32,
    );
    let (m, k, n) = (BATCH * SIDE * SIDE, 9 * features, OUT);
    // The im2col'd operands, as the kernel builds them (random values do
    // for timing: the multiply is the same work).
    let (cols, w) = (data(m * k, 3), data(k * n, 4));
    let mut dst = vec![0.0f32; m * n];

    let mut group = c.benchmark_group(format!("conv_f32_{name}"));
    group.throughput(Throughput::Elements((2 * m * n * k) as u64));
    group.sample_size(20);
    group.bench_function("raw_gemm", |b| {
        b.iter(|| raw_gemm(m, n, k, &mut dst, &cols, &w))
    });
    group.bench_function("convolution", |b| {
        b.iter(|| convolution(&conv, &lhs, &rhs, &out, Parallelism::None).expect("conv"))
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    bench_layer(c, "3x3_64to64", 64);
    bench_layer(c, "3x3_3to64", 3);
}

criterion_group!(benches, bench);
criterion_main!(benches);
