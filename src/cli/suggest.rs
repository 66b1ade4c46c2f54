//! `meshrun suggest FILE [--mesh "data=4,model=2"] [--topology NAME|PATH]
//! [--memory-per-device 80G] [--keep-given] [--top K] [-o OUT.mlir]
//! [--json]`: the sharding of the entry function's arguments that the cost
//! model predicts fastest within the memory cap, with reasons, next to the
//! current shardings (see `meshrun::suggest`).

use std::path::PathBuf;

use anyhow::{bail, Context};

use meshrun::bench_comm::size::parse_memory_cap;
use meshrun::compiler::text::print_module;
use meshrun::cost::{Topology, DEFAULT_TOPOLOGY};
use meshrun::load::load_file;
use meshrun::suggest::output::{render_json, render_text};
use meshrun::suggest::search::SearchOptions;
use meshrun::suggest::{parse_mesh, suggest as run_suggest, SuggestOptions};

/// The options of `meshrun suggest`.
#[derive(clap::Args, Debug, Clone)]
pub struct SuggestArgs {
    /// A StableHLO + sdy MLIR file, annotated or not.
    pub file: PathBuf,
    /// The device mesh, axes major to minor: "data=4,model=2". Default:
    /// the module's mesh (required when it declares none).
    #[arg(long, value_name = "AXES")]
    pub mesh: Option<String>,
    /// A built-in topology (h100-nvlink-8, a100-nvlink-8, pcie4-8,
    /// 2x8-h100-ib400, 8x8-h100-ib400, 32x8-h100-ib400, 32x8-a100-ib200) or a topology JSON
    /// file. Default h100-nvlink-8.
    #[arg(long, value_name = "NAME|PATH")]
    pub topology: Option<String>,
    /// At most this many bytes per device for the arguments and the live
    /// values of a step (K, M, G suffixes: powers of 1024).
    #[arg(long, value_name = "BYTES")]
    pub memory_per_device: Option<String>,
    /// Keep the shardings the module gives its arguments; choose the rest.
    #[arg(long)]
    pub keep_given: bool,
    /// How many alternatives to list.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub top: usize,
    /// Assignments the search keeps and expands each round.
    #[arg(long, value_name = "N", default_value_t = SearchOptions::default().beam)]
    pub beam: usize,
    /// Write the module with the suggested shardings here (`meshrun run`
    /// executes it as is).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// Print the suggestion as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn suggest(args: &SuggestArgs) -> anyhow::Result<()> {
    let mesh = args.mesh.as_deref().map(parse_mesh).transpose()?;
    let memory_per_device = args
        .memory_per_device
        .as_deref()
        .map(|s| parse_memory_cap("--memory-per-device", s).map_err(anyhow::Error::msg))
        .transpose()?;
    if args.beam == 0 {
        bail!("--beam must be at least 1");
    }
    let topology = Topology::resolve(args.topology.as_deref().unwrap_or(DEFAULT_TOPOLOGY))?;
    let module = load_file(&args.file)?;
    let opts = SuggestOptions {
        mesh,
        topology,
        memory_per_device,
        keep_given: args.keep_given,
        top: args.top,
        search: SearchOptions {
            beam: args.beam,
            ..SearchOptions::default()
        },
    };
    let file = args.file.display().to_string();
    let s = run_suggest(&module, &opts).with_context(|| format!("{file}: suggest"))?;
    if let Some(out) = &args.out {
        std::fs::write(out, print_module(&s.annotated_module()))
            .with_context(|| format!("{}: cannot write", out.display()))?;
    }
    if args.json {
        let mut text = serde_json::to_string_pretty(&render_json(&s))?;
        text.push('\n');
        print!("{text}");
    } else {
        print!("{}", render_text(&s, &file));
    }
    Ok(())
}
