//! `meshrun run FILE [--backend cpu] [--executor lockstep|threads] [--inputs A.npy ...] [--random-inputs
//! SEED] [--output-dir DIR] [--check] [--repeat N] [--json]`.
//!
//! Loads FILE, propagates shardings, partitions `@main` and runs it on as
//! many simulated devices as its mesh has. Inputs come from `.npy` files
//! (in argument order) or are drawn at random from a seed. Outputs are
//! written as `DIR/output_K.npy`. `--check` also runs the program unsharded
//! and compares (exit 1 beyond the tolerance of
//! `meshrun_runtime::compare`; a float output over it is judged again
//! against the program computed in f64); `--repeat N` times N runs of the sharded
//! program alone (inputs already placed on the devices, compilation
//! excluded).
//!
//! Everything that can be wrong with the input (the file, the number,
//! shapes and types of the inputs) is checked before anything runs, so a
//! bad input writes nothing.
//!
//! Under a launcher (`mpirun -np N`, `srun -n N`), `--backend mpi` runs one
//! device per process on the CPU and `--backend cuda` one device per
//! process on its own GPU (both need the `mpi` feature); see `run_mpi`.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use meshrun::check::{check_outputs, mismatch_message};
use meshrun::compiler::propagation::PropagationOptions;
use meshrun::compiler::Module;
use meshrun::execute::{main_input_types, run_sharded};
use meshrun::load::load_file;
#[cfg(feature = "mpi")]
use meshrun::load::LoadError;
#[cfg(feature = "mpi")]
use meshrun::runtime::capacity::module_fits_backend;
use meshrun::runtime::compare::{rtol_for, Judged, F64_ERROR_FACTOR};
use meshrun::runtime::npy::{read_npy_as, write_npy};
#[cfg(feature = "mpi")]
use meshrun::runtime::pipeline::compile_with;
use meshrun::runtime::random_inputs::random_inputs;
#[cfg(feature = "mpi")]
use meshrun::runtime::ExecOptions;
use meshrun::runtime::{Backend, CpuBackend, CpuExecutor};
use meshrun_kernels::HostTensor;

/// Options of `meshrun run`.
#[derive(Debug, Clone, Default)]
pub struct RunArgs {
    pub backend: String,
    pub inputs: Vec<PathBuf>,
    pub random_inputs: Option<u64>,
    pub output_dir: Option<PathBuf>,
    pub check: bool,
    pub repeat: usize,
    pub json: bool,
    /// `--check`'s relative tolerance, instead of the element types' rule.
    pub rtol: Option<f64>,
    /// Shardy's conservative propagation (`--conservative`).
    pub conservative: bool,
    /// The cpu backend's executor (`--executor`; `None`: its default).
    pub executor: Option<CpuExecutor>,
}

/// How `meshrun run` propagates.
fn propagation_options(args: &RunArgs) -> PropagationOptions {
    PropagationOptions {
        conservative: args.conservative,
        ..PropagationOptions::default()
    }
}

/// Parse `--executor`: `lockstep` or `threads`.
pub fn parse_executor(s: &str) -> Result<CpuExecutor, String> {
    CpuExecutor::parse(s.trim())
}

/// Parse `--rtol`: a positive number.
pub fn parse_rtol(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

pub fn run(file: &Path, args: &RunArgs) -> anyhow::Result<()> {
    if args.executor.is_some() && args.backend != "cpu" {
        bail!(
            "--executor chooses how the cpu backend runs its devices; --backend {} runs one device per GPU or process",
            args.backend
        );
    }
    match args.backend.as_str() {
        "cpu" => {
            let backend = CpuBackend::new();
            let backend = match args.executor {
                Some(e) => backend.with_executor(e),
                None => backend,
            };
            run_on(&backend, file, args)
        }
        "cuda" => run_cuda(file, args),
        #[cfg(feature = "mpi")]
        "mpi" => run_mpi(file, args, Ranks::Cpu),
        #[cfg(not(feature = "mpi"))]
        "mpi" => bail!("this meshrun was built without MPI: build with `--features mpi`"),
        other => bail!("unknown backend '{other}' (available: cpu, cuda, mpi)"),
    }
}

/// Variables in which launchers give the number of tasks of a job step
/// (Open MPI, MPICH/Hydra, srun), in the order they are consulted.
/// `SLURM_NTASKS` comes last: an `sbatch -n 8` script sets it for the
/// script itself, which is one process.
const TASKS_ENV: [&str; 4] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_NTASKS",
];

