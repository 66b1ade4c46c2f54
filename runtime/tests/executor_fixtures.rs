//! Every JAX fixture, sharded: parse `input.mlir`, propagate, partition,
//! run on the fixture's own mesh (8 simulated CPU devices), and check the
//! outputs against the unsharded reference run and against JAX's
//! `out_*.npy`, with the tolerance rule of `meshrun_runtime::compare`
//! (the same as `reference_fixtures.rs` and `meshrun run --check`).
//! Replicated blocks must be bitwise identical on every device that holds
//! them, and a second run must give bitwise the same outputs.
//!
//! Every fixture must pass; none is skipped.

use std::path::{Path, PathBuf};

use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::compare::{mismatch, rtol_for};
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::reference::run_function;
use meshrun_runtime::{CpuBackend, ExecOptions, Executor};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax")
}

fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.npy")))
        .take_while(|p| p.exists())
        .collect()
}

fn read_all(paths: &[PathBuf]) -> Result<Vec<HostTensor>, String> {
    paths
        .iter()
        .map(|p| read_npy(p).map_err(|e| e.to_string()))
        .collect()
}

/// Run one fixture sharded; the number of devices it ran on.
fn check_fixture(dir: &Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(dir.join("input.mlir")).map_err(|e| e.to_string())?;
    let module = parse_module(&text).map_err(|d| format!("input.mlir:{d}"))?;
    let inputs = read_all(&numbered(dir, "in"))?;
    let jax = read_all(&numbered(dir, "out"))?;
    let program = compile(&module).map_err(|d| format!("compile: {}: {}", d.pos, d.message))?;
    let exec = Executor::new(&program.device).map_err(|e| e.to_string())?;
    let backend = CpuBackend::new();
    let run = || -> Result<Vec<HostTensor>, String> {
        let placed = exec.place(&backend, &inputs).map_err(|e| e.to_string())?;
        let outs = exec
            .run(&backend, &placed, &ExecOptions::default())
            .map_err(|e| e.to_string())?;
        exec.gather(&backend, outs, true).map_err(|e| e.to_string())
    };
    let got = run()?;
    let again = run()?;
    if got != again && format!("{got:?}") != format!("{again:?}") {
        return Err("two runs gave different outputs".into());
    }
    let reference =
        run_function(&module, "main", &inputs, Parallelism::None).map_err(|e| e.to_string())?;
    if got.len() != jax.len() || got.len() != reference.len() {
        return Err(format!(
            "{} outputs; reference {}, JAX {}",
            got.len(),
            reference.len(),
            jax.len()
        ));
    }
    let rtol = rtol_for(&module);
    for (i, g) in got.iter().enumerate() {
        if let Some(m) = mismatch(g, &reference[i], rtol) {
            return Err(format!("output {i} vs reference: {m}"));
        }
        if let Some(m) = mismatch(g, &jax[i], rtol) {
            return Err(format!("output {i} vs JAX: {m}"));
        }
    }
    Ok(program.device.num_devices())
}

#[test]
fn every_fixture_runs_sharded_and_matches_jax() {
    let root = fixtures_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("no fixtures at {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.mlir").exists())
        .collect();
    dirs.sort();
    let (mut passed, mut failed) = (0, Vec::new());
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match check_fixture(dir) {
            Ok(devices) => {
                assert_eq!(devices, 8, "{name} ran on {devices} devices");
                passed += 1;
            }
            Err(why) => failed.push(format!("{name}: {why}")),
        }
    }
    eprintln!("sharded fixtures: {passed} match, {} fail", failed.len());
    assert!(
        failed.is_empty(),
        "fixtures that fail sharded:\n  {}",
        failed.join("\n  ")
    );
    assert!(passed >= 45, "only {passed} fixtures found");
}
