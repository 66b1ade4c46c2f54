//! `meshrun run --backend cuda` started by a launcher (mpirun, srun) as one
//! of several processes, in a build without the `mpi` feature: it refuses
//! at once, saying how to build, instead of running every GPU of the
//! machine from every process. One process under a launcher is not
//! refused.
#![cfg(not(feature = "mpi"))]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every variable `meshrun run` reads to count a launcher's processes.
const TASKS_ENV: [&str; 4] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_NTASKS",
];

fn program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax/mlp_forward/input.mlir")
}

/// `meshrun run mlp_forward --backend cuda` as if a launcher had set `vars`.
fn run_cuda_with(vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_meshrun"));
    cmd.arg("run")
        .arg(program())
        .args(["--backend", "cuda", "--random-inputs", "1"]);
    for v in TASKS_ENV {
        cmd.env_remove(v);
    }
    cmd.envs(vars.iter().copied());
    cmd.output().expect("meshrun runs")
}

#[test]
fn several_processes_without_mpi_are_refused_with_how_to_build() {
    for (var, n) in [
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("PMI_SIZE", "4"),
        ("SLURM_NTASKS", "8"),
    ] {
        let out = run_cuda_with(&[(var, n)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{var}={n}: {stderr}");
        assert!(stderr.contains("--features mpi"), "{var}={n}: {stderr}");
        assert!(
            stderr.contains(&format!("one of {n} processes ({var}={n})")),
            "{var}={n}: {stderr}"
        );
        // The refusal comes before anything runs.
        assert!(out.stdout.is_empty(), "{var}={n}");
    }
}

#[test]
fn one_process_under_a_launcher_is_not_refused() {
    // An `sbatch -n 8` script runs one process; srun's step says so.
    let out = run_cuda_with(&[("SLURM_NTASKS", "8"), ("SLURM_STEP_NUM_TASKS", "1")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("--features mpi"), "{stderr}");
    // It runs on this machine's GPUs, or says why there are none.
    assert!(
        out.status.success() || stderr.contains("the CUDA backend cannot run here"),
        "{stderr}"
    );
}
