//! The collectives a partitioned program runs, with why each exists — what
//! `meshrun partition --json` prints. All-slices move no data and are not
//! listed.

use crate::partition::collective::{collective_bytes, CollectiveKind};
use crate::partition::program::PartitionedProgram;

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
    pub bytes_per_device: f64,
}

/// All communicating collectives of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveReport {
    pub num_devices: usize,
    pub collectives: Vec<ReportEntry>,
    pub total_bytes_per_device: f64,
}

/// The report of `p`.
pub fn collective_report(p: &PartitionedProgram) -> CollectiveReport {
    let n = p.device.num_devices();
    let collectives: Vec<ReportEntry> = p
        .device
        .collectives()
        .filter(|(c, _)| c.kind != CollectiveKind::AllSlice)
        .map(|(c, cause)| ReportEntry {
            kind: c.kind.to_string(),
            op: cause.op.clone(),
            reason: cause.reason.clone(),
            axes: c.axes.iter().map(ToString::to_string).collect(),
            groups: c.groups.clone(),
            dtype: c.elem.name().to_string(),
            in_shape: c.in_local_shape.clone(),
            out_shape: c.out_local_shape.clone(),
            bytes_per_device: collective_bytes(c, n),
        })
        .collect();
    let total_bytes_per_device = collectives
        .iter()
        .map(|e| e.bytes_per_device)
        .fold(0.0, |a, b| a + b);
    CollectiveReport {
        num_devices: n,
        collectives,
        total_bytes_per_device,
    }
}
