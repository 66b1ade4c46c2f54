//! A program run sharded on the CPU backend's simulated devices vs
//! unsharded on one device (the reference interpreter, its matmuls on
//! every core): the criterion groups and the `summary` ratio lines of the
//! `embedding` and `gpt2` benches.

use criterion::{black_box, Criterion};
use meshrun::compiler::text::parse_module;
use meshrun::compiler::Module;
use meshrun::runtime::pipeline::compile;
use meshrun::runtime::reference::run_function;
use meshrun::runtime::{CpuBackend, ExecOptions, Executor};
use meshrun_compiler::partition::PartitionedProgram;
use meshrun_kernels::{HostTensor, Parallelism};

use crate::median::median_secs;

/// A module (`@main`), its partitioned program and its inputs.
pub struct Case {
    pub module: Module,
    pub program: PartitionedProgram,
    pub inputs: Vec<HostTensor>,
}

impl Case {
    /// `text` parsed and partitioned, with `inputs(module)`.
    pub fn new(text: &str, inputs: impl FnOnce(&Module) -> Vec<HostTensor>) -> Case {
        let module = parse_module(text).expect("parses");
        let program = compile(&module).expect("partitions");
        let inputs = inputs(&module);
        Case {
            module,
            program,
            inputs,
        }
    }

    pub fn unsharded(&self) -> Vec<HostTensor> {
        run_function(&self.module, "main", &self.inputs, Parallelism::Rayon(0)).expect("runs")
    }
}

/// One criterion group per case, `{prefix}_{name}`: `8_devices` and
/// `1_device`.
pub fn bench_cases(c: &mut Criterion, prefix: &str, cases: &[(&str, Case)]) {
    let backend = CpuBackend::new();
    let opts = ExecOptions::default();
    for (name, case) in cases {
        let exec = Executor::new(&case.program.device).expect("executor");
        let placed = exec.place(&backend, &case.inputs).expect("placed");
        let mut group = c.benchmark_group(format!("{prefix}_{name}"));
        group.sample_size(10);
        group.bench_function("8_devices", |b| {
            b.iter(|| exec.run(&backend, black_box(&placed), &opts).expect("runs"))
        });
        group.bench_function("1_device", |b| b.iter(|| case.unsharded()));
        group.finish();
    }
}

/// Times each case sharded and unsharded side by side (medians of 9) and
/// prints `summary {label(name)}: ...` with the 8-device / 1-device time
/// ratio and the bytes each device moves.
pub fn summarize(cases: &[(&str, Case)], label: impl Fn(&str) -> String) {
    let backend = CpuBackend::new();
    let opts = ExecOptions::default();
    for (name, case) in cases {
        let exec = Executor::new(&case.program.device).expect("executor");
        let placed = exec.place(&backend, &case.inputs).expect("placed");
        let t8 = median_secs(9, || {
            exec.run(&backend, &placed, &opts).expect("runs");
        });
        let t1 = median_secs(9, || {
            case.unsharded();
        });
        println!(
            "summary {}: 8 devices {:.2} ms, 1 device {:.2} ms; 8-device / 1-device time = {:.2}x; {:.0} B/device moved",
            label(name),
            t8 * 1e3,
            t1 * 1e3,
            t8 / t1,
            case.program.total_bytes_per_device()
        );
    }
}
