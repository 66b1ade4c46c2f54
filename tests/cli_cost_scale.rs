//! Memory per device and bytes moved at real model sizes, against XLA:
//! `fixtures/scale` holds shape-only Llama-style training steps (1B on 8
//! devices, 7B on 8 and 64, 70B on 256; `tools/jax_export_scale.py`, JAX
//! 0.12) with XLA's `memory_analysis()` and collective bytes per device.
//! On Shardy's propagation of each step (`propagated.mlir`, the sharded
//! program XLA compiled) `meshrun cost --no-propagate` must count within
//! [`BAND`] of XLA's memory (measured: 1% to 16% under it); on meshrun's
//! own propagation it must move no more bytes than XLA.

use std::path::PathBuf;

use serde_json::Value;

mod common;
use common::{arg as s, run_ok};

/// meshrun's memory estimate over XLA's on the same sharded program:
/// within this range.
const BAND: (f64, f64) = (0.8, 1.1);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn topology(devices: u64) -> &'static str {
    match devices {
        8 => "h100-nvlink-8",
        64 => "8x8-h100-ib400",
        256 => "32x8-h100-ib400",
        n => panic!("no topology for {n} devices"),
    }
}

#[test]
fn memory_and_bytes_at_real_sizes_are_within_the_band_of_xla() {
    let dir = root().join("fixtures/scale");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/scale")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("input.mlir").is_file())
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{} scale fixtures", names.len());
    let mut problems = Vec::new();
    for d in &names {
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).expect("meta.json"))
                .expect("JSON");
        let devices = meta["num_devices"].as_u64().expect("num_devices");
        let xla_mem = meta["xla_memory_per_device"]["total_bytes"]
            .as_f64()
            .expect("total");
        let xla_moved = meta["xla_collective_bytes_per_device"]
            .as_f64()
            .expect("bytes");
        let file = d.join("input.mlir");
        let cost = |file: &PathBuf, extra: &[&str]| -> Value {
            let mut args = vec!["cost", s(file), "--json", "--topology", topology(devices)];
            args.extend_from_slice(extra);
            serde_json::from_str(&run_ok(&args)).expect("JSON")
        };
        let c = cost(&file, &[]);
        let same = cost(&d.join("propagated.mlir"), &["--no-propagate"]);
        let mem = c["memory"]["total_bytes"].as_f64().expect("memory");
        let same_mem = same["memory"]["total_bytes"].as_f64().expect("memory");
        let moved = c["total_bytes_per_device"].as_f64().expect("bytes");
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let ratio = same_mem / xla_mem;
        let gib = |b: f64| b / 1073741824.0;
        eprintln!(
            "{name}: XLA {:.2} GiB; meshrun on Shardy's propagation {:.2} GiB ({:+.0}%), on its own {:.2} GiB; moves {:.2} GiB vs XLA {:.2} GiB",
            gib(xla_mem),
            gib(same_mem),
            (ratio - 1.0) * 100.0,
            gib(mem),
            gib(moved),
            gib(xla_moved)
        );
        if ratio < BAND.0 || ratio > BAND.1 {
            problems.push(format!(
                "{name}: memory {same_mem} B is {ratio:.2} x XLA's {xla_mem} B"
            ));
        }
        if moved > xla_moved {
            problems.push(format!("{name}: moves {moved} B > XLA's {xla_moved} B"));
        }
        // A step that needs more than an H100's 80 GB says so.
        let over = c["memory"]["total_bytes"].as_f64().unwrap() > 80e9;
        if over {
            let text = run_ok(&[
                "cost",
                s(&file),
                "--topology",
                topology(devices),
                "--memory-per-device",
                "80G",
            ]);
            if !text.contains("DOES NOT FIT") {
                problems.push(format!("{name}: over 80 GB but cost says it fits:\n{text}"));
            }
        }
    }
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}
