//! A fuzzer for the whole pipeline: mutations of real programs (the JAX
//! fixtures) through every command's stages, in process (`drive`), so a
//! campaign of a million cases fits in a few hours on two cores.
//! `examples/fuzz.rs` runs campaigns with a per-case time limit (a hang is
//! a bug too); `tests/fuzz_mutations.rs` runs a few thousand cases on
//! every CI run and keeps every input a campaign found as a regression test
//! (`tests/fuzz_found/`).

pub mod drive;
pub mod mutate;

use std::path::{Path, PathBuf};

pub use drive::{run_case, silence_panics, Outcome, Stage};
pub use mutate::{mutate, Rng};

/// The seed programs: every fixture's `input.mlir` under `root`
/// (`fixtures/`), sorted by path.
pub fn seed_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "input.mlir") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Case `seed`: a mutation of one of `seeds` (chosen by the seed too).
pub fn case_text(seeds: &[String], seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let base = rng.pick(seeds).clone();
    mutate(&base, &mut rng)
}
