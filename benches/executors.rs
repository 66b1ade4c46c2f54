//! The CPU backend's two executors side by side: lockstep (one thread
//! drives every simulated device, the default) against a thread per
//! device, on three programs at 8 devices (`data`=4 × `model`=2) and 64
//! (`data`=16 × `model`=4), plus each program on 1 device (the same
//! executor path: one device runs on the caller's thread):
//!
//! - `mlp`: the 4-layer tanh MLP forward of `benches/mlp.rs`, B=256
//!   H=2048, Megatron column/row sharded weights, batch on `data`;
//! - `train`: one SGD step of that MLP as JAX exports it
//!   (`benches/data/mlp_train_step.mlir`, written by
//!   `tools/bench_vs_jax.py --keep`: `value_and_grad` of an MSE loss);
//! - `gpt2`: the GPT-2 training step of `benches/gpt2.rs`
//!   (`benches/data/gpt2_train_step.mlir`).
//!
//! The 64-device programs are the exported ones with a bigger mesh: the
//! shardings name axes, so partitioning them again cuts every sharded
//! dimension 4 times finer.
//!
//! `cargo bench --bench executors` (add `-- summary` for the ratios alone:
//! each case's lockstep and threads times over its 1-device time, medians
//! measured side by side).

#[path = "common/median.rs"]
mod median;

use std::path::Path;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use meshrun::compiler::text::parse_module;
use meshrun::runtime::pipeline::compile;
use meshrun::runtime::random_inputs::random_inputs;
use meshrun::runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};
use meshrun::synth::mlp_chain_text_on;
use meshrun_compiler::partition::PartitionedProgram;
use meshrun_kernels::HostTensor;

use median::median_secs;

/// `text` (exported on `data`=4 × `model`=2) on `data` × `model`.
fn on_mesh(text: &str, data: i64, model: i64) -> String {
    text.replace(
        r#""data"=4, "model"=2"#,
        &format!(r#""data"={data}, "model"={model}"#),
    )
    .replace(
        r#"size = 4 : i64}, {name = "model", size = 2"#,
        &format!(r#"size = {data} : i64}}, {{name = "model", size = {model}"#),
    )
    .replace(
        "num_partitions = 8 :",
        &format!("num_partitions = {} :", data * model),
    )
}

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The program `name` on a `data` × `model` mesh.
fn program_text(name: &str, data: i64, model: i64) -> String {
    match name {
        "mlp" => mlp_chain_text_on(4, 256, 2048, data, model),
        "train" => on_mesh(&read("benches/data/mlp_train_step.mlir"), data, model),
        "gpt2" => on_mesh(&read("benches/data/gpt2_train_step.mlir"), data, model),
        other => panic!("no program {other}"),
    }
}

/// A program partitioned for one mesh, with inputs: floats scaled to
/// keep tanh out of its flat tails, integer ids spread over the
/// vocabulary (the first argument's rows).
struct Case {
    program: PartitionedProgram,
    inputs: Vec<HostTensor>,
}

impl Case {
    fn new(text: &str) -> Case {
        let module = parse_module(text).expect("parses");
        let program = compile(&module).expect("partitions");
        let f = module.func("main").expect("@main");
        let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
        let rows = types[0].shape.first().copied().unwrap_or(1).max(1);
        let mut inputs = random_inputs(&types, 7).expect("inputs");
        for t in &mut inputs {
            match t {
                HostTensor::F32(a) => a.mapv_inplace(|x| x * 0.05),
                HostTensor::I32(a) => a.mapv_inplace(|x| x.rem_euclid(rows as i32)),
                _ => {}
            }
        }
        Case { program, inputs }
    }

    /// Median seconds of a run with `executor`, over `runs`.
    fn time(&self, executor: CpuExecutor, runs: usize) -> f64 {
        let backend = CpuBackend::new().with_executor(executor);
        let exec = Executor::new(&self.program.device).expect("executor");
        let placed = exec.place(&backend, &self.inputs).expect("placed");
        let opts = ExecOptions::default();
        median_secs(runs, || {
            exec.run(&backend, &placed, &opts).expect("runs");
        })
    }
}

const PROGRAMS: [&str; 3] = ["mlp", "train", "gpt2"];
/// (devices, data, model)
const MESHES: [(usize, i64, i64); 2] = [(8, 4, 2), (64, 16, 4)];

fn bench(c: &mut Criterion) {
    let opts = ExecOptions::default();
    for name in PROGRAMS {
        for (devices, data, model) in MESHES {
            let case = Case::new(&program_text(name, data, model));
            let exec = Executor::new(&case.program.device).expect("executor");
            let mut group = c.benchmark_group(format!("executors_{name}_{devices}_devices"));
            group.sample_size(10);
            for (label, executor) in [
                ("lockstep", CpuExecutor::Lockstep),
                ("threads", CpuExecutor::Threads),
            ] {
                let backend = CpuBackend::new().with_executor(executor);
                let placed = exec.place(&backend, &case.inputs).expect("placed");
                group.bench_function(label, |b| {
                    b.iter(|| exec.run(&backend, black_box(&placed), &opts).expect("runs"))
                });
            }
            group.finish();
        }
    }
}

/// Every case's times side by side, over the same program on 1 device.
fn summary(_: &mut Criterion) {
    for name in PROGRAMS {
        let one = Case::new(&program_text(name, 1, 1)).time(CpuExecutor::Lockstep, 9);
        for (devices, data, model) in MESHES {
            let case = Case::new(&program_text(name, data, model));
            let lockstep = case.time(CpuExecutor::Lockstep, 9);
            let threads = case.time(CpuExecutor::Threads, 9);
            println!(
                "summary {name} on {devices} devices: lockstep {:.1} ms ({:.2}x 1 device), threads {:.1} ms ({:.2}x), 1 device {:.1} ms",
                lockstep * 1e3,
                lockstep / one,
                threads * 1e3,
                threads / one,
                one * 1e3
            );
        }
    }
}

criterion_group!(benches, bench, summary);
criterion_main!(benches);
