//! `meshrun propagate FILE [-o OUT] [--strategy S] [--conservative] [--keep-open]
//! [--explain VALUE]`:
//! infer the sharding of every tensor (Shardy's propagation), print the
//! propagated module (or write it to OUT), or explain where the sharding of
//! one value came from.

use std::path::{Path, PathBuf};

use anyhow::Context;

use meshrun::compiler::propagation::explain::explain;
use meshrun::compiler::propagation::{
    propagate_with_provenance, Propagated, PropagationOptions, Strategy,
};
use meshrun::compiler::text::print_module;
use meshrun::compiler::Module;
use meshrun::load::{load_file, LoadError};

/// Options of `meshrun propagate`.
#[derive(Debug, Clone, Default)]
pub struct PropagateArgs {
    pub out: Option<PathBuf>,
    pub strategy: Strategy,
    pub explain: Option<String>,
    /// Shardy's conservative propagation (`--conservative`).
    pub conservative: bool,
    /// Leave shardings open, as Shardy's single passes do (`--keep-open`;
    /// `full` closes regardless).
    pub keep_open: bool,
}

/// Parse a `--strategy` value.
pub fn parse_strategy(s: &str) -> Result<Strategy, String> {
    Strategy::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
        format!(
            "unknown strategy '{s}'; expected one of {}",
            names.join(", ")
        )
    })
}

pub fn propagate(file: &Path, args: &PropagateArgs) -> anyhow::Result<()> {
    let module = load_file(file)?;
    let opts = PropagationOptions {
        conservative: args.conservative,
        close: !args.keep_open,
        // Printed as Shardy prints it: a replicated value has no sharding.
        explicit_replication: false,
        ..PropagationOptions::with_strategy(args.strategy)
    };
    let propagated = propagate_file(file, &module, &opts)?;
    if let Some(value) = &args.explain {
        // `@f:%3` names a value of function `@f` (a callee propagation
        // kept); a bare name, one of the entry function.
        let (func, value) = match value.strip_prefix('@').and_then(|v| v.split_once(':')) {
            Some((func, value)) => (Some(func), value),
            None => (None, value.as_str()),
        };
        let text = explain(&propagated, func, value).map_err(|diag| LoadError::Invalid {
            path: file.to_path_buf(),
            diag,
        })?;
        print!("{text}");
        return Ok(());
    }
    let text = print_module(&propagated.module);
    match &args.out {
        Some(out) => {
            std::fs::write(out, text).with_context(|| format!("{}: cannot write", out.display()))?
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Propagate `module` (read from `file`); errors name the file.
pub fn propagate_file(
    file: &Path,
    module: &Module,
    opts: &PropagationOptions,
) -> anyhow::Result<Propagated> {
    Ok(
        propagate_with_provenance(module, opts).map_err(|diag| LoadError::Invalid {
            path: file.to_path_buf(),
            diag,
        })?,
    )
}
