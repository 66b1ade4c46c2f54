//! `meshrun bench-comm`: time every collective at doubling sizes on a
//! backend, check every result, and print nccl-tests' table (or JSON rows
//! for `meshrun cost --calibrate`), optionally plotting bus bandwidth.

use std::path::PathBuf;

use anyhow::{anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};

use meshrun::bench_comm::row::rows_json;
use meshrun::bench_comm::size::parse_bytes;
use meshrun::bench_comm::sweep::check_rows;
use meshrun::bench_comm::table::render_table;
use meshrun::bench_comm::{plot, sweep_with, Row, SweepConfig};
use meshrun::runtime::backend::Backend;
use meshrun::runtime::comm_bench::{
    parse_elem, time_collective, BenchOp, CommBench, CommBenchResult,
};
use meshrun::runtime::CpuBackend;
use meshrun::runtime::RuntimeError;

/// The options of `meshrun bench-comm`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchCommArgs {
    /// The backend whose collectives are timed: cpu, cuda (this machine's
    /// GPUs, one process), or mpi (one process per device under mpirun;
    /// needs a build with `--features mpi`).
    #[arg(long, default_value = "cpu")]
    pub backend: String,
    /// Devices in the group (with mpi: the number of ranks).
    #[arg(long, default_value_t = 8)]
    pub devices: usize,
    /// Comma-separated ops: all-gather, all-reduce, reduce-scatter,
    /// all-to-all, collective-permute.
    #[arg(
        long,
        default_value = "all-gather,all-reduce,reduce-scatter,all-to-all,collective-permute"
    )]
    pub ops: String,
    /// Smallest size (nccl-tests' S, bytes; K, M, G suffixes are powers of
    /// 1024). Sizes double up to --max-bytes.
    #[arg(long, default_value = "1K")]
    pub min_bytes: String,
    /// Largest size.
    #[arg(long, default_value = "256M")]
    pub max_bytes: String,
    /// Element type: f32, f16, bf16, f64, i32 or i64.
    #[arg(long, default_value = "f32")]
    pub dtype: String,
    /// Timed runs per size (the reported time is their median).
    #[arg(long, default_value_t = 20)]
    pub iters: usize,
    /// Untimed runs before them.
    #[arg(long, default_value_t = 5)]
    pub warmup: usize,
    /// Print the rows as JSON (what `meshrun cost --calibrate` reads).
    #[arg(long)]
    pub json: bool,
    /// Write an SVG plot of bus bandwidth against size, one line per op.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// The sweep the options ask for, on devices `0..devices`.
fn config(args: &BenchCommArgs) -> anyhow::Result<SweepConfig> {
    if args.devices == 0 {
        bail!("--devices must be at least 1");
    }
    let ops = args
        .ops
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.parse::<BenchOp>().map_err(|e| anyhow!("--ops: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if ops.is_empty() {
        bail!("--ops: no ops given");
    }
    let min_bytes = parse_bytes(&args.min_bytes).map_err(|e| anyhow!("--min-bytes: {e}"))?;
    let max_bytes = parse_bytes(&args.max_bytes).map_err(|e| anyhow!("--max-bytes: {e}"))?;
    let elem = parse_elem(&args.dtype).map_err(|e| anyhow!("--dtype: {e}"))?;
    let cfg = SweepConfig {
        devices: (0..args.devices as i64).collect(),
        ops,
        min_bytes,
        max_bytes,
        elem,
        warmup: args.warmup,
        iters: args.iters,
    };
    // Checks the sizes and counts before anything runs.
    cfg.benches().map_err(anyhow::Error::msg)?;
    Ok(cfg)
}

/// The sweep of `cfg` through `measure`, with a progress bar on stderr
/// when `show` (indicatif hides it when stderr is not a terminal).
fn sweep_shown(
    cfg: &SweepConfig,
    show: bool,
    measure: impl Fn(&CommBench) -> Result<CommBenchResult, RuntimeError>,
) -> anyhow::Result<Vec<Row>> {
    let bar = if show {
        let bar = ProgressBar::new(cfg.benches().map_or(0, |b| b.len()) as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed}]") {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let rows = sweep_with(
        cfg,
        |b| {
            bar.set_message(format!("{} {} B", b.op, b.bytes));
            measure(b)
        },
        |_| bar.inc(1),
    );
    bar.finish_and_clear();
    rows
}

