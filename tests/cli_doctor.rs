//! `meshrun doctor`, and `meshrun run --backend cuda` on a machine that
//! may have no GPU: every probe answers (present or absent with a reason)
//! without panicking, and a CUDA run without a GPU fails with one line.

use std::path::PathBuf;

use assert_cmd::Command;
use meshrun::runtime::cuda::probe;

fn meshrun() -> Command {
    Command::cargo_bin("meshrun").unwrap()
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/jax")
        .join(name)
        .join("input.mlir")
}

/// The value column of the report line `what`.
fn field<'a>(report: &'a str, what: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(what) && l[what.len()..].starts_with(' '))
        .map(|l| l[what.len()..].trim())
        .unwrap_or_else(|| panic!("no {what} line in:\n{report}"))
}

#[test]
fn doctor_reports_every_component_present_or_absent_with_a_reason() {
    let out = meshrun().arg("doctor").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        field(&report, "CPU").ends_with("cores available"),
        "{report}"
    );
    for what in [
        "CUDA driver",
        "GPUs",
        "NVRTC",
        "CUDA headers",
        "cuBLAS",
        "NCCL",
        "MPI",
    ] {
        let v = field(&report, what);
        if let Some(why) = v.strip_prefix("absent:") {
            assert!(
                why.trim().len() > 5,
                "{what} absent without a reason: {report}"
            );
        }
    }
    // The report agrees with the library's own probe.
    let gpus = field(&report, "GPUs");
    match probe::gpus() {
        Ok(list) => assert_eq!(gpus, list.len().to_string(), "{report}"),
        Err(why) => {
            assert_eq!(gpus, format!("absent: {why}"));
            assert!(
                field(&report, "backends").contains("cuda: unavailable"),
                "{report}"
            );
        }
    }
    assert!(
        field(&report, "backends").starts_with("cpu: ready"),
        "{report}"
    );
}

#[test]
fn run_on_cuda_without_a_gpu_fails_with_one_line() {
    let Err(why) = probe::gpus() else {
        eprintln!("skipped: this machine has a GPU (ci/gpu-check.sh runs the CUDA backend)");
        return;
    };
    let out = meshrun()
        .args(["run", "--backend", "cuda", "--random-inputs", "1"])
        .arg(fixture("mlp_forward"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        err.trim_end(),
        format!("error: the CUDA backend cannot run here: {why}")
    );
}

#[test]
fn unknown_backends_name_the_available_ones() {
    let out = meshrun()
        .args(["run", "--backend", "tpu", "--random-inputs", "1"])
        .arg(fixture("mlp_forward"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    let available = err
        .split("unknown backend 'tpu' (available: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        available.contains("cpu") && available.contains("cuda"),
        "{err}"
    );
}

#[test]
fn compile_kernels_without_nvrtc_says_why() {
    // With no library path, NVRTC only loads if the system has it.
    let out = meshrun()
        .args(["doctor", "--compile-kernels"])
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("MESHRUN_CUDA_INCLUDE")
        .env("CUDA_HOME", "/nonexistent")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        // A machine with a system-wide CUDA toolkit compiled everything.
        assert!(String::from_utf8_lossy(&out.stdout).contains("kernel module builds compiled"));
    } else {
        assert_eq!(out.status.code(), Some(1));
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("error: cannot compile the CUDA kernels: "),
            "{err}"
        );
    }
}
