//! `meshrun cost [FILE] [--topology NAME|PATH] [--calibrate BENCH.json]
//! [--write-topology OUT] [--json] [--peak-tflops X] [--no-propagate]
//! [--memory-per-device 80G]`.
//!
//! Partitions FILE exactly as `meshrun partition` does and prints, per
//! communicating collective, the op that caused it, its kind, axes, group
//! size, bytes per device and estimated time on the topology; then the
//! communication total, the host↔device copies of values in host memory
//! (on the topology's host link), the compute FLOPs per device at the
//! stated peak, a step estimate (compute + communication + copies, no
//! overlap) and the memory of one device (host memory apart). `--json`
//! prints `meshrun partition --json`'s document with the cost fields added.
//!
//! `--calibrate BENCH.json` first fits α and β of the topology's intra-node
//! link to bench-comm timings; without FILE it prints the calibrated
//! topology (JSON), which `--write-topology OUT` also writes to a file.

use std::path::{Path, PathBuf};

use meshrun::bench_comm::size::parse_memory_cap;
use meshrun::compiler::propagation::PropagationOptions;
use meshrun::cost::calibrate::{calibrate, calibrated_topology, read_bench, Calibration};
use meshrun::cost::render::{annotate_json, render_table, significant};
use meshrun::cost::{cost_report, CostError, Topology, DEFAULT_TOPOLOGY};
use meshrun::load::load_file;
use meshrun::plan::{partition_file, plan_json};
use serde_json::{json, Value};

/// Options of `meshrun cost`.
#[derive(Debug, Clone, Default)]
pub struct CostArgs {
    pub topology: Option<String>,
    pub calibrate: Option<PathBuf>,
    pub write_topology: Option<PathBuf>,
    pub json: bool,
    /// As typed: checked here so a bad value is a one-line error.
    pub peak_tflops: Option<String>,
    pub no_propagate: bool,
    /// `--memory-per-device`, as typed.
    pub memory_per_device: Option<String>,
}

/// Parse a `--peak-tflops` value: a positive number.
fn parse_peak_tflops(s: &str) -> anyhow::Result<f64> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => anyhow::bail!("--peak-tflops: '{s}' is not a positive number of TFLOP/s"),
    }
}

pub fn cost(file: Option<&Path>, args: &CostArgs) -> anyhow::Result<()> {
    let peak_tflops = args
        .peak_tflops
        .as_deref()
        .map(parse_peak_tflops)
        .transpose()?;
    let memory_cap = args
        .memory_per_device
        .as_deref()
        .map(|s| parse_memory_cap("--memory-per-device", s).map_err(anyhow::Error::msg))
        .transpose()?;
    let mut topo = Topology::resolve(args.topology.as_deref().unwrap_or(DEFAULT_TOPOLOGY))?;
    let mut calibration = None;
    if let Some(bench) = &args.calibrate {
        let data = read_bench(bench)?;
        let cal = calibrate(&data, bench)?;
        topo = calibrated_topology(&topo, &cal, &bench.display().to_string());
        calibration = Some(cal);
    }
    if let Some(out) = &args.write_topology {
        std::fs::write(out, topo.to_json()).map_err(|source| CostError::Write {
            path: out.clone(),
            source,
        })?;
    }
    let Some(file) = file else {
        if calibration.is_none() && args.write_topology.is_none() {
            anyhow::bail!("cost: give a FILE to cost, or --calibrate BENCH.json");
        }
        if let Some(cal) = &calibration {
            eprint!("{}", calibration_summary(cal, args.calibrate.as_deref()));
        }
        if args.write_topology.is_none() {
            print!("{}", topo.to_json());
        }
        return Ok(());
    };
    let module = load_file(file)?;
    topo.check_module_fits(&module)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let propagation = (!args.no_propagate).then(PropagationOptions::default);
    let program = partition_file(file, &module, propagation.as_ref())?;
    let mut report = cost_report(&program, &topo, peak_tflops)?;
    report.memory_cap = memory_cap;
    let text = if args.json {
        let mut doc = plan_json(&program, &report.memory);
        annotate_json(&mut doc, &report);
        if let (Some(cal), Value::Object(top)) = (&calibration, &mut doc) {
            let f = &cal.overall;
            top.insert(
                "calibration".into(),
                json!({
                    "latency_us": f.latency_us(),
                    "bandwidth_gbytes_per_s": f.bandwidth_gbytes_per_s(),
                    "rows": f.rows,
                    "rms_rel_error": f.rms_rel_error,
                }),
            );
        }
        let mut s = serde_json::to_string_pretty(&doc)?;
        s.push('\n');
        s
    } else {
        let mut s = String::new();
        if let Some(cal) = &calibration {
            s.push_str(&calibration_summary(cal, args.calibrate.as_deref()));
        }
        s.push_str(&render_table(&report, &file.display().to_string()));
        s
    };
    print!("{text}");
    Ok(())
}

/// What the fit found, for people.
fn calibration_summary(cal: &Calibration, bench: Option<&Path>) -> String {
    let name = bench.map(|p| p.display().to_string()).unwrap_or_default();
    let f = &cal.overall;
    let mut s = format!(
        "calibrated from {name}: α {} µs per step, bandwidth {} GB/s ({} rows, rms error {}%)\n",
        significant(f.latency_us()),
        significant(f.bandwidth_gbytes_per_s()),
        f.rows,
        significant(f.rms_rel_error * 100.0)
    );
    for (kind, f) in &cal.per_op {
        s.push_str(&format!(
            "  {kind} alone: α {} µs, bandwidth {} GB/s ({} rows)\n",
            significant(f.latency_us()),
            significant(f.bandwidth_gbytes_per_s()),
            f.rows
        ));
    }
    if !cal.skipped.is_empty() {
        s.push_str(&format!(
            "  skipped {} row(s): {}\n",
            cal.skipped.len(),
            cal.skipped.join("; ")
        ));
    }
    s
}
