//! What a sharding costs before anyone buys GPU time: every collective the
//! partitioner emits, timed on a named machine with the α-β model of
//! nccl-tests, plus the compute per device at a stated peak.
//!
//! - [`topology`]: machines as JSON data (built-ins embedded, or a file);
//! - [`model`]: the α-β formula of each collective kind;
//! - [`flops`]: FLOPs of a device program's local ops;
//! - [`memory`]: bytes per device, from the device program's liveness;
//! - [`host`]: values in host memory and the host↔device copies they need;
//! - [`overlap`]: the step when collectives hide behind independent compute;
//! - [`report`]: a program's collectives, compute and step time;
//! - [`render`]: the table for people and the JSON for tools;
//! - [`calibrate`]: fitting α and β to `bench-comm --json` timings;
//! - [`cpu_sim`]: the model on this machine's simulated CPU devices (a
//!   prediction to compare with a measured run).

pub mod calibrate;
pub mod cpu_sim;
pub mod error;
pub mod flops;
pub mod host;
pub mod memory;
pub mod model;
pub mod overlap;
pub mod render;
pub mod report;
pub mod topology;

pub use error::CostError;
pub use report::{cost_report, CostReport};
pub use topology::{Topology, DEFAULT_TOPOLOGY};
