//! Which sharding should I use? `meshrun suggest` on training steps
//! exported from JAX without shardings (`fixtures/jax_suggest/`), for a
//! `data`=4 × `model`=2 mesh:
//!
//! 1. the suggestion next to the sharding a person would write (Megatron on
//!    `model` + batch on `data`, lowered by JAX: `hand.mlir`) and next to
//!    everything replicated, predicted step time and memory per device on
//!    two machines (`h100-nvlink-8`, `pcie4-8`), with how many assignments
//!    the search scored and how long it took;
//! 2. the suggestion (for `h100-nvlink-8`) run on this machine's simulated
//!    CPU devices: the measured step time against `cost::cpu_sim`'s
//!    prediction for it, and the outputs against the unsharded run.
//!
//! `cargo run --release --example suggest [-- --no-run] [--only NAME]`
//! (`--no-run`: the table only; `--only`: one program).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use meshrun::compiler::partition::{partition, PartitionedProgram};
use meshrun::compiler::propagation::{propagate, PropagationOptions};
use meshrun::compiler::sharding::Mesh;
use meshrun::compiler::Module;
use meshrun::cost::cpu_sim::predict_cpu_step;
use meshrun::cost::memory::memory_per_device;
use meshrun::cost::render::{human_bytes, human_time};
use meshrun::cost::{cost_report, Topology};
use meshrun::load::load_file;
use meshrun::runtime::compare::compare;
use meshrun::runtime::random_inputs::random_inputs;
use meshrun::runtime::reference::run_function;
use meshrun::runtime::{CpuBackend, ExecOptions, Executor};
use meshrun::suggest::output::partition_spec;
use meshrun::suggest::search::SearchOptions;
use meshrun::suggest::{suggest, SuggestOptions, Suggestion};
use meshrun_kernels::{HostTensor, Parallelism};

const PROGRAMS: [&str; 5] = [
    "mlp4_train_b4096_h2048",
    "mlp4_train_b16384_h512",
    "attention_train_b8_s512_e1024",
    "gpt2_train_l2_e768",
    "mlp16_train_b4096_h2048",
];

/// Not run on the CPU devices: 1.6 TFLOP a step.
const NOT_RUN: &str = "mlp16_train_b4096_h2048";
const TOPOLOGIES: [&str; 2] = ["h100-nvlink-8", "pcie4-8"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax_suggest")
        .join(name)
}

fn mesh() -> Mesh {
    Mesh::new(&[("data", 4), ("model", 2)])
}

fn run_suggest(module: &Module, topology: &str) -> Result<Suggestion> {
    let opts = SuggestOptions {
        mesh: Some(mesh()),
        topology: Topology::resolve(topology)?,
        memory_per_device: None,
        keep_given: false,
        top: 3,
        search: SearchOptions::default(),
    };
    Ok(suggest(module, &opts)?)
}

fn compile(module: &Module) -> Result<PartitionedProgram> {
    let p = propagate(module, &PropagationOptions::default()).map_err(|d| anyhow!("{d}"))?;
    partition(&p).map_err(|d| anyhow!("{d}"))
}

/// "365 µs, 112 MiB"
fn cell(step_s: f64, bytes: f64) -> String {
    format!("{}, {}", human_time(step_s), human_bytes(bytes))
}

fn table(only: Option<&str>) -> Result<Vec<(String, Suggestion)>> {
    println!("| program | topology | suggested | hand (Megatron + DP) | replicated | assignments scored | search time |");
    println!("|---|---|---|---|---|---|---|");
    let mut for_cpu = Vec::new();
    for name in PROGRAMS
        .into_iter()
        .filter(|n| only.is_none_or(|o| o == *n))
    {
        let module = load_file(&fixture(name).join("input.mlir"))?;
        let hand = compile(&load_file(&fixture(name).join("hand.mlir"))?)?;
        let hand_mem = memory_per_device(&hand.device).total_bytes();
        for topology in TOPOLOGIES {
            let start = Instant::now();
            let s = run_suggest(&module, topology)?;
            let took = start.elapsed().as_secs_f64();
            let hand_cost = cost_report(&hand, &Topology::resolve(topology)?, None)?;
            println!(
                "| `{name}` | `{topology}` | {} | {} | {} | {} | {} |",
                cell(s.chosen.score.step_s, s.chosen.score.memory_bytes),
                cell(hand_cost.step_seconds, hand_mem),
                cell(s.baseline.score.step_s, s.baseline.score.memory_bytes),
                s.evaluated,
                human_time(took)
            );
            if topology == TOPOLOGIES[0] {
                for_cpu.push((name.to_string(), s));
            }
        }
    }
    for (name, s) in &for_cpu {
        let specs: Vec<String> = s
            .args
            .iter()
            .map(|a| {
                format!(
                    "{} {}",
                    a.name,
                    partition_spec(&s.chosen.assignment[a.index])
                )
            })
            .collect();
        println!("\n{name} on {}: {}", TOPOLOGIES[0], specs.join(", "));
    }
    Ok(for_cpu)
}

