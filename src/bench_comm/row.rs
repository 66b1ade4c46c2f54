//! One measured row: what `bench-comm --json` prints per op and size, in
//! the format `meshrun cost --calibrate` reads
//! ([`crate::cost::calibrate`]).

use serde::{Deserialize, Serialize};

use meshrun_runtime::comm_bench::CommBenchResult;

use crate::cost::model::bus_factor;

/// One op at one size. Bandwidths follow nccl-tests: `algbw = S / t`,
/// `busbw = algbw × factor(op, ranks)` (10⁹ bytes per second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `all-gather`, `all-reduce`, ...
    pub op: String,
    /// nccl-tests' size `S` in bytes.
    pub bytes: u64,
    /// Elements in `S`.
    pub count: u64,
    /// Element type (`f32`, ...).
    pub dtype: String,
    /// Median over the timed runs of the slowest device's time, µs.
    pub time_us: f64,
    pub algbw_gbps: f64,
    pub busbw_gbps: f64,
    /// Every device's last result was right.
    pub ok: bool,
    /// Devices in the group.
    pub ranks: usize,
    /// What was wrong (device, element) when `ok` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Row {
    /// The row of one measurement.
    pub fn from_result(r: &CommBenchResult) -> Row {
        let algbw = r.algbw_gbps();
        Row {
            op: r.op.name().to_string(),
            bytes: r.bytes,
            count: r.count,
            dtype: r.elem.name().to_string(),
            time_us: r.median_s() * 1e6,
            algbw_gbps: algbw,
            busbw_gbps: algbw * bus_factor(r.op.kind(), r.ranks),
            ok: r.ok(),
            ranks: r.ranks,
            error: r.error.clone(),
        }
    }
}

/// The rows as the JSON list `--json` prints.
pub fn rows_json(rows: &[Row]) -> String {
    // Plain data of strings and finite numbers: serialization cannot fail.
    serde_json::to_string_pretty(rows).unwrap_or_else(|e| unreachable!("{e}"))
}
