//! `meshrun show FILE [--all] [--propagated]`.

use std::path::Path;

use meshrun::load::load_file;
use meshrun::show::show_module;

pub fn show(file: &Path, all: bool, propagated: bool) -> anyhow::Result<()> {
    let mut module = load_file(file)?;
    if propagated {
        let opts = meshrun::compiler::propagation::PropagationOptions::default();
        module = super::propagate::propagate_file(file, &module, &opts)?.module;
    }
    print!("{}", show_module(&module, all));
    Ok(())
}
