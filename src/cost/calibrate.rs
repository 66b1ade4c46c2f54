//! Fitting α and β of the link model to measured collective timings: the
//! rows `bench-comm --json` writes.
//!
//! Accepted file: a JSON array of rows, or an object whose `rows` (or
//! `results`) is that array, optionally with a top-level `ranks`. A row:
//!
//! ```json
//! {"op": "all-gather", "bytes": 1048576, "time_us": 12.5,
//!  "algbw_gbps": 83.9, "busbw_gbps": 73.4, "ok": true, "ranks": 8}
//! ```
//!
//! `bytes` is nccl-tests' size `S` of the op (see [`crate::cost::model`]);
//! `op` is a collective kind (`all-gather`, `all_reduce`, `alltoall`,
//! `sendrecv`, ...). Rows with `"ok": false` are skipped, as are ops the
//! model does not know. The group size comes from the row's `ranks`, else
//! the file's, else from `busbw / algbw` (nccl-tests' factor for the op
//! determines `G`).
//!
//! The model is `t = β · factor(op, G) · S + α · steps(op, G)` (β = 1/B).
//! Timings span orders of magnitude and their noise is relative, so the
//! fit is least squares on the *relative* error (`t` weighted by `1/t²`):
//! plain least squares would let the largest messages decide everything
//! and leave α to their noise. A negative α (latency below the noise) is
//! clamped to 0 and β refitted alone.

use std::path::Path;

use serde_json::Value;

use meshrun_compiler::partition::CollectiveKind;
use meshrun_runtime::collective_kinds::{self as kinds, Traffic};

use crate::cost::error::CostError;
use crate::cost::model::{bus_factor, latency_steps};
use crate::cost::topology::{Link, Topology};

/// One usable timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchRow {
    pub kind: CollectiveKind,
    /// Devices in the group.
    pub ranks: usize,
    /// nccl-tests' size `S`.
    pub bytes: f64,
    /// Measured time, seconds.
    pub seconds: f64,
}

/// The rows of a benchmark file and what was left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BenchData {
    pub rows: Vec<BenchRow>,
    /// Why each skipped row was skipped (`row 3: "ok": false`).
    pub skipped: Vec<String>,
}

/// Fitted α and β.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Per-step latency, seconds.
    pub alpha_s: f64,
    /// Seconds per bus byte (1 / bandwidth).
    pub beta_s_per_byte: f64,
    /// Rows fitted.
    pub rows: usize,
    /// Root mean square of `(predicted − measured) / measured`.
    pub rms_rel_error: f64,
}

impl Fit {
    pub fn latency_us(&self) -> f64 {
        self.alpha_s * 1e6
    }

    pub fn bandwidth_gbytes_per_s(&self) -> f64 {
        1.0 / self.beta_s_per_byte / 1e9
    }

    /// Predicted time of one row, seconds.
    pub fn predict(&self, row: &BenchRow) -> f64 {
        self.beta_s_per_byte * bus_factor(row.kind, row.ranks) * row.bytes
            + self.alpha_s * latency_steps(row.kind, row.ranks)
    }
}

/// A whole calibration: one fit over all rows (what the topology gets) and
/// one per op where its rows allow.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub overall: Fit,
    pub per_op: Vec<(CollectiveKind, Fit)>,
    pub skipped: Vec<String>,
}

/// Read a bench-comm JSON file.
pub fn read_bench(path: &Path) -> Result<BenchData, CostError> {
    let text = std::fs::read_to_string(path).map_err(|source| CostError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_bench(&text).map_err(|message| CostError::MalformedBench {
        path: path.to_path_buf(),
        message,
    })
}

/// Parse bench-comm JSON text.
pub fn parse_bench(text: &str) -> Result<BenchData, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let file_ranks = doc.get("ranks").map(|v| as_ranks(v, "ranks")).transpose()?;
    let rows = match &doc {
        Value::Array(rows) => rows,
        Value::Object(obj) => match obj.get("rows").or_else(|| obj.get("results")) {
            Some(Value::Array(rows)) => rows,
            _ => return Err("expected an array of rows or an object with a `rows` array".into()),
        },
        _ => return Err("expected an array of rows or an object with a `rows` array".into()),
    };
    let mut data = BenchData::default();
    for (i, row) in rows.iter().enumerate() {
        let at = |m: String| format!("row {i}: {m}");
        if row.get("ok").and_then(Value::as_bool) == Some(false) {
            data.skipped.push(at("\"ok\": false".into()));
            continue;
        }
        let op = row
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| at("no `op` string".into()))?;
        let Some(kind) = kind_of(op) else {
            data.skipped.push(at(format!("op '{op}' is not modelled")));
            continue;
        };
        let bytes = number(row, "bytes").map_err(at)?;
        let time_us = number(row, "time_us").map_err(at)?;
        if bytes < 0.0 {
            return Err(at(format!("`bytes` is {bytes}")));
        }
        if time_us <= 0.0 {
            return Err(at(format!("`time_us` is {time_us}; must be positive")));
        }
        let ranks = match row.get("ranks") {
            Some(v) => as_ranks(v, "ranks").map_err(at)?,
            None => match file_ranks {
                Some(r) => r,
                None => ranks_from_bandwidths(kind, row).map_err(at)?,
            },
        };
        data.rows.push(BenchRow {
            kind,
            ranks,
            bytes,
            seconds: time_us * 1e-6,
        });
    }
    Ok(data)
}

/// The collective kind a bench op name stands for.
fn kind_of(op: &str) -> Option<CollectiveKind> {
    kinds::kind_named(op)
}

