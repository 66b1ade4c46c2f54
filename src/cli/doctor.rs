//! `meshrun doctor [--compile-kernels]`: what this machine can run.
//!
//! Lists the CPU cores, the CUDA driver and its GPUs (name, memory,
//! compute capability), NVRTC, the CUDA headers NVRTC needs, cuBLAS,
//! NCCL and MPI; each present with its version or absent with the reason,
//! then which backends can run. Probing never panics, whatever is (not)
//! installed. `--compile-kernels` also compiles every CUDA kernel with
//! NVRTC for sm_80, sm_90 and this machine's GPUs (no GPU needed) and
//! fails if any does not compile.

use std::fmt::Display;
use std::process::Command;

use anyhow::bail;

use meshrun::runtime::cuda::kernel_check;
use meshrun::runtime::cuda::probe::{self, CudaReport};

/// Options of `meshrun doctor`.
#[derive(Debug, Clone, Default)]
pub struct DoctorArgs {
    pub compile_kernels: bool,
}

fn line(what: &str, status: impl Display) -> String {
    format!("{what:<14} {status}\n")
}

fn status<T>(r: &Result<T, String>, show: impl Fn(&T) -> String) -> String {
    match r {
        Ok(v) => show(v),
        Err(why) => format!("absent: {why}"),
    }
}

/// The first line of `mpirun --version`, or why there is none.
fn mpi() -> Result<String, String> {
    let out = Command::new("mpirun")
        .arg("--version")
        .output()
        .map_err(|_| "mpirun not found on PATH".to_string())?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
        .ok_or_else(|| "mpirun --version printed nothing".to_string())
}

/// The report, as printed.
pub fn report_text(cuda: &CudaReport, mpi: &Result<String, String>) -> String {
    let mut s = String::from("meshrun doctor\n");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    s += &line("CPU", format!("{cores} cores available"));
    s += &line(
        "CUDA driver",
        status(&cuda.driver, |(a, b)| format!("CUDA {a}.{b}")),
    );
    match &cuda.gpus {
        Ok(gpus) => {
            s += &line("GPUs", gpus.len());
            for g in gpus {
                let (major, minor) = g.compute_capability;
                s += &line(
                    &format!("  GPU {}", g.ordinal),
                    format!(
                        "{}, {:.1} GiB, compute capability {major}.{minor} ({})",
                        g.name,
                        g.memory_bytes as f64 / (1u64 << 30) as f64,
                        g.arch()
                    ),
                );
            }
        }
        Err(why) => s += &line("GPUs", format!("absent: {why}")),
    }
    s += &line("NVRTC", status(&cuda.nvrtc, |(a, b)| format!("{a}.{b}")));
    s += &line(
        "CUDA headers",
        status(&cuda.headers, |p| format!("{} (cuda_fp16.h)", p.display())),
    );
    s += &line(
        "cuBLAS",
        status(&cuda.cublas, |(a, b, c)| format!("{a}.{b}.{c}")),
    );
    s += &line(
        "NCCL",
        status(&cuda.nccl, |(a, b, c)| format!("{a}.{b}.{c}")),
    );
    s += &line("MPI", status(mpi, |v| v.clone()));
    let cuda_ready = match (&cuda.gpus, &cuda.nvrtc, &cuda.headers) {
        (Ok(g), Ok(_), Ok(_)) if !g.is_empty() => "ready".to_string(),
        (Err(why), _, _) => format!("unavailable ({why})"),
        (_, Err(why), _) | (_, _, Err(why)) => format!("unavailable ({why})"),
        _ => "unavailable (no GPU)".to_string(),
    };
    s += &line("backends", format!("cpu: ready; cuda: {cuda_ready}"));
    if cuda.gpus.is_ok() && cuda.nccl.is_err() {
        s += "               (without NCCL, collectives work only among mesh devices that share a GPU)\n";
    }
    s
}

fn compile_kernels(cuda: &CudaReport) -> anyhow::Result<()> {
    if let Some(why) = kernel_check::unavailable() {
        bail!("cannot compile the CUDA kernels: {why}");
    }
    let mut archs: Vec<String> = vec!["sm_80".into(), "sm_90".into()];
    if let Ok(gpus) = &cuda.gpus {
        for g in gpus {
            if !archs.contains(&g.arch()) {
                archs.push(g.arch());
            }
        }
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let builds = kernel_check::compile_all(&archs, threads);
    let mut failed = 0;
    for b in &builds {
        match &b.error {
            None => println!(
                "compiled {:<15} for {}: {} kernels, {} KiB, {:.1} s",
                b.module,
                b.arch,
                b.kernels,
                b.bytes / 1024,
                b.seconds
            ),
            Some(e) => {
                failed += 1;
                eprintln!("FAILED {} for {}: {e}", b.module, b.arch);
            }
        }
    }
    if failed > 0 {
        bail!("{failed} of {} kernel module builds failed", builds.len());
    }
    println!("all {} kernel module builds compiled", builds.len());
    Ok(())
}

pub fn doctor(args: &DoctorArgs) -> anyhow::Result<()> {
    let cuda = probe::report();
    print!("{}", report_text(&cuda, &mpi()));
    if args.compile_kernels {
        compile_kernels(&cuda)?;
    }
    Ok(())
}
