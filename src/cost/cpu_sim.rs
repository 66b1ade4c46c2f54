//! The cost model applied to the CPU backend's simulated devices, a thread
//! per device (`CpuExecutor::Threads`, the way MPI and CUDA ranks run): a
//! prediction of a program's step time on *this* machine, to set next to a
//! measured run (`examples/mlp.rs` prints both).
//!
//! The α-β model prices collectives and compute. Simulated devices are
//! threads that share the machine's cores, so the prediction measures the
//! machine first and adds the two costs a simulation has that the model
//! does not describe:
//!
//! - **collectives**: α and β fitted ([`crate::cost::calibrate::fit`]) to
//!   timings of each collective kind the program uses, run by
//!   [`comm_bench`] over the program's own groups, all at once (four
//!   2-device groups on 2 cores are not one 2-device group alone), then
//!   the model's formula for each of the program's collectives;
//! - **compute**: the device program's FLOPs at one core's f32 GEMM rate
//!   (measured with every core busy), times the share of the cores each
//!   device gets (`cores / devices`);
//! - **instruction overhead**: a device thread spends a fraction of a
//!   microsecond per instruction however small (allocation, dispatch), and
//!   devices that outnumber the cores take turns: measured as the wall
//!   time per instruction of a chain of tiny adds run by all the devices;
//! - **dispatch**: starting and joining the devices of one run (an empty
//!   `run_spmd`).
//!
//! Calibrate on a quiet machine: the timings are wall-clock.

use std::time::Instant;

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::CollectiveKind;
use meshrun_compiler::partition::{Instr, PartitionedProgram};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::Parallelism;
use meshrun_runtime::backend::Backend;
use meshrun_runtime::collective_kinds as kinds;
use meshrun_runtime::comm_bench::{time_collective, BenchOp, CommBench};
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};

use crate::cost::calibrate::{fit, BenchRow, Fit};
use crate::cost::error::CostError;
use crate::cost::flops::count_flops;
use crate::cost::model::nccl_size_bytes;

/// Message sizes (nccl-tests' `S`) of each calibration sweep.
const SWEEP_BYTES: [u64; 5] = [256, 4 << 10, 64 << 10, 1 << 20, 4 << 20];

/// The fitted model of one collective kind over one set of groups.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveFit {
    pub kind: CollectiveKind,
    /// The groups, as the program's collective has them.
    pub groups: Vec<Vec<i64>>,
    pub fit: Fit,
}

/// What a step of the program should take on this machine, by term.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuSimPrediction {
    pub devices: usize,
    pub cores: usize,
    /// Collectives of the step (the α-β model with fitted α, β).
    pub communication_s: f64,
    /// FLOPs per device over the per-device share of one core's GEMM rate.
    pub compute_s: f64,
    /// Per-instruction overhead of the local instructions.
    pub overhead_s: f64,
    /// Starting and joining the devices.
    pub dispatch_s: f64,
    /// One core's f32 GEMM rate with all cores busy, GFLOP/s.
    pub core_gflops: f64,
    /// Wall seconds of one tiny instruction with every device running.
    pub instr_s: f64,
    pub fits: Vec<CollectiveFit>,
}

impl CpuSimPrediction {
    pub fn total_s(&self) -> f64 {
        self.communication_s + self.compute_s + self.overhead_s + self.dispatch_s
    }
}

fn measure_err(what: &str, e: impl std::fmt::Display) -> CostError {
    CostError::Measure(format!("{what}: {e}"))
}

