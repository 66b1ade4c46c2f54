//! The `meshrun` command line. Every failure prints one line
//! `error: FILE:LINE:COL: what is wrong` and exits with code 1.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "meshrun",
    version,
    about = "SPMD compiler and runtime for sharded tensor programs (StableHLO + Shardy)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and check a module, print it in canonical text.
    Parse {
        /// A StableHLO + sdy MLIR file (e.g. `jax.jit(f).lower(...).as_text()`).
        file: PathBuf,
    },
    /// Draw the sharding of every function argument and result: which
    /// device holds which block, local shape and padding.
    Show {
        file: PathBuf,
        /// Also draw every op result that carries a sharding.
        #[arg(long)]
        all: bool,
        /// Propagate shardings first and draw the result.
        #[arg(long)]
        propagated: bool,
    },
    /// Infer the sharding of every tensor (Shardy's propagation) and print
    /// the propagated module.
    Propagate {
        file: PathBuf,
        /// Write the propagated module here instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        out: Option<PathBuf>,
        /// basic, aggressive, op-priority, user-priority or full.
        #[arg(long, default_value = "full", value_parser = cli::parse_strategy)]
        strategy: meshrun::compiler::propagation::Strategy,
        /// Explain where the sharding of VALUE (%3, %arg1, result0; @f:%3
        /// in function @f) of the propagated module came from, axis by axis.
        #[arg(long, value_name = "VALUE")]
        explain: Option<String>,
        /// Shardy's conservative propagation: no sharding moves through a
        /// dimension a reshape splits or merges, a sliced, padded or
        /// concatenated dimension.
        #[arg(long)]
        conservative: bool,
        /// Leave shardings open and values without one unsharded, as
        /// Shardy's single propagation passes print them (single
        /// strategies only: `full` always closes).
        #[arg(long)]
        keep_open: bool,
    },
    /// Propagate shardings, insert explicit reshards and partition the
    /// entry function: print the global program with its collectives (and
    /// why each exists), one device's local program, or a JSON cost report.
    Partition {
        file: PathBuf,
        /// Print this device's local program.
        #[arg(long)]
        device: Option<i64>,
        /// Print the communicating collectives and bytes as JSON.
        #[arg(long, conflicts_with = "device")]
        json: bool,
        /// The file is already propagated: partition it as written.
        #[arg(long)]
        no_propagate: bool,
        /// Propagate conservatively (see `propagate --conservative`).
        #[arg(long, conflicts_with = "no_propagate")]
        conservative: bool,
    },
    /// Estimate what the sharding costs on a machine: every collective's
    /// time (α-β model, nccl-tests conventions), compute FLOPs per device
    /// and a step time (compute + communication, no overlap).
    Cost {
        /// The program (optional with --calibrate: then print the fitted
        /// topology).
        file: Option<PathBuf>,
        /// A built-in topology (h100-nvlink-8, a100-nvlink-8, pcie4-8,
        /// 2x8-h100-ib400, 8x8-h100-ib400, 32x8-h100-ib400, 32x8-a100-ib200) or a topology
        /// JSON file. Default h100-nvlink-8.
        #[arg(long, value_name = "NAME|PATH")]
        topology: Option<String>,
        /// Fit the intra-node link's latency and bandwidth to a
        /// `bench-comm --json` file first.
        #[arg(long, value_name = "BENCH.json")]
        calibrate: Option<PathBuf>,
        /// Write the (calibrated) topology to this JSON file.
        #[arg(long, value_name = "OUT")]
        write_topology: Option<PathBuf>,
        /// Print `meshrun partition --json`'s report with the costs added.
        #[arg(long)]
        json: bool,
        /// Charge compute at X TFLOP/s instead of the topology's peaks.
        #[arg(long, value_name = "X", allow_hyphen_values = true)]
        peak_tflops: Option<String>,
        /// The file is already propagated: partition it as written.
        #[arg(long)]
        no_propagate: bool,
        /// Say whether the step fits in this many bytes per device, and by
        /// how much (K, M, G suffixes: powers of 1024).
        #[arg(long, value_name = "BYTES")]
        memory_per_device: Option<String>,
    },
    /// What this machine can run: CPU cores, CUDA driver and GPUs, NVRTC,
    /// cuBLAS, NCCL, MPI (each present or absent with the reason).
    Doctor {
        /// Also compile every CUDA kernel with NVRTC (sm_80, sm_90 and
        /// this machine's GPUs; no GPU needed); exit 1 if any fails.
        #[arg(long)]
        compile_kernels: bool,
    },
    /// Time every collective at doubling sizes, nccl-tests style (time,
    /// algbw, busbw), checking every result; table, JSON rows (for `cost
    /// --calibrate`) and an SVG plot.
    BenchComm(cli::BenchCommArgs),
    /// Which sharding should I use? Search the arguments' shardings for the
    /// fastest predicted step (compute + communication on a topology)
    /// within a memory cap; print each choice with its reason, the
    /// current shardings' numbers beside it, and alternatives.
    Suggest(cli::SuggestArgs),
    /// Propagate, partition and run `@main` on as many simulated devices
    /// as its mesh has; write the outputs, time the runs, and check them
    /// against the unsharded program.
    Run {
        file: PathBuf,
        /// The backend that runs the devices (cpu or cuda).
        #[arg(long, default_value = "cpu")]
        backend: String,
        /// The inputs of @main, in argument order.
        #[arg(long, value_name = "NPY", num_args = 1.., conflicts_with = "random_inputs")]
        inputs: Vec<PathBuf>,
        /// Draw the inputs at random from this seed.
        #[arg(long, value_name = "SEED")]
        random_inputs: Option<u64>,
        /// Write the outputs here as output_0.npy, output_1.npy, ...
        #[arg(long, value_name = "DIR")]
        output_dir: Option<PathBuf>,
        /// Also run unsharded and compare (exit 1 beyond tolerance).
        #[arg(long)]
        check: bool,
        /// Run N times and report the min and median time.
        #[arg(long, value_name = "N", default_value_t = 1)]
        repeat: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// `--check`'s relative tolerance (default: 1e-5 for f32, 2e-3 for
        /// f16, 1.6e-2 for bf16). Long f32 reductions need more: the
        /// reference sums in f32 in another order than the devices.
        #[arg(long, value_name = "X", value_parser = cli::parse_rtol)]
        rtol: Option<f64>,
        /// Propagate conservatively (see `propagate --conservative`).
        #[arg(long)]
        conservative: bool,
        /// How the cpu backend runs several devices: `lockstep` (one
        /// thread drives them all, unit by unit; the default) or `threads`
        /// (one thread per device, as the MPI and CUDA backends run).
        #[arg(long, value_name = "lockstep|threads", value_parser = cli::parse_executor)]
        executor: Option<meshrun::runtime::CpuExecutor>,
    },
}

