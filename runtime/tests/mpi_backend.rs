//! The MPI backend under a real `mpirun` (feature `mpi`; `harness = false`).
//!
//! Run by `cargo test --features mpi`, this binary is the *launcher*: it
//! starts itself under `mpirun -np 8` (`--oversubscribe` with Open MPI, so
//! 8 ranks fit on a 2-core CI machine) in *worker* mode
//! (`MESHRUN_MPI_WORKER`) and checks what the job prints and how it exits:
//!
//! 1. `programs`: every JAX fixture that runs on 8 devices (inputs read by
//!    each rank from the fixture's `.npy` files, only its own blocks), the
//!    fixtures with loops, a branch and shard_map (the user's own
//!    collectives), and at least 50 programs of the differential suite's
//!    generator (`meshrun_runtime::testgen`) run through the MPI backend;
//!    on rank 0 every output must be bitwise equal to the CPU backend's and
//!    within the tolerance of the unsharded reference (JAX's outputs for
//!    the loop and shard_map fixtures); the collectives they run are
//!    counted, and every kind must occur. All-reduces go through both
//!    the one-phase and the two-phase path. The NCCL-id broadcast (with
//!    made-up id bytes), the communicator cache and `bench-comm`'s hook
//!    (`mpi::bench::time_collective`, one collective of each kind) are
//!    checked too.
//! 2. `fault-error` and `fault-panic` (4 ranks): device 2 fails (an error,
//!    then a panic) while the others wait in a collective; the job must
//!    exit non-zero within seconds with rank 2's message.
//!
//! `MESHRUN_MPI_CASES` sets the number of generated programs (default 60).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use meshrun_compiler::partition::reshard::collective::Collective;
use meshrun_compiler::text::parse_module;
use meshrun_compiler::Module;
use meshrun_kernels::Parallelism;
use meshrun_runtime::compare::{mismatch, rtol_for};
use meshrun_runtime::executor::InjectedFault;
use meshrun_runtime::mpi::bench::time_collective;
use meshrun_runtime::mpi::session::{run_program, Inputs};
use meshrun_runtime::mpi::wire::to_bytes;
use meshrun_runtime::mpi::{comms, gpu, MpiBackend};
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::random_inputs::random_inputs;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::testgen;
use meshrun_runtime::{CpuBackend, CpuExecutor, ExecOptions, Executor};

const WORKER_ENV: &str = "MESHRUN_MPI_WORKER";
const RANKS: usize = 8;

fn main() {
    match std::env::var(WORKER_ENV).as_deref() {
        Ok("programs") => worker_programs(),
        Ok("fault-error") => worker_fault(false),
        Ok("fault-panic") => worker_fault(true),
        Ok(other) => panic!("unknown {WORKER_ENV}={other}"),
        Err(_) => launcher(),
    }
}

// ---------------------------------------------------------------- launcher

struct Job {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// `mpirun -np N <this binary>` in worker mode `worker`, killed after
/// `limit`.
fn mpirun(np: usize, worker: &str, limit: Duration) -> Job {
    let version = Command::new("mpirun").arg("--version").output();
    let open_mpi = match &version {
        Ok(o) => String::from_utf8_lossy(&o.stdout).contains("Open MPI"),
        Err(e) => panic!("mpirun is not available ({e}): install MPI (see ci/mpi-check.sh)"),
    };
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new("mpirun");
    if open_mpi {
        cmd.arg("--oversubscribe")
            // CI runs as root; containers forbid the cross-memory-attach
            // single copy Open MPI tries first.
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    }
    cmd.args(["-np", &np.to_string()])
        .arg(exe)
        .env(WORKER_ENV, worker)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("mpirun starts");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let read_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let read_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("waiting for mpirun: {e}"),
        }
    };
    Job {
        status,
        stdout: read_out.join().unwrap_or_default(),
        stderr: read_err.join().unwrap_or_default(),
        elapsed: start.elapsed(),
    }
}