/// Inputs scaled like a trained network's (weights by 1/sqrt(fan-in)), so
/// activations stay in tanh's range.
fn inputs(module: &Module) -> Result<Vec<HostTensor>> {
    let f = module.entry().ok_or_else(|| anyhow!("no entry function"))?;
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let mut inputs = random_inputs(&types, 1).map_err(anyhow::Error::msg)?;
    for (t, ty) in inputs.iter_mut().zip(&types) {
        if let (HostTensor::F32(a), [rows, _]) = (t, ty.shape.as_slice()) {
            let scale = (*rows as f32).sqrt().recip();
            a.mapv_inplace(|x| x * scale);
        }
    }
    Ok(inputs)
}

/// Measured step time (median of `runs`) of the suggestion on simulated
/// CPU devices against `cpu_sim`'s prediction, and its outputs against the
/// unsharded run.
fn cpu_check(name: &str, s: &Suggestion, runs: usize) -> Result<()> {
    let module = s.annotated_module();
    let program = compile(&module)?;
    let inputs = inputs(&module)?;
    let backend = CpuBackend::new();
    let exec = Executor::new(&program.device)?;
    let placed = exec.place(&backend, &inputs)?;
    let opts = ExecOptions::default();
    let mut times = Vec::with_capacity(runs);
    let mut busy = Vec::with_capacity(runs);
    let mut last = None;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    for _ in 0..runs {
        let (start, cpu) = (Instant::now(), process_cpu_seconds());
        last = Some(exec.run(&backend, &placed, &opts)?);
        times.push(start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu, process_cpu_seconds()) {
            busy.push((b - a) / cores);
        }
    }
    let measured = median(&mut times);
    let busy = (!busy.is_empty()).then(|| median(&mut busy));
    let got = exec.gather(&backend, last.ok_or_else(|| anyhow!("no run"))?, true)?;
    let want = run_function(&module, "main", &inputs, Parallelism::Rayon(0))?;
    let mut worst = 0.0f64;
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let d = compare(g, w, 1e-3).map_err(anyhow::Error::msg)?;
        if !d.within() {
            bail!(
                "{name}: output {k} differs from the unsharded run by {}",
                d.max_rel
            );
        }
        worst = worst.max(d.max_rel);
    }
    let p = predict_cpu_step(&program)?;
    let (busy_time, busy_ratio) = match busy {
        Some(b) => (human_time(b), format!("{:.2}x", p.total_s() / b)),
        None => ("-".into(), "-".into()),
    };
    println!(
        "| `{name}` | {} | {busy_time} | {} (collectives {}, compute {}, overhead {}) | {:.2}x | {busy_ratio} | {worst:.1e} |",
        human_time(measured),
        human_time(p.total_s()),
        human_time(p.communication_s),
        human_time(p.compute_s),
        human_time(p.overhead_s + p.dispatch_s),
        p.total_s() / measured,
    );
    Ok(())
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// CPU seconds this process has used, all threads (user + system, from
/// `/proc/self/stat` in clock ticks of 1/100 s, Linux's `USER_HZ`); `None`
/// elsewhere. On a machine shared with other work a run's wall time
/// counts the time others had the cores; its CPU time over the number of
/// cores is what it would take on a quiet machine if it kept every core
/// busy (a lower bound: waits in collectives are not counted).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces): state is the
    // first, utime the 12th, stime the 13th.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let run = !args.iter().any(|a| a == "--no-run");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .map(|i| {
            args.get(i + 1)
                .map(String::as_str)
                .ok_or_else(|| anyhow!("--only NAME"))
        })
        .transpose()?;
    if let Some(o) = only.filter(|o| !PROGRAMS.contains(o)) {
        bail!(
            "--only: no program {o}; the programs: {}",
            PROGRAMS.join(", ")
        );
    }
    let suggestions = table(only)?;
    if run {
        println!(
            "\nload average before: {}",
            std::fs::read_to_string("/proc/loadavg")
                .unwrap_or_default()
                .trim()
        );
        println!("| program | measured on 8 CPU devices (wall) | CPU time / cores | cpu_sim predicts | predicted / wall | predicted / (CPU time / cores) | max rel. diff vs 1 device |");
        println!("|---|---|---|---|---|---|---|");
        for (name, s) in suggestions.iter().filter(|(n, _)| n != NOT_RUN) {
            cpu_check(name, s, 5)?;
        }
    }
    Ok(())
}