/// The median of `runs` timings of `f`, seconds.
fn median_time(
    runs: usize,
    mut f: impl FnMut() -> Result<(), CostError>,
) -> Result<f64, CostError> {
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        t.push(start.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// The benchmark of `kind` (none for a kind that moves no data).
fn bench_op(kind: CollectiveKind) -> Option<BenchOp> {
    BenchOp::ALL.into_iter().find(|op| op.kind() == kind)
}

/// Fit α and β to `kind` over `groups` (all at once) on the CPU backend.
fn fit_collective(
    backend: &CpuBackend,
    kind: CollectiveKind,
    groups: &[Vec<i64>],
) -> Result<Option<Fit>, CostError> {
    let Some(op) = bench_op(kind) else {
        return Ok(None);
    };
    // A permute's groups are source/target pairs: bench a ring over their
    // devices instead (every device sends and receives once).
    let groups: Vec<Vec<i64>> = if kinds::def(kind).pairs {
        let mut ring: Vec<i64> = groups.iter().flatten().copied().collect();
        ring.sort_unstable();
        ring.dedup();
        vec![ring]
    } else {
        groups.to_vec()
    };
    let Some((first, rest)) = groups.split_first() else {
        return Ok(None);
    };
    let mut rows = Vec::with_capacity(SWEEP_BYTES.len());
    for bytes in SWEEP_BYTES {
        let bench = CommBench {
            op,
            devices: first.clone(),
            concurrent: rest.to_vec(),
            bytes,
            elem: ElemType::F32,
            warmup: 3,
            iters: 15,
        };
        let r = time_collective(backend, &bench).map_err(|e| measure_err(op.name(), e))?;
        if let Some(e) = r.error {
            return Err(measure_err(op.name(), e));
        }
        rows.push(BenchRow {
            kind,
            ranks: first.len(),
            bytes: r.bytes as f64,
            seconds: r.median_s(),
        });
    }
    Ok(fit(&rows))
}

/// One core's f32 GEMM rate with every core busy, GFLOP/s: a 128×512 ·
/// 512×512 product 4 times over on one thread per core at once (the
/// simulated devices keep all cores busy, and a core alone runs faster),
/// best of 7 rounds (a round is a few milliseconds: one descheduled
/// thread would halve it).
fn core_gflops(cores: usize) -> Result<f64, CostError> {
    let (m, k, n) = (128i64, 512i64, 512i64);
    let text = format!(
        "module @gemm {{\n  func.func public @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{\n    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n    return %0 : tensor<{m}x{n}xf32>\n  }}\n}}\n"
    );
    let module = parse_module(&text).map_err(|d| measure_err("GEMM program", d.message))?;
    let f = module
        .func("main")
        .ok_or_else(|| measure_err("GEMM program", "no @main"))?;
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, 1).map_err(|e| measure_err("GEMM inputs", e))?;
    let mut best = f64::INFINITY;
    const REPEAT: usize = 4;
    let gemms = || -> Result<(), String> {
        for _ in 0..REPEAT {
            run_function(&module, "main", &inputs, Parallelism::None).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    for _ in 0..7 {
        let start = Instant::now();
        std::thread::scope(|s| {
            let runs: Vec<_> = (0..cores).map(|_| s.spawn(gemms)).collect();
            runs.into_iter().try_for_each(|r| match r.join() {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => Err(measure_err("GEMM", e)),
                Err(_) => Err(measure_err("GEMM", "a GEMM thread panicked")),
            })
        })?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok((REPEAT as i64 * 2 * m * k * n) as f64 / best / 1e9)
}

/// Wall seconds per instruction of a chain of 64 tiny adds run by every
/// one of `devices` simulated devices at once (no communication: the input
/// is split over a mesh axis of that size), dispatch excluded. With more
/// devices than cores this includes their taking turns.
fn instr_seconds(backend: &CpuBackend, devices: usize, dispatch_s: f64) -> Result<f64, CostError> {
    const LEN: usize = 64;
    let ty = format!("tensor<{}xf32>", 8 * devices);
    let mut text = format!(
        "module @chain {{\n  sdy.mesh @mesh = <[\"x\"={devices}]>\n  func.func public @main(%x: {ty} {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}]>}}) -> ({ty} {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}]>}}) {{\n"
    );
    let mut prev = "%x".to_string();
    for i in 0..LEN {
        text.push_str(&format!("    %{i} = stablehlo.add {prev}, {prev} : {ty}\n"));
        prev = format!("%{i}");
    }
    text.push_str(&format!("    return {prev} : {ty}\n  }}\n}}\n"));
    let module = parse_module(&text).map_err(|d| measure_err("chain program", d.message))?;
    let program = compile(&module).map_err(|d| measure_err("chain program", d.message))?;
    let exec = Executor::new(&program.device).map_err(|e| measure_err("chain program", e))?;
    let f = module
        .func("main")
        .ok_or_else(|| measure_err("chain program", "no @main"))?;
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, 1).map_err(|e| measure_err("chain inputs", e))?;
    let placed = exec
        .place(backend, &inputs)
        .map_err(|e| measure_err("chain program", e))?;
    let opts = ExecOptions::default();
    let t = median_time(51, || {
        exec.run(backend, &placed, &opts)
            .map(drop)
            .map_err(|e| measure_err("chain program", e))
    })?;
    Ok((t - dispatch_s).max(0.0) / program.device.instrs.len().max(1) as f64)
}

/// Measure this machine and predict one step of `program` on the CPU
/// backend with one thread per device (see the module doc).
pub fn predict_cpu_step(program: &PartitionedProgram) -> Result<CpuSimPrediction, CostError> {
    let backend = CpuBackend::new().with_executor(CpuExecutor::Threads);
    let device = &program.device;
    let devices = device.devices.len().max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let share = (cores as f64 / devices as f64).min(1.0);

    let mut fits: Vec<CollectiveFit> = Vec::new();
    let mut communication_s = 0.0;
    for (c, _) in device.collectives() {
        if !c.communicates() {
            continue;
        }
        let known = fits
            .iter()
            .find(|f| f.kind == c.kind && f.groups == c.groups)
            .map(|f| f.fit);
        let fitted = match known {
            Some(f) => Some(f),
            None => {
                let f = fit_collective(&backend, c.kind, &c.groups)?;
                if let Some(f) = f {
                    fits.push(CollectiveFit {
                        kind: c.kind,
                        groups: c.groups.clone(),
                        fit: f,
                    });
                }
                f
            }
        };
        if let Some(f) = fitted {
            communication_s += f.predict(&BenchRow {
                kind: c.kind,
                ranks: c.group_size(),
                bytes: nccl_size_bytes(c),
                seconds: 0.0,
            });
        }
    }

    let ids = device.devices.clone();
    let dispatch_s = median_time(101, || {
        backend
            .run_spmd(&ids, &|_| Ok(()))
            .map(drop)
            .map_err(|e| measure_err("empty run", e))
    })?;
    let core_gflops = core_gflops(cores.min(devices))?;
    let compute_s = count_flops(device).total() / (core_gflops * 1e9 * share);
    let instr_s = instr_seconds(&backend, devices, dispatch_s)?;
    let local = device
        .instrs
        .iter()
        .filter(|i| !matches!(i, Instr::Collective { .. }))
        .count();
    let overhead_s = local as f64 * instr_s;
    Ok(CpuSimPrediction {
        devices,
        cores,
        communication_s,
        compute_s,
        overhead_s,
        dispatch_s,
        core_gflops,
        instr_s,
        fits,
    })
}