fn launcher() {
    let mut failed = 0;
    let mut passed = 0;
    let mut check = |name: &str, ok: Result<(), String>| match ok {
        Ok(()) => {
            println!("test {name} ... ok");
            passed += 1;
        }
        Err(e) => {
            println!("test {name} ... FAILED\n{e}");
            failed += 1;
        }
    };

    let job = mpirun(RANKS, "programs", Duration::from_secs(600));
    check("mpi_programs_equal_the_cpu_backend", {
        let summary = job.stdout.lines().find(|l| l.starts_with("mpi programs:"));
        match (job.status, summary) {
            (Some(s), Some(line)) if s.success() => {
                println!("{line} ({:.1} s)", job.elapsed.as_secs_f64());
                Ok(())
            }
            (status, _) => Err(format!(
                "status {status:?}\n--- stdout\n{}\n--- stderr\n{}",
                job.stdout, job.stderr
            )),
        }
    });

    for (worker, said) in [
        ("fault-error", "injected fault"),
        ("fault-panic", "panicked"),
    ] {
        let job = mpirun(4, worker, Duration::from_secs(120));
        check(&format!("mpi_{}_ends_the_job", worker.replace('-', "_")), {
            let quick = job.elapsed < Duration::from_secs(60);
            let message = job.stderr.contains("error: rank 2 of 4") && job.stderr.contains(said);
            match job.status {
                Some(s) if !s.success() && quick && message => Ok(()),
                status => Err(format!(
                    "expected a quick non-zero exit with rank 2's error ({said}); got {status:?} after {:.1} s\n--- stdout\n{}\n--- stderr\n{}",
                    job.elapsed.as_secs_f64(),
                    job.stdout,
                    job.stderr
                )),
            }
        });
    }

    println!(
        "\ntest result: {}. {passed} passed; {failed} failed",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed > 0 {
        std::process::exit(1);
    }
}

// ----------------------------------------------------------------- workers

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax")
}

/// Fixtures with structure, checked against JAX's outputs: loops and a
/// branch (the executor reads the loop condition / branch index with
/// `Device::read_scalar`) and every shard_map fixture (the user's
/// collectives; the reference interpreter does not run manual
/// computations). The scan fixtures are left out until their
/// `dynamic_slice` has a CPU kernel.
const STRUCTURED_FIXTURES: &[&str] = &[
    "jax_regions/fori_matmul",
    "jax_regions/while_data_dependent",
    "jax_regions/cond_sharded",
    "jax_shard_map/shard_map_psum",
    "jax_shard_map/shard_map_gather_scatter",
    "jax_shard_map/shard_map_ring_allreduce",
    "jax_shard_map/shard_map_partial",
    "jax_shard_map/shard_map_nested",
];

fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.npy")))
        .take_while(|p| p.exists())
        .collect()
}

/// Where one program's inputs come from.
enum Source {
    Files(Vec<PathBuf>),
    Seed(u64),
}

/// What one program's outputs are checked against (besides the CPU
/// backend, bitwise).
enum Expected {
    /// The unsharded program on the reference interpreter.
    Reference,
    /// JAX's outputs (`out_K.npy`).
    Jax(Vec<PathBuf>),
}

/// What rank 0 found wrong, if anything, and the collectives run.
struct Checked {
    failures: Vec<String>,
    kinds: BTreeMap<String, usize>,
    /// The first collective of each kind met (for the benchmark hook).
    examples: BTreeMap<String, Collective>,
    programs: usize,
}