fn number(row: &Value, field: &str) -> Result<f64, String> {
    row.get(field)
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("no numeric `{field}`"))
}

fn as_ranks(v: &Value, field: &str) -> Result<usize, String> {
    v.as_u64()
        .and_then(|r| usize::try_from(r).ok())
        .filter(|&r| r >= 2)
        .ok_or_else(|| format!("`{field}` must be an integer of at least 2, got {v}"))
}

/// `G` from nccl-tests' `busbw / algbw` factor of the op.
fn ranks_from_bandwidths(kind: CollectiveKind, row: &Value) -> Result<usize, String> {
    let passes = match kinds::def(kind).traffic {
        Traffic::Ring { passes } => passes,
        Traffic::PointToPoint => return Ok(2),
        Traffic::None => 1.0,
    };
    let missing = || "no `ranks`, and no `algbw_gbps`/`busbw_gbps` to infer it from".to_string();
    let alg = number(row, "algbw_gbps").map_err(|_| missing())?;
    let bus = number(row, "busbw_gbps").map_err(|_| missing())?;
    if alg <= 0.0 {
        return Err(missing());
    }
    let f = bus / alg;
    // (G−1)/G = f  ⇒  G = 1/(1−f);  2(G−1)/G = f  ⇒  G = 2/(2−f).
    let g = passes / (passes - f);
    let rounded = g.round();
    if !(g.is_finite() && rounded >= 2.0 && (g - rounded).abs() < 0.1) {
        return Err(format!(
            "busbw/algbw = {f:.4} does not match any group size for {kind}; give `ranks`"
        ));
    }
    Ok(rounded as usize)
}

/// Fit α and β to `rows` (see the module doc). `None` when the rows do not
/// determine a positive bandwidth.
pub fn fit(rows: &[BenchRow]) -> Option<Fit> {
    // Weighted normal equations for t = β x + α k, weights 1/t².
    let (mut sxx, mut sxk, mut skk, mut sxt, mut skt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for r in rows {
        let w = 1.0 / (r.seconds * r.seconds);
        let x = bus_factor(r.kind, r.ranks) * r.bytes;
        let k = latency_steps(r.kind, r.ranks);
        sxx += w * x * x;
        sxk += w * x * k;
        skk += w * k * k;
        sxt += w * x * r.seconds;
        skt += w * k * r.seconds;
    }
    let det = sxx * skk - sxk * sxk;
    let solved = if det > 1e-12 * sxx * skk && det > 0.0 {
        let beta = (sxt * skk - skt * sxk) / det;
        let alpha = (sxx * skt - sxk * sxt) / det;
        Some((alpha, beta))
    } else {
        None
    };
    let (alpha, beta) = match solved {
        Some((a, b)) if a >= 0.0 => (a, b),
        // α not determined or negative: bandwidth only.
        _ if sxx > 0.0 => (0.0, sxt / sxx),
        _ => return None,
    };
    if !(beta.is_finite() && beta > 0.0) {
        return None;
    }
    let mut f = Fit {
        alpha_s: alpha,
        beta_s_per_byte: beta,
        rows: rows.len(),
        rms_rel_error: 0.0,
    };
    let sq: f64 = rows
        .iter()
        .map(|r| ((f.predict(r) - r.seconds) / r.seconds).powi(2))
        .sum();
    f.rms_rel_error = (sq / rows.len().max(1) as f64).sqrt();
    Some(f)
}

/// Fit all rows of `data` (and each op's rows on their own).
pub fn calibrate(data: &BenchData, path: &Path) -> Result<Calibration, CostError> {
    let fail = |message: String| CostError::Fit {
        path: path.to_path_buf(),
        message,
    };
    if data.rows.len() < 2 {
        return Err(fail(format!(
            "{} usable row(s); need at least 2 of different sizes",
            data.rows.len()
        )));
    }
    let overall = fit(&data.rows).ok_or_else(|| {
        fail("the rows give no positive bandwidth (need sizes large enough for time to grow with size)".into())
    })?;
    let mut per_op = Vec::new();
    for kind in kinds::KINDS
        .iter()
        .filter(|d| d.moves_data())
        .map(|d| d.kind)
    {
        let rows: Vec<BenchRow> = data
            .rows
            .iter()
            .copied()
            .filter(|r| r.kind == kind)
            .collect();
        if rows.len() >= 2 {
            if let Some(f) = fit(&rows) {
                per_op.push((kind, f));
            }
        }
    }
    Ok(Calibration {
        overall,
        per_op,
        skipped: data.skipped.clone(),
    })
}

/// `base` with its intra-node link replaced by the fitted one (a benchmark
/// runs on one node); `source` names the benchmark file.
pub fn calibrated_topology(base: &Topology, cal: &Calibration, source: &str) -> Topology {
    let f = &cal.overall;
    let mut t = base.clone();
    t.name = format!("{}-calibrated", base.name);
    t.description = format!("{}; intra-node link fitted from {source}", base.description);
    t.intra_node = Link {
        name: format!("{} (fitted)", base.intra_node.name),
        bandwidth_gbytes_per_s: f.bandwidth_gbytes_per_s(),
        peak_gbytes_per_s: None,
        latency_us: f.latency_us(),
    };
    t.notes.push(format!(
        "intra_node fitted by least squares on relative error over {} rows of {source}: alpha {:.4} us, bandwidth {:.4} GB/s, rms relative error {:.1}%",
        f.rows,
        f.latency_us(),
        f.bandwidth_gbytes_per_s(),
        f.rms_rel_error * 100.0
    ));
    t
}
