//! Reading a JAX fixture directory written by `tools/jax_export*.py`:
//! numbered `.npy` files and XLA's collective totals. Shared by the
//! fixture tests that include it with `#[path]`.

use std::path::Path;

use meshrun_kernels::HostTensor;
use meshrun_runtime::npy::read_npy;

/// `prefix_0.npy`, `prefix_1.npy`, ... up to the first missing one.
pub fn numbered(dir: &Path, prefix: &str) -> Vec<HostTensor> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.npy")))
        .take_while(|p| p.exists())
        .map(|p| read_npy(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

/// XLA's `total_bytes_per_device` from `xla_collectives.json`.
pub fn xla_bytes(dir: &Path) -> f64 {
    let text = std::fs::read_to_string(dir.join("xla_collectives.json")).expect("json");
    let key = "\"total_bytes_per_device\":";
    let at = text.find(key).expect("total_bytes_per_device") + key.len();
    let rest = text[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().expect("a number")
}