/// Run `module` through the MPI backend on every rank; on rank 0 compare
/// with the CPU backend (bitwise) and the reference (tolerance). Programs
/// for another number of devices are skipped (not counted).
fn run_one(
    backend: &MpiBackend,
    name: &str,
    module: &Module,
    source: &Source,
    expected: &Expected,
    checked: &mut Checked,
) {
    let program = backend.or_abort(
        compile(module).map_err(|d| format!("{name}: compile: {}: {}", d.pos, d.message)),
    );
    if program.device.num_devices() != backend.size() {
        return;
    }
    let f = backend.or_abort(module.entry().ok_or(format!("{name}: no entry")));
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let global = match source {
        Source::Files(paths) => backend.or_abort(
            paths
                .iter()
                .map(|p| read_npy(p).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>(),
        ),
        Source::Seed(seed) => backend.or_abort(random_inputs(&types, *seed)),
    };
    let inputs = match source {
        Source::Files(paths) => Inputs::Files(paths),
        Source::Seed(_) => Inputs::Global(&global),
    };
    let run = backend.or_abort(run_program(
        backend,
        &program.device,
        inputs,
        1,
        true,
        &ExecOptions::default(),
    ));
    checked.programs += 1;
    for (c, _) in program.device.collectives() {
        *checked.kinds.entry(c.kind.to_string()).or_default() += 1;
        checked
            .examples
            .entry(c.kind.to_string())
            .or_insert_with(|| c.clone());
    }
    let Some(got) = run.outputs else { return };
    let mut fail = |why: String| checked.failures.push(format!("{name}: {why}"));
    let exec = match Executor::new(&program.device) {
        Ok(e) => e,
        Err(e) => return fail(e.to_string()),
    };
    // A thread per device, as the ranks run: the lockstep executor sums
    // data-parallel weight gradients in another order.
    let cpu = CpuBackend::new().with_executor(CpuExecutor::Threads);
    let want = exec
        .place(&cpu, &global)
        .and_then(|p| exec.run(&cpu, &p, &ExecOptions::default()))
        .and_then(|o| exec.gather(&cpu, o, true));
    let want = match want {
        Ok(w) => w,
        Err(e) => return fail(format!("CPU backend: {e}")),
    };
    let (reference, against) = match expected {
        Expected::Reference => match run_function(module, &f.name, &global, Parallelism::None) {
            Ok(r) => (r, "the reference"),
            Err(e) => return fail(format!("reference: {e}")),
        },
        Expected::Jax(paths) => match paths
            .iter()
            .map(|p| read_npy(p.as_path()))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(r) => (r, "JAX"),
            Err(e) => return fail(format!("JAX's outputs: {e}")),
        },
    };
    if reference.len() != got.len() {
        return fail(format!(
            "{} outputs, {against} gives {}",
            got.len(),
            reference.len()
        ));
    }
    if got.len() != want.len() {
        return fail(format!(
            "{} outputs, the CPU backend gives {}",
            got.len(),
            want.len()
        ));
    }
    for (k, ((g, w), r)) in got.iter().zip(&want).zip(&reference).enumerate() {
        if g.tensor_type() != w.tensor_type() || to_bytes(g) != to_bytes(w) {
            fail(format!(
                "output {k} differs from the CPU backend's (max abs diff {:?})",
                g.max_abs_diff(w)
            ));
        }
        if let Some(m) = mismatch(g, r, rtol_for(module)) {
            fail(format!("output {k} vs {against}: {m}"));
        }
    }
}

