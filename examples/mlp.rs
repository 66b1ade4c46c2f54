//! An MLP on 8 simulated devices: a `data`=4 × `model`=2 mesh, Megatron
//! tensor parallelism (first weight split by columns, second by rows) plus
//! data parallelism (the batch split 4 ways). Two programs exported from
//! JAX (`fixtures/jax/`): the forward pass, and a full training step
//! (forward, MSE loss, backward, SGD update, returning the loss and the new
//! parameters). For each: the sharding of every input, the collectives the
//! partitioner inserted with the bytes each device receives, the time per
//! step, and the largest difference from the unsharded 1-device run and
//! from JAX's own outputs. Then the same forward pass at a size where the
//! time is spent in matmuls (`synth::mlp_chain_text`, 4 layers, B=256,
//! H=1024).
//!
//! Each program's step time is also *predicted* by meshrun's cost model
//! for this machine (`meshrun::cost::cpu_sim`: α and β fitted to the CPU
//! backend's collectives over the program's groups — what `meshrun
//! bench-comm` runs — and compute at one core's measured GEMM rate shared
//! by the simulated devices) and the prediction/measurement ratio printed;
//! the model describes a thread per device (`--executor threads`), so
//! each step is timed both ways: lockstep (the default) and threads.
//!
//! `cargo run --release --example mlp`

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use meshrun::compiler::partition::{collective_bytes, PartitionedProgram};
use meshrun::compiler::text::parse_module;
use meshrun::compiler::Module;
use meshrun::cost::cpu_sim::predict_cpu_step;
use meshrun::load::load_file;
use meshrun::render::describe_sharding;
use meshrun::runtime::compare::{compare, rtol_for};
use meshrun::runtime::npy::read_npy;
use meshrun::runtime::pipeline::compile;
use meshrun::runtime::random_inputs::random_inputs;
use meshrun::runtime::reference::run_function;
use meshrun::runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};
use meshrun::synth::mlp_chain_text;
use meshrun_kernels::{HostTensor, Parallelism};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax")
        .join(name)
}

/// `dir/prefix_0.npy`, `dir/prefix_1.npy`, ... until one is missing.
fn numbered(dir: &Path, prefix: &str) -> Result<Vec<HostTensor>> {
    let mut out = Vec::new();
    loop {
        let p = dir.join(format!("{prefix}_{}.npy", out.len()));
        if !p.exists() {
            return Ok(out);
        }
        out.push(read_npy(&p)?);
    }
}

/// The sharding of every input, drawn.
fn print_input_shardings(program: &PartitionedProgram) {
    let g = &program.global;
    for (k, &a) in g.args.iter().enumerate() {
        let v = &g.values[a];
        let mesh_name = v.sharding.mesh_name().unwrap_or("mesh");
        println!("  input {k}: {} {}", v.ty, v.sharding);
        if let Some(mesh) = g.mesh_of(&v.sharding) {
            print!("{}", describe_sharding(&v.ty, &v.sharding, mesh_name, mesh));
        }
    }
}

/// Every collective of the device program with the bytes a device
/// receives, and why it is there.
fn print_collectives(program: &PartitionedProgram) {
    let d = &program.device;
    let n = d.num_devices();
    let mut any = false;
    for (c, cause) in d.collectives() {
        if !c.communicates() {
            continue;
        }
        any = true;
        println!(
            "  {:<18} over {:<12} {:?} -> {:?} {:>8.0} B/device  ({}: {})",
            c.kind.to_string(),
            format!(
                "{{{}}}",
                c.axes
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            c.in_local_shape,
            c.out_local_shape,
            collective_bytes(c, n),
            cause.op,
            cause.reason
        );
    }
    if !any {
        println!("  (none)");
    }
    println!(
        "  total: {:.0} bytes received per device per step",
        program.total_bytes_per_device()
    );
}

/// Run sharded `runs` times on placed inputs; the outputs and the median
/// time in ms.
fn run_timed(
    program: &PartitionedProgram,
    inputs: &[HostTensor],
    runs: usize,
    executor: CpuExecutor,
) -> Result<(Vec<HostTensor>, f64)> {
    let backend = CpuBackend::new().with_executor(executor);
    let exec = Executor::new(&program.device)?;
    let placed = exec.place(&backend, inputs)?;
    let opts = ExecOptions::default();
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        last = Some(exec.run(&backend, &placed, &opts)?);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let outs = last.context("no run")?;
    Ok((exec.gather(&backend, outs, true)?, times[times.len() / 2]))
}

/// The largest absolute difference over all outputs, after checking each
/// is within the tolerance.
fn max_diff(got: &[HostTensor], want: &[HostTensor], rtol: f64, what: &str) -> Result<f64> {
    if got.len() != want.len() {
        bail!("{} outputs, {what} has {}", got.len(), want.len());
    }
    let mut worst = 0.0f64;
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let d = compare(g, w, rtol).map_err(anyhow::Error::msg)?;
        if !d.within() {
            bail!(
                "output {k} differs from {what}: max abs diff {:e}",
                d.max_abs
            );
        }
        worst = worst.max(d.max_abs);
    }
    Ok(worst)
}

