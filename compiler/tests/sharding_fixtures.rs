//! Every sharding JAX + Shardy wrote into the fixtures (`fixtures/jax/*/
//! {input,propagated}.mlir`) satisfies the invariants, and every annotated
//! function argument has a layout whose blocks cover the tensor.

use std::path::PathBuf;

use meshrun_compiler::ir::validate_module_shardings;
use meshrun_compiler::sharding::layout::TensorLayout;
use meshrun_compiler::text::parse_module;

fn fixture_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax");
    let dirs = std::fs::read_dir(&root).expect("fixtures/jax exists");
    let mut files: Vec<PathBuf> = dirs
        .filter_map(|d| d.ok())
        .flat_map(|d| ["input.mlir", "propagated.mlir"].map(|f| d.path().join(f)))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn jax_fixture_shardings_are_valid_and_lay_out() {
    let mut checked = 0;
    for path in fixture_files() {
        let src = std::fs::read_to_string(&path).expect("fixture is readable");
        let module = parse_module(&src).unwrap_or_else(|e| panic!("{}:{e}", path.display()));
        if let Err(d) = validate_module_shardings(&module) {
            panic!("{}:{}: {}", path.display(), d.pos, d.message);
        }
        for func in &module.funcs {
            for (&v, attrs) in func.args.iter().zip(&func.arg_attrs) {
                let Some(s) = &attrs.sharding else { continue };
                let mesh = module.resolve_mesh(&s.mesh).expect("validated");
                let shape = &func.ty(v).shape;
                let layout = TensorLayout::new(mesh, s, shape)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let held: i64 = layout
                    .slices()
                    .iter()
                    .map(|s| s.extent.iter().product::<i64>())
                    .sum();
                let volume: i64 = shape.iter().product();
                assert_eq!(
                    held,
                    volume * layout.replication_factor(),
                    "{}",
                    path.display()
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 90, "only {checked} fixture files found");
}
