//! The CPU backend's two executors on every JAX fixture: the lockstep
//! executor (one thread drives all devices, the default) and a thread per
//! device (`--executor threads`, the MPI and CUDA backends' way) run the
//! same program on the same inputs. Each device's outputs are compared,
//! not only the gathered ones: bit for bit, except where lockstep sums a
//! data-parallel gradient as one product over the stacked batch
//! (`cpu/lockstep/stacked.rs`), which adds in another order; there they
//! must agree within `meshrun run --check`'s rule.

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/fixture_folder.rs"]
mod fixture_folder;
#[path = "common/fixture_run.rs"]
mod fixture_run;

use meshrun_compiler::text::parse_module;
use meshrun_kernels::HostTensor;
use meshrun_runtime::compare::{mismatch, rtol_for};
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::{Backend, CpuBackend, CpuExecutor, ExecOptions, Executor};

const FOLDERS: [&str; 5] = [
    "jax",
    "jax_regions",
    "jax_shard_map",
    "jax_models",
    "jax_0_12",
];

/// Each device's output blocks (downloaded) under `executor`.
fn per_device(
    exec: &Executor<'_>,
    inputs: &[HostTensor],
    executor: CpuExecutor,
) -> Result<Vec<Vec<HostTensor>>, String> {
    let backend = CpuBackend::new().with_executor(executor);
    let placed = exec.place(&backend, inputs).map_err(|e| e.to_string())?;
    let outs = exec
        .run(&backend, &placed, &ExecOptions::default())
        .map_err(|e| e.to_string())?;
    let devices = &exec.program().devices;
    outs.per_device
        .into_iter()
        .zip(devices)
        .map(|(bufs, &d)| {
            bufs.into_iter()
                .map(|b| backend.download(d, b).map_err(|e| e.to_string()))
                .collect()
        })
        .collect()
}

/// An error without its leading `device N: `.
fn after_device(e: &str) -> &str {
    e.strip_prefix("device ")
        .and_then(|rest| rest.split_once(": "))
        .map_or(e, |(_, msg)| msg)
}

/// How two executors' runs of one fixture compared.
#[derive(PartialEq)]
enum Agreed {
    /// Not compared: one device, or refused before running.
    NotRun,
    Bitwise,
    WithinCheck,
}

/// Both executors on one fixture. One device runs on the caller's thread
/// either way; what meshrun refuses before running (a complex element
/// type) is no executor's business (`model_fixtures.rs` lists it).
fn compare(folder: &str, name: &str) -> Result<Agreed, String> {
    let dir = fixture_run::fixture(folder, name);
    let text = std::fs::read_to_string(dir.join("input.mlir")).map_err(|e| e.to_string())?;
    let Ok(module) = parse_module(&text) else {
        return Ok(Agreed::NotRun);
    };
    let inputs = fixture_files::numbered(&dir, "in");
    let Ok(program) = compile(&module) else {
        return Ok(Agreed::NotRun);
    };
    if program.device.num_devices() < 2 {
        return Ok(Agreed::NotRun);
    }
    let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
    let lockstep = per_device(&exec, &inputs, CpuExecutor::Lockstep);
    let threads = per_device(&exec, &inputs, CpuExecutor::Threads);
    let (lockstep, threads) = match (lockstep, threads) {
        (Ok(a), Ok(b)) => (a, b),
        // The same error; the device that names it may differ (with a
        // thread per device, whichever failed first).
        (Err(a), Err(b)) if after_device(&a) == after_device(&b) => return Ok(Agreed::Bitwise),
        (a, b) => return Err(format!("lockstep: {:?}; threads: {:?}", a.err(), b.err())),
    };
    let rtol = rtol_for(&module);
    let mut agreed = Agreed::Bitwise;
    for (pos, (a, b)) in lockstep.iter().zip(&threads).enumerate() {
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            // Bits, NaNs included: `{:?}` prints them alike.
            if x == y || format!("{x:?}") == format!("{y:?}") {
                continue;
            }
            if let Some(m) = mismatch(x, y, rtol) {
                let device = exec.program().devices[pos];
                return Err(format!("device {device} output {k}: {m}"));
            }
            agreed = Agreed::WithinCheck;
        }
    }
    Ok(agreed)
}

#[test]
fn lockstep_and_a_thread_per_device_agree_on_every_fixture() {
    let mut failures = Vec::new();
    let (mut bitwise, mut within) = (0, Vec::new());
    for folder in FOLDERS {
        for name in fixture_folder::names(folder) {
            match compare(folder, &name) {
                Ok(Agreed::Bitwise) => bitwise += 1,
                Ok(Agreed::WithinCheck) => within.push(format!("{folder}/{name}")),
                Ok(Agreed::NotRun) => {}
                Err(e) => failures.push(format!("{folder}/{name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Most programs have no summed gradient: a broken listing, or a
    // lockstep path that changed bits everywhere, fails here.
    assert!(
        bitwise >= 100 && within.len() <= 20,
        "{bitwise} fixtures bitwise the same; within --check's rule only: {within:?}"
    );
}