/// How many tasks the launcher that started this process started, with the
/// variable that says so (`None` outside a launcher).
fn launcher_tasks(lookup: impl Fn(&str) -> Option<String>) -> Option<(usize, &'static str)> {
    TASKS_ENV
        .iter()
        .find_map(|&v| Some((lookup(v)?.trim().parse().ok()?, v)))
}

/// `--backend cuda`: every GPU of this machine from one process, or, when
/// a launcher started several processes (mpirun, srun), one GPU per
/// process over MPI (`meshrun_runtime::mpi::cuda_rank`), which needs the
/// `mpi` feature.
fn run_cuda(file: &Path, args: &RunArgs) -> anyhow::Result<()> {
    if let Some((tasks, var)) = launcher_tasks(|v| std::env::var(v).ok()).filter(|t| t.0 > 1) {
        #[cfg(feature = "mpi")]
        {
            let _ = (tasks, var);
            return run_mpi(file, args, Ranks::Cuda);
        }
        #[cfg(not(feature = "mpi"))]
        bail!(
            "--backend cuda was started as one of {tasks} processes ({var}={tasks}), but this meshrun was built without MPI: build with `--features mpi` to run one GPU per process, or start one process to use every GPU of this machine"
        );
    }
    run_on(&meshrun::runtime::cuda::open_backend()?, file, args)
}

fn run_on<B: Backend>(backend: &B, file: &Path, args: &RunArgs) -> anyhow::Result<()> {
    let module = load_file(file)?;
    let (ran, inputs) = run_sharded(
        backend,
        file,
        &module,
        &propagation_options(args),
        args.repeat,
        args.check,
        |module| read_inputs(file, module, args),
    )?;
    finish(
        &module,
        &inputs,
        &ran.outputs,
        ran.times_ms,
        ran.devices,
        backend.name(),
        args,
    )
}

/// Check, write and report the outputs of a run.
fn finish(
    module: &Module,
    inputs: &[HostTensor],
    outputs: &[HostTensor],
    mut times_ms: Vec<f64>,
    devices: usize,
    backend: &'static str,
    args: &RunArgs,
) -> anyhow::Result<()> {
    let checked = if args.check {
        Some(check_outputs(module, inputs, outputs, args.rtol)?)
    } else {
        None
    };
    let paths = write_outputs(args.output_dir.as_deref(), outputs)?;
    times_ms.sort_by(f64::total_cmp);
    let report = Report {
        devices,
        backend,
        times_ms: &times_ms,
        outputs,
        paths: &paths,
        checked: checked.as_ref(),
        rtol: args.rtol.unwrap_or_else(|| rtol_for(module)),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json())?);
    } else {
        print!("{}", report.text());
    }
    if let Some(message) = checked
        .as_ref()
        .and_then(|c| mismatch_message(module, c, report.rtol))
    {
        bail!("{message}");
    }
    Ok(())
}

/// What each rank's device is under MPI.
#[cfg(feature = "mpi")]
#[derive(Debug, Clone, Copy)]
enum Ranks {
    /// `--backend mpi`: the CPU.
    Cpu,
    /// `--backend cuda` under a launcher: one GPU per rank.
    Cuda,
}

/// One process per device under `mpirun -np N` / `srun -n N` (see
/// `meshrun_runtime::mpi`), each on the CPU (`--backend mpi`) or on its
/// own GPU (`--backend cuda`). Each rank reads only its blocks of the
/// `.npy` inputs, runs its device, and rank 0 gathers the outputs, checks,
/// writes and reports. Any error on any rank ends the whole job with that
/// rank's message (`MPI_Abort`), so no rank is left waiting; an error every
/// rank hits alike (a bad file, no GPU) is printed once.
#[cfg(feature = "mpi")]
fn run_mpi(file: &Path, args: &RunArgs, ranks: Ranks) -> anyhow::Result<()> {
    use meshrun::runtime::mpi::cuda_rank::CudaRankBackend;
    use meshrun::runtime::mpi::MpiBackend;
    let mpi = MpiBackend::init()?;
    match ranks {
        Ranks::Cpu => run_ranks(&mpi, file, args),
        Ranks::Cuda => {
            // The GPU path has never run on a GPU (none in development or
            // CI); see `meshrun_runtime::mpi::cuda_rank`.
            let gpu = mpi.settle(CudaRankBackend::open(&mpi));
            run_ranks(&gpu, file, args)
        }
    }
}