fn main() -> ExitCode {
    meshrun::runtime::cpu::join_global_pool();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Parse { file } => cli::parse(&file),
        Command::BenchComm(args) => cli::bench_comm(&args),
        Command::Suggest(args) => cli::suggest(&args),
        Command::Doctor { compile_kernels } => cli::doctor(&cli::DoctorArgs { compile_kernels }),
        Command::Show {
            file,
            all,
            propagated,
        } => cli::show(&file, all, propagated),
        Command::Propagate {
            file,
            out,
            strategy,
            explain,
            conservative,
            keep_open,
        } => cli::propagate(
            &file,
            &cli::PropagateArgs {
                out,
                strategy,
                explain,
                conservative,
                keep_open,
            },
        ),
        Command::Partition {
            file,
            device,
            json,
            no_propagate,
            conservative,
        } => cli::partition(
            &file,
            cli::PartitionArgs {
                device,
                json,
                no_propagate,
                conservative,
            },
        ),
        Command::Cost {
            file,
            topology,
            calibrate,
            write_topology,
            json,
            peak_tflops,
            no_propagate,
            memory_per_device,
        } => cli::cost(
            file.as_deref(),
            &cli::CostArgs {
                topology,
                calibrate,
                write_topology,
                json,
                peak_tflops,
                no_propagate,
                memory_per_device,
            },
        ),
        Command::Run {
            file,
            backend,
            inputs,
            random_inputs,
            output_dir,
            check,
            repeat,
            json,
            rtol,
            conservative,
            executor,
        } => cli::run(
            &file,
            &cli::RunArgs {
                backend,
                inputs,
                random_inputs,
                output_dir,
                check,
                repeat,
                json,
                rtol,
                conservative,
                executor,
            },
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
