//! The cost of a partitioned program on a topology: every communicating
//! collective (from the partitioner's own report, so the bytes are the
//! ones `meshrun partition --json` prints) with its estimated time, the
//! compute FLOPs per device at a stated peak, and a step time.
//!
//! Values in host memory add their host↔device copies (`cost::host`),
//! each `bytes / B + α` on the topology's `host_link`, and the report
//! carries the memory one device needs (`cost::memory`).
//!
//! The step time is compute plus communication plus host copies, with no
//! overlap: a conservative bound; beside it, the step with collectives
//! hidden behind the compute that does not depend on them
//! (`cost::overlap`), what async collectives and XLA's latency-hiding
//! scheduler reach.

use meshrun_compiler::ir::ElemType;
use meshrun_compiler::partition::program::report::{collective_report, ReportEntry};
use meshrun_compiler::partition::PartitionedProgram;

use crate::cost::error::CostError;
use crate::cost::flops::{count_flops, FlopCount};
use crate::cost::host::{host_traffic, Direction, HostTransfer};
use crate::cost::memory::{memory_per_device, peak_detail, MemoryEstimate, PeakDetail};
use crate::cost::model::{estimate_collective, CollectiveEstimate};
use crate::cost::overlap::overlap;
use crate::cost::topology::{Link, Topology};

/// One collective: what the partitioner reports, and what it costs (its
/// `estimate.seconds` over all its runs: per run × `entry.runs`).
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveCost {
    pub entry: ReportEntry,
    pub estimate: CollectiveEstimate,
}

/// One copy between host and device memory, and its time over all its
/// runs.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCopyCost {
    pub transfer: HostTransfer,
    pub seconds: f64,
}

/// The time of one copy of `bytes` over `link`: `bytes / B + α`.
pub fn host_copy_seconds(bytes: f64, link: &Link) -> f64 {
    bytes / link.bytes_per_second() + link.latency_s()
}

/// Compute time of one element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DtypeCompute {
    pub elem: ElemType,
    pub flops: f64,
    /// The peak it is charged at, TFLOP/s.
    pub peak_tflops: f64,
    pub seconds: f64,
}

/// Compute time of one device.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeEstimate {
    pub by_dtype: Vec<DtypeCompute>,
    pub flops: f64,
    pub seconds: f64,
    /// True when `--peak-tflops` replaced the topology's peaks.
    pub peak_overridden: bool,
}

/// Charge `count` at the topology's peak per element type, or at
/// `peak_override` TFLOP/s for every type.
pub fn estimate_compute(
    count: &FlopCount,
    topo: &Topology,
    peak_override: Option<f64>,
) -> ComputeEstimate {
    let by_dtype: Vec<DtypeCompute> = count
        .by_dtype
        .iter()
        .map(|d| {
            let peak = peak_override.unwrap_or_else(|| topo.peak_tflops_for(d.elem));
            DtypeCompute {
                elem: d.elem,
                flops: d.flops,
                peak_tflops: peak,
                seconds: d.flops / (peak * 1e12),
            }
        })
        .collect();
    ComputeEstimate {
        flops: count.total(),
        seconds: by_dtype.iter().map(|d| d.seconds).sum(),
        by_dtype,
        peak_overridden: peak_override.is_some(),
    }
}

/// Everything `meshrun cost` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct CostReport {
    pub topology: Topology,
    pub num_devices: usize,
    pub collectives: Vec<CollectiveCost>,
    pub total_bytes_per_device: f64,
    /// Some collective or op sits in a loop whose trip count depends on
    /// data: bytes, FLOPs and times count one iteration of it.
    pub trip_count_unknown: bool,
    /// Sum of the collectives' times (they run one after another).
    pub communication_seconds: f64,
    pub compute: ComputeEstimate,
    /// Copies between host and device memory, in program order.
    pub host_copies: Vec<HostCopyCost>,
    /// Their bytes per device, each way, over all runs.
    pub host_to_device_bytes: f64,
    pub device_to_host_bytes: f64,
    /// Sum of their times (one after another, none hidden).
    pub host_copy_seconds: f64,
    /// Memory of one device: device memory, and host memory apart.
    pub memory: MemoryEstimate,
    /// Where the memory peak is, and what is live there.
    pub peak: Option<PeakDetail>,
    /// Bytes per device the user has (`--memory-per-device`), to say
    /// whether the program fits.
    pub memory_cap: Option<f64>,
    /// `compute + communication + host copies`, no overlap.
    pub step_seconds: f64,
    /// Communication hidden behind independent compute when collectives
    /// run beside it (`cost::overlap`).
    pub hidden_seconds: f64,
    /// `step_seconds - hidden_seconds`.
    pub overlapped_step_seconds: f64,
}

/// Cost `program` on `topo`. Every device of the program must exist in the
/// topology.
pub fn cost_report(
    program: &PartitionedProgram,
    topo: &Topology,
    peak_override: Option<f64>,
) -> Result<CostReport, CostError> {
    for &d in &program.device.devices {
        topo.node_of(d)?;
    }
    let report = collective_report(program);
    // The report lists the communicating collectives in program order;
    // pair each entry with the collective it describes.
    let communicating: Vec<_> = program
        .device
        .collectives()
        .map(|(c, _)| c)
        .filter(|c| c.communicates())
        .collect();
    if communicating.len() != report.collectives.len() {
        return Err(CostError::Internal(format!(
            "the partitioner reports {} collectives but its program has {}",
            report.collectives.len(),
            communicating.len()
        )));
    }
    let mut collectives = Vec::with_capacity(communicating.len());
    for (entry, c) in report.collectives.into_iter().zip(communicating) {
        let mut estimate = estimate_collective(c, topo)?;
        // Every run of a collective in a counted loop pays again.
        estimate.seconds *= entry.runs;
        collectives.push(CollectiveCost { estimate, entry });
    }
    let communication_seconds = collectives.iter().map(|c| c.estimate.seconds).sum();
    let compute = estimate_compute(&count_flops(&program.device), topo, peak_override);
    let traffic = host_traffic(program);
    let host_to_device_bytes = traffic.bytes(Direction::ToDevice);
    let device_to_host_bytes = traffic.bytes(Direction::ToHost);
    let host_copies = match (&topo.host_link, traffic.transfers.is_empty()) {
        (_, true) => Vec::new(),
        (None, false) => {
            return Err(CostError::NoHostLink {
                topology: topo.name.clone(),
                bytes: host_to_device_bytes + device_to_host_bytes,
            })
        }
        (Some(link), false) => traffic
            .transfers
            .into_iter()
            .map(|t| HostCopyCost {
                seconds: host_copy_seconds(t.bytes_per_run, link) * t.runs,
                transfer: t,
            })
            .collect(),
    };
    let host_copy_seconds: f64 = host_copies.iter().map(|c| c.seconds).sum();
    let memory = memory_per_device(&program.device);
    let step_seconds = compute.seconds + communication_seconds + host_copy_seconds;
    let hidden_seconds = overlap(&program.device, topo, peak_override)?.hidden_seconds;
    Ok(CostReport {
        topology: topo.clone(),
        num_devices: report.num_devices,
        total_bytes_per_device: report.total_bytes_per_device,
        trip_count_unknown: program.device.has_unknown_trip_count(),
        step_seconds,
        hidden_seconds,
        overlapped_step_seconds: step_seconds - hidden_seconds,
        communication_seconds,
        compute,
        collectives,
        host_copies,
        host_to_device_bytes,
        device_to_host_bytes,
        host_copy_seconds,
        peak: peak_detail(program, &memory),
        memory,
        memory_cap: None,
    })
}
