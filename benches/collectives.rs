//! Collectives on the CPU backend: each of the five `bench-comm` ops on 8
//! simulated devices at 1 KiB, 1 MiB and 64 MiB (nccl-tests' size S), a
//! single-thread memcpy of 64 MiB for scale, and at the end two lines: the
//! latency of a 1 KiB all-reduce and all-gather (median of 2000, target
//! ≤ 20 µs for the all-reduce), and all-gather's bus bandwidth at 64 MiB
//! against the memcpy's bandwidth (interleaved best-of-5, measured side by
//! side so both see the same machine state).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use meshrun::compiler::ir::ElemType;
use meshrun::cost::model::bus_factor;
use meshrun::runtime::comm_bench::{time_collective, BenchOp, CommBench, CommBenchResult};
use meshrun::runtime::CpuBackend;

const DEVICES: i64 = 8;
const SIZES: [(u64, &str); 3] = [(1 << 10, "1KiB"), (1 << 20, "1MiB"), (64 << 20, "64MiB")];
const MEMCPY_BYTES: usize = 64 << 20;

fn measure(op: BenchOp, bytes: u64, warmup: usize, iters: usize) -> CommBenchResult {
    let bench = CommBench {
        op,
        devices: (0..DEVICES).collect(),
        concurrent: Vec::new(),
        bytes,
        elem: ElemType::F32,
        warmup,
        iters,
    };
    let r = time_collective(&CpuBackend::new(), &bench)
        .unwrap_or_else(|e| panic!("{op} at {bytes} B failed: {e}"));
    assert!(
        r.ok(),
        "{op} at {bytes} B gave a WRONG result: {:?}",
        r.error
    );
    r
}

fn collectives(c: &mut Criterion) {
    let mut group = c.benchmark_group("collectives");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for op in BenchOp::ALL {
        for (bytes, label) in SIZES {
            group.throughput(Throughput::Bytes(bytes));
            group.bench_function(format!("{op}/{label}"), |b| {
                // One run_spmd of `iters` collectives: the time criterion
                // sees is the sum of the slowest device's per-run times.
                b.iter_custom(|iters| {
                    let r = measure(op, bytes, 1, iters as usize);
                    Duration::from_secs_f64(r.times_s.iter().sum())
                })
            });
        }
    }
    group.finish();
}

/// Copy `src` into `dst` (already written, so no page faults), seconds.
fn memcpy_once(dst: &mut [u8], src: &[u8]) -> f64 {
    let start = Instant::now();
    dst.copy_from_slice(black_box(src));
    black_box(&mut *dst);
    start.elapsed().as_secs_f64()
}

fn memcpy(c: &mut Criterion) {
    let src = vec![1u8; MEMCPY_BYTES];
    let mut dst = vec![0u8; MEMCPY_BYTES];
    let mut group = c.benchmark_group("memcpy");
    group
        .sample_size(10)
        .throughput(Throughput::Bytes(MEMCPY_BYTES as u64));
    group.bench_function("single-thread/64MiB", |b| {
        b.iter_custom(|iters| {
            let secs: f64 = (0..iters).map(|_| memcpy_once(&mut dst, &src)).sum();
            Duration::from_secs_f64(secs)
        })
    });
    group.finish();
}

/// The median time of a 1 KiB collective on 8 devices: fixed costs
/// (rendezvous, wake-ups), not bytes.
fn latency(_: &mut Criterion) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    for op in [BenchOp::AllReduce, BenchOp::AllGather] {
        let r = measure(op, 1 << 10, 100, 2000);
        let mut t = r.times_s.clone();
        t.sort_by(f64::total_cmp);
        println!(
            "{op} 1 KiB on {DEVICES} CPU devices: median {:.1} µs, p90 {:.1} µs (target <= 20 µs for all-reduce; load {})",
            t[t.len() / 2] * 1e6,
            t[t.len() * 9 / 10] * 1e6,
            load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
    }
}

/// all-gather busbw at 64 MiB against single-thread memcpy bandwidth.
fn ratio(_: &mut Criterion) {
    let src = vec![1u8; MEMCPY_BYTES];
    let mut dst = vec![0u8; MEMCPY_BYTES];
    memcpy_once(&mut dst, &src);
    let (mut best_gather, mut best_copy) = (f64::INFINITY, f64::INFINITY);
    let mut bytes = 0;
    for _ in 0..5 {
        let r = measure(BenchOp::AllGather, 64 << 20, 1, 1);
        bytes = r.bytes;
        best_gather = best_gather.min(r.min_s());
        best_copy = best_copy.min(memcpy_once(&mut dst, &src));
    }
    let busbw = bytes as f64 / best_gather * bus_factor(BenchOp::AllGather.kind(), 8) / 1e9;
    let copy_bw = MEMCPY_BYTES as f64 / best_copy / 1e9;
    println!(
        "all-gather 64 MiB on {DEVICES} CPU devices: busbw {busbw:.2} GB/s; single-thread memcpy 64 MiB: {copy_bw:.2} GB/s; ratio {:.2} (target >= 0.5; {} cores)",
        busbw / copy_bw,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
}

criterion_group!(benches, collectives, memcpy, latency, ratio);
criterion_main!(benches);
