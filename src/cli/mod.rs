//! The subcommands. Each returns `anyhow::Result`; `main` prints the error.

mod bench_comm;
mod cost;
mod doctor;
mod partition;
mod propagate;
mod run;
mod show;
mod suggest;

use std::path::Path;

use meshrun::compiler::text::print_module;
use meshrun::load::load_file;

pub use bench_comm::{bench_comm, BenchCommArgs};
pub use cost::{cost, CostArgs};
pub use doctor::{doctor, DoctorArgs};
pub use partition::{partition, PartitionArgs};
pub use propagate::{parse_strategy, propagate, PropagateArgs};
pub use run::{parse_executor, parse_rtol, run, RunArgs};
pub use show::show;
pub use suggest::{suggest, SuggestArgs};

/// `meshrun parse FILE`: print the checked module in canonical text.
pub fn parse(file: &Path) -> anyhow::Result<()> {
    let module = load_file(file)?;
    print!("{}", print_module(&module));
    Ok(())
}
