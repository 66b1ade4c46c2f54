//! The 4-layer tanh MLP forward (`synth::mlp_chain_text`: Megatron
//! column/row-sharded weights, batch on "data") on 8 simulated CPU devices
//! (`data`=4 × `model`=2) and unsharded on 1 device (the reference
//! interpreter, all cores), at B=256 H=2048 and B=64 H=1024, f32, plus the
//! `gemm` crate's single-threaded rate on one layer's matmul (256×2048 ·
//! 2048×2048) as the baseline. Throughput is in FLOP/s of the matmuls
//! (criterion's "elem/s": 4 layers × 2·B·H·H per run).
//!
//! The last entry (`summary`) times the three side by side in one process
//! and prints the ratios the runtime is held to:
//! - 8-device rate ≥ 75% of the single-threaded gemm rate at B=256 H=2048;
//! - 8-device time ≤ 1.3 × 1-device time at B=64 H=1024.
//!
//! `cargo bench --bench mlp` (add `-- summary` for the ratios alone).

#[path = "common/median.rs"]
mod median;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use meshrun::compiler::text::parse_module;
use meshrun::compiler::Module;
use meshrun::runtime::executor::Placed;
use meshrun::runtime::pipeline::compile;
use meshrun::runtime::random_inputs::random_inputs;
use meshrun::runtime::reference::run_function;
use meshrun::runtime::{CpuBackend, ExecOptions, Executor};
use meshrun::synth::mlp_chain_text;
use meshrun_compiler::partition::PartitionedProgram;
use meshrun_kernels::cpu::dot::gemm_2d;
use meshrun_kernels::{HostTensor, Parallelism};
use ndarray::Array2;

use median::median_secs;

const LAYERS: usize = 4;

/// Matmul FLOPs of one forward pass.
fn flops(batch: usize, hidden: usize) -> u64 {
    (LAYERS * 2 * batch * hidden * hidden) as u64
}

struct Mlp {
    module: Module,
    program: PartitionedProgram,
    inputs: Vec<HostTensor>,
}

impl Mlp {
    fn new(batch: usize, hidden: usize) -> Mlp {
        let text = mlp_chain_text(LAYERS, batch as i64, hidden as i64);
        let module = parse_module(&text).expect("the MLP parses");
        let program = compile(&module).expect("the MLP partitions");
        let f = module.func("main").expect("@main");
        let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
        let mut inputs = random_inputs(&types, 7).expect("inputs");
        // Weights scaled by 1/sqrt(H) keep activations out of tanh's flat
        // tails, like a real initialisation.
        let scale = (hidden as f64).sqrt().recip();
        for t in inputs.iter_mut().skip(1) {
            if let HostTensor::F32(a) = t {
                a.mapv_inplace(|x| x * scale as f32);
            }
        }
        Mlp {
            module,
            program,
            inputs,
        }
    }

    fn sharded<'a>(
        &'a self,
        backend: &CpuBackend,
    ) -> (Executor<'a>, Placed<std::sync::Arc<HostTensor>>) {
        let exec = Executor::new(&self.program.device).expect("executor");
        let placed = exec.place(backend, &self.inputs).expect("placed");
        (exec, placed)
    }

    fn unsharded(&self) -> Vec<HostTensor> {
        run_function(&self.module, "main", &self.inputs, Parallelism::Rayon(0)).expect("runs")
    }
}

/// One layer's matmul through `gemm`, single-threaded, into a preallocated
/// result.
struct Gemm {
    a: Array2<f32>,
    b: Array2<f32>,
    dst: Array2<f32>,
}

impl Gemm {
    fn new(m: usize, k: usize, n: usize) -> Gemm {
        let fill = |rows, cols, seed: f32| {
            Array2::from_shape_fn((rows, cols), |(i, j)| {
                ((i * 31 + j * 17) as f32 * seed).sin()
            })
        };
        Gemm {
            a: fill(m, k, 0.37),
            b: fill(k, n, 0.11),
            dst: Array2::zeros((m, n)),
        }
    }

    fn run(&mut self) {
        gemm_2d(
            self.dst.view_mut(),
            self.a.view(),
            self.b.view(),
            Parallelism::None,
        )
        .expect("gemm");
    }
}

fn bench_shape(c: &mut Criterion, batch: usize, hidden: usize) {
    let mlp = Mlp::new(batch, hidden);
    let backend = CpuBackend::new();
    let (exec, placed) = mlp.sharded(&backend);
    let opts = ExecOptions::default();
    let mut group = c.benchmark_group(format!("mlp_b{batch}_h{hidden}"));
    group.sample_size(10);
    group.throughput(Throughput::Elements(flops(batch, hidden)));
    group.bench_function("8_devices", |b| {
        b.iter(|| exec.run(&backend, black_box(&placed), &opts).expect("runs"))
    });
    group.bench_function("1_device", |b| b.iter(|| mlp.unsharded()));
    group.finish();
}

fn bench_large(c: &mut Criterion) {
    bench_shape(c, 256, 2048);
    let mut gemm = Gemm::new(256, 2048, 2048);
    let mut group = c.benchmark_group("gemm_256x2048x2048");
    group.sample_size(10);
    group.throughput(Throughput::Elements(2 * 256 * 2048 * 2048u64));
    group.bench_function("1_thread", |b| b.iter(|| gemm.run()));
    group.finish();
}

fn bench_small(c: &mut Criterion) {
    bench_shape(c, 64, 1024);
}

/// The targets, measured side by side.
fn summary(_: &mut Criterion) {
    let backend = CpuBackend::new();
    let opts = ExecOptions::default();
    let gflops = |flop: u64, secs: f64| flop as f64 / secs / 1e9;

    let big = Mlp::new(256, 2048);
    let (exec, placed) = big.sharded(&backend);
    let t8 = median_secs(15, || {
        exec.run(&backend, &placed, &opts).expect("runs");
    });
    let t1 = median_secs(15, || {
        big.unsharded();
    });
    let mut gemm = Gemm::new(256, 2048, 2048);
    let tg = median_secs(15, || gemm.run());
    let (r8, r1, rg) = (
        gflops(flops(256, 2048), t8),
        gflops(flops(256, 2048), t1),
        gflops(2 * 256 * 2048 * 2048u64, tg),
    );
    println!(
        "summary B=256 H=2048: 8 devices {:.2} ms ({r8:.1} GFLOP/s), 1 device {:.2} ms ({r1:.1} GFLOP/s), gemm 1 thread {rg:.1} GFLOP/s; 8-device / gemm = {:.0}% (target >= 75%)",
        t8 * 1e3,
        t1 * 1e3,
        100.0 * r8 / rg
    );
    drop((exec, placed));

    let small = Mlp::new(64, 1024);
    let (exec, placed) = small.sharded(&backend);
    let t8 = median_secs(51, || {
        exec.run(&backend, &placed, &opts).expect("runs");
    });
    let t1 = median_secs(51, || {
        small.unsharded();
    });
    println!(
        "summary B=64 H=1024: 8 devices {:.3} ms ({:.1} GFLOP/s), 1 device {:.3} ms ({:.1} GFLOP/s); 8-device / 1-device time = {:.2}x (target <= 1.3x)",
        t8 * 1e3,
        gflops(flops(64, 1024), t8),
        t1 * 1e3,
        gflops(flops(64, 1024), t1),
        t8 / t1
    );
}

criterion_group!(benches, bench_large, bench_small, summary);
criterion_main!(benches);