/// The cost model's prediction of a step on this machine next to the
/// measured time of a thread per device, the simulation it models (`meshrun::cost::cpu_sim`: collectives fitted over the
/// program's own groups, compute at one core's GEMM rate shared by the
/// devices, plus the simulation's per-instruction and dispatch costs).
fn print_prediction(program: &PartitionedProgram, measured_ms: f64) -> Result<()> {
    let p = predict_cpu_step(program)?;
    let ms = |s: f64| s * 1e3;
    println!(
        "predicted {:.3} ms per step on this machine = collectives {:.3} + compute {:.3} + instruction overhead {:.3} + dispatch {:.3} ms",
        ms(p.total_s()),
        ms(p.communication_s),
        ms(p.compute_s),
        ms(p.overhead_s),
        ms(p.dispatch_s)
    );
    for f in &p.fits {
        println!(
            "  {} over {} group(s) of {}: fitted α {:.2} µs, {:.2} GB/s (rms error {:.0}%)",
            f.kind,
            f.groups.len(),
            f.groups.first().map_or(0, Vec::len),
            f.fit.latency_us(),
            f.fit.bandwidth_gbytes_per_s(),
            f.fit.rms_rel_error * 100.0
        );
    }
    println!(
        "  ({} devices on {} cores, f32 GEMM {:.0} GFLOP/s per core, {:.2} µs per instruction)",
        p.devices,
        p.cores,
        p.core_gflops,
        p.instr_s * 1e6
    );
    println!(
        "predicted / measured (a thread per device) = {:.2}x",
        ms(p.total_s()) / measured_ms
    );
    Ok(())
}

fn run_fixture(name: &str, title: &str) -> Result<()> {
    let dir = fixture(name);
    let module: Module = load_file(&dir.join("input.mlir"))?;
    let inputs = numbered(&dir, "in")?;
    let jax = numbered(&dir, "out")?;
    let program = compile(&module).map_err(|d| anyhow::anyhow!("{}: {}", d.pos, d.message))?;
    println!(
        "== {title} ({name}) on {} devices ==",
        program.device.num_devices()
    );
    println!("input shardings:");
    print_input_shardings(&program);
    println!("collectives:");
    print_collectives(&program);
    let (got, ms) = run_timed(&program, &inputs, 25, CpuExecutor::Lockstep)?;
    let (threads_got, threads_ms) = run_timed(&program, &inputs, 25, CpuExecutor::Threads)?;
    let reference = run_function(&module, "main", &inputs, Parallelism::None)?;
    let rtol = rtol_for(&module);
    let vs_ref = max_diff(&got, &reference, rtol, "the 1-device run")?;
    let vs_jax = max_diff(&got, &jax, rtol, "JAX")?;
    max_diff(&threads_got, &reference, rtol, "the 1-device run")?;
    for (k, t) in got.iter().enumerate() {
        let shown = if t.len() == 1 {
            format!(" = {:.6}", t.to_f64_vec()[0])
        } else {
            String::new()
        };
        println!("  output {k}: {}{shown}", t.tensor_type());
    }
    println!("time per step: {ms:.3} ms (median of 25; a thread per device: {threads_ms:.3} ms)");
    print_prediction(&program, threads_ms)?;
    println!("max |sharded - 1-device| = {vs_ref:e}; max |sharded - JAX| = {vs_jax:e}\n");
    Ok(())
}

fn run_synthetic(batch: i64, hidden: i64) -> Result<()> {
    let module = parse_module(&mlp_chain_text(4, batch, hidden))
        .map_err(|d| anyhow::anyhow!("{}: {}", d.pos, d.message))?;
    let f = module.func("main").context("@main")?;
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let mut inputs = random_inputs(&types, 1).map_err(anyhow::Error::msg)?;
    let scale = (hidden as f32).sqrt().recip();
    for t in inputs.iter_mut().skip(1) {
        if let HostTensor::F32(a) = t {
            a.mapv_inplace(|x| x * scale);
        }
    }
    let program = compile(&module).map_err(|d| anyhow::anyhow!("{}: {}", d.pos, d.message))?;
    println!(
        "== 4-layer tanh MLP forward, B={batch} H={hidden} (synth::mlp_chain_text) on {} devices ==",
        program.device.num_devices()
    );
    print_collectives(&program);
    let (got, ms) = run_timed(&program, &inputs, 7, CpuExecutor::Lockstep)?;
    let (_, threads_ms) = run_timed(&program, &inputs, 7, CpuExecutor::Threads)?;
    let start = Instant::now();
    let reference = run_function(&module, "main", &inputs, Parallelism::Rayon(0))?;
    let ms1 = start.elapsed().as_secs_f64() * 1e3;
    let diff = max_diff(&got, &reference, rtol_for(&module), "the 1-device run")?;
    let gflop = (4 * 2 * batch * hidden * hidden) as f64 / 1e9;
    println!(
        "time per step: {ms:.2} ms on 8 devices ({:.1} GFLOP/s; a thread per device: {threads_ms:.2} ms), {ms1:.2} ms on 1 device; max |sharded - 1-device| = {diff:e}",
        gflop / (ms / 1e3)
    );
    print_prediction(&program, threads_ms)
}

fn main() -> Result<()> {
    run_fixture("mlp_forward", "MLP forward")?;
    run_fixture(
        "mlp_train_step",
        "MLP training step: forward, loss, backward, SGD",
    )?;
    run_synthetic(256, 1024)
}
