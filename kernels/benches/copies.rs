//! Data-movement kernels on the shapes of a GPT-2 step (one thread): a
//! transpose that keeps the last axis (heads split off), a 2-D transpose
//! (the tied embedding), a slice (q, k and v out of one product), a
//! reshape of a block handed over (`cpu::in_place`) against one that is
//! copied, and a scatter into a handed-over block against one that copies
//! its operand. Each against ndarray's element-by-element copy
//! (`as_standard_layout`), what the kernels did before.
//!
//! `cargo bench -p meshrun-kernels --bench copies`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun_compiler::ir::{ElemType, OpKind, TensorType};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::cpu::in_place::eval_op_into;
use meshrun_kernels::cpu::shape_ops::{slice, transpose};
use meshrun_kernels::{eval_op, HostTensor, Parallelism};

fn numbered(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    HostTensor::from_vec(shape, (0..n).map(|i| (i % 1000) as f32).collect()).unwrap()
}

/// ndarray's copy of `x` permuted by `perm`, element by element.
fn ndarray_transpose(x: &HostTensor, perm: &[usize]) -> HostTensor {
    let a = x.array::<f32>().unwrap();
    HostTensor::F32(
        a.view()
            .permuted_axes(perm.to_vec())
            .as_standard_layout()
            .into_owned(),
    )
}

fn transposes(c: &mut Criterion) {
    let mut g = c.benchmark_group("transpose");
    for (shape, perm) in [
        (vec![16usize, 64, 4, 32], vec![0usize, 2, 1, 3]),
        (vec![2048, 128], vec![1, 0]),
        (vec![128, 2048], vec![1, 0]),
    ] {
        let x = numbered(&shape);
        let name = format!("{shape:?} by {perm:?}");
        let p: Vec<i64> = perm.iter().map(|&d| d as i64).collect();
        g.throughput(Throughput::Bytes(4 * x.len() as u64));
        g.bench_function(format!("{name} kernel"), |b| {
            b.iter(|| transpose(black_box(&x), &p).unwrap())
        });
        g.bench_function(format!("{name} element by element"), |b| {
            b.iter(|| ndarray_transpose(black_box(&x), &perm))
        });
    }
    g.finish();
}

fn slices(c: &mut Criterion) {
    let mut g = c.benchmark_group("slice");
    let x = numbered(&[16, 64, 384]);
    g.throughput(Throughput::Bytes(4 * 16 * 64 * 128));
    g.bench_function("16x64x384 [.., .., 128:256] kernel", |b| {
        b.iter(|| slice(black_box(&x), &[0, 0, 128], &[16, 64, 256], &[1, 1, 1]).unwrap())
    });
    g.bench_function("16x64x384 [.., .., 128:256] element by element", |b| {
        let a = x.array::<f32>().unwrap();
        b.iter(|| {
            let v = a.slice(ndarray::s![.., .., 128..256]);
            HostTensor::F32(v.as_standard_layout().into_owned().into_dyn())
        })
    });
    g.finish();
}

/// The op of a one-op `@main` in `text`.
fn op_of(text: &str) -> OpKind {
    let m = parse_module(text).unwrap();
    let kind = m.funcs[0].ops_in_order().next().unwrap().1.kind.clone();
    kind
}

fn handed_over(c: &mut Criterion) {
    let mut g = c.benchmark_group("handed over");
    let shape = [16usize, 64, 2048];
    let x = numbered(&shape);
    g.throughput(Throughput::Bytes(4 * x.len() as u64));
    // There and back: 16x64x2048 -> 1024x2048 -> 16x64x2048.
    let there = op_of(
        "func.func @main(%x: tensor<16x64x2048xf32>) -> tensor<1024x2048xf32> {\n\
         %r = stablehlo.reshape %x : (tensor<16x64x2048xf32>) -> tensor<1024x2048xf32>\n\
         return %r : tensor<1024x2048xf32>\n}",
    );
    let back = op_of(
        "func.func @main(%x: tensor<1024x2048xf32>) -> tensor<16x64x2048xf32> {\n\
         %r = stablehlo.reshape %x : (tensor<1024x2048xf32>) -> tensor<16x64x2048xf32>\n\
         return %r : tensor<16x64x2048xf32>\n}",
    );
    let flat = [TensorType::new(vec![1024, 2048], ElemType::F32)];
    let full = [TensorType::new(vec![16, 64, 2048], ElemType::F32)];
    g.bench_function("reshape there and back, copied", |b| {
        b.iter(|| {
            let r = eval_op(&there, &[black_box(&x)], &flat, Parallelism::None).unwrap();
            eval_op(&back, &[&r[0]], &full, Parallelism::None).unwrap()
        })
    });
    // The block goes round: each reshape takes the last one's result, as
    // a block that dies with its op would.
    let mut held = Some(x.clone());
    g.bench_function("reshape there and back, handed over", |b| {
        b.iter(|| {
            let t = held.take().unwrap();
            let r = eval_op_into(&there, t, &[], &flat).unwrap();
            let r = eval_op_into(&back, r.into_iter().next().unwrap(), &[], &full).unwrap();
            held = r.into_iter().next();
        })
    });
    let scatter = op_of(
        r#"func.func @main(%x: tensor<1024x2048xf32>, %i: tensor<1024x2xi32>, %u: tensor<1024xf32>) -> tensor<1024x2048xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<1024x2048xf32>, tensor<1024x2xi32>, tensor<1024xf32>) -> tensor<1024x2048xf32>
  return %r : tensor<1024x2048xf32>
}"#,
    );
    let zeros = HostTensor::from_vec(&[1024, 2048], vec![0f32; 1024 * 2048]).unwrap();
    let idx: Vec<i32> = (0..1024).flat_map(|r| [r, (r * 7919) % 2048]).collect();
    let idx = HostTensor::from_vec(&[1024, 2], idx).unwrap();
    let upd = HostTensor::from_vec(&[1024], vec![-1f32 / 1024.0; 1024]).unwrap();
    let out = [TensorType::new(vec![1024, 2048], ElemType::F32)];
    g.bench_function("scatter 1024 into 1024x2048 copied", |b| {
        b.iter(|| eval_op(&scatter, &[&zeros, &idx, &upd], &out, Parallelism::None).unwrap())
    });
    let mut held = Some(zeros.clone());
    g.bench_function("scatter 1024 into 1024x2048 handed over", |b| {
        b.iter(|| {
            let t = held.take().unwrap();
            let r = eval_op_into(&scatter, t, &[&idx, &upd], &out).unwrap();
            held = r.into_iter().next();
        })
    });
    g.finish();
}

criterion_group!(benches, transposes, slices, handed_over);
criterion_main!(benches);
