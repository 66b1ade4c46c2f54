//! The collectives a partitioned program runs, with why each exists — what
//! `meshrun partition --json` prints. All-slices move no data and are not
//! listed. A collective in a counted loop (constant bounds) counts once per
//! iteration; in a loop whose trip count depends on data it counts once,
//! and the report says the total is per iteration of that loop.

use crate::partition::program::PartitionedProgram;
use crate::partition::reshard::collective::{collective_bytes, CollectiveKind};

/// One communicating collective.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportEntry {
    /// `all-gather`, `all-reduce`, `reduce-scatter`, `all-to-all` or
    /// `collective-permute`.
    pub kind: String,
    /// The op (or function result) that needs it.
    pub op: String,
    /// Why: which operand/factor conflict, partial sum or annotation.
    pub reason: String,
    /// The mesh axes it runs over (empty for a collective-permute).
    pub axes: Vec<String>,
    /// Device groups by rank; `[source, target]` pairs for a permute.
    pub groups: Vec<Vec<i64>>,
    pub dtype: String,
    /// Local shapes before and after.
    pub in_shape: Vec<i64>,
    pub out_shape: Vec<i64>,
    /// Bytes over all its runs: [`ReportEntry::bytes_per_run`] × `runs`.
    pub bytes_per_device: f64,
    /// Bytes a device receives each time it runs.
    pub bytes_per_run: f64,
    /// How often it runs in one run of the program: the product of the
    /// trip counts of the counted loops around it (1 outside loops).
    pub runs: f64,
    /// It sits in a loop whose trip count depends on data: `runs` counts
    /// one iteration of that loop.
    pub trip_count_unknown: bool,
}

/// All communicating collectives of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveReport {
    pub num_devices: usize,
    pub collectives: Vec<ReportEntry>,
    pub total_bytes_per_device: f64,
    /// Some collective sits in a loop of unknown trip count: the total is
    /// per iteration of that loop.
    pub trip_count_unknown: bool,
}

/// The report of `p`.
pub fn collective_report(p: &PartitionedProgram) -> CollectiveReport {
    let n = p.device.num_devices();
    let collectives: Vec<ReportEntry> = p
        .device
        .collectives_repeated()
        .into_iter()
        .filter(|(c, _, _)| c.kind != CollectiveKind::AllSlice)
        .map(|(c, cause, at)| ReportEntry {
            kind: c.kind.to_string(),
            op: cause.op.clone(),
            reason: cause.reason.clone(),
            axes: c.axes.iter().map(ToString::to_string).collect(),
            groups: c.groups.clone(),
            dtype: c.elem.name().to_string(),
            in_shape: c.in_local_shape.clone(),
            out_shape: c.out_local_shape.clone(),
            bytes_per_device: collective_bytes(c, n) * at.times,
            bytes_per_run: collective_bytes(c, n),
            runs: at.times,
            trip_count_unknown: at.unknown_trips,
        })
        .collect();
    let total_bytes_per_device = collectives
        .iter()
        .map(|e| e.bytes_per_device)
        .fold(0.0, |a, b| a + b);
    CollectiveReport {
        num_devices: n,
        trip_count_unknown: collectives.iter().any(|e| e.trip_count_unknown),
        collectives,
        total_bytes_per_device,
    }
}
