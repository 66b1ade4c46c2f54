//! Round trips of the text format on real JAX output: the seed example
//! (`tests/data/`) and every JAX-exported fixture under `fixtures/jax/`.
//! For each file: parse, print, parse again → equal modules, and printing
//! the reparsed module gives the same text (a fixed point).

use std::path::{Path, PathBuf};

use meshrun_compiler::ir::ops::dot_general::DotGeneral;
use meshrun_compiler::text::{parse_module, print_module};
use meshrun_compiler::{Module, OpKind};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Parse `src`, then check print → parse → print on it; returns the module.
fn round_trip(src: &str, what: &str) -> Module {
    let m = parse_module(src).unwrap_or_else(|e| panic!("{what}: parse failed: {e}"));
    let printed = print_module(&m);
    let m2 = parse_module(&printed)
        .unwrap_or_else(|e| panic!("{what}: reparse of printed text failed: {e}\n{printed}"));
    assert!(m == m2, "{what}: parse(print(m)) != m\n{printed}");
    let printed2 = print_module(&m2);
    assert_eq!(printed, printed2, "{what}: printing is not a fixed point");
    m
}

#[test]
fn seed_example_input_round_trips() {
    let src = read(&manifest_dir().join("tests/data/mlp_seed.input.mlir"));
    let m = round_trip(&src, "mlp_seed.input.mlir");
    assert_eq!(m.name.as_deref(), Some("jit_mlp_seed"));
    assert_eq!(m.meshes.len(), 1);
    let mesh = &m.meshes[0];
    assert_eq!(mesh.mesh.axes.len(), 2);
    assert_eq!(mesh.mesh.num_devices(), 8);
    assert!(mesh
        .attrs
        .as_deref()
        .unwrap_or("")
        .starts_with("{stablehlo.mesh = "));
    let main = m.func("main").expect("main");
    assert_eq!(main.args.len(), 3);
    assert_eq!(
        main.arg_attrs[0]
            .sharding
            .as_ref()
            .map(|s| s.to_string())
            .as_deref(),
        Some(r#"<@mesh, [{"data"}, {}]>"#)
    );
    assert!(main.arg_attrs[2].sharding.is_none());
    assert_eq!(main.result_attrs[0].attrs[0].name, "jax.result_info");
    assert_eq!(
        main.result_attrs[0].attrs[0].value.as_deref(),
        Some("\"result\"")
    );
    let kinds: Vec<String> = main.ops_in_order().map(|(_, op)| op.kind.name()).collect();
    assert_eq!(
        kinds,
        [
            "stablehlo.tanh",
            "stablehlo.dot_general",
            "stablehlo.dot_general",
            "stablehlo.sine"
        ]
    );
}

#[test]
fn seed_example_propagated_round_trips() {
    let src = read(&manifest_dir().join("tests/data/mlp_seed.propagated.mlir"));
    let m = round_trip(&src, "mlp_seed.propagated.mlir");
    let main = m.func("main").expect("main");
    let (_, dot) = main.ops_in_order().nth(1).expect("second op");
    assert!(matches!(
        dot.kind,
        OpKind::DotGeneral(DotGeneral { is_dot: true, .. })
    ));
    let sh = dot.shardings.as_ref().expect("sharding_per_value");
    assert_eq!(sh[0].to_string(), r#"<@mesh, [{"data"}, {"model"}]>"#);
    assert_eq!(dot.attrs.len(), 1);
    assert_eq!(dot.attrs[0].name, "sdy.sharding_rule");
    assert_eq!(
        dot.attrs[0].value.as_deref(),
        Some(
            "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=16, j=256, k=128} reduction={k}>"
        )
    );
    // The printer puts sdy.sharding back before sdy.sharding_rule, as MLIR does.
    let printed = print_module(&m);
    assert!(printed.contains(
        "precision = [DEFAULT, DEFAULT] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"data\"}, {\"model\"}]>]>, sdy.sharding_rule"
    ));
}

/// Every `input.mlir` / `propagated.mlir` under `fixtures/jax/` (made by
/// `tools/jax_export.py` and committed).
fn fixture_files() -> Vec<PathBuf> {
    let dir = manifest_dir().join("../fixtures/jax");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files = Vec::new();
    for entry in entries.flatten() {
        for name in ["input.mlir", "propagated.mlir"] {
            let p = entry.path().join(name);
            if p.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(
        !files.is_empty(),
        "{} holds no input.mlir/propagated.mlir",
        dir.display()
    );
    files
}

#[test]
fn every_jax_fixture_round_trips() {
    let files = fixture_files();
    let mut ops = 0;
    for path in &files {
        let m = round_trip(&read(path), &path.display().to_string());
        assert!(!m.funcs.is_empty(), "{}: no functions", path.display());
        ops += m.funcs.iter().map(|f| f.body.len()).sum::<usize>();
    }
    assert!(ops > 0);
}

#[test]
fn propagated_fixtures_carry_op_shardings() {
    let files = fixture_files();
    for path in files.iter().filter(|p| p.ends_with("propagated.mlir")) {
        let m = parse_module(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let any_sharded = m
            .funcs
            .iter()
            .flat_map(|f| f.ops.iter())
            .any(|op| op.shardings.is_some());
        let any_arg_sharding = m
            .funcs
            .iter()
            .flat_map(|f| f.arg_attrs.iter().chain(&f.result_attrs))
            .any(|p| p.sharding.is_some());
        assert!(
            any_sharded || any_arg_sharding,
            "{}: no shardings parsed",
            path.display()
        );
    }
}
