//! The reference interpreter against JAX: for every `fixtures/jax/<name>/`,
//! parse `input.mlir`, run `main` unsharded on `in_*.npy`, and compare with
//! JAX's `out_*.npy`.
//!
//! Tolerance rule: integer and boolean outputs must match exactly. Float
//! outputs must satisfy, element by element,
//! `|got - want| <= rtol * (|want| + max|want|)`, the max taken over the
//! whole output tensor (sums are ordered differently from XLA's, so errors
//! scale with the magnitude of the summands, not of each result). `rtol`
//! comes from the least precise float type anywhere in the module: 1e-5 for
//! f32/f64, 2e-3 for f16 (two f16 ulps), 1.6e-2 for bf16 (two bf16 ulps).
//!
//! Every fixture must parse, run and match; none is skipped.

use std::path::{Path, PathBuf};

use meshrun_compiler::ir::{ElemType, Module};
use meshrun_compiler::text::parse_module;
use meshrun_kernels::{HostTensor, Parallelism};
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::reference::run_function;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax")
}

/// `prefix_0.npy`, `prefix_1.npy`, ... in order, until one is missing.
fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.npy")))
        .take_while(|p| p.exists())
        .collect()
}

fn rtol_for(module: &Module) -> f64 {
    let elems = module
        .funcs
        .iter()
        .flat_map(|f| f.values.iter().map(|v| v.ty.elem));
    elems.fold(1e-5, |tol, e| match e {
        ElemType::BF16 => f64::max(tol, 1.6e-2),
        ElemType::F16 => f64::max(tol, 2e-3),
        _ => tol,
    })
}

/// `None` if `got` matches `want`, else what differs.
fn mismatch(got: &HostTensor, want: &HostTensor, rtol: f64) -> Option<String> {
    if got.elem_type() != want.elem_type() || got.shape() != want.shape() {
        return Some(format!(
            "got {} but JAX gave {}",
            got.tensor_type(),
            want.tensor_type()
        ));
    }
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    let exact = !want.elem_type().is_float();
    let scale = w.iter().fold(
        0.0f64,
        |m, x| if x.is_finite() { m.max(x.abs()) } else { m },
    );
    let bad = g.iter().zip(&w).position(|(&a, &b)| {
        let same = a == b || (a.is_nan() && b.is_nan());
        let within = (a - b).abs() <= rtol * (b.abs() + scale);
        !same && (exact || !within)
    })?;
    Some(format!(
        "element {bad}: got {} but JAX gave {} (rtol {rtol}, max abs diff {:?})",
        g[bad],
        w[bad],
        got.max_abs_diff(want)
    ))
}

/// Run one fixture: `Err(reason)` when it fails.
fn check_fixture(dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join("input.mlir")).map_err(|e| e.to_string())?;
    let module = parse_module(&text).map_err(|d| format!("input.mlir:{d}"))?;
    let inputs = numbered(dir, "in")
        .iter()
        .map(|p| read_npy(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let expected = numbered(dir, "out")
        .iter()
        .map(|p| read_npy(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let got =
        run_function(&module, "main", &inputs, Parallelism::None).map_err(|e| e.to_string())?;
    if got.len() != expected.len() {
        return Err(format!(
            "{} results, JAX gave {}",
            got.len(),
            expected.len()
        ));
    }
    let rtol = rtol_for(&module);
    for (i, (g, w)) in got.iter().zip(&expected).enumerate() {
        if let Some(m) = mismatch(g, w, rtol) {
            return Err(format!("output {i}: {m}"));
        }
    }
    Ok(())
}

#[test]
fn reference_matches_jax_on_every_fixture() {
    let n = check_all(&fixtures_dir());
    assert!(n >= 45, "only {n} fixtures found");
}

/// The indexing ops (gather, scatter, dynamic_slice, dynamic_update_slice)
/// on JAX's own programs with out-of-range and duplicate indices, made by
/// `tools/jax_index_cases.py`.
#[test]
fn reference_matches_jax_on_index_op_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax_index_ops");
    let n = check_all(&root);
    assert!(n >= 16, "only {n} index-op cases found");
}

/// The windowed ops (reduce_window, select_and_scatter) on JAX's own
/// programs: cumulative ops, pooling, dilations, negative padding, several
/// inputs, max-pool gradients with overlapping windows and ties, made by
/// `tools/jax_window_cases.py`.
#[test]
fn reference_matches_jax_on_window_op_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jax_window_ops");
    let n = check_all(&root);
    assert!(n >= 5, "only {n} window-op cases found");
}

/// Check every fixture directory under `root`; all must match. Returns
/// how many did.
fn check_all(root: &Path) -> usize {
    let entries = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("no fixtures at {}: {e}", root.display()));
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.mlir").exists())
        .collect();
    dirs.sort();
    let (mut passed, mut failed) = (0, Vec::new());
    for dir in &dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match check_fixture(dir) {
            Ok(()) => passed += 1,
            Err(why) => failed.push(format!("{name}: {why}")),
        }
    }
    eprintln!(
        "reference fixtures: {passed} match JAX, {} fail",
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "fixtures that differ from JAX:\n  {}",
        failed.join("\n  ")
    );
    passed
}

#[test]
fn mismatch_applies_the_tolerance_rule() {
    let want = HostTensor::from_vec(&[3], vec![100.0f32, 1.0, 0.0]).unwrap();
    let near = HostTensor::from_vec(&[3], vec![100.0005f32, 1.0005, 0.0009]).unwrap();
    assert_eq!(
        mismatch(&near, &want, 1e-5),
        None,
        "within rtol * (|w| + 100)"
    );
    let far = HostTensor::from_vec(&[3], vec![100.0f32, 1.0, 0.01]).unwrap();
    assert!(mismatch(&far, &want, 1e-5)
        .unwrap()
        .starts_with("element 2"));
    let ints = HostTensor::from_vec(&[2], vec![1i32, 2]).unwrap();
    let off = HostTensor::from_vec(&[2], vec![1i32, 3]).unwrap();
    assert!(mismatch(&off, &ints, 1.0).is_some(), "integers are exact");
    assert!(mismatch(&want, &ints, 1.0)
        .unwrap()
        .contains("tensor<2xi32>"));
}
