//! `meshrun run --backend mpi` under a real `mpirun` (feature `mpi`): the
//! MLP fixture on 8 ranks writes bitwise the outputs `--backend cpu
//! --executor threads` writes (a thread per device, as ranks run), and a
//! world of the wrong size fails at once, saying so once.
//! `--backend cuda` under `mpirun` (one GPU per rank) fails at once with
//! one message where there is no GPU.
#![cfg(feature = "mpi")]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn meshrun() -> &'static str {
    env!("CARGO_BIN_EXE_meshrun")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax")
        .join(name)
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    (0..)
        .map(|i| dir.join(format!("in_{i}.npy")))
        .take_while(|p| p.exists())
        .collect()
}

/// `mpirun -np N meshrun ARGS...` (Open MPI: oversubscribed, as root too).
fn mpirun(np: usize, args: &[OsString]) -> Output {
    let open_mpi = Command::new("mpirun")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("Open MPI"))
        .expect("mpirun is installed (see ci/mpi-check.sh)");
    let mut cmd = Command::new("mpirun");
    if open_mpi {
        cmd.arg("--oversubscribe")
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    }
    cmd.args(["-np", &np.to_string(), meshrun()])
        .args(args)
        .output()
        .expect("mpirun runs")
}

fn run_args(program: &Path, files: &[PathBuf], extra: &[&str]) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        "run".into(),
        program.into(),
        "--backend".into(),
        "mpi".into(),
    ];
    a.push("--inputs".into());
    a.extend(files.iter().map(OsString::from));
    a.extend(extra.iter().map(OsString::from));
    a
}

#[test]
fn mlp_on_eight_ranks_writes_what_the_cpu_backend_writes() {
    let dir = fixture("mlp_train_step");
    let program = dir.join("input.mlir");
    let files = inputs(&dir);
    let out = tempfile::tempdir().unwrap();
    let (mpi_dir, cpu_dir) = (out.path().join("mpi"), out.path().join("cpu"));
    let mpi_out = mpi_dir.to_string_lossy().into_owned();
    let extra = ["--check", "--output-dir", mpi_out.as_str()];
    let job = mpirun(8, &run_args(&program, &files, &extra));
    let stdout = String::from_utf8_lossy(&job.stdout);
    assert!(
        job.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&job.stderr)
    );
    // Rank 0 alone reports.
    assert_eq!(
        stdout.matches("ran @main on 8 mpi devices").count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("OVER TOLERANCE"), "{stdout}");

    let cpu = Command::new(meshrun())
        .arg("run")
        .arg(&program)
        .args(["--backend", "cpu", "--executor", "threads", "--inputs"])
        .args(&files)
        .arg("--output-dir")
        .arg(&cpu_dir)
        .output()
        .unwrap();
    assert!(
        cpu.status.success(),
        "{}",
        String::from_utf8_lossy(&cpu.stderr)
    );
    for k in 0..5 {
        let name = format!("output_{k}.npy");
        let (a, b) = (
            std::fs::read(mpi_dir.join(&name)),
            std::fs::read(cpu_dir.join(&name)),
        );
        assert_eq!(
            a.unwrap(),
            b.unwrap(),
            "{name} differs between the MPI and CPU backends"
        );
    }
}

#[test]
fn a_world_of_the_wrong_size_fails_once_and_says_why() {
    let dir = fixture("mlp_forward");
    let program = dir.join("input.mlir");
    let files = inputs(&dir);
    let start = std::time::Instant::now();
    let job = mpirun(4, &run_args(&program, &files, &[]));
    let stderr = String::from_utf8_lossy(&job.stderr);
    assert!(!job.status.success());
    assert!(start.elapsed().as_secs() < 60);
    let said = "the program runs on 8 devices but MPI started 4 processes";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert!(stderr.contains("mpirun -np 8"), "{stderr}");
}

/// `--backend cuda` under mpirun: one GPU per rank. Without a GPU (this
/// machine, CI) every rank fails to open its GPU; the job must end at
/// once, non-zero, with the reason printed once (not once per rank, not a
/// panic). With GPUs, the 8-device program on 2 ranks still fails with
/// one message (the world size, or a GPU too few on the node).
#[test]
fn cuda_under_mpirun_without_a_gpu_fails_once_and_says_why() {
    let dir = fixture("mlp_forward");
    let program = dir.join("input.mlir");
    let mut args = run_args(&program, &inputs(&dir), &[]);
    args[3] = "cuda".into();
    let start = std::time::Instant::now();
    let job = mpirun(2, &args);
    let stderr = String::from_utf8_lossy(&job.stderr);
    assert!(!job.status.success(), "{stderr}");
    assert!(start.elapsed().as_secs() < 60);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.matches("error: rank ").count(), 1, "{stderr}");
    match meshrun::runtime::cuda::probe::gpu_count() {
        Err(why) => {
            let said = format!("error: rank 0 of 2: the CUDA backend cannot run here: {why}");
            assert_eq!(stderr.matches(&said).count(), 1, "{stderr}");
        }
        Ok(_) => assert!(
            stderr.contains("MPI started 2 processes") || stderr.contains("per node"),
            "{stderr}"
        ),
    }
}