/// The body of [`run_mpi`] on any backend with one device per rank.
#[cfg(feature = "mpi")]
fn run_ranks<B: meshrun::runtime::mpi::session::RankBackend>(
    backend: &B,
    file: &Path,
    args: &RunArgs,
) -> anyhow::Result<()> {
    use meshrun::runtime::mpi::session;
    let mpi = backend.mpi();
    // What every rank does alike: an error here is reported once.
    let prepared = (|| -> anyhow::Result<_> {
        if args.repeat == 0 {
            bail!("--repeat must be at least 1");
        }
        let module = load_file(file)?;
        let invalid = |diag| LoadError::Invalid {
            path: file.to_path_buf(),
            diag,
        };
        module_fits_backend(&module, backend, args.check).map_err(invalid)?;
        let program = compile_with(&module, &propagation_options(args)).map_err(invalid)?;
        mpi.local_device(&program.device.devices)?;
        // Drawn inputs are drawn whole on every rank; files are read block
        // by block, and whole only by rank 0 for the check.
        let drawn = args.inputs.is_empty();
        let global = if drawn || (args.check && mpi.is_root()) {
            read_inputs(file, &module, args)?
        } else {
            Vec::new()
        };
        Ok((module, program, global, drawn))
    })();
    let (module, program, global, drawn) = mpi.settle(prepared.map_err(|e| format!("{e:#}")));
    let result = (|| -> anyhow::Result<()> {
        let inputs = if drawn {
            session::Inputs::Global(&global)
        } else {
            session::Inputs::Files(&args.inputs)
        };
        let opts = ExecOptions::default();
        let run = session::run_program(
            backend,
            &program.device,
            inputs,
            args.repeat,
            args.check,
            &opts,
        )?;
        match run.outputs {
            Some(outputs) => {
                let devices = program.device.num_devices();
                finish(
                    &module,
                    &global,
                    &outputs,
                    run.times_ms,
                    devices,
                    backend.name(),
                    args,
                )
            }
            None => Ok(()),
        }
    })();
    if let Err(e) = result {
        mpi.abort(format_args!("{e:#}"));
    }
    Ok(())
}

/// The inputs of `@main`: read from `.npy` files (checked against the
/// argument types) or drawn from the seed.
fn read_inputs(file: &Path, module: &Module, args: &RunArgs) -> anyhow::Result<Vec<HostTensor>> {
    let types = main_input_types(file, module)?;
    if !args.inputs.is_empty() {
        if args.inputs.len() != types.len() {
            bail!(
                "@main takes {} inputs, got {} .npy files",
                types.len(),
                args.inputs.len()
            );
        }
        return args
            .inputs
            .iter()
            .zip(&types)
            .enumerate()
            .map(|(k, (path, ty))| read_npy_as(path, ty).with_context(|| format!("input {k}")))
            .collect();
    }
    match args.random_inputs {
        Some(seed) => random_inputs(&types, seed).map_err(|e| anyhow!("random inputs: {e}")),
        None if types.is_empty() => Ok(Vec::new()),
        None => bail!(
            "@main takes {} inputs: give --inputs A.npy ... or --random-inputs SEED",
            types.len()
        ),
    }
}

/// Write `DIR/output_K.npy`; the paths written (none without a DIR).
fn write_outputs(dir: Option<&Path>, outputs: &[HostTensor]) -> anyhow::Result<Vec<PathBuf>> {
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the output directory", dir.display()))?;
    outputs
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let path = dir.join(format!("output_{k}.npy"));
            write_npy(&path, t)?;
            Ok(path)
        })
        .collect()
}

struct Report<'a> {
    devices: usize,
    backend: &'static str,
    /// Sorted.
    times_ms: &'a [f64],
    outputs: &'a [HostTensor],
    paths: &'a [PathBuf],
    checked: Option<&'a Judged>,
    rtol: f64,
}

