//! `run --check` on an ill-conditioned program: a 4-layer tanh MLP
//! (B=256, H=1024, inputs uniform in [-1, 1)) on a `data`=8 × `model`=8
//! mesh of 64 simulated devices. A fixed rtol rejected it (the order of
//! summation alone moves the f32 result by ~3e-4); judged against the
//! program computed in f64, the sharded run is as accurate as the
//! unsharded one and passes. The same rule still rejects a run whose
//! all-reduce was deliberately broken.

use std::path::PathBuf;

use assert_cmd::Command;
use meshrun::compiler::ir::ReduceKind;
use meshrun::compiler::partition::{CollectiveKind, Instr};
use meshrun::compiler::text::parse_module;
use meshrun::runtime::compare::{compare_outputs, rtol_for};
use meshrun::runtime::pipeline::{compile, run_reference, run_reference_in_f64};
use meshrun::runtime::random_inputs::random_inputs;
use meshrun::runtime::{CpuBackend, ExecOptions, Executor};

const B: usize = 256;
const H: usize = 1024;

/// Megatron on `model` (column- then row-sharded weights), batch on `data`.
fn mlp_text() -> String {
    let w = |k: usize| {
        let spec = if k.is_multiple_of(2) {
            "[{}, {\"model\"}]"
        } else {
            "[{\"model\"}, {}]"
        };
        format!("%w{k}: tensor<{H}x{H}xf32> {{sdy.sharding = #sdy.sharding<@mesh, {spec}>}}")
    };
    let mut s = format!(
        "module {{\n  sdy.mesh @mesh = <[\"data\"=8, \"model\"=8]>\n  func.func @main(%x: tensor<{B}x{H}xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{\"data\"}}, {{}}]>}}, {}) -> tensor<{B}x{H}xf32> {{\n",
        (0..4).map(w).collect::<Vec<_>>().join(", ")
    );
    let mut prev = "%x".to_string();
    for k in 0..4 {
        s.push_str(&format!(
            "    %d{k} = stablehlo.dot_general {prev}, %w{k}, contracting_dims = [1] x [0] : (tensor<{B}x{H}xf32>, tensor<{H}x{H}xf32>) -> tensor<{B}x{H}xf32>\n    %t{k} = stablehlo.tanh %d{k} : tensor<{B}x{H}xf32>\n"
        ));
        prev = format!("%t{k}");
    }
    s.push_str(&format!(
        "    return {prev} : tensor<{B}x{H}xf32>\n  }}\n}}\n"
    ));
    s
}

fn write_mlp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mlp64.mlir");
    std::fs::write(&path, mlp_text()).unwrap();
    (dir, path)
}

#[test]
fn the_ill_conditioned_mlp_passes_check_on_64_devices() {
    let (_dir, path) = write_mlp();
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .arg("run")
        .arg(&path)
        .args(["--random-inputs", "1", "--check"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("on 64 cpu devices"), "{stdout}");
    assert!(stdout.contains("(ok)"), "{stdout}");
    // The plain rule rejects it (max rel diff ~3e-4 > 1e-5): the f64
    // reference decided.
    assert!(stdout.contains("vs f64: sharded error"), "{stdout}");
}

#[test]
fn a_broken_all_reduce_still_fails_against_f64() {
    let module = parse_module(&mlp_text()).unwrap();
    let f = module.func("main").unwrap();
    let types: Vec<_> = f.args.iter().map(|&a| f.ty(a).clone()).collect();
    let inputs = random_inputs(&types, 1).unwrap();
    let unsharded = run_reference(&module, &inputs).unwrap();
    let wide = run_reference_in_f64(&module, &inputs).unwrap();
    let rtol = rtol_for(&module);

    let mut program = compile(&module).unwrap();
    let run = |program: &meshrun::compiler::partition::PartitionedProgram| {
        let exec = Executor::new(&program.device).unwrap();
        exec.run_global(&CpuBackend::new(), &inputs, &ExecOptions::default())
            .unwrap()
    };
    let judge = |got: &[_]| {
        compare_outputs(got, &unsharded, rtol, || Ok(wide.clone()))
            .unwrap()
            .first_failure(got, &unsharded, rtol)
    };
    let good = run(&program);
    assert_eq!(judge(&good), None);

    // Row-sharded weights make partial sums: their all-reduce now takes
    // the max instead of the sum.
    let reduce = program
        .device
        .instrs
        .iter_mut()
        .find_map(|i| match i {
            Instr::Collective { collective, .. }
                if collective.kind == CollectiveKind::AllReduce =>
            {
                Some(collective)
            }
            _ => None,
        })
        .expect("the MLP all-reduces partial sums");
    assert_eq!(reduce.reduction, Some(ReduceKind::Add));
    reduce.reduction = Some(ReduceKind::Maximum);
    let broken = run(&program);
    let (_, m) = judge(&broken).expect("a broken all-reduce is caught");
    assert!(m.contains("against f64"), "{m}");
}

/// `meshrun run --random-inputs 1 --check` on a kept fuzz input fails with
/// one line that contains `needle`.
fn check_fails_naming(found: &str, needle: &str) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_found")
        .join(found);
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .arg("run")
        .arg(&file)
        .args(["--random-inputs", "1", "--check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// A reduce whose init is not its identity (a JAX fixture's own program):
/// StableHLO lets the implementation apply it any number of times, XLA and
/// meshrun apply it on every device holding part of the reduced dimension.
/// `--check` fails, and says why.
#[test]
fn a_non_identity_reduce_init_is_named_when_check_fails() {
    check_fails_naming(
        "reduce_init_18713.mlir",
        "the reduce at 5:10 starts from a value that is not its reduction's identity",
    );
}

/// A reduce whose body is not commutative and associative (a fuzzer
/// mutation of argmax's comparator: the value's select reads the tie
/// test): StableHLO leaves the combination order open, so the sharded run
/// may rightly differ. `--check` fails, and names the body.
#[test]
fn an_order_dependent_reduce_body_is_named_when_check_fails() {
    check_fails_naming(
        "reduce_body_140300.mlir",
        "the reduction body at 18:12 is not commutative and associative",
    );
}

/// JAX's own argmax on logits masked with NaN instead of -inf: the body
/// is order-dependent only when its input holds several NaNs, and `--check`
/// says so.
#[test]
fn an_argmax_over_nans_is_named_when_check_fails() {
    check_fails_naming(
        "argmax_nan_126678.mlir",
        "is not commutative and associative when its inputs hold NaN",
    );
}
