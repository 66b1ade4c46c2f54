//! The CPU backend's two executors on every JAX fixture: the lockstep
//! executor (one thread drives all devices, the default) and a thread per
//! device (`--executor threads`, the MPI and CUDA backends' way) run the
//! same program on the same inputs and must give the same outputs, bit
//! for bit; each device's outputs are compared, not only the gathered
//! ones, so a replica holding other bits than its peers fails too.

#[path = "common/fixture_files.rs"]
mod fixture_files;
#[path = "common/fixture_folder.rs"]
mod fixture_folder;
#[path = "common/fixture_run.rs"]
mod fixture_run;

use meshrun_compiler::text::parse_module;
use meshrun_kernels::HostTensor;
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

/// Both executors on one fixture: `Ok(false)` when it needs no more than
/// one device (both run it on the caller's thread alike) or meshrun
/// refuses it before any executor runs.
fn compare(folder: &str, name: &str) -> Result<bool, String> {
    let dir = fixture_run::fixture(folder, name);
    let text = std::fs::read_to_string(dir.join("input.mlir")).map_err(|e| e.to_string())?;
    // What meshrun refuses before running (a complex element type) is
    // no executor's business: `model_fixtures.rs` lists it.
    let Ok(module) = parse_module(&text) else {
        return Ok(false);
    };
    let inputs = fixture_files::numbered(&dir, "in");
    let Ok(program) = compile(&module) else {
        return Ok(false);
    };
    if program.device.num_devices() < 2 {
        return Ok(false);
    }
    let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
    let lockstep = per_device(&exec, &inputs, CpuExecutor::Lockstep);
    let threads = per_device(&exec, &inputs, CpuExecutor::Threads);
    let (lockstep, threads) = match (lockstep, threads) {
        (Ok(a), Ok(b)) => (a, b),
        // The same error; the device that names it may differ (with a
        // thread per device, whichever failed first).
        (Err(a), Err(b)) if after_device(&a) == after_device(&b) => return Ok(true),
        (a, b) => return Err(format!("lockstep: {:?}; threads: {:?}", a.err(), b.err())),
    };
    for (pos, (a, b)) in lockstep.iter().zip(&threads).enumerate() {
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            // Bits, NaNs included: `{:?}` prints them alike.
            if x != y && format!("{x:?}") != format!("{y:?}") {
                let diff = fixture_run::compare_outputs(
                    std::slice::from_ref(x),
                    std::slice::from_ref(y),
                    0.0,
                    "threads",
                )
                .err()
                .unwrap_or_default();
                return Err(format!(
                    "device {} output {k} differs: {diff}",
                    exec.program().devices[pos]
                ));
            }
        }
    }
    Ok(true)
}

#[test]
fn lockstep_and_a_thread_per_device_give_the_same_bits_on_every_fixture() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for folder in FOLDERS {
        for name in fixture_folder::names(folder) {
            match compare(folder, &name) {
                Ok(true) => compared += 1,
                Ok(false) => {}
                Err(e) => failures.push(format!("{folder}/{name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every folder has multi-device fixtures; a broken listing is a
    // failure, not a pass over nothing.
    assert!(compared >= 100, "only {compared} fixtures compared");
}