impl Report<'_> {
    fn median_ms(&self) -> f64 {
        let n = self.times_ms.len();
        if n == 0 {
            0.0
        } else if n % 2 == 1 {
            self.times_ms[n / 2]
        } else {
            (self.times_ms[n / 2 - 1] + self.times_ms[n / 2]) / 2.0
        }
    }

    fn min_ms(&self) -> f64 {
        self.times_ms.first().copied().unwrap_or(0.0)
    }

    fn max_abs_diff(&self) -> Option<f64> {
        self.checked
            .map(|c| c.diffs.iter().fold(0.0f64, |m, c| m.max(c.max_abs)))
    }

    fn json(&self) -> Value {
        let outputs: Vec<Value> = self
            .outputs
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let mut o = json!({
                    "shape": t.shape(),
                    "dtype": t.elem_type().to_string(),
                    "path": self.paths.get(k).map(|p| p.display().to_string()),
                });
                if let Some(c) = self.checked.and_then(|c| c.diffs.get(k)) {
                    o["max_abs_diff"] = json!(c.max_abs);
                    o["max_rel_diff"] = json!(c.max_rel);
                    o["within_tolerance"] = json!(c.within());
                    if let Some(e) = c.against_f64 {
                        o["f64_error_sharded"] = json!(e.sharded);
                        o["f64_error_unsharded"] = json!(e.unsharded);
                    }
                }
                o
            })
            .collect();
        json!({
            "devices": self.devices,
            "backend": self.backend,
            "runs": self.times_ms.len(),
            "median_ms": self.median_ms(),
            "min_ms": self.min_ms(),
            "outputs": outputs,
            "max_abs_diff": self.max_abs_diff(),
            "check": self.checked.map(|c| json!({
                "rtol": self.rtol,
                "passed": c.diffs.iter().all(|c| c.within()),
                "f64_unavailable": c.f64_unavailable,
            })),
        })
    }

    fn text(&self) -> String {
        let mut s = format!(
            "ran @main on {} {} devices: median {:.3} ms, min {:.3} ms over {} run(s)\n",
            self.devices,
            self.backend,
            self.median_ms(),
            self.min_ms(),
            self.times_ms.len()
        );
        for (k, t) in self.outputs.iter().enumerate() {
            s.push_str(&format!("output {k}: {}", t.tensor_type()));
            if let Some(p) = self.paths.get(k) {
                s.push_str(&format!(" -> {}", p.display()));
            }
            if let Some(c) = self.checked.and_then(|c| c.diffs.get(k)) {
                s.push_str(&format!(
                    "; vs unsharded: max abs diff {:e}, max rel diff {:e}",
                    c.max_abs, c.max_rel,
                ));
                if let Some(e) = c.against_f64 {
                    s.push_str(&format!(
                        "; vs f64: sharded error {:e}, unsharded error {:e}",
                        e.sharded, e.unsharded
                    ));
                }
                s.push_str(if c.within() {
                    " (ok)"
                } else {
                    " (OVER TOLERANCE)"
                });
            }
            s.push('\n');
        }
        if let Some(c) = self.checked {
            s.push_str(&format!(
                "check: rtol {:e} (scaled by |want| + max|want|); over it, a float output passes if its error against the program in f64 is <= {F64_ERROR_FACTOR} x the unsharded run's + rtol\n",
                self.rtol
            ));
            if let Some(why) = &c.f64_unavailable {
                s.push_str(&format!("check: no f64 reference: {why}\n"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    /// Environment variables set, and what `launcher_tasks` finds.
    type Case = (
        &'static [(&'static str, &'static str)],
        Option<(usize, &'static str)>,
    );

    #[test]
    fn launchers_say_how_many_tasks_they_started() {
        let table: [Case; 6] = [
            (&[], None),
            (
                &[("OMPI_COMM_WORLD_SIZE", "8")],
                Some((8, "OMPI_COMM_WORLD_SIZE")),
            ),
            (&[("PMI_SIZE", " 2 ")], Some((2, "PMI_SIZE"))),
            // srun's step size wins over the allocation's task count.
            (
                &[("SLURM_NTASKS", "8"), ("SLURM_STEP_NUM_TASKS", "1")],
                Some((1, "SLURM_STEP_NUM_TASKS")),
            ),
            (&[("SLURM_NTASKS", "4")], Some((4, "SLURM_NTASKS"))),
            // An unreadable value is skipped, not trusted.
            (
                &[("OMPI_COMM_WORLD_SIZE", "x"), ("SLURM_NTASKS", "3")],
                Some((3, "SLURM_NTASKS")),
            ),
        ];
        for (vars, want) in table {
            assert_eq!(launcher_tasks(env(vars)), want, "{vars:?}");
        }
    }
}
