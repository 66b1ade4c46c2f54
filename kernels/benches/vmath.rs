//! The vectorized f32 functions (`cpu::vmath`) against the scalar ones,
//! one thread, 64 Ki elements (in L2): criterion's elem/s for each
//! function on the detected instruction set, on AVX2, one element at a time
//! through the same element function, and through `std` (libm) where it
//! has the function.
//!
//! The last entry (`summary`) times them side by side in one process,
//! alternating rounds, and prints Gelem/s and the ratio vector/scalar the
//! kernels are held to (≥ 4x for tanh, exp, erf against the scalar
//! version: libm where it has the function, else the element function one
//! call at a time).
//!
//! `cargo bench -p meshrun-kernels --bench vmath` (add `-- summary` for the
//! ratios alone).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun_kernels::cpu::vmath::{
    apply_on, binary_arith_on, one, pow_on, BinaryArith, Func, Isa, Side,
};

const N: usize = 1 << 16;

fn inputs(func: Func) -> Vec<f32> {
    let (lo, hi) = match func {
        Func::Log | Func::Sqrt | Func::Rsqrt => (0.01, 20.0),
        Func::Sin | Func::Cos => (-10.0, 10.0),
        _ => (-6.0, 6.0),
    };
    (0..N)
        .map(|i| lo + (hi - lo) * ((i * 7919 % N) as f32 / N as f32))
        .collect()
}

/// libm through `std`, where it has the function.
fn libm(func: Func) -> Option<fn(f32) -> f32> {
    Some(match func {
        Func::Exp => f32::exp,
        Func::Log => f32::ln,
        Func::Tanh => f32::tanh,
        Func::Logistic => |x| 1.0 / (1.0 + (-x).exp()),
        Func::Sin => f32::sin,
        Func::Cos => f32::cos,
        Func::Sqrt => f32::sqrt,
        Func::Rsqrt => |x| 1.0 / x.sqrt(),
        Func::Erf => return None,
    })
}

/// One element at a time through a function pointer (no vectorization).
fn scalar_loop(f: fn(f32) -> f32, xs: &[f32], out: &mut [f32]) {
    let f = black_box(f);
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = f(x);
    }
}

fn one_at_a_time(func: Func, xs: &[f32], out: &mut [f32]) {
    let func = black_box(func);
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = one(func, x);
    }
}

fn isa_named(name: &str) -> Option<Isa> {
    Isa::available().into_iter().find(|i| i.name() == name)
}

fn functions(c: &mut Criterion) {
    let best = Isa::detected();
    for func in Func::ALL {
        let xs = inputs(func);
        let mut out = vec![0.0f32; N];
        let mut group = c.benchmark_group(format!("vmath/{}", func.name()));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(1))
            .throughput(Throughput::Elements(N as u64));
        group.bench_function(best.name(), |b| {
            b.iter(|| apply_on(best, func, black_box(&xs), &mut out))
        });
        if let Some(avx2) = isa_named("avx2").filter(|&i| i != best) {
            group.bench_function("avx2", |b| {
                b.iter(|| apply_on(avx2, func, black_box(&xs), &mut out))
            });
        }
        group.bench_function("one_at_a_time", |b| {
            b.iter(|| one_at_a_time(func, black_box(&xs), &mut out))
        });
        if let Some(f) = libm(func) {
            group.bench_function("libm", |b| {
                b.iter(|| scalar_loop(f, black_box(&xs), &mut out))
            });
        }
        group.finish();
    }
    let a: Vec<f32> = inputs(Func::Sqrt);
    let b: Vec<f32> = inputs(Func::Exp);
    let mut out = vec![0.0f32; N];
    let mut group = c.benchmark_group("vmath/pow");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(N as u64));
    group.bench_function(best.name(), |bch| {
        bch.iter(|| pow_on(best, black_box(&a), black_box(&b), &mut out))
    });
    group.bench_function("libm", |bch| {
        bch.iter(|| {
            for ((o, &x), &y) in out.iter_mut().zip(black_box(&a)).zip(&b) {
                *o = x.powf(y);
            }
        })
    });
    group.finish();
}

/// Elements per block in a fused chain (`cpu::fusion::BLOCK`).
const BLOCK: usize = 1024;

fn arith(c: &mut Criterion) {
    let a: Vec<f32> = inputs(Func::Exp)[..BLOCK].to_vec();
    let b: Vec<f32> = inputs(Func::Sqrt)[..BLOCK].to_vec();
    let mut out = vec![0.0f32; BLOCK];
    let mut filled = vec![0.0f32; BLOCK];
    let mut group = c.benchmark_group("arith");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(BLOCK as u64));
    let mul = BinaryArith::Multiply;
    for isa in Isa::available() {
        for (form, other) in [
            ("mul_slices", Side::Slice(&b)),
            ("mul_scalar", Side::Scalar(0.5)),
        ] {
            group.bench_function(format!("{}/{form}", isa.name()), |bch| {
                bch.iter(|| binary_arith_on(isa, mul, Side::Slice(black_box(&a)), other, &mut out))
            });
        }
    }
    let baseline = isa_named("baseline").expect("every CPU has the baseline");
    group.bench_function("baseline_filled/mul_scalar", |bch| {
        bch.iter(|| {
            filled.fill(black_box(0.5));
            binary_arith_on(
                baseline,
                mul,
                Side::Slice(black_box(&a)),
                Side::Slice(&filled),
                &mut out,
            )
        })
    });
    group.finish();
}

/// One timing of `f`, in seconds (the summary keeps the best of its
/// rounds: noise on a shared machine only ever adds time).
fn secs(f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64()
}

fn summary(_: &mut Criterion) {
    let best = Isa::detected();
    println!(
        "vmath summary on {} ({} Ki elements, one thread; Gelem/s, best of 15 alternating rounds):",
        best.name(),
        N >> 10
    );
    for func in Func::ALL {
        let xs = inputs(func);
        let mut out = vec![0.0f32; N];
        let mut out2 = vec![0.0f32; N];
        let (mut tv, mut ts) = (f64::INFINITY, f64::INFINITY);
        let scalar_name = if libm(func).is_some() {
            "libm"
        } else {
            "one at a time"
        };
        for _ in 0..15 {
            tv = tv.min(secs(&mut || apply_on(best, func, black_box(&xs), &mut out)));
            ts = ts.min(secs(&mut || match libm(func) {
                Some(f) => scalar_loop(f, black_box(&xs), &mut out2),
                None => one_at_a_time(func, black_box(&xs), &mut out2),
            }));
        }
        let g = |t: f64| N as f64 / t / 1e9;
        println!(
            "  {:<9} vector {:6.2}  scalar ({scalar_name}) {:6.2}  ratio {:5.1}x",
            func.name(),
            g(tv),
            g(ts),
            ts / tv
        );
    }
}

criterion_group!(benches, functions, arith, summary);
criterion_main!(benches);
