//! The verifier on parsed programs: the JAX-exported fixtures and the seed
//! MLP verify cleanly, and a wrong type in the text is reported at its line.

use std::path::{Path, PathBuf};

use meshrun_compiler::ir::{module_errors, verify_module};
use meshrun_compiler::text::parse_module;
use meshrun_compiler::DiagKind;

const SEED: &str = "/work/shared/examples/mlp_seed.input.mlir";

fn manifest_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The seed program as the fixture exporter stored it in the repository
/// (the shared copy is used when the repository one is absent).
fn seed_source() -> String {
    let in_repo = manifest_path("../fixtures/jax/mlp_seed/input.mlir");
    let path = if in_repo.exists() {
        in_repo
    } else {
        PathBuf::from(SEED)
    };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn mlp_seed_verifies() {
    let m = parse_module(&seed_source()).expect("seed parses");
    assert_eq!(m.funcs.len(), 1);
    assert_eq!(m.funcs[0].body.len(), 4);
    verify_module(&m).unwrap();
}

#[test]
fn shape_error_in_text_is_reported_at_its_line() {
    let src = seed_source();
    // The second matmul contracts lhs dim 1 (256) with rhs dim 1 (128).
    let needle = "%1, %arg2, contracting_dims = [1] x [0]";
    assert!(src.contains(needle));
    let bad = src.replace(needle, "%1, %arg2, contracting_dims = [1] x [1]");
    let line = bad
        .lines()
        .position(|l| l.contains("%1, %arg2"))
        .expect("mutated line") as u32
        + 1;
    let m = parse_module(&bad).expect("still parses");
    let errors = module_errors(&m);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.kind, DiagKind::Type);
    assert_eq!(e.pos.line, line, "{e}");
    assert_eq!(
        e.message,
        "stablehlo.dot_general: contracting dimension sizes differ: \
         lhs dim 1 has size 256, rhs dim 1 has size 128"
    );
}

#[test]
fn all_jax_fixtures_verify() {
    let dir = manifest_path("../fixtures/jax");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // fixtures not exported in this checkout
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in entries.flatten() {
        for file in ["input.mlir", "propagated.mlir"] {
            let path = entry.path().join(file);
            let Ok(src) = std::fs::read_to_string(&path) else {
                continue;
            };
            match parse_module(&src) {
                Err(e) => failures.push(format!("{}: parse: {e}", path.display())),
                Ok(m) => {
                    for e in module_errors(&m) {
                        failures.push(format!("{}:{e}", path.display()));
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 0);
}