fn worker_programs() {
    let backend = MpiBackend::init()
        .expect("MPI initializes")
        .with_kernel_parallelism(Parallelism::None)
        // Blocks of at least 64 elements take the two-phase all-reduce.
        .with_chunked_all_reduce_min(64);
    let root = backend.is_root();
    let mut checked = Checked {
        failures: Vec::new(),
        kinds: BTreeMap::new(),
        examples: BTreeMap::new(),
        programs: 0,
    };

    // The JAX fixtures, inputs read block by block from their files.
    let mut dirs: Vec<PathBuf> = backend.or_abort(
        std::fs::read_dir(fixtures_dir())
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.join("input.mlir").exists())
                    .collect()
            })
            .map_err(|e| format!("fixtures: {e}")),
    );
    dirs.sort();
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = backend.or_abort(std::fs::read_to_string(dir.join("input.mlir")));
        let module = backend.or_abort(parse_module(&text).map_err(|d| format!("{name}: {d:?}")));
        let files = numbered(dir, "in");
        run_one(
            &backend,
            &name,
            &module,
            &Source::Files(files),
            &Expected::Reference,
            &mut checked,
        );
    }
    for name in STRUCTURED_FIXTURES {
        let dir = fixtures_dir().join("..").join(name);
        let text = backend.or_abort(std::fs::read_to_string(dir.join("input.mlir")));
        let module = backend.or_abort(parse_module(&text).map_err(|d| format!("{name}: {d:?}")));
        let before = checked.programs;
        run_one(
            &backend,
            name,
            &module,
            &Source::Files(numbered(&dir, "in")),
            &Expected::Jax(numbered(&dir, "out")),
            &mut checked,
        );
        if checked.programs == before {
            backend.abort(format!("{name}: not an 8-device program"));
        }
    }
    let fixtures = checked.programs;

    // Generated programs on 8 devices.
    let cases: usize = std::env::var("MESHRUN_MPI_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut seed = 0u64;
    while checked.programs < fixtures + cases {
        seed += 1;
        let text = testgen::program(seed, true);
        let module =
            backend.or_abort(parse_module(&text).map_err(|d| format!("seed {seed}: {d:?}")));
        run_one(
            &backend,
            &format!("seed {seed}"),
            &module,
            &Source::Seed(seed),
            &Expected::Reference,
            &mut checked,
        );
        if seed > 100 * (cases as u64 + 1) {
            backend.abort("the generator gives too few 8-device programs");
        }
    }
    let generated = checked.programs - fixtures;

    // Communicators are split once per grouping: a second run of the last
    // programs adds none.
    let before = comms::cached();
    let text = testgen::program(seed, true);
    let module = backend.or_abort(parse_module(&text).map_err(|d| format!("{d:?}")));
    let mut again = Checked {
        failures: Vec::new(),
        kinds: BTreeMap::new(),
        examples: BTreeMap::new(),
        programs: 0,
    };
    run_one(
        &backend,
        "again",
        &module,
        &Source::Seed(seed),
        &Expected::Reference,
        &mut again,
    );
    checked.failures.extend(again.failures);
    if comms::cached() != before {
        checked.failures.push(format!(
            "a second run split new communicators ({before} -> {})",
            comms::cached()
        ));
    }

    // The NCCL bootstrap's broadcast, with made-up id bytes.
    let id = backend.or_abort(gpu::broadcast_id(
        &backend,
        || Ok([7u8; gpu::NCCL_ID_BYTES]),
    ));
    if id != [7u8; gpu::NCCL_ID_BYTES] {
        checked.failures.push("the NCCL id arrived changed".into());
    }
    let refused = gpu::broadcast_id(&backend, || Err("no NCCL here".into()));
    if !refused
        .as_ref()
        .is_err_and(|e| e.to_string().contains("NCCL"))
    {
        checked
            .failures
            .push(format!("a failed id creation gave {refused:?}"));
    }

    // bench-comm's hook: one collective of every kind, timed on all ranks.
    for (kind, c) in &checked.examples {
        match time_collective(&backend, c, 1, 3) {
            Ok(t) if t.len() == 3 && t.iter().all(|&x| x > 0.0) => {}
            other => checked.failures.push(format!("timing a {kind}: {other:?}")),
        }
    }

    for kind in [
        "all-gather",
        "all-reduce",
        "all-to-all",
        "reduce-scatter",
        "collective-permute",
    ] {
        if !checked.kinds.contains_key(kind) {
            checked.failures.push(format!("no program ran a {kind}"));
        }
    }
    // Any rank's failures end the job with them.
    let failures = std::mem::take(&mut checked.failures);
    backend.settle(if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} failure(s):\n{}",
            failures.len(),
            failures.join("\n")
        ))
    });
    if root {
        let kinds: Vec<String> = checked
            .kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        println!(
            "mpi programs: {fixtures} fixtures and {generated} generated programs on {} ranks, all bitwise equal to the CPU backend; collectives: {}; {} group communicators",
            backend.size(),
            kinds.join(", "),
            comms::cached()
        );
    }
    backend.barrier();
}

fn worker_fault(panic: bool) {
    let backend = MpiBackend::init().expect("MPI initializes");
    // 4 devices; every device all-reduces the partial products of the dot.
    let text = r#"module @fault {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = stablehlo.tanh %0 : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}"#;
    let module = backend.or_abort(parse_module(text).map_err(|d| format!("{d:?}")));
    let program = backend.or_abort(compile(&module).map_err(|d| d.message));
    let f = backend.or_abort(module.entry().ok_or("no entry"));
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = backend.or_abort(random_inputs(&types, 1));
    // Device 2 fails at its first instruction; the others go on into the
    // all-reduce and wait there for it.
    let opts = ExecOptions {
        fault: Some(InjectedFault {
            device: 2,
            instr: 0,
            panic,
        }),
        ..ExecOptions::default()
    };
    let run = run_program(
        &backend,
        &program.device,
        Inputs::Global(&inputs),
        1,
        false,
        &opts,
    );
    // Only reached if the fault did not end the job.
    println!("the run ended with {:?}", run.map(|r| r.times_ms));
}
