//! What can go wrong when costing a program: a topology that cannot be
//! found, read or trusted, a program that does not fit it, or a benchmark
//! file that cannot be fitted. Each message is one line that names the file
//! (or topology) and what is wrong.

use std::path::PathBuf;

/// An error of the cost model.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    #[error("unknown topology '{name}': not a built-in ({}) and not a .json file", known.join(", "))]
    UnknownTopology { name: String, known: Vec<String> },

    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{}: cannot write: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A topology file that is not valid JSON or lacks a field.
    #[error("{source_name}: malformed topology file: {message}")]
    MalformedTopology {
        source_name: String,
        message: String,
    },

    /// A topology file with an impossible value.
    #[error("{source_name}: invalid topology: {message}")]
    InvalidTopology {
        source_name: String,
        message: String,
    },

    #[error(
        "topology '{topology}' has {num_devices} devices but the program uses device {device}; pick a topology with enough devices"
    )]
    DeviceOutsideTopology {
        topology: String,
        device: i64,
        num_devices: i64,
    },

    /// A program with values in host memory on a topology that does not
    /// say how fast its devices reach host memory.
    #[error(
        "topology '{topology}' has no `host_link`, but the program copies {bytes} bytes per device between host and device memory (pinned_host values); add a host_link (e.g. PCIe 5.0 x16: bandwidth_gbytes_per_s 53, latency_us 5) to the topology file"
    )]
    NoHostLink { topology: String, bytes: f64 },

    /// A bench-comm file that cannot be read as rows.
    #[error("{}: malformed benchmark file: {message}", path.display())]
    MalformedBench { path: PathBuf, message: String },

    /// Rows that do not determine both α and β.
    #[error("{}: cannot fit the cost model: {message}", path.display())]
    Fit { path: PathBuf, message: String },

    /// Timing this machine for a prediction failed.
    #[error("measuring the CPU backend: {0}")]
    Measure(String),

    /// The partitioner's report and its device program disagree (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}
