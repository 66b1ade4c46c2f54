//! The `meshrun` command line. Every failure prints one line
//! `error: FILE:LINE:COL: what is wrong` and exits with code 1.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "meshrun",
    version,
    about = "SPMD compiler and runtime for sharded tensor programs (StableHLO + Shardy)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and check a module, print it in canonical text.
    Parse {
        /// A StableHLO + sdy MLIR file (e.g. `jax.jit(f).lower(...).as_text()`).
        file: PathBuf,
    },
    /// Draw the sharding of every function argument and result: which
    /// device holds which block, local shape and padding.
    Show {
        file: PathBuf,
        /// Also draw every op result that carries a sharding.
        #[arg(long)]
        all: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Parse { file } => cli::parse(&file),
        Command::Show { file, all } => cli::show(&file, all),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