/// Print the rows (table or JSON) and write the plot.
fn report(
    args: &BenchCommArgs,
    cfg: &SweepConfig,
    backend: &str,
    rows: &[Row],
) -> anyhow::Result<()> {
    if args.json {
        println!("{}", rows_json(rows));
    } else {
        println!(
            "# meshrun bench-comm: backend {backend}, {} devices, {}, {} warmup + {} timed runs; time = median of the slowest device's",
            cfg.devices.len(),
            cfg.elem.name(),
            cfg.warmup,
            cfg.iters
        );
        print!("{}", render_table(rows));
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "{} {} devices, {}",
            cfg.devices.len(),
            backend,
            cfg.elem.name()
        );
        // On the CPU backend a collective-permute hands its block over
        // without copying: its bytes/time is no bandwidth.
        let zero_copy: &[&str] = if backend == "cpu" {
            &["collective-permute"]
        } else {
            &[]
        };
        plot::write_plot(rows, path, &title, zero_copy)?;
    }
    Ok(())
}

/// `meshrun bench-comm`.
pub fn bench_comm(args: &BenchCommArgs) -> anyhow::Result<()> {
    match args.backend.as_str() {
        "cpu" => bench_comm_on(args, &CpuBackend::new()),
        "cuda" => bench_comm_on(args, &meshrun::runtime::cuda::open_backend()?),
        #[cfg(feature = "mpi")]
        "mpi" => bench_comm_mpi(args),
        #[cfg(not(feature = "mpi"))]
        "mpi" => bail!(
            "this meshrun was built without MPI: build with `--features mpi` to use --backend mpi"
        ),
        other => bail!("unknown backend '{other}' for bench-comm (available: cpu, cuda, mpi)"),
    }
}

/// The sweep on a backend whose devices all live in this process.
fn bench_comm_on<B: Backend>(args: &BenchCommArgs, backend: &B) -> anyhow::Result<()> {
    let cfg = config(args)?;
    let rows = sweep_shown(&cfg, true, |b| time_collective(backend, b))?;
    report(args, &cfg, backend.name(), &rows)?;
    // Wrong results fail the command, after they are shown.
    check_rows(&rows)
}

/// `--backend mpi` under `mpirun -np N`: every rank runs its device, rank 0
/// prints, plots and reports wrong results; an error on any rank ends the
/// job (`MPI_Abort`). `--devices` must be the number of ranks when given
/// differently from its default.
#[cfg(feature = "mpi")]
fn bench_comm_mpi(args: &BenchCommArgs) -> anyhow::Result<()> {
    use meshrun::runtime::mpi::bench::time_comm_bench;
    use meshrun::runtime::mpi::MpiBackend;
    let backend = MpiBackend::init()?;
    let ranks = backend.size();
    let cfg = backend.settle(
        (|| -> anyhow::Result<SweepConfig> {
            let mut a = args.clone();
            if a.devices != ranks && a.devices != 8 {
                bail!(
                    "--devices {} but mpirun started {ranks} processes: one rank per device",
                    a.devices
                );
            }
            a.devices = ranks;
            config(&a)
        })()
        .map_err(|e| format!("{e:#}")),
    );
    let rows = sweep_shown(&cfg, backend.is_root(), |b| time_comm_bench(&backend, b));
    let rows = backend.or_abort(rows.map_err(|e| format!("{e:#}")));
    if backend.is_root() {
        if let Err(e) = report(args, &cfg, "mpi", &rows) {
            backend.abort(format_args!("{e:#}"));
        }
    }
    // Every rank has the same rows: a wrong result is reported once.
    backend.settle(check_rows(&rows).map_err(|e| format!("{e:#}")));
    Ok(())
}
