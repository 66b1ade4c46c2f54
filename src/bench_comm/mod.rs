//! `meshrun bench-comm`: an nccl-tests-style sweep of the runtime's
//! collectives on any backend.
//!
//! - [`size`] — `1K`/`256M` byte counts and the doubling size ladder;
//! - [`row`] — one measured row (what `--json` prints and
//!   `meshrun cost --calibrate` reads), with nccl-tests' bandwidths;
//! - [`sweep`] — every op at every size, through any timing function;
//! - [`table`] — the table for people;
//! - [`plot`] — the SVG of bus bandwidth against size.
//!
//! The timing and the correctness check of one collective live in
//! `meshrun_runtime::comm_bench`.

pub mod plot;
pub mod row;
pub mod size;
pub mod sweep;
pub mod table;

pub use row::Row;
pub use sweep::{sweep, sweep_with, SweepConfig};
